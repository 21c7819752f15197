#include "transform/idwt.hpp"

#include <algorithm>
#include <cstring>
#include <type_traits>
#include <vector>

namespace j2k::decoder::own {

namespace {

constexpr int kPad = 2;      // samples of symmetric extension on each side (one is used per step)

// 9/7 lifting constants (15444-1 Table F.4) and the scaling K (F.3.8.2).
constexpr float kAlpha = -1.586134342059924f;
constexpr float kBeta = -0.052980118572961f;
constexpr float kGamma = 0.882911075530934f;
constexpr float kDelta = 0.443506852043971f;
constexpr float kK = 1.230174104914001f;

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
void synth_columns(typename F::T* buf, int stride, int n, int s, int x0, int cnt, std::vector<typename F::T*>& ptrs,
                   std::vector<typename F::T>& tmp) {
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
  ptrs.resize(static_cast<std::size_t>(nl + nh + 4));
  T** L = ptrs.data() + 1;
  T** H = L + nl + 2;
  for (int k = -1; k <= nl; ++k) L[k] = buf + static_cast<std::ptrdiff_t>(std::clamp(k, 0, nl - 1)) * stride + x0;
  for (int k = -1; k <= nh; ++k) H[k] = buf + static_cast<std::ptrdiff_t>(nl + std::clamp(k, 0, nh - 1)) * stride + x0;
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
  tmp.resize(static_cast<std::size_t>(n) * cnt);
  for (int k = 0; k < nl; ++k) std::memcpy(tmp.data() + static_cast<std::size_t>(2 * k + s) * cnt, L[k], sizeof(T) * cnt);
  for (int k = 0; k < nh; ++k)
    std::memcpy(tmp.data() + static_cast<std::size_t>(2 * k + 1 - s) * cnt, H[k], sizeof(T) * cnt);
  for (int t = 0; t < n; ++t)
    std::memcpy(buf + static_cast<std::ptrdiff_t>(t) * stride + x0, tmp.data() + static_cast<std::size_t>(t) * cnt,
                sizeof(T) * cnt);
}

template <typename F>
void idwt_level(typename F::T* buf, int stride, const Rect& res, ThreadPool* pool) {
  using T = typename F::T;
  const int w = res.width(), h = res.height();
  if (w <= 0 || h <= 0) return;
  const int sx = res.x0 & 1, sy = res.y0 & 1;
  // F.3.2 2D_SR: HOR_SR on every row, then VER_SR on every column.
  constexpr int kRowsPerTask = 32;
  const int row_tasks = (h + kRowsPerTask - 1) / kRowsPerTask;
  auto rows = [&](std::size_t task, int) {
    thread_local std::vector<T> lo, hi;
    lo.resize(static_cast<std::size_t>(w) + 4);
    hi.resize(static_cast<std::size_t>(w) + 4);
    const int y1 = std::min(h, static_cast<int>(task + 1) * kRowsPerTask);
    for (int y = static_cast<int>(task) * kRowsPerTask; y < y1; ++y)
      synth_row<F>(buf + static_cast<std::ptrdiff_t>(y) * stride, w, sx, lo.data(), hi.data());
  };
  // Strips narrow enough that a strip of all rows stays in the L2 cache.
  constexpr int kStrip = 64;
  const int col_tasks = (w + kStrip - 1) / kStrip;
  auto cols = [&](std::size_t task, int) {
    thread_local std::vector<T*> ptrs;
    thread_local std::vector<T> tmp;
    const int x0 = static_cast<int>(task) * kStrip;
    synth_columns<F>(buf, stride, h, sy, x0, std::min(kStrip, w - x0), ptrs, tmp);
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
  idwt_level<Lift53>(buf, stride, res, pool);
}
void idwt97_level(float* buf, int stride, const Rect& res, ThreadPool* pool) {
  idwt_level<Lift97>(buf, stride, res, pool);
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
