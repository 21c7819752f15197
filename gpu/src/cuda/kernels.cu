// Kernels of the CUDA reconstruction stage. Each one has a CPU twin that it must match:
//   dequant, idwt_h/idwt_v, store  -> decoder::reconstruct (decoder/src/own/reconstruct.cpp,
//                                     transform/idwt.cpp): bit-exact, 5/3 and 9/7
//   colour                         -> gpu::to_rgba8 / to_rgb10a2 (gpu/src/colour_cpu.cpp)
// Float expressions are written with __fadd_rn/__fmul_rn so that nvcc cannot contract
// them into FMAs: the CPU twin (ISO C++, no -ffp-contract) rounds after every operation,
// and so do we, which makes the 9/7 path bit-exact as well.
#include <cstdint>
#include <type_traits>

#include "kernels.hpp"

namespace j2k::gpu::cuda {

namespace {

// 9/7 lifting constants (15444-1 Table F.4) and K (F.3.8.2), as in transform/idwt.cpp.
constexpr float kAlpha = -1.586134342059924f;
constexpr float kBeta = -0.052980118572961f;
constexpr float kGamma = 0.882911075530934f;
constexpr float kDelta = 0.443506852043971f;
constexpr float kK = 1.230174104914001f;
constexpr float kInvK = 1.0f / kK;

constexpr int kHalo = 4;        // samples of extension each side: 2 lifting steps (5/3) or 4 (9/7)
constexpr int kRowTile = 128;   // horizontal pass: outputs per row per block
constexpr int kRowsPerBlock = 8;
constexpr int kColTile = 64;    // vertical pass: outputs per column per block
constexpr int kColsPerBlock = 32;
constexpr int kColRowsPerBlock = 8;  // threads per column
constexpr int kRowThreads = 256;

/// F.3.7 periodic symmetric extension of index g into [0, n), n >= 2. Lifting commutes
/// with whole-sample symmetric extension, so extending the input once by kHalo samples
/// gives what the CPU's per-step re-extension gives.
__device__ __forceinline__ int mirror(int g, int n) {
  if (g >= 0 && g < n) return g;  // the common case: no division
  const int period = 2 * (n - 1);
  g %= period;
  if (g < 0) g += period;
  return g >= n ? period - g : g;
}

/// Where interleaved position g of a resolution of n samples starting at parity `s`
/// lives in the deinterleaved layout (low band first, then high band).
__device__ __forceinline__ int source_index(int g, int s, int low) {
  return ((g & 1) == s) ? (g - s) / 2 : low + (g - (1 - s)) / 2;
}

__device__ __forceinline__ float lift97(float x, float c, float a, float b) {
  return __fsub_rn(x, __fmul_rn(c, __fadd_rn(a, b)));
}

template <typename T>
__device__ __forceinline__ T halve(T v);
template <>
__device__ __forceinline__ std::int32_t halve(std::int32_t v) { return v / 2; }  // C division, as the CPU
template <>
__device__ __forceinline__ float halve(float v) { return __fmul_rn(v, 0.5f); }

/// Runs the lifting steps on kLines shared-memory lines of kLen samples (line stride kLS,
/// element stride kES); position t is low-pass when (t & 1) == s. Each thread keeps one
/// line and walks its positions with a stride, so all index arithmetic is shifts by
/// constants. kLineFast: consecutive threads take consecutive lines (columns of a
/// row-major tile: no bank conflicts); otherwise a warp shares one line. Every step ends
/// with a barrier, so every thread of the block must call this.
template <int kLines, int kLen, int kLS, int kES, int kThreads, bool kLineFast>
struct Lifter {
  static constexpr int kGroups = kThreads / kLines;
  static_assert(kThreads % kLines == 0, "threads must split evenly over lines");

  __device__ static int line_of(int tid) { return kLineFast ? tid % kLines : tid / kGroups; }
  __device__ static int group_of(int tid) { return kLineFast ? tid / kLines : tid % kGroups; }

  /// F-5 then F-6 (F.3.8.1): even (low) samples first, then odd.
  __device__ static void run(std::int32_t* base, int s, int tid) {
    std::int32_t* x = base + line_of(tid) * kLS;
    const int g = group_of(tid);
#pragma unroll
    for (int step = 0; step < 2; ++step) {
      const int parity = step == 0 ? s : 1 - s;
      const int lo = 1 + step, hi = kLen - 1 - step;
      const int first = lo + ((lo & 1) != parity ? 1 : 0);
      for (int t = first + 2 * g; t < hi; t += 2 * kGroups) {
        const std::int32_t a = x[(t - 1) * kES], b = x[(t + 1) * kES];
        if (step == 0) x[t * kES] -= (a + b + 2) >> 2;
        else x[t * kES] += (a + b) >> 1;
      }
      __syncthreads();
    }
  }

  /// F.3.8.2: the four lifting steps (same order and rounding as the CPU), on lines that the
  /// caller scaled as it loaded them (prescale).
  __device__ static void run(float* base, int s, int tid) {
    float* x = base + line_of(tid) * kLS;
    const int g = group_of(tid);
#pragma unroll
    for (int step = 0; step < 4; ++step) {
      const int parity = (step & 1) == 0 ? s : 1 - s;
      const int lo = 1 + step, hi = kLen - 1 - step;
      const int first = lo + ((lo & 1) != parity ? 1 : 0);
      const float c = step == 0 ? kDelta : step == 1 ? kGamma : step == 2 ? kBeta : kAlpha;
      for (int t = first + 2 * g; t < hi; t += 2 * kGroups)
        x[t * kES] = lift97(x[t * kES], c, x[(t - 1) * kES], x[(t + 1) * kES]);
      __syncthreads();
    }
  }
};

/// F.3.8.2's first step, done as a sample is loaded into a line (position parity p, low-pass
/// when p == s): 9/7 samples times K (low) or 1/K (high); 5/3 samples as they are.
template <typename T>
__device__ __forceinline__ T prescale(T v, int p, int s);
template <>
__device__ __forceinline__ float prescale<float>(float v, int p, int s) {
  return __fmul_rn(v, p == s ? kK : kInvK);
}
template <>
__device__ __forceinline__ std::int32_t prescale<std::int32_t>(std::int32_t v, int, int) { return v; }

template <typename T>
__device__ __forceinline__ bool matches(const LevelDesc& d) {
  return d.is_float == (std::is_same<T, float>::value ? 1 : 0);
}

/// HOR_SR (F.3.4) for kRowsPerBlock rows and kRowTile outputs per row: a -> b.
/// E.1 dequantisation of one stored value (twice the quantiser index, see coefficients.hpp).
template <typename T>
__device__ __forceinline__ T dequantise(std::int32_t q, float scale);
template <>
__device__ __forceinline__ float dequantise<float>(std::int32_t q, float scale) {
  return __fmul_rn(static_cast<float>(q), scale);  // E.1.1.2, midpoint in the low bit
}
/// A 5/3 level's input clamped to +-2^26, as the CPU's clamp53 does (decoder/src/own/
/// transform/idwt_kernels.inl says why): the bands' dequantised values and the lower
/// level's samples alike. 9/7 inputs pass as they are.
template <typename T>
__device__ __forceinline__ T level_input(T v) {
  return v;
}
template <>
__device__ __forceinline__ std::int32_t level_input<std::int32_t>(std::int32_t v) {
  constexpr std::int32_t kMax = 1 << 26;
  return min(max(v, -kMax), kMax);
}
template <>
__device__ __forceinline__ std::int32_t dequantise<std::int32_t>(std::int32_t q, float) {
  return level_input(q >= 0 ? q >> 1 : (q + 1) >> 1);  // sign(q) * (|q| >> 1), no -q
}

/// One row of one subband, ready to be read with dequantisation.
struct BandRow {
  const char* base = nullptr;  // start of the row
  int width = 0, bytes = 2;
  float scale = 0;
  bool valid = false;

  __device__ void open(const DequantDesc* dq, int band, int by, const void* coeffs) {
    const BandDesc& b = dq->bands[band];
    valid = b.present && by < b.height;
    width = b.width;
    bytes = b.bytes;
    scale = b.scale;
    base = static_cast<const char*>(coeffs) + b.offset + static_cast<std::int64_t>(by) * b.width * b.bytes;
  }
  template <typename T>
  __device__ T at(int bx) const {
    if (!valid || bx >= width) return T(0);
    const std::int32_t q = bytes == 2   ? reinterpret_cast<const std::int16_t*>(base)[bx]
                           : bytes == 1 ? reinterpret_cast<const std::int8_t*>(base)[bx]
                                        : reinterpret_cast<const std::int32_t*>(base)[bx];
    return dequantise<T>(q, scale);
  }
  /// at() of 32-bit values known to lie inside the row.
  template <typename T>
  __device__ T at32(int bx) const {
    return valid ? dequantise<T>(reinterpret_cast<const std::int32_t*>(base)[bx], scale) : T(0);
  }
};

/// A row tile whose positions g0 .. g0 + 2 * pairs - 1 all lie inside the row (no
/// extension; g0 even): position 2j + s (low) and 2j + 1 - s (high) come from index
/// g0 / 2 + j of the low half (the previous level's row `prev`, or the low band) and of the
/// high band. kWide: 32-bit bands, read without the per-sample checks of the general fetch.
template <bool kWide, typename T, int kPairs, int kLanes>
__device__ __forceinline__ void fill_pairs(T* line, const BandRow& lo, const BandRow& hi, const T* prev, int base, int s,
                                           int lane) {
  for (int j = lane; j < kPairs; j += kLanes) {
    const T l = prev ? level_input(prev[base + j]) : kWide ? lo.at32<T>(base + j) : lo.at<T>(base + j);
    const T h = kWide ? hi.at32<T>(base + j) : hi.at<T>(base + j);
    line[2 * j + s] = prescale(l, s, s);
    line[2 * j + 1 - s] = prescale(h, 1 - s, s);
  }
}
template <typename T, int kPairs, int kLanes>
__device__ __forceinline__ void fill_interior(T* line, const BandRow& lo, const BandRow& hi, const T* prev, int g0, int s,
                                              int lane) {
  if (hi.bytes == 4 && (prev || lo.bytes == 4)) fill_pairs<true, T, kPairs, kLanes>(line, lo, hi, prev, g0 / 2, s, lane);
  else fill_pairs<false, T, kPairs, kLanes>(line, lo, hi, prev, g0 / 2, s, lane);
}

/// HOR_SR (F.3.4) for kRowsPerBlock rows and kRowTile outputs per row: (previous level's
/// output in a, this level's bands) -> b, dequantising the bands on the way in.
template <typename T>
__global__ void idwt_rows(const LevelDesc* descs) {
  const LevelDesc d = descs[blockIdx.z];
  constexpr int kLen = kRowTile + 2 * kHalo;
  __shared__ T tile[kRowsPerBlock][kLen];
  if (!d.active || !matches<T>(d)) return;
  const int w = d.x1 - d.x0, h = d.y1 - d.y0;
  const int ox = blockIdx.x * kRowTile, oy = blockIdx.y * kRowsPerBlock;
  if (ox >= w || oy >= h) return;  // whole block leaves together: no barrier is skipped by some only
  const int s = d.x0 & 1;
  const int low = (d.x1 + 1) / 2 - (d.x0 + 1) / 2;
  const int low_h = (d.y1 + 1) / 2 - (d.y0 + 1) / 2;
  const T* a = reinterpret_cast<const T*>(d.a);
  T* b = reinterpret_cast<T*>(d.b);
  const int rows = min(kRowsPerBlock, h - oy);
  const int tid = threadIdx.x;
  // One warp per row: lanes walk the row's positions. The row's low half comes from the
  // previous level (or the LL band at level 1), its high half from HL (top) or HH.
  constexpr int kLanes = kRowThreads / kRowsPerBlock;
  const int row = tid / kLanes, lane = tid % kLanes;
  const int y = oy + row;
  const bool top = y < low_h;
  const int by = top ? y : y - low_h;
  const int first = 1 + 3 * (d.level - 1);  // HL of this level; LH, HH follow
  BandRow lo_band, hi_band;
  const bool low_from_a = top && d.level > 1;
  if (row < rows) {
    if (!low_from_a) lo_band.open(d.dq, top ? 0 : first + 1, by, d.coeffs);
    hi_band.open(d.dq, top ? first : first + 2, by, d.coeffs);
  }
  const T* prev = a + static_cast<std::int64_t>(y) * d.stride;
  auto fetch = [&](int idx) -> T {
    if (idx >= low) return hi_band.at<T>(idx - low);
    return low_from_a ? level_input(prev[idx]) : lo_band.at<T>(idx);
  };
  if (w == 1) {  // F.3.7: a lone sample at an odd coordinate was doubled by the analysis
    if (row < rows && lane == 0) {
      const T v = fetch(0);
      b[static_cast<std::int64_t>(y) * d.stride] = s ? halve(v) : v;
    }
    return;
  }
  const int g0 = ox - kHalo;
  if (row < rows) {
    if (g0 >= 0 && g0 + kLen <= w) {  // the common case: no extension, straight reads
      fill_interior<T, kLen / 2, kLanes>(&tile[row][0], lo_band, hi_band, low_from_a ? prev : nullptr, g0, s, lane);
    } else {
      for (int t = lane; t < kLen; t += kLanes)
        tile[row][t] = prescale(fetch(source_index(mirror(g0 + t, w), s, low)), t & 1, s);
    }
  }
  __syncthreads();
  // kHalo and ox are even, so tile position t has the parity of ox + t - kHalo.
  // Rows past the picture's end hold stale values: lifted, never stored.
  Lifter<kRowsPerBlock, kLen, kLen, 1, kRowThreads, false>::run(&tile[0][0], s, tid);
  if (row < rows) {
    T* dst = b + static_cast<std::int64_t>(y) * d.stride + ox;
    const int n = min(kRowTile, w - ox);
    for (int t = lane; t < n; t += kLanes) dst[t] = tile[row][t + kHalo];
  }
}

/// VER_SR (F.3.5) for kColsPerBlock columns and kColTile outputs per column: b -> a.
template <typename T>
__global__ void idwt_cols(const LevelDesc* descs) {
  const LevelDesc d = descs[blockIdx.z];
  constexpr int kLen = kColTile + 2 * kHalo;
  __shared__ T tile[kLen][kColsPerBlock];
  if (!d.active || !matches<T>(d)) return;
  const int w = d.x1 - d.x0, h = d.y1 - d.y0;
  const int ox = blockIdx.x * kColsPerBlock, oy = blockIdx.y * kColTile;
  if (ox >= w || oy >= h) return;
  const int s = d.y0 & 1;
  const int low = (d.y1 + 1) / 2 - (d.y0 + 1) / 2;
  const T* b = reinterpret_cast<const T*>(d.b);
  T* a = reinterpret_cast<T*>(d.a);
  const int cols = min(kColsPerBlock, w - ox);
  const int tx = threadIdx.x, ty = threadIdx.y;  // blockDim = (kColsPerBlock, 8)
  const int tid = ty * kColsPerBlock + tx;
  if (h == 1) {
    if (ty == 0 && tx < cols) {
      const T v = b[ox + tx];
      a[ox + tx] = s ? halve(v) : v;
    }
    return;
  }
  for (int t = ty; t < kLen; t += kColRowsPerBlock) {
    const int g = mirror(oy + t - kHalo, h);
    if (tx < cols) tile[t][tx] = prescale(b[static_cast<std::int64_t>(source_index(g, s, low)) * d.stride + ox + tx], t & 1, s);
  }
  __syncthreads();
  // One line per column: element stride kColsPerBlock, line stride 1. Lanes are spread
  // so that a warp touches 32 consecutive columns of one row (no bank conflicts).
  Lifter<kColsPerBlock, kLen, 1, kColsPerBlock, kColsPerBlock * kColRowsPerBlock, true>::run(&tile[0][0], s, tid);
  for (int t = ty; t < kColTile; t += kColRowsPerBlock)
    if (tx < cols && oy + t < h) a[static_cast<std::int64_t>(oy + t) * d.stride + ox + tx] = tile[t + kHalo][tx];
}


/// E.1: places every coefficient of one tile-component into the deinterleaved work
/// buffer, dequantised. Only for components without synthesis levels: otherwise the
/// horizontal passes dequantise as they read. One thread per output sample; the subband is found by walking
/// down the resolutions (a sample outside resolution r-1's corner belongs to a band of r).
__global__ void dequant(const DequantDesc* descs, const void* coeffs) {
  const DequantDesc& d = descs[blockIdx.z];
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (d.levels > 0) return;  // the horizontal passes dequantise those as they read
  if (x >= d.width || y >= d.height) return;
  int band = 0, bx = x, by = y;
  for (int r = d.levels; r >= 1; --r) {
    const int lw = d.res_w[r - 1], lh = d.res_h[r - 1];
    if (x < lw && y < lh) continue;
    const int orientation = (x >= lw ? 1 : 0) + (y >= lh ? 2 : 0);  // HL 1, LH 2, HH 3
    band = 1 + 3 * (r - 1) + (orientation - 1);
    bx = x >= lw ? x - lw : x;
    by = y >= lh ? y - lh : y;
    break;
  }
  const BandDesc& b = d.bands[band];
  std::int32_t q = 0;
  if (b.present && bx < b.width && by < b.height) {
    const std::int64_t i = static_cast<std::int64_t>(by) * b.width + bx;
    const char* base = static_cast<const char*>(coeffs) + b.offset;
    q = b.bytes == 2   ? reinterpret_cast<const std::int16_t*>(base)[i]
        : b.bytes == 1 ? reinterpret_cast<const std::int8_t*>(base)[i]
                       : reinterpret_cast<const std::int32_t*>(base)[i];
  }
  const std::int64_t o = static_cast<std::int64_t>(y) * d.stride + x;
  if (d.is_float) {
    d.dst[o] = __fmul_rn(static_cast<float>(q), b.scale);  // E.1.1.2, midpoint in the low bit
  } else {
    reinterpret_cast<std::int32_t*>(d.dst)[o] = dequantise<std::int32_t>(q, 0.0f);
  }
}

/// G.2/G.3 inverse component transform (component c of 0..2), G.1.2 DC level shift and
/// clamp of one sample at index i of the work buffers: the store kernel's and the fused
/// colour kernel's common step (decoder::reconstruct's twin).
/// `s0..s2`: components 0..2 when mct, else s0 is component c's buffer.
__device__ __forceinline__ std::int32_t finish(const float* s0, const float* s1, const float* s2, int is_float, int mct,
                                               int c, std::int64_t i, std::int32_t shift, std::int32_t lo, std::int32_t hi) {
  if (is_float) {
    float v;
    if (mct) {
      const float Y = s0[i], U = s1[i], V = s2[i];
      if (c == 0) v = __fadd_rn(Y, __fmul_rn(1.402f, V));  // G-8..G-10 (ICT inverse)
      else if (c == 1) v = __fsub_rn(__fsub_rn(Y, __fmul_rn(0.34413f, U)), __fmul_rn(0.71414f, V));
      else v = __fadd_rn(Y, __fmul_rn(1.772f, U));
    } else {
      v = s0[i];
    }
    v = fminf(fmaxf(v, -1.0e9f), 1.0e9f);  // keeps huge values from corrupt data defined
    return min(max(__float2int_rn(v) + shift, lo), hi);  // lrintf: round half to even
  }
  std::int32_t v;
  if (mct) {
    const std::int32_t Y = reinterpret_cast<const std::int32_t*>(s0)[i];
    const std::int32_t U = reinterpret_cast<const std::int32_t*>(s1)[i];
    const std::int32_t V = reinterpret_cast<const std::int32_t*>(s2)[i];
    const std::int32_t g = Y - ((U + V) >> 2);  // G-6 (RCT inverse)
    v = c == 0 ? V + g : c == 1 ? g : U + g;
  } else {
    v = reinterpret_cast<const std::int32_t*>(s0)[i];
  }
  const long long t = static_cast<long long>(v) + shift;
  return static_cast<std::int32_t>(t < lo ? lo : t > hi ? hi : t);
}

/// Writes every tile-component's finished samples into its component plane.
__global__ void store(const StoreDesc* descs, int mct) {
  const StoreDesc& d = descs[blockIdx.z];
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= d.width || y >= d.height) return;
  const int px = d.ox + x, py = d.oy + y;
  if (px < 0 || py < 0 || px >= d.plane_w || py >= d.plane_h) return;
  const int c = blockIdx.z;
  const bool m = mct && c < 3;
  d.plane[static_cast<std::int64_t>(py) * d.plane_w + px] =
      finish(m ? descs[0].src : d.src, m ? descs[1].src : nullptr, m ? descs[2].src : nullptr, d.is_float, m, c,
             static_cast<std::int64_t>(y) * d.stride + x, d.shift, d.lo, d.hi);
}

/// Sample (x, y) of component c: from the planes, or (fused display path) finished on
/// the fly from the work buffers.
__device__ __forceinline__ std::int32_t sample(const ColourLaunch& L, int c, int x, int y) {
  if (!L.fused) return L.planes[c].data[static_cast<std::int64_t>(y) * L.planes[c].width + x];
  const WorkView& w = L.works[c];
  return finish(L.mct ? L.works[0].data : w.data, L.works[1].data, L.works[2].data, w.is_float, L.mct, c,
                static_cast<std::int64_t>(y) * w.stride + x, w.shift, w.lo, w.hi);
}

/// a + (b - a) * phase / n with the CPU's rounding; n a power of two divides exactly
/// as a multiplication by its reciprocal.
__device__ __forceinline__ float interpolate(float a, float b, int phase, int n) {
  const float d = __fmul_rn(__fsub_rn(b, a), static_cast<float>(phase));
  return __fadd_rn(a, (n & (n - 1)) == 0 ? __fmul_rn(d, 1.0f / static_cast<float>(n)) : __fdiv_rn(d, static_cast<float>(n)));
}

/// Horizontal chroma upsampling of one row (co-sited), as colour_cpu.cpp's upsample_row.
__device__ __forceinline__ float chroma_h(const ColourLaunch& L, int c, int row, int x) {
  const PlaneView& p = L.planes[c];
  if (p.dx == 1) return static_cast<float>(sample(L, c, min(x, p.width - 1), row));
  // 4:2:x without an integer division.
  const int i = p.dx == 2 ? x >> 1 : x / p.dx, phase = p.dx == 2 ? x & 1 : x % p.dx;
  const float a = static_cast<float>(sample(L, c, min(i, p.width - 1), row));
  if (phase == 0) return a;  // a + (b - a) * 0 / dx == a exactly (finite samples)
  const float b = static_cast<float>(sample(L, c, min(i + 1, p.width - 1), row));
  return interpolate(a, b, phase, p.dx);
}

__device__ __forceinline__ std::uint32_t to_code(float v, float max) {
  // lround: half away from zero, then clamp (the CPU clamps the long result).
  v = fminf(fmaxf(v, -1.0f), max + 1.0f);
  const float r = roundf(v);
  return static_cast<std::uint32_t>(fminf(fmaxf(r, 0.0f), max));
}

/// Vertical siting of chroma row for luma row y (as chroma_row): rows r0, r1 and weight.
__device__ __forceinline__ void chroma_rows(const PlaneView& p, int y, int& r0, int& r1, float& weight) {
  if (p.dy == 1) {
    r0 = r1 = min(y, p.height - 1);
    weight = 0.0f;
    return;
  }
  if (p.dy == 2) {
    // pos = y/2 - 1/4 exactly: weight 3/4 towards the next row for even y, 1/4 for odd.
    r0 = (y & 1) ? y >> 1 : (y >> 1) - 1;
    weight = y == 0 ? 0.0f : (y & 1) ? 0.25f : 0.75f;
  } else {
    const double pos = (y + 0.5) / p.dy - 0.5;
    const double fl = floor(pos);
    r0 = static_cast<int>(fl);
    weight = pos < 0 ? 0.0f : static_cast<float>(fmin(fmax(pos - fl, 0.0), 1.0));
  }
  r0 = min(max(r0, 0), p.height - 1);
  r1 = min(r0 + 1, p.height - 1);
}

/// Horizontally upsampled chroma of one row at x and x + 1 (x even): for 4:2:x the pair
/// shares its samples, so it costs two reads instead of three.
__device__ __forceinline__ void chroma_h_pair(const ColourLaunch& L, int c, int row, int x, float& v0, float& v1) {
  const PlaneView& p = L.planes[c];
  if (p.dx == 2) {
    const int i = x >> 1;
    const float a = static_cast<float>(sample(L, c, min(i, p.width - 1), row));
    const float b = static_cast<float>(sample(L, c, min(i + 1, p.width - 1), row));
    v0 = a;
    v1 = interpolate(a, b, 1, 2);
    return;
  }
  v0 = chroma_h(L, c, row, x);
  v1 = chroma_h(L, c, row, x + 1);
}

__device__ __forceinline__ void chroma_pair(const ColourLaunch& L, int c, int x, int y, float& v0, float& v1) {
  const PlaneView& p = L.planes[c];
  int r0, r1;
  float weight;
  chroma_rows(p, y, r0, r1, weight);
  float a0, a1;
  chroma_h_pair(L, c, r0, x, a0, a1);
  if (p.dy == 1) {
    v0 = a0;
    v1 = a1;
    return;
  }
  float b0, b1;
  chroma_h_pair(L, c, r1, x, b0, b1);
  v0 = __fadd_rn(a0, __fmul_rn(__fsub_rn(b0, a0), weight));
  v1 = __fadd_rn(a1, __fmul_rn(__fsub_rn(b1, a1), weight));
}

/// hdr_to_sdr (gpu/colour.hpp) on the device: the same steps and constants, no contraction.
__device__ __forceinline__ void hdr_to_sdr_device(int transfer, float rgb[3]) {
  using namespace detail::hdr;
  float light[3];
  for (int c = 0; c < 3; ++c) {
    const float e = fminf(fmaxf(rgb[c], 0.0f), 1.0f);
    float nits;
    if (transfer == 1) {
      const float p = powf(e, 1.0f / kPqM2);
      nits = __fmul_rn(10000.0f, powf(__fdiv_rn(fmaxf(__fsub_rn(p, kPqC1), 0.0f), __fsub_rn(kPqC2, __fmul_rn(kPqC3, p))),
                                      1.0f / kPqM1));
    } else {
      const float scene = e <= 0.5f ? __fdiv_rn(__fmul_rn(e, e), 3.0f)
                                    : __fdiv_rn(__fadd_rn(expf(__fdiv_rn(__fsub_rn(e, kHlgC), kHlgA)), kHlgB), 12.0f);
      nits = __fmul_rn(kHlgPeak, powf(scene, kHlgGamma));
    }
    light[c] = __fdiv_rn(nits, kReferenceWhite);
  }
  const float gamut[9] = {kGamut[0], kGamut[1], kGamut[2], kGamut[3], kGamut[4],
                         kGamut[5], kGamut[6], kGamut[7], kGamut[8]};
  for (int c = 0; c < 3; ++c) {
    float l = __fadd_rn(__fadd_rn(__fmul_rn(gamut[3 * c], light[0]), __fmul_rn(gamut[3 * c + 1], light[1])),
                        __fmul_rn(gamut[3 * c + 2], light[2]));
    l = fmaxf(l, 0.0f);
    if (l > kKnee)
      l = __fadd_rn(kKnee, __fmul_rn(1.0f - kKnee, __fsub_rn(1.0f, expf(__fdiv_rn(-__fsub_rn(l, kKnee), 1.0f - kKnee)))));
    rgb[c] = l <= 0.0031308f ? __fmul_rn(12.92f, l) : __fsub_rn(__fmul_rn(1.055f, powf(l, 1.0f / 2.4f)), 0.055f);
  }
}

/// dci_xyz_to_display (gpu/colour.hpp) on the device.
__device__ __forceinline__ void dci_xyz_to_display_device(float v[3]) {
  using namespace detail::hdr;
  const float m[9] = {kXyzToSrgb[0], kXyzToSrgb[1], kXyzToSrgb[2], kXyzToSrgb[3], kXyzToSrgb[4],
                      kXyzToSrgb[5], kXyzToSrgb[6], kXyzToSrgb[7], kXyzToSrgb[8]};
  float light[3];
  for (int c = 0; c < 3; ++c) light[c] = __fmul_rn(powf(fminf(fmaxf(v[c], 0.0f), 1.0f), kDciGamma), kDciScale);
  for (int c = 0; c < 3; ++c) {
    float l = __fadd_rn(__fadd_rn(__fmul_rn(m[3 * c], light[0]), __fmul_rn(m[3 * c + 1], light[1])),
                        __fmul_rn(m[3 * c + 2], light[2]));
    l = fminf(fmaxf(l, 0.0f), 1.0f);
    v[c] = l <= 0.0031308f ? __fmul_rn(12.92f, l) : __fsub_rn(__fmul_rn(1.055f, powf(l, 1.0f / 2.4f)), 0.055f);
  }
}

/// One output word from the luma and upsampled chroma values, as colour_cpu.cpp's convert.
/// `Mapped`: the picture is HDR or X'Y'Z' (params.transfer != 0). A template parameter, so that
/// the SDR kernel carries none of the mapping's code (its registers cost the SDR path 2-4 µs a
/// frame when it was a branch).
template <bool Mapped>
__device__ __forceinline__ std::uint32_t convert_pixel(const ColourLaunch& L, float yv, float cb, float cr) {
  const detail::ColourParams& p = L.params;
  const float m = p.out_max;
  std::uint32_t r, g, b;
  if (p.mode == detail::ColourMode::grey) {
    r = g = b = to_code(__fmul_rn(__fadd_rn(yv, p.grey_offset), p.grey_scale), m);
  } else if (Mapped) {
    // High dynamic range (BT.2100 R'G'B') or X'Y'Z' in [0, 1], mapped for the SDR display.
    float rgb[3];
    if (p.mode == detail::ColourMode::rgb) {
      rgb[0] = __fmul_rn(yv, p.rgb_norm);
      rgb[1] = __fmul_rn(cb, p.rgb_norm);
      rgb[2] = __fmul_rn(cr, p.rgb_norm);
    } else {
      const float yy = __fmul_rn(__fsub_rn(yv, p.y_off), p.y_gain);
      const float u = __fmul_rn(__fsub_rn(cb, p.c_off), p.c_gain);
      const float v = __fmul_rn(__fsub_rn(cr, p.c_off), p.c_gain);
      rgb[0] = __fadd_rn(yy, __fmul_rn(p.r_cr, v));
      rgb[1] = __fadd_rn(__fadd_rn(yy, __fmul_rn(p.g_cb, u)), __fmul_rn(p.g_cr, v));
      rgb[2] = __fadd_rn(yy, __fmul_rn(p.b_cb, u));
    }
    if (p.transfer == 3) dci_xyz_to_display_device(rgb);
    else hdr_to_sdr_device(p.transfer, rgb);
    r = to_code(__fmul_rn(rgb[0], m), m);
    g = to_code(__fmul_rn(rgb[1], m), m);
    b = to_code(__fmul_rn(rgb[2], m), m);
  } else if (p.mode == detail::ColourMode::rgb) {
    r = to_code(__fmul_rn(yv, p.rgb_scale), m);
    g = to_code(__fmul_rn(cb, p.rgb_scale), m);
    b = to_code(__fmul_rn(cr, p.rgb_scale), m);
  } else {
    const float yy = __fmul_rn(__fsub_rn(yv, p.y_off), p.y_gain);
    const float u = __fmul_rn(__fsub_rn(cb, p.c_off), p.c_gain);
    const float v = __fmul_rn(__fsub_rn(cr, p.c_off), p.c_gain);
    r = to_code(__fmul_rn(__fadd_rn(yy, __fmul_rn(p.r_cr, v)), m), m);
    g = to_code(__fmul_rn(__fadd_rn(__fadd_rn(yy, __fmul_rn(p.g_cb, u)), __fmul_rn(p.g_cr, v)), m), m);
    b = to_code(__fmul_rn(__fadd_rn(yy, __fmul_rn(p.b_cb, u)), m), m);
  }
  return L.rgb10 ? (r | (g << 10) | (b << 20) | (3u << 30)) : (r | (g << 8) | (b << 16) | (255u << 24));
}

/// Chroma upsampling + YCbCr -> RGB (or RGB / grey scaling) into RGBA8 or RGB10_A2,
/// rows placed at row0 + y * row_step (field weave). Two horizontally adjacent pixels
/// per thread (they share chroma samples), stored as one 8-byte word where aligned.
template <bool Mapped>
__global__ void colour(const ColourLaunch L) {
  const int x = 2 * (blockIdx.x * blockDim.x + threadIdx.x), y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= L.width || y >= L.height) return;
  const int oy = L.row0 + y * L.row_step;
  if (x >= L.out_w || oy >= L.out_h) return;
  const bool pair = x + 1 < L.width && x + 1 < L.out_w;
  const float y0 = static_cast<float>(sample(L, 0, x, y));
  const float y1 = pair ? static_cast<float>(sample(L, 0, x + 1, y)) : 0.0f;
  float cb0 = 0, cb1 = 0, cr0 = 0, cr1 = 0;
  if (L.params.mode != detail::ColourMode::grey) {
    chroma_pair(L, 1, x, y, cb0, cb1);
    chroma_pair(L, 2, x, y, cr0, cr1);
  }
  auto* row = reinterpret_cast<std::uint32_t*>(static_cast<char*>(L.out) + static_cast<std::int64_t>(oy) * L.pitch);
  const std::uint32_t w0 = convert_pixel<Mapped>(L, y0, cb0, cr0);
  if (!pair) {
    row[x] = w0;
    return;
  }
  const std::uint32_t w1 = convert_pixel<Mapped>(L, y1, cb1, cr1);
  if ((reinterpret_cast<std::uintptr_t>(row + x) & 7) == 0) *reinterpret_cast<uint2*>(row + x) = make_uint2(w0, w1);
  else {
    row[x] = w0;
    row[x + 1] = w1;
  }
}

unsigned blocks(int n, int per) { return static_cast<unsigned>((n + per - 1) / per); }

}  // namespace

cudaError_t launch_dequant(const DequantDesc* descs, int count, int max_w, int max_h, const void* coeffs,
                           cudaStream_t stream) {
  if (count <= 0 || max_w <= 0 || max_h <= 0) return cudaSuccess;
  const dim3 block(32, 8), grid(blocks(max_w, 32), blocks(max_h, 8), static_cast<unsigned>(count));
  dequant<<<grid, block, 0, stream>>>(descs, coeffs);
  return cudaGetLastError();
}

cudaError_t launch_idwt_level(const LevelDesc* descs, int count, int max_w, int max_h, bool has_int, bool has_float,
                              cudaStream_t stream) {
  if (count <= 0 || max_w <= 0 || max_h <= 0) return cudaSuccess;
  const dim3 rows_grid(blocks(max_w, kRowTile), blocks(max_h, kRowsPerBlock), static_cast<unsigned>(count));
  const dim3 cols_grid(blocks(max_w, kColsPerBlock), blocks(max_h, kColTile), static_cast<unsigned>(count));
  const dim3 cols_block(kColsPerBlock, kColRowsPerBlock);
  if (has_int) {
    idwt_rows<std::int32_t><<<rows_grid, kRowThreads, 0, stream>>>(descs);
    if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
  }
  if (has_float) {
    idwt_rows<float><<<rows_grid, kRowThreads, 0, stream>>>(descs);
    if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
  }
  if (has_int) {
    idwt_cols<std::int32_t><<<cols_grid, cols_block, 0, stream>>>(descs);
    if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
  }
  if (has_float) {
    idwt_cols<float><<<cols_grid, cols_block, 0, stream>>>(descs);
    if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
  }
  return cudaSuccess;
}

cudaError_t launch_store(const StoreDesc* descs, int count, int max_w, int max_h, bool mct, cudaStream_t stream) {
  if (count <= 0 || max_w <= 0 || max_h <= 0) return cudaSuccess;
  const dim3 block(32, 8), grid(blocks(max_w, 32), blocks(max_h, 8), static_cast<unsigned>(count));
  store<<<grid, block, 0, stream>>>(descs, mct ? 1 : 0);
  return cudaGetLastError();
}

cudaError_t launch_colour(const ColourLaunch& launch, cudaStream_t stream) {
  if (launch.width <= 0 || launch.height <= 0) return cudaSuccess;
  const dim3 block(32, 8), grid(blocks((launch.width + 1) / 2, 32), blocks(launch.height, 8));
  if (launch.params.transfer != 0) colour<true><<<grid, block, 0, stream>>>(launch);
  else colour<false><<<grid, block, 0, stream>>>(launch);
  return cudaGetLastError();
}

}  // namespace j2k::gpu::cuda

namespace j2k::gpu::cuda {
cudaError_t probe_kernels() {
  cudaFuncAttributes attr{};
  return cudaFuncGetAttributes(&attr, colour<false>);
}
}  // namespace j2k::gpu::cuda
