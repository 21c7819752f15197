#include "transform/idwt.hpp"

#include "tier1/t1_kernel.hpp"
#include "transform/idwt_kernels.hpp"

#include <algorithm>
#include <cstring>
#include <type_traits>
#include <vector>

#define J2K_IDWT_NS idwt_base
#include "transform/idwt_kernels.inl"

namespace j2k::decoder::own {

namespace {

/// x86-64-v3 kernels where compiled in and the CPU has them (the tier-1 switch, see
/// t1_kernel.hpp, selects them too).
bool use_simd_kernels() {
#if defined(J2K_T1_HAVE_V3)
  return t1_use_v3();
#else
  return false;
#endif
}

constexpr int kPad = 2;      // samples of symmetric extension on each side (one is used per step)

// The 9/7 constants (kAlpha ... kK) come from idwt_kernels.inl, included above.

/// F.3.7 periodic symmetric extension by one sample: x[-1] = x[1], x[n] = x[n-2].
template <int L, typename T>
inline void extend(T* x, int n) {
  for (int j = 0; j < L; ++j) {
    x[-L + j] = x[L + j];
    x[n * L + j] = x[(n - 2) * L + j];
  }
}

/// 1D_SR for the 5/3 filter (F.3.8.1, equations F-5 and F-6). `s` = parity of i0.
template <int L>
void synth53(std::int32_t* x, int n, int s) {
  if (n == 1) {  // F.3.7: a lone sample at an odd coordinate was doubled by the analysis
    if (s)
      for (int j = 0; j < L; ++j) x[j] /= 2;
    return;
  }
  extend<L>(x, n);
  for (int t = s; t < n; t += 2)
    for (int j = 0; j < L; ++j) x[t * L + j] -= (x[(t - 1) * L + j] + x[(t + 1) * L + j] + 2) >> 2;
  extend<L>(x, n);
  for (int t = 1 - s; t < n; t += 2)
    for (int j = 0; j < L; ++j) x[t * L + j] += (x[(t - 1) * L + j] + x[(t + 1) * L + j]) >> 1;
}

/// 1D_SR for the 9/7 filter (F.3.8.2): scaling, then four lifting steps.
template <int L>
void synth97(float* x, int n, int s) {
  if (n == 1) {
    if (s)
      for (int j = 0; j < L; ++j) x[j] *= 0.5f;
    return;
  }
  for (int t = 0; t < n; ++t) {
    const float k = ((t & 1) == s) ? kK : 1.0f / kK;
    for (int j = 0; j < L; ++j) x[t * L + j] *= k;
  }
  auto step = [&](int first, float c) {
    extend<L>(x, n);
    for (int t = first; t < n; t += 2)
      for (int j = 0; j < L; ++j) x[t * L + j] -= c * (x[(t - 1) * L + j] + x[(t + 1) * L + j]);
  };
  step(s, kDelta);
  step(1 - s, kGamma);
  step(s, kBeta);
  step(1 - s, kAlpha);
}

struct Int53 {
  using T = std::int32_t;
};
struct Float97 {
  using T = float;
};

template <typename F>
void idwt_level(typename F::T* buf, int stride, const Rect& res, ThreadPool* pool) {
  using T = typename F::T;
  const int w = res.width(), h = res.height();
  if (w <= 0 || h <= 0) return;
  const int sx = res.x0 & 1, sy = res.y0 & 1;
  // F.3.2 2D_SR: HOR_SR on every row, then VER_SR on every column.
  constexpr int kRowsPerTask = 32;
  const int row_tasks = (h + kRowsPerTask - 1) / kRowsPerTask;
  const bool v3 = use_simd_kernels();
  auto rows = [&](std::size_t task, int) {
    thread_local std::vector<T> lo, hi;
    lo.resize(static_cast<std::size_t>(w) + 4);
    hi.resize(static_cast<std::size_t>(w) + 4);
    const int y0 = static_cast<int>(task) * kRowsPerTask;
    const int y1 = std::min(h, y0 + kRowsPerTask);
    if constexpr (std::is_same_v<T, float>) (v3 ? idwt_v3::rows97 : idwt_base::rows97)(buf, stride, w, y0, y1, sx, lo.data(), hi.data());
    else (v3 ? idwt_v3::rows53 : idwt_base::rows53)(buf, stride, w, y0, y1, sx, lo.data(), hi.data());
  };
  // Strips narrow enough that a strip of all rows stays in the L2 cache.
  constexpr int kStrip = 64;
  const int col_tasks = (w + kStrip - 1) / kStrip;
  auto cols = [&](std::size_t task, int) {
    thread_local std::vector<T*> ptrs;
    thread_local std::vector<T> tmp;
    const int x0 = static_cast<int>(task) * kStrip;
    const int cnt = std::min(kStrip, w - x0);
    ptrs.resize(static_cast<std::size_t>(h) + 4);
    tmp.resize(static_cast<std::size_t>(h) * cnt);
    if constexpr (std::is_same_v<T, float>) (v3 ? idwt_v3::cols97 : idwt_base::cols97)(buf, stride, h, sy, x0, cnt, ptrs.data(), tmp.data());
    else (v3 ? idwt_v3::cols53 : idwt_base::cols53)(buf, stride, h, sy, x0, cnt, ptrs.data(), tmp.data());
  };
  if (pool) {
    pool->parallel_for(static_cast<std::size_t>(row_tasks), rows);
    pool->parallel_for(static_cast<std::size_t>(col_tasks), cols);
  } else {
    for (int i = 0; i < row_tasks; ++i) rows(static_cast<std::size_t>(i), 0);
    for (int i = 0; i < col_tasks; ++i) cols(static_cast<std::size_t>(i), 0);
  }
}

}  // namespace

void idwt53_level(std::int32_t* buf, int stride, const Rect& res, ThreadPool* pool) {
  idwt_level<Int53>(buf, stride, res, pool);
}
void idwt97_level(float* buf, int stride, const Rect& res, ThreadPool* pool) {
  idwt_level<Float97>(buf, stride, res, pool);
}

void idwt53_line_reference(std::int32_t* x, int n, int i0) {
  std::vector<std::int32_t> t(static_cast<std::size_t>(n) + 2 * kPad);
  std::copy(x, x + n, t.begin() + kPad);
  synth53<1>(t.data() + kPad, n, i0 & 1);
  std::copy(t.begin() + kPad, t.begin() + kPad + n, x);
}
void idwt97_line_reference(float* x, int n, int i0) {
  std::vector<float> t(static_cast<std::size_t>(n) + 2 * kPad);
  std::copy(x, x + n, t.begin() + kPad);
  synth97<1>(t.data() + kPad, n, i0 & 1);
  std::copy(t.begin() + kPad, t.begin() + kPad + n, x);
}

}  // namespace j2k::decoder::own
