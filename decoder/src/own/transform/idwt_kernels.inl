// The reconstruction kernels (one synthesis level, row by row or in column strips; the
// colour transform and the store into the picture), compiled twice: baseline (idwt.cpp,
// J2K_IDWT_NS = idwt_base) and x86-64-v3 (idwt_v3.cpp, AVX2 8-wide, -ffp-contract=off so
// the float results are the same bit for bit). Everything here is internal or in
// J2K_IDWT_NS, and no std:: template or inline function is instantiated, so the two copies
// share no out-of-line code.
//
// Every sample goes through exactly the operations of the plain twins (synth53/synth97 in
// idwt.cpp, applied as HOR_SR on every row then VER_SR on every column): dequantisation
// q * (step / 2), the K scaling of the rows, then of the columns, and the lifting steps in
// order; only the order in which samples are visited differs, so results do not depend on
// the schedule (one row at a time, bands of rows, thread count). Several steps may share
// one pass over a row (load and first lifting step, last step and interleave, the vertical
// steps of one streaming step), but each sample still gets the same operations in the same
// order; the fused loops are written once over a register of lanes (Wide: AVX2 or SSE2;
// Plain for the tails), each lane doing what the plain twins do.
//
// Picture rows are written with streaming stores (written once, not read here); every entry
// point that may stream ends with stream_fence() so other threads see the picture.
#include <cstddef>
#include <cstdint>

#include "transform/idwt_kernels.hpp"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#if defined(__AVX2__)
#include <immintrin.h>
#endif

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
constexpr float kInvK = 1.0f / kK;

/// Every input of a 5/3 level, the bands' dequantised values and the lower level's samples
/// alike, is clamped to +-2^26. Real ones stay far below (the pipelines stop at 16-bit
/// samples: bands below 2^18, lower levels' samples below 2^18); corrupt ones could
/// otherwise grow level by level until a lifting sum overflows int32 (a checkerboard of
/// 2^26 in every band of 8 levels does). Within one level from clamped inputs no value
/// passes 2^29.
constexpr std::int32_t kMax53 = 1 << 26;
inline std::int32_t clamp53(std::int32_t v) { return v < -kMax53 ? -kMax53 : v > kMax53 ? kMax53 : v; }

/// Reversible dequantisation: sign(v) * (|v| >> 1), clamped (clamp53).
inline std::int32_t dequant53(std::int32_t s) {
  const std::uint32_t m = static_cast<std::uint32_t>(s >> 31);
  const std::uint32_t a = ((static_cast<std::uint32_t>(s) ^ m) - m) >> 1;
  return clamp53(static_cast<std::int32_t>((a ^ m) - m));
}

// A register of samples for the fused lifting kernels, which are written once over it: 8
// lanes (AVX2), 4 (SSE2), or 1 (plain C++, which also does the tails). Each operation is
// the one the plain twins do on every lane, so the lane count does not change results.
struct Plain {
  static constexpr int N = 1;
  using F = float;
  using I = std::int32_t;
  static F load(const float* p) { return *p; }
  static I load(const std::int32_t* p) { return *p; }
  static void store(float* p, F v) { *p = v; }
  static void store(std::int32_t* p, I v) { *p = v; }
  static F set(float c) { return c; }
  static F mul(F a, F b) { return a * b; }
  static F cvt(I v) { return static_cast<float>(v); }
  /// d[0 .. 2N) = lo[0], hi[0], lo[1], hi[1], ...
  static void store_pairs(float* d, F lo, F hi) {
    d[0] = lo;
    d[1] = hi;
  }
  /// 9/7 step: r - c * (a + b).
  static F lift(F r, F a, F b, F c) { return r - c * (a + b); }
  /// 5/3 steps (F-5, F-6).
  static I lift_low(I l, I a, I b) { return l - ((a + b + 2) >> 2); }
  static I lift_high(I h, I a, I b) { return h + ((a + b) >> 1); }
};
#if defined(__AVX2__)
struct Wide {
  static constexpr int N = 8;
  using F = __m256;
  using I = __m256i;
  static F load(const float* p) { return _mm256_loadu_ps(p); }
  static I load(const std::int32_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
  static void store(float* p, F v) { _mm256_storeu_ps(p, v); }
  static void store(std::int32_t* p, I v) { _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), v); }
  static F set(float c) { return _mm256_set1_ps(c); }
  static F mul(F a, F b) { return _mm256_mul_ps(a, b); }
  static F cvt(I v) { return _mm256_cvtepi32_ps(v); }
  static void store_pairs(float* d, F lo, F hi) {
    const F a = _mm256_unpacklo_ps(lo, hi), b = _mm256_unpackhi_ps(lo, hi);
    _mm256_storeu_ps(d, _mm256_permute2f128_ps(a, b, 0x20));
    _mm256_storeu_ps(d + 8, _mm256_permute2f128_ps(a, b, 0x31));
  }
  static F lift(F r, F a, F b, F c) { return _mm256_sub_ps(r, _mm256_mul_ps(c, _mm256_add_ps(a, b))); }
  static I lift_low(I l, I a, I b) {
    return _mm256_sub_epi32(l, _mm256_srai_epi32(_mm256_add_epi32(_mm256_add_epi32(a, b), _mm256_set1_epi32(2)), 2));
  }
  static I lift_high(I h, I a, I b) { return _mm256_add_epi32(h, _mm256_srai_epi32(_mm256_add_epi32(a, b), 1)); }
};
#elif defined(__SSE2__)
struct Wide {
  static constexpr int N = 4;
  using F = __m128;
  using I = __m128i;
  static F load(const float* p) { return _mm_loadu_ps(p); }
  static I load(const std::int32_t* p) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p)); }
  static void store(float* p, F v) { _mm_storeu_ps(p, v); }
  static void store(std::int32_t* p, I v) { _mm_storeu_si128(reinterpret_cast<__m128i*>(p), v); }
  static F set(float c) { return _mm_set1_ps(c); }
  static F mul(F a, F b) { return _mm_mul_ps(a, b); }
  static F cvt(I v) { return _mm_cvtepi32_ps(v); }
  static void store_pairs(float* d, F lo, F hi) {
    _mm_storeu_ps(d, _mm_unpacklo_ps(lo, hi));
    _mm_storeu_ps(d + 4, _mm_unpackhi_ps(lo, hi));
  }
  static F lift(F r, F a, F b, F c) { return _mm_sub_ps(r, _mm_mul_ps(c, _mm_add_ps(a, b))); }
  static I lift_low(I l, I a, I b) {
    return _mm_sub_epi32(l, _mm_srai_epi32(_mm_add_epi32(_mm_add_epi32(a, b), _mm_set1_epi32(2)), 2));
  }
  static I lift_high(I h, I a, I b) { return _mm_add_epi32(h, _mm_srai_epi32(_mm_add_epi32(a, b), 1)); }
};
#else
using Wide = Plain;
#endif

/// Columns [i, n) of row `row` of a 9/7 input, as level samples times k (q * (step / 2) * k
/// for quantised coefficients, x * k for the previous level's output), handed to
/// put(x, lanes) V::N at a time; returns where it stopped. With `ahead`, the same columns
/// of the source's next row are prefetched on the way: the inputs are read once, from
/// memory, and that row is loaded two level rows later.
template <typename V, typename Put>
int load_span(const IdwtSource& src, int row, int i, int n, float k, bool ahead, Put&& put) {
  constexpr int kLine = 16;  // samples per 64-byte cache line
  const std::ptrdiff_t at = static_cast<std::ptrdiff_t>(row) * src.stride, pre = ahead ? src.stride : 0;
  const auto vk = V::set(k);
  auto run = [&](const auto* p, auto&& one) {
    for (; i + kLine <= n; i += kLine) {
      __builtin_prefetch(p + pre + i);
      for (int x = i; x < i + kLine; x += V::N) one(x);
    }
    for (; i + V::N <= n; i += V::N) one(i);
  };
  if (src.quantised) {
    const std::int32_t* p = static_cast<const std::int32_t*>(src.data) + at;
    const auto sc = V::set(src.scale);
    run(p, [&](int x) { put(x, V::mul(V::mul(V::cvt(V::load(p + x)), sc), vk)); });
  } else {
    const float* p = static_cast<const float*>(src.data) + at;
    run(p, [&](int x) { put(x, V::mul(V::load(p + x), vk)); });
  }
  return i;
}

/// n samples of row `row` of `src` into dst, multiplied by k (9/7; k = 1 leaves them as
/// dequantised); see load_span for `ahead`.
inline void load_row(const IdwtSource& src, int row, int n, float k, float* __restrict dst, bool ahead = false) {
  auto body = [&](auto lanes, int i) {
    using V = decltype(lanes);
    return load_span<V>(src, row, i, n, k, ahead, [&](int x, auto v) { V::store(dst + x, v); });
  };
  body(Plain{}, body(Wide{}, 0));
}

/// load_row followed by a lifting step on the loaded samples in the same pass:
/// dst[i] = v - c * (a[i] + b[i]).
inline void load_lift(const IdwtSource& src, int row, int n, float k, bool ahead, float* __restrict dst,
                      const float* a, const float* b, float c) {
  auto body = [&](auto lanes, int i) {
    using V = decltype(lanes);
    const auto vc = V::set(c);
    return load_span<V>(src, row, i, n, k, ahead,
                        [&](int x, auto v) { V::store(dst + x, V::lift(v, V::load(a + x), V::load(b + x), vc)); });
  };
  body(Plain{}, body(Wide{}, 0));
}

/// One lifting step on a row half: r[i] = r[i] - c * (a[i] + b[i]), i < n.
inline void lift_row(float* __restrict r, const float* a, const float* b, float c, int n) {
  auto body = [&](auto lanes, int i) {
    using V = decltype(lanes);
    const auto vc = V::set(c);
    for (; i + V::N <= n; i += V::N) V::store(r + i, V::lift(V::load(r + i), V::load(a + i), V::load(b + i), vc));
    return i;
  };
  body(Plain{}, body(Wide{}, 0));
}

/// The last lifting step on the high half, interleaved with the low half on the way out:
/// h'[i] = h[i] - c * (l[i] + l[i + 1]), dst[2i] = l[i] * f, dst[2i + 1] = h'[i] * f, i < n.
inline void lift_zip(float* __restrict dst, const float* l, const float* h, float c, float f, int n) {
  auto body = [&](auto lanes, int i) {
    using V = decltype(lanes);
    const auto vc = V::set(c), vf = V::set(f);
    for (; i + V::N <= n; i += V::N) {
      const auto lo = V::load(l + i);
      const auto hi = V::lift(V::load(h + i), lo, V::load(l + i + 1), vc);
      V::store_pairs(dst + 2 * i, V::mul(lo, vf), V::mul(hi, vf));
    }
    return i;
  };
  body(Plain{}, body(Wide{}, 0));
}

/// n samples of row `row` of a 5/3 input into dst, dequantised where quantised, clamped
/// (clamp53) either way; with `ahead`, the next row's lines are prefetched first (see
/// load_span; a separate loop, so that the copy loop stays simple enough to be vectorised).
inline void load_row(const IdwtSource& src, int row, int n, std::int32_t* __restrict dst, bool ahead = false) {
  constexpr int kLine = 16;  // samples per 64-byte cache line
  const std::int32_t* p = static_cast<const std::int32_t*>(src.data) + static_cast<std::ptrdiff_t>(row) * src.stride;
  if (ahead)
    for (int i = 0; i < n; i += kLine) __builtin_prefetch(p + src.stride + i);
  if (src.quantised)
    for (int i = 0; i < n; ++i) dst[i] = dequant53(p[i]);
  else
    for (int i = 0; i < n; ++i) dst[i] = clamp53(p[i]);
}

// Float → int32 with DC shift, clamp (NaN becomes lo) and rounding to nearest even.
inline std::int32_t store_one(float v, float fshift, float flo, float fhi) {
  v = v + fshift;
  v = v >= flo ? (v <= fhi ? v : fhi) : flo;
  return static_cast<std::int32_t>(__builtin_nearbyintf(v));
}

// Rows at least this long are written with streaming (non-temporal) stores: a picture row
// is written once and not read again here, so fetching its lines into the cache first (the
// read for ownership of an ordinary store) only costs memory bandwidth. Callers that
// stream must end with stream_fence() before other threads may read the picture.
constexpr int kStreamMin = 256;

inline void stream_fence() {
#if defined(__SSE2__)
  _mm_sfence();
#endif
}

inline void store_float(const float* src, std::int32_t* dst, int n, std::int32_t shift, std::int32_t lo,
                        std::int32_t hi) {
  const float fshift = static_cast<float>(shift), flo = static_cast<float>(lo), fhi = static_cast<float>(hi);
  int x = 0;
#if defined(__AVX2__)
  {
    const __m256 vs = _mm256_set1_ps(fshift), vlo = _mm256_set1_ps(flo), vhi = _mm256_set1_ps(fhi);
    auto cvt = [&](int i) {
      __m256 v = _mm256_add_ps(_mm256_loadu_ps(src + i), vs);
      v = _mm256_min_ps(_mm256_max_ps(v, vlo), vhi);
      return _mm256_cvtps_epi32(v);
    };
    if (n >= kStreamMin) {  // head up to a 32-byte boundary of dst, then streaming stores
      for (; (reinterpret_cast<std::uintptr_t>(dst + x) & 31) != 0; ++x) dst[x] = store_one(src[x], fshift, flo, fhi);
      for (; x + 8 <= n; x += 8) _mm256_stream_si256(reinterpret_cast<__m256i*>(dst + x), cvt(x));
    }
    for (; x + 8 <= n; x += 8) _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + x), cvt(x));
  }
#endif
#if defined(__SSE2__)
  {
    const __m128 vs = _mm_set1_ps(fshift), vlo = _mm_set1_ps(flo), vhi = _mm_set1_ps(fhi);
    auto cvt = [&](int i) {
      __m128 v = _mm_add_ps(_mm_loadu_ps(src + i), vs);
      v = _mm_min_ps(_mm_max_ps(v, vlo), vhi);
      return _mm_cvtps_epi32(v);
    };
    if (n - x >= kStreamMin) {
      for (; (reinterpret_cast<std::uintptr_t>(dst + x) & 15) != 0; ++x) dst[x] = store_one(src[x], fshift, flo, fhi);
      for (; x + 4 <= n; x += 4) _mm_stream_si128(reinterpret_cast<__m128i*>(dst + x), cvt(x));
    }
    for (; x + 4 <= n; x += 4) _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + x), cvt(x));
  }
#endif
  for (; x < n; ++x) dst[x] = store_one(src[x], fshift, flo, fhi);
}
inline std::int32_t store_one(std::int32_t v, std::int32_t shift, std::int32_t lo, std::int32_t hi) {
  const std::int64_t w = static_cast<std::int64_t>(v) + shift;
  return static_cast<std::int32_t>(w < lo ? lo : w > hi ? hi : w);
}
inline void store_int(const std::int32_t* src, std::int32_t* dst, int n, std::int32_t shift, std::int32_t lo,
                      std::int32_t hi) {
  int x = 0;
#if defined(__AVX2__)
  if (lo <= hi) {
    // clamp(v + shift, lo, hi) = clamp(v, lo - shift, hi - shift) + shift, the bounds cut to
    // int32 (v never passes a bound beyond them), so no sum can overflow.
    constexpr std::int64_t kMin = INT32_MIN, kMax = INT32_MAX;
    const std::int64_t blo = std::int64_t{lo} - shift, bhi = std::int64_t{hi} - shift;
    const __m256i vlo = _mm256_set1_epi32(static_cast<std::int32_t>(blo < kMin ? kMin : blo));
    const __m256i vhi = _mm256_set1_epi32(static_cast<std::int32_t>(bhi > kMax ? kMax : bhi));
    const __m256i vs = _mm256_set1_epi32(shift);
    auto one = [&](int i) {
      const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i));
      return _mm256_add_epi32(_mm256_min_epi32(_mm256_max_epi32(v, vlo), vhi), vs);
    };
    if (n >= kStreamMin) {  // as store_float: streaming stores from a 32-byte boundary
      for (; (reinterpret_cast<std::uintptr_t>(dst + x) & 31) != 0; ++x) dst[x] = store_one(src[x], shift, lo, hi);
      for (; x + 8 <= n; x += 8) _mm256_stream_si256(reinterpret_cast<__m256i*>(dst + x), one(x));
    }
    for (; x + 8 <= n; x += 8) _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + x), one(x));
  }
#endif
  for (; x < n; ++x) dst[x] = store_one(src[x], shift, lo, hi);
}
inline void store_row(const float* src, std::int32_t* dst, int n, const IdwtEmit& e) {
  store_float(src, dst, n, e.shift, e.lo, e.hi);
}
inline void store_row(const std::int32_t* src, std::int32_t* dst, int n, const IdwtEmit& e) {
  store_int(src, dst, n, e.shift, e.lo, e.hi);
}

/// Row t (columns [x0, x0 + cnt)) of a finished level into the picture.
/// `src` points at column x0 of row t.
template <typename T>
inline void emit_row(const IdwtEmit& e, const T* src, int t, int x0, int cnt) {
  if (t < e.y_lo || t >= e.y_hi) return;
  const int xa = x0 > e.x0 ? x0 : e.x0;
  const int xb = x0 + cnt < e.x1 ? x0 + cnt : e.x1;
  if (xa >= xb) return;
  store_row(src + (xa - x0), e.dst + static_cast<std::ptrdiff_t>(t + e.dy) * e.dst_stride + xa + e.dx, xb - xa, e);
}

/// All four vertical 9/7 steps of one streaming step (see vstream) in one pass over the
/// columns [x, cnt): r[i] is level row m - i (i = 0..5), step j updates row m - 1 - j from
/// rows m - 2 - j and m - j (the latter just updated by step j - 1). Each row is loaded and
/// stored once instead of once per step it takes part in. Rows m - 3 and m - 4 are final
/// after it; with kOut they are also stored to o[0] and o[1] (the level's output), and row
/// m - 4, not needed again, only there. Returns where it stopped.
template <typename V, bool kOut>
int vfused97(float* const* r, float* const* o, int x, int cnt) {
  float* __restrict r1 = r[1];
  float* __restrict r2 = r[2];
  float* __restrict r3 = r[3];
  float* __restrict r4 = r[4];
  const float* r0 = r[0];
  const float* r5 = r[5];
  float* __restrict o3 = kOut ? o[0] : nullptr;
  float* __restrict o4 = kOut ? o[1] : nullptr;
  const auto d = V::set(kDelta), g = V::set(kGamma), b = V::set(kBeta), a = V::set(kAlpha);
  for (; x + V::N <= cnt; x += V::N) {
    const auto v0 = V::load(r0 + x), v5 = V::load(r5 + x);
    const auto v1 = V::lift(V::load(r1 + x), V::load(r2 + x), v0, d);
    const auto v2 = V::lift(V::load(r2 + x), V::load(r3 + x), v1, g);
    const auto v3 = V::lift(V::load(r3 + x), V::load(r4 + x), v2, b);
    const auto v4 = V::lift(V::load(r4 + x), v5, v3, a);
    V::store(r1 + x, v1);
    V::store(r2 + x, v2);
    V::store(r3 + x, v3);
    if constexpr (kOut) {
      V::store(o3 + x, v3);
      V::store(o4 + x, v4);
    } else {
      V::store(r4 + x, v4);
    }
  }
  return x;
}

/// The same for 5/3: r[i] is row m - i (i = 0..3), step 0 on row m - 1, step 1 on m - 2;
/// rows m - 1 and m - 2 are final after it (o[0], o[1]).
template <typename V, bool kOut>
int vfused53(std::int32_t* const* r, std::int32_t* const* o, int x, int cnt) {
  std::int32_t* __restrict r1 = r[1];
  std::int32_t* __restrict r2 = r[2];
  const std::int32_t* r0 = r[0];
  const std::int32_t* r3 = r[3];
  std::int32_t* __restrict o1 = kOut ? o[0] : nullptr;
  std::int32_t* __restrict o2 = kOut ? o[1] : nullptr;
  for (; x + V::N <= cnt; x += V::N) {
    const auto v1 = V::lift_low(V::load(r1 + x), V::load(r2 + x), V::load(r0 + x));
    const auto v2 = V::lift_high(V::load(r2 + x), V::load(r3 + x), v1);
    V::store(r1 + x, v1);
    if constexpr (kOut) {
      V::store(o1 + x, v1);
      V::store(o2 + x, v2);
    } else {
      V::store(r2 + x, v2);
    }
  }
  return x;
}

struct Lift53 {
  using T = std::int32_t;
  static constexpr int kSteps = 2;
  template <typename Step>
  static void steps(Step&& step) {
    step(true, [](T l, T a, T b) { return l - ((a + b + 2) >> 2); });
    step(false, [](T h, T a, T b) { return h + ((a + b) >> 1); });
  }
  /// All steps of one streaming step at once (vfused53); o: null or the output rows of the
  /// two rows it finishes.
  static void vfused(T* const* r, T* const* o, int cnt) {
    if (o) vfused53<Plain, true>(r, o, vfused53<Wide, true>(r, o, 0, cnt), cnt);
    else vfused53<Plain, false>(r, o, vfused53<Wide, false>(r, o, 0, cnt), cnt);
  }
  /// Step j of the vertical lifting on one row piece: r = op_j(r, a, b).
  static void vstep(int j, T* __restrict r, const T* a, const T* b, int cnt) {
    if (j == 0)
      for (int x = 0; x < cnt; ++x) r[x] = r[x] - ((a[x] + b[x] + 2) >> 2);
    else
      for (int x = 0; x < cnt; ++x) r[x] = r[x] + ((a[x] + b[x]) >> 1);
  }
};
struct Lift97 {
  using T = float;
  static constexpr int kSteps = 4;
  /// As Lift53::vfused (vfused97).
  static void vfused(T* const* r, T* const* o, int cnt) {
    if (o) vfused97<Plain, true>(r, o, vfused97<Wide, true>(r, o, 0, cnt), cnt);
    else vfused97<Plain, false>(r, o, vfused97<Wide, false>(r, o, 0, cnt), cnt);
  }
  static void vstep(int j, T* __restrict r, const T* a, const T* b, int cnt) {
    const float c = j == 0 ? kDelta : j == 1 ? kGamma : j == 2 ? kBeta : kAlpha;
    for (int x = 0; x < cnt; ++x) r[x] = r[x] - c * (a[x] + b[x]);
  }
};

/// dst[2i] = a[i], dst[2i + 1] = b[i] for i < n.
inline void zip(std::int32_t* __restrict dst, const std::int32_t* a, const std::int32_t* b, int n) {
  int i = 0;
#if defined(__AVX2__)
  for (; i + 8 <= n; i += 8) {
    const __m256i va = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + i));
    const __m256i vb = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + i));
    const __m256i lo = _mm256_unpacklo_epi32(va, vb), hi = _mm256_unpackhi_epi32(va, vb);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + 2 * i), _mm256_permute2x128_si256(lo, hi, 0x20));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + 2 * i + 8), _mm256_permute2x128_si256(lo, hi, 0x31));
  }
#elif defined(__SSE2__)
  for (; i + 4 <= n; i += 4) {
    const __m128i va = _mm_loadu_si128(reinterpret_cast<const __m128i*>(a + i));
    const __m128i vb = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + i));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + 2 * i), _mm_unpacklo_epi32(va, vb));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + 2 * i + 4), _mm_unpackhi_epi32(va, vb));
  }
#endif
  for (; i < n; ++i) {
    dst[2 * i] = a[i];
    dst[2 * i + 1] = b[i];
  }
}

/// Which row of which inputs level row y comes from: the low half from LL (low rows) or LH
/// (high rows), the high half from HL or HH; `ahead` when the inputs have a next row (to
/// prefetch).
struct RowInputs {
  bool low;
  int k;
  const IdwtSource* sl;
  const IdwtSource* sh;
  bool ahead;
};
inline RowInputs row_inputs(const IdwtLevel& lv, int y) {
  const bool low = ((y ^ lv.sy) & 1) == 0;
  const int k = low ? (y - lv.sy) >> 1 : (y - 1 + lv.sy) >> 1;
  const int low_rows = (lv.h + 1 - lv.sy) / 2;
  const int rows = low ? low_rows : lv.h - low_rows;
  return {low, k, low ? &lv.ll : &lv.lh, low ? &lv.hl : &lv.hh, k + 1 < rows};
}

/// HOR_SR of 5/3 level row y into dst (w samples); a lone row at an odd coordinate is
/// halved (VER_SR of one sample). `scratch` holds 2 * (w + 8) samples.
void hrow53(const IdwtLevel& lv, int y, std::int32_t* __restrict dst, std::int32_t* scratch) {
  using T = std::int32_t;
  const RowInputs in = row_inputs(lv, y);
  const int n = lv.w, s = lv.sx;
  const bool halve = lv.h == 1 && lv.sy;
  if (n == 1) {
    T v;
    if (s) {
      load_row(*in.sh, in.k, 1, &v);
      v = v / 2;
    } else {
      load_row(*in.sl, in.k, 1, &v);
    }
    dst[0] = halve ? v / 2 : v;
    return;
  }
  const int nl = (n + 1 - s) / 2, nh = n - nl;
  T* L = scratch + 4;
  T* H = scratch + n + 12;
  load_row(*in.sl, in.k, nl, L, in.ahead);
  load_row(*in.sh, in.k, nh, H, in.ahead);
  Lift53::steps([&](bool even, auto op) {
    if (even) {
      H[-1] = H[0];
      H[nh] = H[nh - 1];
      const T* a = H - 1 + s;
      const T* b = H + s;
      for (int i = 0; i < nl; ++i) L[i] = op(L[i], a[i], b[i]);
    } else {
      L[-1] = L[0];
      L[nl] = L[nl - 1];
      const T* a = L - s;
      const T* b = L + 1 - s;
      for (int i = 0; i < nh; ++i) H[i] = op(H[i], a[i], b[i]);
    }
  });
  // Interleave: low-pass at even absolute coordinates.
  if (s == 0) {
    zip(dst, L, H, nh);
    if (nl > nh) dst[2 * nh] = L[nh];
  } else {
    dst[0] = H[0];
    zip(dst + 1, L, H + 1, nh - 1);
    if (nl > nh - 1) dst[2 * nl - 1] = L[nl - 1];
  }
  if (halve)
    for (int i = 0; i < n; ++i) dst[i] = dst[i] / 2;
}

/// F.3.7 periodic symmetric extension of a row half by one sample: x[-1] = x[0] and
/// x[n] = x[n - 1] (the half's neighbours mirrored across the row's ends).
inline void extend_half(float* x, int n) {
  x[-1] = x[0];
  x[n] = x[n - 1];
}

/// HOR_SR of 9/7 level row y into dst (w samples), followed by the row's vertical scaling
/// (K for low rows, 1/K for high rows; a lone row at an odd coordinate is halved instead).
/// The steps of Lift97 in order, in four passes over the halves: the high half loaded
/// (dequantised, times 1/K); the low half loaded (times K) and lifted by the first step;
/// the second and third steps; the fourth step while interleaving (times the vertical
/// factor). `scratch` holds 2 * (w + 8) samples.
void hrow97(const IdwtLevel& lv, int y, float* __restrict dst, float* scratch) {
  const RowInputs in = row_inputs(lv, y);
  const int n = lv.w, s = lv.sx;
  // Vertical factor of this row (F.3.8: applied by VER_SR after HOR_SR; same product).
  const bool lone = lv.h == 1;
  const float vf = lone ? (lv.sy ? 0.5f : 1.0f) : (in.low ? kK : kInvK);
  if (n == 1) {
    float v;
    if (s) {
      load_row(*in.sh, in.k, 1, 1.0f, &v);
      v = v * 0.5f;
    } else {
      load_row(*in.sl, in.k, 1, 1.0f, &v);
    }
    dst[0] = v * vf;
    return;
  }
  const int nl = (n + 1 - s) / 2, nh = n - nl;
  float* L = scratch + 4;
  float* H = scratch + n + 12;
  load_row(*in.sh, in.k, nh, kInvK, H, in.ahead);
  extend_half(H, nh);
  load_lift(*in.sl, in.k, nl, kK, in.ahead, L, H - 1 + s, H + s, kDelta);
  extend_half(L, nl);
  lift_row(H, L - s, L + 1 - s, kGamma, nh);
  extend_half(H, nh);
  lift_row(L, H - 1 + s, H + s, kBeta, nl);
  extend_half(L, nl);
  // Last step (high half: H[t] from L[t - s], L[t + 1 - s]) and interleave, low-pass at
  // even absolute coordinates: with s = 1 the row starts with H[0], then pairs L[i], H[i + 1].
  if (s) dst[0] = (H[0] - kAlpha * (L[-1] + L[0])) * vf;
  const int pairs = nh - s;
  lift_zip(dst + s, L, H + s, kAlpha, vf, pairs);
  if (nl > pairs) dst[s + 2 * pairs] = L[pairs] * vf;
}

/// HOR_SR of level row y (hrow53 / hrow97).
inline void hrow(const IdwtLevel& lv, int y, std::int32_t* dst, std::int32_t* scratch) { hrow53(lv, y, dst, scratch); }
inline void hrow(const IdwtLevel& lv, int y, float* dst, float* scratch) { hrow97(lv, y, dst, scratch); }

/// The steps of streaming step m one at a time (vstream), at the level's edges (F.3.7
/// mirrors the missing neighbour) and the band window's (steps without a neighbour skipped).
template <typename F, typename Row>
void vsteps_one_by_one(Row&& row, int n, int s, int p0, int p1, int m, int cnt) {
  for (int j = 0; j < F::kSteps; ++j) {
    const int t = m - 1 - j;
    if (t < p0 || t >= p1 || ((t + s + j) & 1)) continue;  // even j: low rows, odd j: high rows
    const int a = t > 0 ? t - 1 : t + 1;
    const int b = t + 1 < n ? t + 1 : t - 1;
    if (a < p0 || b >= p1) continue;  // outside the window: t is not needed at this step
    F::vstep(j, row(t), row(a), row(b), cnt);
  }
}

/// VER_SR (after HOR_SR, row by row) for the rows [y0, y1) of a level of n rows, streaming:
/// at step m row m is produced (produce(m): HOR_SR + the row's scaling), then lifting step j
/// is applied to row m - 1 - j, whose neighbours are then exactly at step j - 1; row m - J
/// (J = kSteps) is final and goes to finish(row, stored). Only rows m - J - 1 .. m are
/// touched at step m, so rows live in a ring of 8.
///
/// The parity of row m - 1 - j for step j does not depend on j: all J steps happen at every
/// other m, none in between. Away from the edges they run fused in one pass (F::vfused),
/// which finishes rows m - J + 1 and m - J; where target(t) gives their output rows, the
/// pass stores them there itself and finish is told so (`stored`).
///
/// A band [y0, y1) inside the level starts producing at y0 - J and stops at y1 - 1 + J: the
/// final value of row r depends on rows r - k, r + k at step J - k only (k <= J), all inside
/// that window; a step whose neighbour lies outside the window (not at the level's edge,
/// where F.3.7 mirrors it) is skipped, which only leaves rows outside the dependency cone of
/// [y0, y1) unfinished. So bands give the same samples as one pass over the whole level, and
/// neighbouring bands need nothing from each other.
template <typename F, typename Row, typename Produce, typename Target, typename Finish>
void vstream(Row&& row, int n, int s, int y0, int y1, int cnt, Produce&& produce, Target&& target,
             Finish&& finish) {
  using T = typename F::T;
  if (n == 1) {
    produce(0);
    finish(0, false);
    return;
  }
  constexpr int J = F::kSteps;
  const int p0 = y0 - J > 0 ? y0 - J : 0;            // first row produced
  const int p1 = y1 + J < n ? y1 + J : n;            // one past the last row produced
  bool stored = false;  // whether the last pass stored the rows it finished
  for (int m = p0; m < p1 + J; ++m) {
    if (m < p1) produce(m);
    if (((m - 1 + s) & 1) == 0) {
      if (m - 1 - J >= p0 && m < p1) {  // all J steps, none at an edge
        T* r[J + 2];
        for (int i = 0; i < J + 2; ++i) r[i] = row(m - i);
        T* o[2] = {target(m - J + 1), target(m - J)};
        stored = o[0] && o[1];
        F::vfused(r, stored ? o : nullptr, cnt);
      } else {
        vsteps_one_by_one<F>(row, n, s, p0, p1, m, cnt);
        stored = false;
      }
    }
    const int f = m - J;
    if (f >= y0 && f < y1) finish(f, stored);
  }
}

constexpr int kRing = 8;  // rows of the lifting window (J + 2 = 6 are live at a time)

/// Rows [y0, y1) of a level: HOR_SR and VER_SR through the ring; each finished row goes to
/// `out` (when not null) and is emitted (when `emit`).
template <typename F>
void level_band(const IdwtLevel& lv, typename F::T* out, std::ptrdiff_t os, int y0, int y1, typename F::T* scratch,
                const IdwtEmit* emit) {
  using T = typename F::T;
  if (lv.w <= 0 || lv.h <= 0) return;
  y0 = y0 < 0 ? 0 : y0;
  y1 = y1 > lv.h ? lv.h : y1;
  if (y0 >= y1) return;
  T* ring = scratch + 2 * (static_cast<std::ptrdiff_t>(lv.w) + 8);
  const std::ptrdiff_t rs = (static_cast<std::ptrdiff_t>(lv.w) + 15) & ~std::ptrdiff_t{15};
  auto row = [&](int t) { return ring + static_cast<std::ptrdiff_t>(t % kRing) * rs; };
  // Without emission the fused passes store finished rows of the band straight into `out`.
  auto target = [&](int t) -> T* {
    return out && !emit && t >= y0 && t < y1 ? out + static_cast<std::ptrdiff_t>(t) * os : nullptr;
  };
  vstream<F>(
      row, lv.h, lv.sy, y0, y1, lv.w, [&](int m) { hrow(lv, m, row(m), scratch); }, target,
      [&](int t, bool stored) {
        if (out && !stored)
          __builtin_memcpy(out + static_cast<std::ptrdiff_t>(t) * os, row(t), sizeof(T) * static_cast<std::size_t>(lv.w));
        if (emit) emit_row(*emit, row(t), t, 0, lv.w);
      });
  if (emit) stream_fence();
}

}  // namespace

namespace J2K_IDWT_NS {
void band97(const IdwtLevel& lv, float* out, std::ptrdiff_t ostride, int y0, int y1, float* scratch,
            const IdwtEmit* emit) {
  level_band<Lift97>(lv, out, ostride, y0, y1, scratch, emit);
}
void band53(const IdwtLevel& lv, std::int32_t* out, std::ptrdiff_t ostride, int y0, int y1, std::int32_t* scratch,
            const IdwtEmit* emit) {
  level_band<Lift53>(lv, out, ostride, y0, y1, scratch, emit);
}
void copy97(const IdwtSource& src, int w, int y0, int y1, float* out, std::ptrdiff_t ostride, const IdwtEmit* emit) {
  for (int y = y0; y < y1; ++y) {
    float* o = out + static_cast<std::ptrdiff_t>(y) * ostride;
    load_row(src, y, w, 1.0f, o);
    if (emit) emit_row(*emit, o, y, 0, w);
  }
  if (emit) stream_fence();
}
void copy53(const IdwtSource& src, int w, int y0, int y1, std::int32_t* out, std::ptrdiff_t ostride,
            const IdwtEmit* emit) {
  for (int y = y0; y < y1; ++y) {
    std::int32_t* o = out + static_cast<std::ptrdiff_t>(y) * ostride;
    load_row(src, y, w, o);
    if (emit) emit_row(*emit, o, y, 0, w);
  }
  if (emit) stream_fence();
}
void ict_store(const ColourRow& row, int n) {
  constexpr int kBlock = 256;
  alignas(32) float r[kBlock], g[kBlock], b[kBlock];
  const float* py = static_cast<const float*>(row.in[0]);
  const float* pu = static_cast<const float*>(row.in[1]);
  const float* pv = static_cast<const float*>(row.in[2]);
  for (int x0 = 0; x0 < n; x0 += kBlock) {
    const int m = n - x0 < kBlock ? n - x0 : kBlock;
    for (int i = 0; i < m; ++i) {  // G-8..G-10 (ICT inverse)
      const float Y = py[x0 + i], U = pu[x0 + i], V = pv[x0 + i];
      r[i] = Y + 1.402f * V;
      g[i] = Y - 0.34413f * U - 0.71414f * V;
      b[i] = Y + 1.772f * U;
    }
    store_float(r, row.out[0] + x0, m, row.shift[0], row.lo[0], row.hi[0]);
    store_float(g, row.out[1] + x0, m, row.shift[1], row.lo[1], row.hi[1]);
    store_float(b, row.out[2] + x0, m, row.shift[2], row.lo[2], row.hi[2]);
  }
  stream_fence();
}
void rct_store(const ColourRow& row, int n) {
  constexpr int kBlock = 256;
  alignas(32) std::int32_t r[kBlock], g[kBlock], b[kBlock];
  const std::int32_t* py = static_cast<const std::int32_t*>(row.in[0]);
  const std::int32_t* pu = static_cast<const std::int32_t*>(row.in[1]);
  const std::int32_t* pv = static_cast<const std::int32_t*>(row.in[2]);
  for (int x0 = 0; x0 < n; x0 += kBlock) {
    const int m = n - x0 < kBlock ? n - x0 : kBlock;
    for (int i = 0; i < m; ++i) {  // G-6 (RCT inverse)
      const std::int32_t Y = py[x0 + i], U = pu[x0 + i], V = pv[x0 + i];
      const std::int32_t gg = Y - ((U + V) >> 2);
      r[i] = V + gg;
      g[i] = gg;
      b[i] = U + gg;
    }
    store_int(r, row.out[0] + x0, m, row.shift[0], row.lo[0], row.hi[0]);
    store_int(g, row.out[1] + x0, m, row.shift[1], row.lo[1], row.hi[1]);
    store_int(b, row.out[2] + x0, m, row.shift[2], row.lo[2], row.hi[2]);
  }
  stream_fence();
}
}  // namespace J2K_IDWT_NS
}  // namespace j2k::decoder::own
