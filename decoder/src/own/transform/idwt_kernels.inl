// The IDWT's inner kernels (one row; one strip of columns), compiled twice: baseline
// (idwt.cpp, J2K_IDWT_NS = idwt_base) and x86-64-v3 (idwt_v3.cpp, AVX2 8-wide lifting,
// -ffp-contract=off so the float results are the same bit for bit). Everything here is
// internal or in J2K_IDWT_NS, and no std:: template is instantiated, so the two copies
// share no out-of-line code.
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "transform/idwt_kernels.hpp"

#ifndef J2K_IDWT_NS
#error "define J2K_IDWT_NS before including idwt_kernels.inl"
#endif

namespace j2k::decoder::own {
namespace {

// 9/7 lifting constants (15444-1 Table F.4) and the scaling K (F.3.8.2).
constexpr float kAlpha = -1.586134342059924f;
constexpr float kBeta = -0.052980118572961f;
constexpr float kGamma = 0.882911075530934f;
constexpr float kDelta = 0.443506852043971f;
constexpr float kK = 1.230174104914001f;

inline int clampi(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }

// The fast path lifts the low (L) and high (H) halves as separate contiguous arrays, so
// every lifting step is a plain vectorisable loop. Equivalent index rules (F.3.8 in terms of
// the halves, s = parity of i0):  even step  L[k] op= f(H[k-1+s], H[k+s]),
// odd step  H[k] op= g(L[k-s], L[k+1-s]);  the symmetric extension becomes H[-1] = H[0],
// H[nh] = H[nh-1], L[-1] = L[0], L[nl] = L[nl-1] (tests compare it with synth53/synth97).

struct Lift53 {
  using T = std::int32_t;
  static void scale(T*, T*, int, int) {}
  template <typename Step>
  static void steps(Step&& step) {
    step(true, [](T l, T a, T b) { return l - ((a + b + 2) >> 2); });
    step(false, [](T h, T a, T b) { return h + ((a + b) >> 1); });
  }
};
struct Lift97 {
  using T = float;
  template <typename Step>
  static void steps(Step&& step) {
    step(true, [](T l, T a, T b) { return l - kDelta * (a + b); });
    step(false, [](T h, T a, T b) { return h - kGamma * (a + b); });
    step(true, [](T l, T a, T b) { return l - kBeta * (a + b); });
    step(false, [](T h, T a, T b) { return h - kAlpha * (a + b); });
  }
};

/// One row: halves copied into padded scratch, lifted, interleaved back.
template <typename F>
void synth_row(typename F::T* row, int n, int s, typename F::T* lo, typename F::T* hi) {
  using T = typename F::T;
  if (n == 1) {
    if (s) row[0] = std::is_same_v<T, float> ? static_cast<T>(row[0] * 0.5f) : static_cast<T>(row[0] / 2);
    return;
  }
  const int nl = (n + 1 - s) / 2, nh = n - nl;
  T* L = lo + 1;
  T* H = hi + 1;
  std::memcpy(L, row, sizeof(T) * nl);
  std::memcpy(H, row + nl, sizeof(T) * nh);
  if constexpr (std::is_same_v<T, float>) {
    for (int k = 0; k < nl; ++k) L[k] *= kK;
    for (int k = 0; k < nh; ++k) H[k] *= 1.0f / kK;
  }
  F::steps([&](bool even, auto op) {
    if (even) {
      H[-1] = H[0];
      H[nh] = H[nh - 1];
      const T* a = H - 1 + s;
      const T* b = H + s;
      for (int k = 0; k < nl; ++k) L[k] = op(L[k], a[k], b[k]);
    } else {
      L[-1] = L[0];
      L[nl] = L[nl - 1];
      const T* a = L - s;
      const T* b = L + 1 - s;
      for (int k = 0; k < nh; ++k) H[k] = op(H[k], a[k], b[k]);
    }
  });
  for (int k = 0; k < nl; ++k) row[2 * k + s] = L[k];
  for (int k = 0; k < nh; ++k) row[2 * k + 1 - s] = H[k];
}

/// A strip of columns [x0, x0 + cnt): rows are lifted in place through row pointers (the
/// extension is pointer clamping), then put in interleaved order through `tmp`.
template <typename F>
void synth_columns(typename F::T* buf, int stride, int n, int s, int x0, int cnt, typename F::T** ptrs,
                   typename F::T* tmp) {
  using T = typename F::T;
  if (n == 1) {
    if (s)
      for (int x = 0; x < cnt; ++x) {
        T& v = buf[x0 + x];
        v = std::is_same_v<T, float> ? static_cast<T>(v * 0.5f) : static_cast<T>(v / 2);
      }
    return;
  }
  const int nl = (n + 1 - s) / 2, nh = n - nl;
  T** L = ptrs + 1;  // nl + nh + 4 entries
  T** H = L + nl + 2;
  for (int k = -1; k <= nl; ++k) L[k] = buf + static_cast<std::ptrdiff_t>(clampi(k, 0, nl - 1)) * stride + x0;
  for (int k = -1; k <= nh; ++k) H[k] = buf + static_cast<std::ptrdiff_t>(nl + clampi(k, 0, nh - 1)) * stride + x0;
  if constexpr (std::is_same_v<T, float>) {
    for (int k = 0; k < nl; ++k)
      for (int x = 0; x < cnt; ++x) L[k][x] *= kK;
    for (int k = 0; k < nh; ++k)
      for (int x = 0; x < cnt; ++x) H[k][x] *= 1.0f / kK;
  }
  F::steps([&](bool even, auto op) {
    if (even) {
      for (int k = 0; k < nl; ++k) {
        T* __restrict l = L[k];
        const T* a = H[k - 1 + s];
        const T* b = H[k + s];
        for (int x = 0; x < cnt; ++x) l[x] = op(l[x], a[x], b[x]);
      }
    } else {
      for (int k = 0; k < nh; ++k) {
        T* __restrict h = H[k];
        const T* a = L[k - s];
        const T* b = L[k + 1 - s];
        for (int x = 0; x < cnt; ++x) h[x] = op(h[x], a[x], b[x]);
      }
    }
  });
  for (int k = 0; k < nl; ++k) std::memcpy(tmp + static_cast<std::size_t>(2 * k + s) * cnt, L[k], sizeof(T) * cnt);
  for (int k = 0; k < nh; ++k)
    std::memcpy(tmp + static_cast<std::size_t>(2 * k + 1 - s) * cnt, H[k], sizeof(T) * cnt);
  for (int t = 0; t < n; ++t)
    std::memcpy(buf + static_cast<std::ptrdiff_t>(t) * stride + x0, tmp + static_cast<std::size_t>(t) * cnt,
                sizeof(T) * cnt);
}

}  // namespace

namespace J2K_IDWT_NS {
void rows53(std::int32_t* buf, int stride, int w, int y0, int y1, int s, std::int32_t* lo, std::int32_t* hi) {
  for (int y = y0; y < y1; ++y) synth_row<Lift53>(buf + static_cast<std::ptrdiff_t>(y) * stride, w, s, lo, hi);
}
void rows97(float* buf, int stride, int w, int y0, int y1, int s, float* lo, float* hi) {
  for (int y = y0; y < y1; ++y) synth_row<Lift97>(buf + static_cast<std::ptrdiff_t>(y) * stride, w, s, lo, hi);
}
void cols53(std::int32_t* buf, int stride, int h, int s, int x0, int cnt, std::int32_t** ptrs, std::int32_t* tmp) {
  synth_columns<Lift53>(buf, stride, h, s, x0, cnt, ptrs, tmp);
}
void cols97(float* buf, int stride, int h, int s, int x0, int cnt, float** ptrs, float* tmp) {
  synth_columns<Lift97>(buf, stride, h, s, x0, cnt, ptrs, tmp);
}
}  // namespace J2K_IDWT_NS
}  // namespace j2k::decoder::own
