#pragma once
// Inverse discrete wavelet transform (15444-1 Annex F). The level kernels are in
// idwt_kernels.inl (baseline and x86-64-v3 copies, picked at run time); reconstruct.cpp
// schedules them. This header also has the plain one-line twins that tests compare with.
#include <cstdint>

#include "decoder/coefficients.hpp"
#include "transform/idwt_kernels.hpp"

namespace j2k::decoder::own {

/// One table of reconstruction kernels (dsp.hpp fills it for a CPU-feature mask;
/// idwt_dsp() is the decoder's).
struct IdwtKernels {
  void (*band97)(const IdwtLevel&, float*, std::ptrdiff_t, int, int, float*, const IdwtEmit*);
  void (*band53)(const IdwtLevel&, std::int32_t*, std::ptrdiff_t, int, int, std::int32_t*, const IdwtEmit*);
  void (*copy97)(const IdwtSource&, int, int, int, float*, std::ptrdiff_t, const IdwtEmit*);
  void (*copy53)(const IdwtSource&, int, int, int, std::int32_t*, std::ptrdiff_t, const IdwtEmit*);
  void (*ict_store)(const ColourRow&, int);
  void (*rct_store)(const ColourRow&, int);
};

/// How a level is run: all rows in one go, or in bands of `band` rows (as the thread pool
/// gets them). Same results either way.
enum class IdwtSchedule { fused, split };

/// Test entry points: synthesise resolution `res` (rectangle on its own grid) in place on a
/// buffer in the 2D_DEINTERLEAVE layout (low band top-left, high bands beside and below);
/// `buf` has row stride `stride`.
/// With `emitted` (w x h int32): the finished rows are stored there instead of in `buf`
/// (rounded, shift 0, clamp to +-2^30), as for a picture's last level. `kernels`: the
/// table to run (null: idwt_dsp()).
void idwt53_level(std::int32_t* buf, int stride, const Rect& res, IdwtSchedule schedule, int strip = 64,
                  std::int32_t* emitted = nullptr, const IdwtKernels* kernels = nullptr);
void idwt97_level(float* buf, int stride, const Rect& res, IdwtSchedule schedule, int strip = 64,
                  std::int32_t* emitted = nullptr, const IdwtKernels* kernels = nullptr);

/// The plain single-line twins used by tests: synthesise n interleaved samples starting
/// at absolute coordinate i0 (x[t] for t in [0, n), even i0 + t = low-pass).
void idwt53_line_reference(std::int32_t* x, int n, int i0);
void idwt97_line_reference(float* x, int n, int i0);

}  // namespace j2k::decoder::own
