#pragma once
// Minimal codestreams written byte by byte (15444-1 Annex A): SOC, SIZ, COD, QCD, optional
// POC segments, one tile-part per tile with the given packet bytes, EOC. For tests of what a
// header may ask for.
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace j2k::test {

struct SyntheticCodestream {
  std::uint32_t width = 64, height = 64;
  std::uint32_t tile_width = 0, tile_height = 0;  ///< 0: one tile
  int components = 1;
  std::vector<std::pair<int, int>> subsampling;  ///< (XRsiz, YRsiz) per component; empty: all 1
  int levels = 5;
  int xcb = 6, ycb = 6;        ///< code-block size exponents (A.6.1: 2..10)
  int precinct_exp = -1;       ///< PPx = PPy for every resolution; < 0: no precinct partition
  int progression = 0;         ///< 0 LRCP .. 4 CPRL
  int layers = 1;
  /// A.6.6 entry, written as it is (no range check): RSpoc, CSpoc, LYEpoc, REpoc, CEpoc, Ppoc.
  struct Poc {
    int res_start = 0, comp_start = 0, layer_end = 1, res_end = 33, comp_end = 0, order = 0;
  };
  std::vector<std::vector<Poc>> poc;  ///< main-header POC segments, each a list of entries
  std::vector<std::uint8_t> body{0x00};  ///< packet data of every tile (0x00: one empty packet)
  int tile_parts = 1;                     ///< the body split over this many tile-parts (the last takes the rest)
  int qcd_extra_steps = 0;
  bool mct = false;                       ///< COD's multiple component transformation (RCT here: 5/3)                ///< step sizes listed beyond the subbands' (QCD at most 65 532)

  std::vector<std::uint8_t> bytes() const {
    std::vector<std::uint8_t> s;
    auto u8 = [&](unsigned v) { s.push_back(static_cast<std::uint8_t>(v)); };
    auto u16 = [&](unsigned v) { u8(v >> 8); u8(v); };
    auto u32 = [&](std::uint32_t v) { u16(v >> 16); u16(v & 0xFFFF); };
    const std::uint32_t tw = tile_width ? tile_width : width, th = tile_height ? tile_height : height;
    u16(0xFF4F);
    u16(0xFF51);  // SIZ (A.5.1)
    u16(38 + 3 * components);
    u16(0);
    u32(width), u32(height), u32(0), u32(0);
    u32(tw), u32(th), u32(0), u32(0);
    u16(static_cast<unsigned>(components));
    for (int c = 0; c < components; ++c) {
      const auto [dx, dy] = subsampling.empty() ? std::pair{1, 1} : subsampling[static_cast<std::size_t>(c)];
      u8(7), u8(static_cast<unsigned>(dx)), u8(static_cast<unsigned>(dy));
    }
    u16(0xFF52);  // COD (A.6.1)
    const bool pp = precinct_exp >= 0;
    u16(12 + (pp ? levels + 1 : 0));
    u8(pp ? 1 : 0);
    u8(static_cast<unsigned>(progression));
    u16(static_cast<unsigned>(layers));
    u8(mct ? 1 : 0);
    u8(static_cast<unsigned>(levels)), u8(static_cast<unsigned>(xcb - 2)), u8(static_cast<unsigned>(ycb - 2)), u8(0), u8(1);
    if (pp)
      for (int r = 0; r <= levels; ++r) u8(static_cast<unsigned>(precinct_exp << 4 | precinct_exp));
    u16(0xFF5C);  // QCD (A.6.4): reversible, 2 guard bits
    u16(static_cast<unsigned>(3 + 3 * levels + 1 + qcd_extra_steps));
    u8(0x40);
    for (int b = 0; b < 3 * levels + 1 + qcd_extra_steps; ++b) u8(9 << 3);
    const bool wide = components >= 257;  // component indices of two bytes
    for (const std::vector<Poc>& seg : poc) {
      u16(0xFF5F);  // POC (A.6.6)
      u16(static_cast<unsigned>(2 + seg.size() * (wide ? 9 : 7)));
      for (const Poc& e : seg) {
        u8(static_cast<unsigned>(e.res_start));
        wide ? u16(static_cast<unsigned>(e.comp_start)) : u8(static_cast<unsigned>(e.comp_start));
        u16(static_cast<unsigned>(e.layer_end));
        u8(static_cast<unsigned>(e.res_end));
        wide ? u16(static_cast<unsigned>(e.comp_end)) : u8(static_cast<unsigned>(e.comp_end));
        u8(static_cast<unsigned>(e.order));
      }
    }
    const std::uint32_t tiles = ((width + tw - 1) / tw) * ((height + th - 1) / th);
    for (std::uint32_t t = 0; t < tiles; ++t)
      for (int k = 0; k < tile_parts; ++k) {
        const std::size_t part = body.size() / static_cast<std::size_t>(tile_parts);
        const auto from = body.begin() + static_cast<std::ptrdiff_t>(part * static_cast<std::size_t>(k));
        const auto to = k + 1 == tile_parts ? body.end() : from + static_cast<std::ptrdiff_t>(part);
        u16(0xFF90);  // SOT (A.4.2)
        u16(10);
        u16(t);
        u32(static_cast<std::uint32_t>(14 + (to - from)));
        u8(static_cast<unsigned>(k)), u8(static_cast<unsigned>(tile_parts));
        u16(0xFF93);
        s.insert(s.end(), from, to);
      }
    u16(0xFFD9);
    return s;
  }
};

}  // namespace j2k::test
