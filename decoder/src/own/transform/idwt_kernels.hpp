#pragma once
// Entry points of the IDWT kernels (idwt_kernels.inl), one set per instruction-set variant.
#include <cstdint>

namespace j2k::decoder::own {
#define J2K_IDWT_DECLARE(NS)                                                                                      \
  namespace NS {                                                                                                  \
  void rows53(std::int32_t* buf, int stride, int w, int y0, int y1, int s, std::int32_t* lo, std::int32_t* hi);   \
  void rows97(float* buf, int stride, int w, int y0, int y1, int s, float* lo, float* hi);                        \
  void cols53(std::int32_t* buf, int stride, int h, int s, int x0, int cnt, std::int32_t** ptrs, std::int32_t* tmp); \
  void cols97(float* buf, int stride, int h, int s, int x0, int cnt, float** ptrs, float* tmp);                   \
  }
J2K_IDWT_DECLARE(idwt_base)
J2K_IDWT_DECLARE(idwt_v3)
#undef J2K_IDWT_DECLARE
}  // namespace j2k::decoder::own
