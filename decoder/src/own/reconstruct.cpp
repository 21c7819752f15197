// CPU reconstruction after tier-1: dequantisation (E.1), inverse DWT (F), inverse
// component transform (G.2, G.3), DC level shift (G.1.2) and clamping.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "decoder/coefficients.hpp"
#include "reconstruct_internal.hpp"
#include "thread_pool.hpp"
#include "transform/idwt.hpp"

namespace j2k::decoder {

namespace own {

namespace {

int ceil_shift(long long a, int s) { return static_cast<int>((a + (1LL << s) - 1) >> s); }
Rect shift_rect(const Rect& r, int s) { return {ceil_shift(r.x0, s), ceil_shift(r.y0, s), ceil_shift(r.x1, s), ceil_shift(r.y1, s)}; }

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

using Work = ReconstructScratch::Work;

/// Dequantises every subband into its place in the deinterleaved layout, then synthesises.
void synthesise(const ComponentCoefficients& cc, Work& w, ThreadPool* pool) {
  const int dl = cc.decoded_levels;
  w.rect = shift_rect(cc.rect, cc.levels - dl);
  const int width = w.rect.width(), height = w.rect.height();
  w.is_float = cc.wavelet == Wavelet::irreversible_9_7;
  const std::size_t n = static_cast<std::size_t>(std::max(width, 0)) * std::max(height, 0);
  // No zero fill: the subbands tile the whole area and are all copied in below.
  if (w.is_float) w.floats.resize(n);
  else w.ints.resize(n);
  if (n == 0) return;
  auto place = [&](std::size_t i, int) {
    const SubbandCoefficients& sb = cc.subbands[i];
    int ox = 0, oy = 0;
    if (sb.resolution > 0) {
      Rect lower = shift_rect(cc.rect, cc.levels - sb.resolution + 1);
      if (sb.orientation == BandOrientation::HL || sb.orientation == BandOrientation::HH) ox = lower.width();
      if (sb.orientation == BandOrientation::LH || sb.orientation == BandOrientation::HH) oy = lower.height();
    }
    const int bw = sb.rect.width(), bh = sb.rect.height();
    const std::int32_t* src = cc.data.data() + sb.offset;
    for (int y = 0; y < bh; ++y) {
      const std::int32_t* s = src + static_cast<std::ptrdiff_t>(y) * bw;
      const std::size_t o = static_cast<std::size_t>(oy + y) * width + ox;
      if (w.is_float) {
        // E.1.1.2: value = (q + r) * step with the midpoint already in the low bit.
        const float k = sb.step * 0.5f;
        float* d = w.floats.data() + o;
        for (int x = 0; x < bw; ++x) d[x] = static_cast<float>(s[x]) * k;
      } else {
        std::int32_t* d = w.ints.data() + o;
        // Clamped so corrupt magnitudes cannot overflow the lifting sums (real ones stay
        // below 2^(precision + 2) for the 5/3 filter).
        constexpr std::int32_t kMax = 1 << 26;
        for (int x = 0; x < bw; ++x) d[x] = std::clamp(s[x] >= 0 ? s[x] >> 1 : -((-s[x]) >> 1), -kMax, kMax);
      }
    }
  };
  if (pool) pool->parallel_for(cc.subbands.size(), place);
  else
    for (std::size_t i = 0; i < cc.subbands.size(); ++i) place(i, 0);
  for (int r = 1; r <= dl; ++r) {
    Rect res = shift_rect(cc.rect, cc.levels - r);
    if (w.is_float) idwt97_level(w.floats.data(), width, res, pool);
    else idwt53_level(w.ints.data(), width, res, pool);
  }
}

}  // namespace

Result<PlanarImage> reconstruct_frame(const CoefficientFrame& frame, ThreadPool* pool, ReconstructTimes* times,
                                      ReconstructScratch* scratch) {
  PlanarImage img;
  img.width = ceil_shift(frame.image.x1, frame.reduce) - ceil_shift(frame.image.x0, frame.reduce);
  img.height = ceil_shift(frame.image.y1, frame.reduce) - ceil_shift(frame.image.y0, frame.reduce);
  const std::size_t ncomp = frame.components.size();
  img.planes.resize(ncomp);
  for (std::size_t c = 0; c < ncomp; ++c) {
    const ComponentInfo& ci = frame.components[c];
    Plane& p = img.planes[c];
    p.width = ci.rect.width();
    p.height = ci.rect.height();
    p.dx = ci.dx;
    p.dy = ci.dy;
    p.precision = ci.precision;
    p.is_signed = ci.is_signed;
    p.samples.assign(static_cast<std::size_t>(p.width) * p.height, 0);
  }
  img.colour = ncomp == 1 ? ColourCoding::grey : ColourCoding::unknown;
  double idwt_ms = 0, colour_ms = 0;

  ReconstructScratch local;
  std::vector<Work>& work = scratch ? scratch->work : local.work;
  work.resize(ncomp);
  for (const TileCoefficients& tile : frame.tiles) {
    if (tile.components.size() != ncomp) return make_error(ErrorKind::corrupt, "tile without all its components");
    auto t0 = std::chrono::steady_clock::now();
    for (std::size_t c = 0; c < ncomp; ++c) synthesise(tile.components[c], work[c], pool);
    idwt_ms += ms_since(t0);
    t0 = std::chrono::steady_clock::now();

    // G.2/G.3: inverse component transform on the first three components when they match.
    bool mct = tile.mct && ncomp >= 3;
    if (mct) {
      for (int c = 1; c < 3; ++c)
        if (work[c].rect.width() != work[0].rect.width() || work[c].rect.height() != work[0].rect.height() ||
            work[c].is_float != work[0].is_float)
          mct = false;
    }
    if (mct) {
      img.colour = ColourCoding::rgb;
      const std::size_t n = static_cast<std::size_t>(work[0].rect.width()) * work[0].rect.height();
      constexpr std::size_t kChunk = 16384;
      auto colour = [&](std::size_t task, int) {
        const std::size_t i0 = task * kChunk, i1 = std::min(n, i0 + kChunk);
        if (work[0].is_float) {
          float *y = work[0].floats.data(), *cb = work[1].floats.data(), *cr = work[2].floats.data();
          for (std::size_t i = i0; i < i1; ++i) {  // G-8..G-10 (ICT inverse)
            const float Y = y[i], U = cb[i], V = cr[i];
            y[i] = Y + 1.402f * V;
            cb[i] = Y - 0.34413f * U - 0.71414f * V;
            cr[i] = Y + 1.772f * U;
          }
        } else {
          std::int32_t *y = work[0].ints.data(), *cb = work[1].ints.data(), *cr = work[2].ints.data();
          for (std::size_t i = i0; i < i1; ++i) {  // G-6 (RCT inverse)
            const std::int32_t Y = y[i], U = cb[i], V = cr[i];
            const std::int32_t g = Y - ((U + V) >> 2);
            y[i] = V + g;
            cb[i] = g;
            cr[i] = U + g;
          }
        }
      };
      const std::size_t tasks = (n + kChunk - 1) / kChunk;
      if (pool) pool->parallel_for(tasks, colour);
      else
        for (std::size_t i = 0; i < tasks; ++i) colour(i, 0);
    }
    // G.1.2 DC level shift, clamp to the component's range, copy into the image.
    auto store = [&](std::size_t c, int) {
      const ComponentInfo& ci = frame.components[c];
      const Work& w = work[c];
      Plane& p = img.planes[c];
      const std::int32_t shift = ci.is_signed ? 0 : 1 << (ci.precision - 1);
      const std::int32_t lo = ci.is_signed ? -(1 << (ci.precision - 1)) : 0;
      const std::int32_t hi = ci.is_signed ? (1 << (ci.precision - 1)) - 1 : (1 << ci.precision) - 1;
      const int ox = w.rect.x0 - ci.rect.x0, oy = w.rect.y0 - ci.rect.y0;
      const int ww = w.rect.width(), wh = w.rect.height();
      for (int y = 0; y < wh; ++y) {
        if (oy + y < 0 || oy + y >= p.height) continue;
        std::int32_t* dst = p.samples.data() + static_cast<std::size_t>(oy + y) * p.width + ox;
        const int x0 = std::max(0, -ox), x1 = std::min(ww, p.width - ox);
        if (w.is_float) {
          const float* src = w.floats.data() + static_cast<std::size_t>(y) * ww;
          // Shift and clamp in float (exact for these integers), then round to nearest even
          // like lrintf; clamping first also keeps huge values from corrupt data defined.
          const float fshift = static_cast<float>(shift), flo = static_cast<float>(lo), fhi = static_cast<float>(hi);
          int x = x0;
#if defined(__SSE2__)
          const __m128 vs = _mm_set1_ps(fshift), vlo = _mm_set1_ps(flo), vhi = _mm_set1_ps(fhi);
          for (; x + 4 <= x1; x += 4) {
            __m128 v = _mm_add_ps(_mm_loadu_ps(src + x), vs);
            v = _mm_min_ps(_mm_max_ps(v, vlo), vhi);  // NaN becomes lo
            _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + x), _mm_cvtps_epi32(v));
          }
#endif
          for (; x < x1; ++x) {
            float v = src[x] + fshift;
            v = v >= flo ? (v <= fhi ? v : fhi) : flo;
            dst[x] = static_cast<std::int32_t>(std::nearbyint(v));
          }
        } else {
          const std::int32_t* src = w.ints.data() + static_cast<std::size_t>(y) * ww;
          for (int x = x0; x < x1; ++x) {
            const std::int64_t v = static_cast<std::int64_t>(src[x]) + shift;
            dst[x] = static_cast<std::int32_t>(std::clamp<std::int64_t>(v, lo, hi));
          }
        }
      }
    };
    if (pool) pool->parallel_for(ncomp, store);
    else
      for (std::size_t c = 0; c < ncomp; ++c) store(c, 0);
    colour_ms += ms_since(t0);
  }
  if (times) {
    times->idwt_ms = idwt_ms;
    times->colour_ms = colour_ms;
  }
  return img;
}

}  // namespace own

Result<PlanarImage> reconstruct(const CoefficientFrame& frame, int threads, ReconstructTimes* times) {
  std::unique_ptr<own::ThreadPool> pool;
  if (threads > 1) pool = std::make_unique<own::ThreadPool>(threads);
  return own::reconstruct_frame(frame, pool.get(), times);
}

}  // namespace j2k::decoder
