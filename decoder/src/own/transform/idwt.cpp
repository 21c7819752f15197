#include "transform/idwt.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

namespace j2k::decoder::own {

namespace {

constexpr int kPad = 2;      // samples of symmetric extension on each side (one is used per step)
constexpr int kLanes = 8;    // columns synthesised together in the vertical pass

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

template <typename T>
void synth(T* x, int n, int s);
template <>
void synth<std::int32_t>(std::int32_t* x, int n, int s) { synth53<1>(x, n, s); }
template <>
void synth<float>(float* x, int n, int s) { synth97<1>(x, n, s); }
template <typename T>
void synth_lanes(T* x, int n, int s);
template <>
void synth_lanes<std::int32_t>(std::int32_t* x, int n, int s) { synth53<kLanes>(x, n, s); }
template <>
void synth_lanes<float>(float* x, int n, int s) { synth97<kLanes>(x, n, s); }

template <typename T>
void idwt_level(T* buf, int stride, const Rect& res, ThreadPool* pool) {
  const int w = res.width(), h = res.height();
  if (w <= 0 || h <= 0) return;
  const int sx = res.x0 & 1, sy = res.y0 & 1;
  const int low_w = (res.x1 + 1) / 2 - (res.x0 + 1) / 2;  // ceil(x1/2) - ceil(x0/2)
  const int low_h = (res.y1 + 1) / 2 - (res.y0 + 1) / 2;
  // F.3.2 2D_SR: HOR_SR on every row, then VER_SR on every column.
  constexpr int kRowsPerTask = 16;
  const int row_tasks = (h + kRowsPerTask - 1) / kRowsPerTask;
  auto rows = [&](std::size_t task, int) {
    thread_local std::vector<T> tmp;
    tmp.resize(static_cast<std::size_t>(w) + 2 * kPad);
    T* x = tmp.data() + kPad;
    const int y1 = std::min(h, static_cast<int>(task + 1) * kRowsPerTask);
    for (int y = static_cast<int>(task) * kRowsPerTask; y < y1; ++y) {
      T* row = buf + static_cast<std::ptrdiff_t>(y) * stride;
      for (int k = 0; k < low_w; ++k) x[2 * k + sx] = row[k];
      for (int k = 0; k < w - low_w; ++k) x[2 * k + 1 - sx] = row[low_w + k];
      synth<T>(x, w, sx);
      std::memcpy(row, x, sizeof(T) * w);
    }
  };
  const int col_tasks = (w + kLanes - 1) / kLanes;
  auto cols = [&](std::size_t task, int) {
    thread_local std::vector<T> tmp;
    tmp.assign((static_cast<std::size_t>(h) + 2 * kPad) * kLanes, T{});
    T* x = tmp.data() + kPad * kLanes;
    const int c0 = static_cast<int>(task) * kLanes;
    const int cnt = std::min(kLanes, w - c0);
    for (int t = 0; t < h; ++t) {
      const int src = ((t & 1) == sy) ? (t - sy) / 2 : low_h + (t - (1 - sy)) / 2;
      const T* row = buf + static_cast<std::ptrdiff_t>(src) * stride + c0;
      for (int j = 0; j < cnt; ++j) x[t * kLanes + j] = row[j];
    }
    synth_lanes<T>(x, h, sy);
    for (int t = 0; t < h; ++t) {
      T* row = buf + static_cast<std::ptrdiff_t>(t) * stride + c0;
      for (int j = 0; j < cnt; ++j) row[j] = x[t * kLanes + j];
    }
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
  idwt_level(buf, stride, res, pool);
}
void idwt97_level(float* buf, int stride, const Rect& res, ThreadPool* pool) { idwt_level(buf, stride, res, pool); }

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
