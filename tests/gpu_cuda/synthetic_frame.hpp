#pragma once
// Random CoefficientFrames with any geometry (odd image and tile origins, subsampling,
// 0..32 levels, reduce, several tiles), laid out exactly as the own decoder lays them
// out (15444-1 B-12, B-15), to compare GPU and CPU reconstruction on inputs that no
// encoder at hand can make (OpenJPEG writes no image offset).
#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "decoder/coefficients.hpp"

namespace j2k::test {

inline long long floor_div(long long a, long long b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }
inline int ceil_div_s(long long a, long long b) { return static_cast<int>(-floor_div(-a, b)); }
inline int ceil_shift_s(long long a, int s) { return ceil_div_s(a, 1LL << s); }

struct SynthSpec {
  decoder::Rect image{0, 0, 64, 64};
  int tile_x0 = 0, tile_y0 = 0, tile_w = 0, tile_h = 0;  ///< 0: one tile covering the image
  std::vector<int> dx{1}, dy{1};                           ///< per component
  int precision = 10;
  bool is_signed = false;
  int levels = 5;
  int reduce = 0;
  decoder::Wavelet wavelet = decoder::Wavelet::reversible_5_3;
  bool mct = false;
  int amplitude = 1 << 12;  ///< stored values are uniform in [-amplitude, amplitude]
  /// Stored values +-amplitude in a checkerboard over each band (the sign pattern that grows
  /// 5/3 levels fastest: hostile coefficients), instead of uniform ones.
  bool checkerboard = false;
  std::uint32_t seed = 1;
};

/// Band rectangle (B-15) of orientation o at decomposition level nb of tile-component tc.
inline decoder::Rect band_rect(const decoder::Rect& tc, int nb, decoder::BandOrientation o) {
  if (nb == 0) return tc;
  const long long xo = (o == decoder::BandOrientation::HL || o == decoder::BandOrientation::HH) ? 1 : 0;
  const long long yo = (o == decoder::BandOrientation::LH || o == decoder::BandOrientation::HH) ? 1 : 0;
  const long long half = 1LL << (nb - 1), full = 1LL << nb;
  return {ceil_div_s(tc.x0 - half * xo, full), ceil_div_s(tc.y0 - half * yo, full), ceil_div_s(tc.x1 - half * xo, full),
          ceil_div_s(tc.y1 - half * yo, full)};
}

inline decoder::CoefficientFrame make_synthetic_frame(const SynthSpec& s) {
  decoder::CoefficientFrame f;
  f.image = s.image;
  f.reduce = s.reduce;
  const std::size_t ncomp = s.dx.size();
  for (std::size_t c = 0; c < ncomp; ++c) {
    decoder::ComponentInfo ci;
    ci.precision = s.precision;
    ci.is_signed = s.is_signed;
    ci.dx = s.dx[c];
    ci.dy = s.dy[c];
    ci.rect = {ceil_shift_s(ceil_div_s(s.image.x0, ci.dx), s.reduce), ceil_shift_s(ceil_div_s(s.image.y0, ci.dy), s.reduce),
               ceil_shift_s(ceil_div_s(s.image.x1, ci.dx), s.reduce), ceil_shift_s(ceil_div_s(s.image.y1, ci.dy), s.reduce)};
    f.components.push_back(ci);
  }
  std::mt19937 rng(s.seed);
  std::uniform_int_distribution<int> value(-s.amplitude, s.amplitude);
  std::uniform_real_distribution<float> step(0.25f, 4.0f);
  const int tw = s.tile_w ? s.tile_w : s.image.x1 - s.tile_x0;
  const int th = s.tile_h ? s.tile_h : s.image.y1 - s.tile_y0;
  const int ntx = ceil_div_s(s.image.x1 - s.tile_x0, tw), nty = ceil_div_s(s.image.y1 - s.tile_y0, th);
  for (int ty = 0; ty < nty; ++ty)
    for (int tx = 0; tx < ntx; ++tx) {
      decoder::Rect t{std::max(s.tile_x0 + tx * tw, s.image.x0), std::max(s.tile_y0 + ty * th, s.image.y0),
                      std::min(s.tile_x0 + (tx + 1) * tw, s.image.x1), std::min(s.tile_y0 + (ty + 1) * th, s.image.y1)};
      if (t.width() <= 0 || t.height() <= 0) continue;
      decoder::TileCoefficients tile;
      tile.index = ty * ntx + tx;
      tile.mct = s.mct;
      for (std::size_t c = 0; c < ncomp; ++c) {
        decoder::ComponentCoefficients cc;
        cc.rect = {ceil_div_s(t.x0, s.dx[c]), ceil_div_s(t.y0, s.dy[c]), ceil_div_s(t.x1, s.dx[c]), ceil_div_s(t.y1, s.dy[c])};
        cc.levels = s.levels;
        cc.decoded_levels = std::max(0, s.levels - s.reduce);
        cc.wavelet = s.wavelet;
        auto add = [&](decoder::BandOrientation o, int r, int nb) {
          decoder::SubbandCoefficients sb;
          sb.orientation = o;
          sb.resolution = r;
          sb.rect = band_rect(cc.rect, nb, o);
          sb.step = s.wavelet == decoder::Wavelet::reversible_5_3 ? 1.0f : step(rng);
          sb.offset = cc.data.size();
          const std::size_t n = static_cast<std::size_t>(std::max(0, sb.rect.width())) * std::max(0, sb.rect.height());
          const int bw = std::max(1, sb.rect.width());
          for (std::size_t i = 0; i < n; ++i) {
            const int x = static_cast<int>(i % static_cast<std::size_t>(bw)), y = static_cast<int>(i / static_cast<std::size_t>(bw));
            cc.data.push_back(s.checkerboard ? ((x + y) & 1 ? s.amplitude : -s.amplitude) : value(rng));
          }
          cc.subbands.push_back(sb);
        };
        add(decoder::BandOrientation::LL, 0, s.levels);
        for (int r = 1; r <= cc.decoded_levels; ++r)
          for (auto o : {decoder::BandOrientation::HL, decoder::BandOrientation::LH, decoder::BandOrientation::HH})
            add(o, r, s.levels - r + 1);
        tile.components.push_back(std::move(cc));
      }
      f.tiles.push_back(std::move(tile));
    }
  return f;
}

}  // namespace j2k::test
