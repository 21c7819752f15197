#pragma once
// Minimal codestreams written byte by byte (15444-1 Annex A): SOC, SIZ, COD, QCD, one
// tile-part with the given packet bytes, EOC. For tests of what a header may ask for.
#include <cstdint>
#include <vector>

namespace j2k::test {

struct SyntheticCodestream {
  std::uint32_t width = 64, height = 64;
  int components = 1;
  int levels = 5;
  int xcb = 6, ycb = 6;        ///< code-block size exponents (A.6.1: 2..10)
  int precinct_exp = -1;       ///< PPx = PPy for every resolution; < 0: no precinct partition
  int progression = 0;         ///< 0 LRCP .. 4 CPRL
  int layers = 1;
  std::vector<std::uint8_t> body{0x00};  ///< packet data after SOD (0x00: one empty packet)

  std::vector<std::uint8_t> bytes() const {
    std::vector<std::uint8_t> s;
    auto u8 = [&](unsigned v) { s.push_back(static_cast<std::uint8_t>(v)); };
    auto u16 = [&](unsigned v) { u8(v >> 8); u8(v); };
    auto u32 = [&](std::uint32_t v) { u16(v >> 16); u16(v & 0xFFFF); };
    u16(0xFF4F);
    u16(0xFF51);  // SIZ (A.5.1)
    u16(38 + 3 * components);
    u16(0);
    u32(width), u32(height), u32(0), u32(0);
    u32(width), u32(height), u32(0), u32(0);  // one tile
    u16(static_cast<unsigned>(components));
    for (int c = 0; c < components; ++c) u8(7), u8(1), u8(1);
    u16(0xFF52);  // COD (A.6.1)
    const bool pp = precinct_exp >= 0;
    u16(12 + (pp ? levels + 1 : 0));
    u8(pp ? 1 : 0);
    u8(static_cast<unsigned>(progression));
    u16(static_cast<unsigned>(layers));
    u8(0);
    u8(static_cast<unsigned>(levels)), u8(static_cast<unsigned>(xcb - 2)), u8(static_cast<unsigned>(ycb - 2)), u8(0), u8(1);
    if (pp)
      for (int r = 0; r <= levels; ++r) u8(static_cast<unsigned>(precinct_exp << 4 | precinct_exp));
    u16(0xFF5C);  // QCD (A.6.4): reversible, 2 guard bits
    u16(3 + 3 * levels + 1);
    u8(0x40);
    for (int b = 0; b < 3 * levels + 1; ++b) u8(9 << 3);
    u16(0xFF90);  // SOT (A.4.2)
    u16(10);
    u16(0);
    u32(static_cast<std::uint32_t>(14 + body.size()));
    u8(0), u8(1);
    u16(0xFF93);
    s.insert(s.end(), body.begin(), body.end());
    u16(0xFFD9);
    return s;
  }
};

}  // namespace j2k::test
