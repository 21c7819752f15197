#pragma once
// Kernel launchers of the CUDA stage and the descriptors they read. Host code fills the
// descriptors into the pinned staging buffer, so they travel with the coefficients in
// one copy and every launch reads them from device memory (no per-launch parameter
// blocks that could race between streams).
#include <cuda_runtime.h>

#include <cstdint>

#include "../colour_params.hpp"

namespace j2k::gpu::cuda {

constexpr int kMaxLevels = 32;                  // 15444-1 allows NL <= 32
constexpr int kMaxBands = 1 + 3 * kMaxLevels;   // LL + (HL, LH, HH) per level

struct BandDesc {
  std::int64_t offset = 0;  ///< bytes from the start of the coefficient area
  std::int32_t width = 0, height = 0;
  float scale = 0;          ///< 9/7: step / 2 (the low bit is the midpoint); unused for 5/3
  std::int16_t present = 0;
  std::int16_t bytes = 2;   ///< 1, 2 or 4: int8, int16 or int32 values
};

/// Where the subbands of one tile-component go in the deinterleaved work buffer.
struct DequantDesc {
  float* dst = nullptr;  ///< work buffer (int32 for 5/3, float for 9/7), row stride `stride`
  std::int32_t width = 0, height = 0, stride = 0;
  std::int32_t levels = 0;    ///< decoded levels
  std::int32_t is_float = 0;
  std::int32_t res_w[kMaxLevels + 1] = {}, res_h[kMaxLevels + 1] = {};  ///< size of resolution r
  BandDesc bands[kMaxBands];  ///< 0 = LL, 1 + 3(r-1) + (orientation-1)
};

/// One synthesis level of one tile-component: `a` holds the deinterleaved resolution,
/// the horizontal pass writes rows into `b`, the vertical pass writes back into `a`.
/// The horizontal pass dequantises the level's three high bands (and, at level 1, the LL
/// band) as it reads them, so no separate dequantisation pass touches device memory.
struct LevelDesc {
  float* a = nullptr;
  float* b = nullptr;
  std::int32_t stride = 0;
  std::int32_t x0 = 0, y0 = 0, x1 = 0, y1 = 0;  ///< resolution rectangle on its own grid
  std::int32_t is_float = 0;
  std::int32_t active = 0;
  std::int32_t level = 0;               ///< r: 1 = the first synthesis (reads the LL band)
  const DequantDesc* dq = nullptr;      ///< the component's bands (device address)
  const void* coeffs = nullptr;         ///< the coefficient area the bands' offsets count from
};

/// The last step of one tile-component: inverse MCT (when `mct`), DC shift, clamp,
/// placement into the component plane.
struct StoreDesc {
  const float* src = nullptr;  ///< work buffer (int32 or float)
  std::int32_t stride = 0, width = 0, height = 0, is_float = 0;
  std::int32_t* plane = nullptr;
  std::int32_t plane_w = 0, plane_h = 0;
  std::int32_t ox = 0, oy = 0;  ///< tile-component origin minus component origin
  std::int32_t shift = 0, lo = 0, hi = 0;
};

struct PlaneView {
  const std::int32_t* data = nullptr;
  std::int32_t width = 0, height = 0, dx = 1, dy = 1;
};

/// A tile-component's finished work buffer, read directly by the fused colour kernel
/// (display-only frames of one tile that covers every component).
struct WorkView {
  const float* data = nullptr;  ///< int32 or float
  std::int32_t stride = 0, is_float = 0, shift = 0, lo = 0, hi = 0;
};

struct ColourLaunch {
  detail::ColourParams params;
  PlaneView planes[3];     ///< geometry always; data only when !fused
  WorkView works[3];       ///< when fused
  std::int32_t fused = 0, mct = 0;
  std::int32_t width = 0, height = 0;  ///< picture size (the first plane)
  void* out = nullptr;
  std::int64_t pitch = 0;
  std::int32_t out_w = 0, out_h = 0, row0 = 0, row_step = 1;
  std::int32_t rgb10 = 0;
};

/// `coeffs`: the coefficient area that BandDesc::offset counts from.
cudaError_t launch_dequant(const DequantDesc* descs, int count, int max_w, int max_h, const void* coeffs,
                           cudaStream_t stream);
/// One level for `count` components (descs on the device), 5/3 and 9/7 alike.
cudaError_t launch_idwt_level(const LevelDesc* descs, int count, int max_w, int max_h, bool has_int, bool has_float,
                              cudaStream_t stream);
cudaError_t launch_store(const StoreDesc* descs, int count, int max_w, int max_h, bool mct, cudaStream_t stream);
cudaError_t launch_colour(const ColourLaunch& launch, cudaStream_t stream);

}  // namespace j2k::gpu::cuda

namespace j2k::gpu::cuda {
/// cudaSuccess when this binary carries kernel code the current device can run.
cudaError_t probe_kernels();
}  // namespace j2k::gpu::cuda
