#include "transform/idwt.hpp"

#include "dsp.hpp"
#include "transform/idwt_kernels.hpp"

#include <algorithm>
#include <cstring>
#include <type_traits>
#include <utility>
#include <vector>

#define J2K_IDWT_NS idwt_base
#include "transform/idwt_kernels.inl"

namespace j2k::decoder::own {

namespace {

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

template <typename T>
void level_deinterleaved(T* buf, int stride, const Rect& res, IdwtSchedule schedule, int strip, std::int32_t* emitted,
                         const IdwtKernels* kernels) {
  const int w = res.width(), h = res.height();
  if (w <= 0 || h <= 0) return;
  const int sx = res.x0 & 1, sy = res.y0 & 1;
  const int nlx = (w + 1 - sx) / 2, nly = (h + 1 - sy) / 2;
  std::vector<T> in(static_cast<std::size_t>(w) * h);
  for (int y = 0; y < h; ++y)
    std::copy(buf + static_cast<std::ptrdiff_t>(y) * stride, buf + static_cast<std::ptrdiff_t>(y) * stride + w,
              in.begin() + static_cast<std::ptrdiff_t>(y) * w);
  auto src = [&](int x0, int y0) {
    return IdwtSource{in.data() + static_cast<std::ptrdiff_t>(y0) * w + x0, w, 1.0f, false};
  };
  IdwtLevel lv{src(0, 0), src(nlx, 0), src(0, nly), src(nlx, nly), w, h, sx, sy};
  std::vector<T> scratch(2 * (static_cast<std::size_t>(w) + 8) + 8 * (static_cast<std::size_t>(w) + 16));
  const IdwtKernels& k = kernels ? *kernels : idwt_dsp();
  IdwtEmit em;
  em.dst = emitted;
  em.dst_stride = w;
  em.x1 = w;
  em.y_hi = h;
  em.lo = -(1 << 30);
  em.hi = 1 << 30;
  const IdwtEmit* e = emitted ? &em : nullptr;
  T* out = emitted ? nullptr : buf;
  const int band = schedule == IdwtSchedule::fused ? h : std::max(strip, 1);
  // Bands in a scrambled order, as threads would finish them.
  std::vector<int> starts;
  for (int y = 0; y < h; y += band) starts.push_back(y);
  std::reverse(starts.begin(), starts.end());
  if (starts.size() > 2) std::swap(starts[0], starts[starts.size() / 2]);
  for (int y0 : starts) {
    if constexpr (std::is_same_v<T, float>) k.band97(lv, out, stride, y0, std::min(h, y0 + band), scratch.data(), e);
    else k.band53(lv, out, stride, y0, std::min(h, y0 + band), scratch.data(), e);
  }
}

}  // namespace

void idwt53_level(std::int32_t* buf, int stride, const Rect& res, IdwtSchedule schedule, int strip,
                  std::int32_t* emitted, const IdwtKernels* kernels) {
  level_deinterleaved(buf, stride, res, schedule, strip, emitted, kernels);
}
void idwt97_level(float* buf, int stride, const Rect& res, IdwtSchedule schedule, int strip, std::int32_t* emitted,
                  const IdwtKernels* kernels) {
  level_deinterleaved(buf, stride, res, schedule, strip, emitted, kernels);
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
