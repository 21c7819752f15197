#pragma once
// Inverse discrete wavelet transform (15444-1 Annex F): one synthesis level at a time on a
// buffer that holds the lower resolution in its top-left corner and the three high bands
// beside and below it (the layout 2D_DEINTERLEAVE produces).
#include <cstdint>

#include "decoder/coefficients.hpp"
#include "thread_pool.hpp"

namespace j2k::decoder::own {

/// Synthesises resolution `res` (rectangle on its own grid) in place; `buf` has row
/// stride `stride`. The low band has ceil(x1/2)-ceil(x0/2) columns (F.3.2, 2D_SR).
void idwt53_level(std::int32_t* buf, int stride, const Rect& res, ThreadPool* pool);
void idwt97_level(float* buf, int stride, const Rect& res, ThreadPool* pool);

/// The plain single-line twins used by tests: synthesise n interleaved samples starting
/// at absolute coordinate i0 (x[t] for t in [0, n), even i0 + t = low-pass).
void idwt53_line_reference(std::int32_t* x, int n, int i0);
void idwt97_line_reference(float* x, int n, int i0);

}  // namespace j2k::decoder::own
