#pragma once
// Entry points of the reconstruction kernels (idwt_kernels.inl), one set per instruction-set
// variant. One synthesis level reads its four inputs where they are (the low band of the
// previous level's output, the three high bands straight from the quantised coefficients,
// dequantised on load) and writes the level's output in interleaved order, so no copy of
// the coefficients into a deinterleaved work buffer is needed. The output of the last
// level can be written to the picture on the fly (DC shift, clamp, rounding).
#include <cstddef>
#include <cstdint>

namespace j2k::decoder::own {

/// Rows of one input of a level: either quantised coefficients (int32, 2x the index with the
/// midpoint in bit 0, see coefficients.hpp), dequantised on load, or samples of the level's
/// own type (float for 9/7, int32 for 5/3) from the previous level.
struct IdwtSource {
  const void* data = nullptr;
  std::ptrdiff_t stride = 0;  ///< in elements
  float scale = 1.0f;         ///< 9/7: step / 2 (quantised inputs only)
  bool quantised = false;
};

/// One synthesis level (15444-1 F.3.2 2D_SR on the rectangle of the resolution): `w` x `h`
/// samples, `sx`, `sy` the parities of the rectangle's origin. `lo` is the low-low input
/// (ceil-half x ceil-half), `hl`, `lh`, `hh` the high bands.
struct IdwtLevel {
  IdwtSource ll, hl, lh, hh;
  int w = 0, h = 0, sx = 0, sy = 0;
};

/// Writing finished rows of the last level into an int32 picture plane: row y, columns
/// [x0, x1) of the level go to dst + (y + dy) * dst_stride + x + dx (rows outside
/// [y_lo, y_hi) are skipped), after + shift, clamping to [lo, hi] and (9/7) rounding to
/// nearest even.
struct IdwtEmit {
  std::int32_t* dst = nullptr;
  std::ptrdiff_t dst_stride = 0;
  int dx = 0, dy = 0;
  int x0 = 0, x1 = 0;      ///< clip in level coordinates
  int y_lo = 0, y_hi = 0;  ///< clip in level coordinates
  std::int32_t shift = 0, lo = 0, hi = 0;
};

/// Inverse component transform + DC shift + clamp + store of one row piece of n samples
/// (G.2 / G.3). Components 0..2 in, three output rows out.
struct ColourRow {
  const void* in[3] = {};
  std::int32_t* out[3] = {};
  std::int32_t shift[3] = {}, lo[3] = {}, hi[3] = {};
};

#define J2K_IDWT_DECLARE(NS)                                                                                       \
  namespace NS {                                                                                                   \
  /* Rows [y0, y1) of one level, both passes, row by row through a ring of 8 rows in scratch (which holds   */ \
  /* 2 * (w + 8) + 8 * (w + 16) elements); finished rows are copied to out (if not null) and emitted (if    */ \
  /* emit). Bands of one level are independent: the same samples as the whole level at once.              */ \
  void band97(const IdwtLevel& lv, float* out, std::ptrdiff_t ostride, int y0, int y1, float* scratch,          \
              const IdwtEmit* emit);                                                                           \
  void band53(const IdwtLevel& lv, std::int32_t* out, std::ptrdiff_t ostride, int y0, int y1,                   \
              std::int32_t* scratch, const IdwtEmit* emit);                                                    \
  /* No synthesis (0 decoded levels): dequantise rows [y0, y1) of src (w wide) into out, emit. */             \
  void copy97(const IdwtSource& src, int w, int y0, int y1, float* out, std::ptrdiff_t ostride,                  \
              const IdwtEmit* emit);                                                                             \
  void copy53(const IdwtSource& src, int w, int y0, int y1, std::int32_t* out, std::ptrdiff_t ostride,           \
              const IdwtEmit* emit);                                                                             \
  /* Inverse ICT (float rows) / RCT (int32 rows) + DC shift + clamp + store, n samples. */                        \
  void ict_store(const ColourRow& row, int n);                                                                   \
  void rct_store(const ColourRow& row, int n);                                                                   \
  }
J2K_IDWT_DECLARE(idwt_base)
J2K_IDWT_DECLARE(idwt_v3)
#undef J2K_IDWT_DECLARE
}  // namespace j2k::decoder::own
