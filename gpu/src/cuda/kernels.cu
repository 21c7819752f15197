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

/// Runs the lifting steps on shared-memory lines: `line_count` lines starting `ls`
/// elements apart, positions [0, len) with element stride `es`; position t is low-pass
/// when (t & 1) == s. The block's threads share the work; each step ends with a
/// barrier, so every thread of the block must call this. kLineFast puts consecutive
/// threads on consecutive lines (columns: no bank conflicts), else on positions.
template <bool kLineFast>
__device__ __forceinline__ bool position(int i, int line_count, int per_line, int lo, int hi, int parity, int& line,
                                         int& t) {
  int k;
  if (kLineFast) {
    line = i % line_count;
    k = i / line_count;
  } else {
    line = i / per_line;
    k = i % per_line;
  }
  t = lo + 2 * k;
  if ((t & 1) != parity) ++t;
  return t < hi;
}

template <bool kLineFast>
__device__ void lift_lines(std::int32_t* base, int line_count, int ls, int es, int len, int s, int lane, int lanes) {
  // F-5 then F-6 (F.3.8.1): even (low) samples first, then odd.
  const int per_line = len / 2 + 1;
  for (int step = 0; step < 2; ++step) {
    const int parity = step == 0 ? s : 1 - s;
    const int lo = 1 + step, hi = len - 1 - step;
    for (int i = lane; i < line_count * per_line; i += lanes) {
      int line, t;
      if (!position<kLineFast>(i, line_count, per_line, lo, hi, parity, line, t)) continue;
      std::int32_t* x = base + line * ls;
      const std::int32_t a = x[(t - 1) * es], b = x[(t + 1) * es];
      if (step == 0) x[t * es] -= (a + b + 2) >> 2;
      else x[t * es] += (a + b) >> 1;
    }
    __syncthreads();
  }
}

template <bool kLineFast>
__device__ void lift_lines(float* base, int line_count, int ls, int es, int len, int s, int lane, int lanes) {
  // F.3.8.2: scaling, then the four lifting steps (same order and rounding as the CPU).
  for (int i = lane; i < line_count * len; i += lanes) {
    const int line = kLineFast ? i % line_count : i / len, t = kLineFast ? i / line_count : i % len;
    float* x = base + line * ls + t * es;
    *x = __fmul_rn(*x, ((t & 1) == s) ? kK : kInvK);
  }
  __syncthreads();
  const int per_line = len / 2 + 1;
  for (int step = 0; step < 4; ++step) {
    const int parity = (step & 1) == 0 ? s : 1 - s;
    const int lo = 1 + step, hi = len - 1 - step;
    const float c = step == 0 ? kDelta : step == 1 ? kGamma : step == 2 ? kBeta : kAlpha;
    for (int i = lane; i < line_count * per_line; i += lanes) {
      int line, t;
      if (!position<kLineFast>(i, line_count, per_line, lo, hi, parity, line, t)) continue;
      float* x = base + line * ls;
      x[t * es] = lift97(x[t * es], c, x[(t - 1) * es], x[(t + 1) * es]);
    }
    __syncthreads();
  }
}

template <typename T>
__device__ __forceinline__ bool matches(const LevelDesc& d) {
  return d.is_float == (std::is_same<T, float>::value ? 1 : 0);
}

/// HOR_SR (F.3.4) for kRowsPerBlock rows and kRowTile outputs per row: a -> b.
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
  const T* a = reinterpret_cast<const T*>(d.a);
  T* b = reinterpret_cast<T*>(d.b);
  const int rows = min(kRowsPerBlock, h - oy);
  const int tid = threadIdx.x, nth = blockDim.x;
  if (w == 1) {  // F.3.7: a lone sample at an odd coordinate was doubled by the analysis
    for (int r = tid; r < rows; r += nth) {
      const T v = a[static_cast<std::int64_t>(oy + r) * d.stride];
      b[static_cast<std::int64_t>(oy + r) * d.stride] = s ? halve(v) : v;
    }
    return;
  }
  for (int i = tid; i < rows * kLen; i += nth) {
    const int r = i / kLen, t = i % kLen;
    const int g = mirror(ox + t - kHalo, w);
    tile[r][t] = a[static_cast<std::int64_t>(oy + r) * d.stride + source_index(g, s, low)];
  }
  __syncthreads();
  // kHalo and ox are even, so tile position t has the parity of ox + t - kHalo.
  lift_lines<false>(&tile[0][0], rows, kLen, 1, kLen, s, tid, nth);
  for (int i = tid; i < rows * kRowTile; i += nth) {
    const int r = i / kRowTile, t = i % kRowTile;
    if (ox + t < w) b[static_cast<std::int64_t>(oy + r) * d.stride + ox + t] = tile[r][t + kHalo];
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
  const int tid = ty * blockDim.x + tx, nth = blockDim.x * blockDim.y;
  if (h == 1) {
    if (ty == 0 && tx < cols) {
      const T v = b[ox + tx];
      a[ox + tx] = s ? halve(v) : v;
    }
    return;
  }
  for (int t = ty; t < kLen; t += blockDim.y) {
    const int g = mirror(oy + t - kHalo, h);
    if (tx < cols) tile[t][tx] = b[static_cast<std::int64_t>(source_index(g, s, low)) * d.stride + ox + tx];
  }
  __syncthreads();
  // One line per column: element stride kColsPerBlock, line stride 1. Lanes are spread
  // so that a warp touches 32 consecutive columns of one row (no bank conflicts).
  lift_lines<true>(&tile[0][0], cols, 1, kColsPerBlock, kLen, s, tid, nth);
  for (int t = ty; t < kColTile; t += blockDim.y)
    if (tx < cols && oy + t < h) a[static_cast<std::int64_t>(oy + t) * d.stride + ox + tx] = tile[t + kHalo][tx];
}


/// E.1: places every coefficient of one tile-component into the deinterleaved work
/// buffer, dequantised. One thread per output sample; the subband is found by walking
/// down the resolutions (a sample outside resolution r-1's corner belongs to a band of r).
__global__ void dequant(const DequantDesc* descs, const void* coeffs) {
  const DequantDesc& d = descs[blockIdx.z];
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
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
    q = b.wide ? reinterpret_cast<const std::int32_t*>(base)[i] : reinterpret_cast<const std::int16_t*>(base)[i];
  }
  const std::int64_t o = static_cast<std::int64_t>(y) * d.stride + x;
  if (d.is_float) {
    d.dst[o] = __fmul_rn(static_cast<float>(q), b.scale);  // E.1.1.2, midpoint in the low bit
  } else {
    // Clamped like the CPU so corrupt magnitudes cannot overflow the lifting sums.
    constexpr std::int32_t kMax = 1 << 26;
    const std::int32_t v = q >= 0 ? q >> 1 : -((-q) >> 1);
    reinterpret_cast<std::int32_t*>(d.dst)[o] = min(max(v, -kMax), kMax);
  }
}

/// G.2/G.3 inverse component transform (on components 0..2 when `mct`), G.1.2 DC level
/// shift and clamp, written into the component planes.
__global__ void store(const StoreDesc* descs, int mct) {
  const StoreDesc& d = descs[blockIdx.z];
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= d.width || y >= d.height) return;
  const int px = d.ox + x, py = d.oy + y;
  if (px < 0 || py < 0 || px >= d.plane_w || py >= d.plane_h) return;
  const std::int64_t i = static_cast<std::int64_t>(y) * d.stride + x;
  const int c = blockIdx.z;
  std::int32_t out;
  if (d.is_float) {
    float v;
    if (mct && c < 3) {
      const float Y = descs[0].src[i], U = descs[1].src[i], V = descs[2].src[i];
      if (c == 0) v = __fadd_rn(Y, __fmul_rn(1.402f, V));  // G-8..G-10 (ICT inverse)
      else if (c == 1) v = __fsub_rn(__fsub_rn(Y, __fmul_rn(0.34413f, U)), __fmul_rn(0.71414f, V));
      else v = __fadd_rn(Y, __fmul_rn(1.772f, U));
    } else {
      v = d.src[i];
    }
    v = fminf(fmaxf(v, -1.0e9f), 1.0e9f);  // keeps huge values from corrupt data defined
    out = min(max(__float2int_rn(v) + d.shift, d.lo), d.hi);  // lrintf: round half to even
  } else {
    std::int32_t v;
    if (mct && c < 3) {
      const std::int32_t Y = reinterpret_cast<const std::int32_t*>(descs[0].src)[i];
      const std::int32_t U = reinterpret_cast<const std::int32_t*>(descs[1].src)[i];
      const std::int32_t V = reinterpret_cast<const std::int32_t*>(descs[2].src)[i];
      const std::int32_t g = Y - ((U + V) >> 2);  // G-6 (RCT inverse)
      v = c == 0 ? V + g : c == 1 ? g : U + g;
    } else {
      v = reinterpret_cast<const std::int32_t*>(d.src)[i];
    }
    const long long s = static_cast<long long>(v) + d.shift;
    out = static_cast<std::int32_t>(s < d.lo ? d.lo : s > d.hi ? d.hi : s);
  }
  d.plane[static_cast<std::int64_t>(py) * d.plane_w + px] = out;
}

/// Horizontal chroma upsampling of one row (co-sited), as colour_cpu.cpp's upsample_row.
__device__ __forceinline__ float chroma_h(const std::int32_t* row, int width, int dx, int x) {
  if (dx == 1) return static_cast<float>(row[min(x, width - 1)]);
  const int i = x / dx, phase = x % dx;
  const float a = static_cast<float>(row[min(i, width - 1)]);
  const float b = static_cast<float>(row[min(i + 1, width - 1)]);
  return __fadd_rn(a, __fdiv_rn(__fmul_rn(__fsub_rn(b, a), static_cast<float>(phase)), static_cast<float>(dx)));
}

/// Chroma at luma position (x, y): vertical siting between the rows it covers, as chroma_row.
__device__ __forceinline__ float chroma_at(const PlaneView& p, int x, int y) {
  if (p.dy == 1) return chroma_h(p.data + static_cast<std::int64_t>(min(y, p.height - 1)) * p.width, p.width, p.dx, x);
  const double pos = (y + 0.5) / p.dy - 0.5;
  const double fl = floor(pos);
  const int r0 = min(max(static_cast<int>(fl), 0), p.height - 1);
  const int r1 = min(r0 + 1, p.height - 1);
  const float w1 = static_cast<float>(fmin(fmax(pos - fl, 0.0), 1.0));
  const float a = chroma_h(p.data + static_cast<std::int64_t>(r0) * p.width, p.width, p.dx, x);
  const float b = chroma_h(p.data + static_cast<std::int64_t>(r1) * p.width, p.width, p.dx, x);
  return __fadd_rn(a, __fmul_rn(__fsub_rn(b, a), pos < 0 ? 0.0f : w1));
}

__device__ __forceinline__ std::uint32_t to_code(float v, float max) {
  // lround: half away from zero, then clamp (the CPU clamps the long result).
  v = fminf(fmaxf(v, -1.0f), max + 1.0f);
  const float r = roundf(v);
  return static_cast<std::uint32_t>(fminf(fmaxf(r, 0.0f), max));
}

/// Chroma upsampling + YCbCr -> RGB (or RGB / grey scaling) into RGBA8 or RGB10_A2,
/// rows placed at row0 + y * row_step (field weave).
__global__ void colour(const ColourLaunch L) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= L.width || y >= L.height) return;
  const int oy = L.row0 + y * L.row_step;
  if (x >= L.out_w || oy >= L.out_h) return;
  const detail::ColourParams& p = L.params;
  const float m = p.out_max;
  const float yv = static_cast<float>(L.planes[0].data[static_cast<std::int64_t>(y) * L.planes[0].width + x]);
  std::uint32_t r, g, b;
  if (p.mode == detail::ColourMode::grey) {
    r = g = b = to_code(__fmul_rn(__fadd_rn(yv, p.grey_offset), p.grey_scale), m);
  } else {
    const float cb = chroma_at(L.planes[1], x, y), cr = chroma_at(L.planes[2], x, y);
    if (p.mode == detail::ColourMode::rgb) {
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
  }
  const std::uint32_t word = L.rgb10 ? (r | (g << 10) | (b << 20) | (3u << 30)) : (r | (g << 8) | (b << 16) | (255u << 24));
  reinterpret_cast<std::uint32_t*>(static_cast<char*>(L.out) + static_cast<std::int64_t>(oy) * L.pitch)[x] = word;
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
  const dim3 cols_block(kColsPerBlock, 8);
  if (has_int) {
    idwt_rows<std::int32_t><<<rows_grid, 256, 0, stream>>>(descs);
    if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
  }
  if (has_float) {
    idwt_rows<float><<<rows_grid, 256, 0, stream>>>(descs);
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
  const dim3 block(64, 4), grid(blocks(launch.width, 64), blocks(launch.height, 4));
  colour<<<grid, block, 0, stream>>>(launch);
  return cudaGetLastError();
}

}  // namespace j2k::gpu::cuda

namespace j2k::gpu::cuda {
cudaError_t probe_kernels() {
  cudaFuncAttributes attr{};
  return cudaFuncGetAttributes(&attr, colour);
}
}  // namespace j2k::gpu::cuda
