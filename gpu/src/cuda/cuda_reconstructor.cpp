// Host side of the CUDA reconstruction stage: slots (stream + pinned staging + device
// buffers), staging of a CoefficientFrame, the launch sequence, events.
#include "gpu/cuda_reconstructor.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>
#include <utility>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#include <cstdint>
#include <cstring>
#include <limits>
#include <new>
#include <vector>

#include <nvtx3/nvToolsExt.h>

#include "../colour_params.hpp"
#include "cuda_check.hpp"
#include "gpu/cuda.hpp"
#include "kernels.hpp"
#include "gpu/tier1_split.hpp"
#include "tier1_host.hpp"

namespace j2k::gpu {

using decoder::BandOrientation;
using decoder::CoefficientFrame;
using decoder::ComponentCoefficients;
using decoder::Rect;

namespace {

int ceil_shift(long long a, int s) { return static_cast<int>((a + (1LL << s) - 1) >> s); }
Rect shift_rect(const Rect& r, int s) { return {ceil_shift(r.x0, s), ceil_shift(r.y0, s), ceil_shift(r.x1, s), ceil_shift(r.y1, s)}; }
std::size_t align_up(std::size_t n, std::size_t a = 256) { return (n + a - 1) / a * a; }

/// CUDA memory that grows to the largest size asked for and is reused after that. `Kind`
/// supplies the allocator pair: device memory, or page-locked host memory (so that async
/// copies really are asynchronous).
template <typename Kind>
class GrowingBuffer {
 public:
  GrowingBuffer() = default;
  GrowingBuffer(const GrowingBuffer&) = delete;
  GrowingBuffer& operator=(const GrowingBuffer&) = delete;
  ~GrowingBuffer() { release(); }
  Status reserve(std::size_t bytes) {
    if (bytes <= size_) return {};
    release();
    J2K_CUDA_TRY(Kind::allocate(&ptr_, bytes));
    size_ = bytes;
    count_cuda_buffer_allocation();
    return {};
  }
  void release() {
    if (ptr_) Kind::free(ptr_);
    ptr_ = nullptr;
    size_ = 0;
  }
  std::byte* get() const { return static_cast<std::byte*>(ptr_); }
  std::size_t size() const { return size_; }

 private:
  void* ptr_ = nullptr;
  std::size_t size_ = 0;
};

struct DeviceMemory {
  static cudaError_t allocate(void** p, std::size_t n) { return cudaMalloc(p, n); }
  static void free(void* p) { cudaFree(p); }
};
struct PinnedMemory {
  static cudaError_t allocate(void** p, std::size_t n) { return cudaMallocHost(p, n); }
  static void free(void* p) { cudaFreeHost(p); }
};
using DeviceBuffer = GrowingBuffer<DeviceMemory>;
using PinnedBuffer = GrowingBuffer<PinnedMemory>;

enum Ev { ev_start, ev_uploaded, ev_tier1, ev_idwt, ev_stored, ev_coloured, ev_done, ev_count };

/// Everything one frame in flight needs.
struct Slot {
  cudaStream_t stream = nullptr;
  cudaStream_t copy_stream = nullptr;  // second part of the upload, beside the lower levels
  cudaEvent_t early = nullptr, late = nullptr;
  bool split = false;
  std::array<cudaEvent_t, ev_count> ev{};
  PinnedBuffer staging;
  DeviceBuffer d_staging;
  DeviceBuffer work;     // two work areas (a, b) for the largest tile
  DeviceBuffer planes;   // int32 component planes
  PinnedBuffer planes_host;
  DeviceBuffer coeffs;      // tier-1 on the GPU: the frame's coefficients (Tier1Batch layout)
  DeviceBuffer t1_scratch;  // its damaged-block counter
  PinnedBuffer t1_damaged;  // the counter, copied back with the frame
  PinnedBuffer t1_host;     // hybrid tier-1: the CPU's share (scatter rows, coefficients)
  DeviceBuffer d_t1_host;
  // Tier-1 started before tier-2 ended (start_tier1): its own stream, tables and events.
  cudaStream_t early_stream = nullptr;
  cudaEvent_t t1_cleared = nullptr, t1_early_start = nullptr, t1_early_done = nullptr;
  PinnedBuffer e_staging;
  DeviceBuffer d_e_staging;
  PinnedBuffer e_t1_host;  // the CPU's share of the early rows (scatter rows, coefficients)
  DeviceBuffer d_e_t1_host;
  detail::Tier1HostLayout e_t1h;
  bool early_pending = false;  // started, not yet taken by a submit
  bool early_used = false;     // the frame in this slot used it (collect reads its counter and time)
  std::size_t early_blocks = 0;
  bool tier1 = false;
  bool busy = false;
  int ticket = -1;
  bool planar = false;
  PlanarImage* reuse = nullptr;  // ReconstructRequest::reuse
  bool coloured = false;
  PlanarImage geometry;  // planes without samples
  std::vector<std::size_t> plane_offsets;  // elements
  GpuTimes times;
};

/// Per-tile launch plan (offsets into the staging blob).
struct TilePlan {
  std::size_t dequant_off = 0, levels_off = 0, store_off = 0;  // bytes into the blob
  int ncomp = 0, max_w = 0, max_h = 0, max_levels = 0, min_levels = 1 << 30;
  bool has_int = false, has_float = false, mct = false;
  std::vector<int> level_max_w, level_max_h;
};

/// An NVTX range for the profilers' timelines (free when no profiler is attached).
struct NvtxRange {
  explicit NvtxRange(const char* name) { nvtxRangePushA(name); }
  ~NvtxRange() { nvtxRangePop(); }
  NvtxRange(const NvtxRange&) = delete;
  NvtxRange& operator=(const NvtxRange&) = delete;
};

/// One subband's coefficients and its descriptor (in the pinned staging area), whose
/// offset and width are filled in when the band is staged.
struct BandJob {
  const std::int32_t* src = nullptr;
  std::size_t count = 0;
  cuda::BandDesc* desc = nullptr;
  int bytes = 1;      ///< narrowest integer that holds every value
  bool late = false;  ///< needed only by the last synthesis level: uploaded second
};

/// A few threads kept for the staging copies (started on first use, not per call): runs
/// fn(piece) for every piece, on the caller alone when there is little to do.
class PiecePool {
 public:
  PiecePool() = default;
  PiecePool(const PiecePool&) = delete;
  PiecePool& operator=(const PiecePool&) = delete;
  ~PiecePool() {
    {
      std::lock_guard lock(mutex_);
      quit_ = true;
    }
    wake_.notify_all();
    for (std::thread& t : workers_) t.join();
  }

  void run(std::size_t pieces, std::size_t elements, const std::function<void(std::size_t)>& fn) {
    const std::size_t threads = std::min<std::size_t>({kThreads, pieces, std::max<std::size_t>(1, elements / (1u << 18))});
    if (threads <= 1) {
      for (std::size_t i = 0; i < pieces; ++i) fn(i);
      return;
    }
    if (workers_.empty())
      for (std::size_t t = 1; t < kThreads; ++t) workers_.emplace_back([this] { work(); });
    {
      std::lock_guard lock(mutex_);
      job_ = &fn;
      count_ = pieces;
      next_.store(0);
      helpers_ = threads - 1;  // workers that join this job; the caller is the last one
      busy_ = 0;
      ++generation_;
    }
    wake_.notify_all();
    drain();
    std::unique_lock lock(mutex_);
    done_.wait(lock, [this] { return helpers_ == 0 && busy_ == 0; });
    job_ = nullptr;
  }

 private:
  static constexpr std::size_t kThreads = 8;
  void drain() {
    for (std::size_t i; (i = next_.fetch_add(1)) < count_;) (*job_)(i);
  }
  void work() {
    std::uint64_t seen = 0;
    std::unique_lock lock(mutex_);
    for (;;) {
      wake_.wait(lock, [&] { return quit_ || (generation_ != seen && helpers_ > 0); });
      if (quit_) return;
      seen = generation_;
      --helpers_;
      ++busy_;
      lock.unlock();
      drain();
      lock.lock();
      if (--busy_ == 0 && helpers_ == 0) done_.notify_one();
    }
  }

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  const std::function<void(std::size_t)>* job_ = nullptr;
  std::size_t count_ = 0, helpers_ = 0, busy_ = 0;
  std::atomic<std::size_t> next_{0};
  std::uint64_t generation_ = 0;
  bool quit_ = false;
};

/// Copies every band into pinned memory at `dst`, each in the narrowest of int8, int16
/// and int32 that holds all its values (high bands of a lossy frame are mostly small;
/// the LL band of a deep transform may need 32 bits). Fills each descriptor's byte
/// offset and width; returns the bytes used. Late bands go after all others, from
/// `late_start` on, so that they can travel in a second copy while the lower levels are
/// synthesised. This is the CPU's share of the upload; it runs while the GPU works on
/// the previous frame.
std::size_t stage_bands(PiecePool& pool, std::vector<BandJob>& bands, std::byte* dst, std::size_t& late_start) {
  constexpr std::size_t kPiece = 1u << 16;
  struct Piece {
    std::size_t band, lo, hi;
  };
  std::vector<Piece> pieces;
  std::size_t total = 0;
  for (std::size_t b = 0; b < bands.size(); ++b) {
    for (std::size_t lo = 0; lo < bands[b].count; lo += kPiece) pieces.push_back({b, lo, std::min(bands[b].count, lo + kPiece)});
    total += bands[b].count;
  }
  std::vector<std::uint8_t> need(pieces.size(), 1);
  pool.run(pieces.size(), total, [&](std::size_t i) {
    const Piece& p = pieces[i];
    const std::int32_t* s = bands[p.band].src;
    std::int32_t mn = 0, mx = 0;
    for (std::size_t k = p.lo; k < p.hi; ++k) {
      mn = std::min(mn, s[k]);
      mx = std::max(mx, s[k]);
    }
    need[i] = (mn < INT16_MIN || mx > INT16_MAX) ? 4 : (mn < INT8_MIN || mx > INT8_MAX) ? 2 : 1;
  });
  for (BandJob& b : bands) b.bytes = 1;
  for (std::size_t i = 0; i < pieces.size(); ++i) bands[pieces[i].band].bytes = std::max<int>(bands[pieces[i].band].bytes, need[i]);
  std::size_t pos = 0;
  for (int late = 0; late < 2; ++late) {
    if (late) late_start = pos = align_up(pos, 256);
    for (BandJob& b : bands) {
      if (b.late != (late == 1)) continue;
      pos = align_up(pos, 16);
      b.desc->offset = static_cast<std::int64_t>(pos);
      b.desc->bytes = static_cast<std::int16_t>(b.bytes);
      pos += b.count * static_cast<std::size_t>(b.bytes);
    }
  }
  pool.run(pieces.size(), total, [&](std::size_t i) {
    const Piece& p = pieces[i];
    const BandJob& b = bands[p.band];
    std::byte* o = dst + b.desc->offset;
    const std::int32_t* src = b.src;
    std::size_t k = p.lo;
#if defined(__SSE2__)
    // Non-temporal stores: the lines go to memory instead of staying dirty in this core's
    // cache, where the GPU's DMA read would have to snoop them (measured: 29 GB/s from
    // freshly written pinned memory against 52 GB/s from memory). Pieces start at
    // multiples of 65536 elements and bands at 16-byte offsets, so the stores are aligned.
    auto load4 = [&](std::size_t at) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + at)); };
    if (b.bytes == 4) {
      for (; k + 4 <= p.hi; k += 4) _mm_stream_si128(reinterpret_cast<__m128i*>(o + k * 4), load4(k));
    } else if (b.bytes == 2) {
      for (; k + 8 <= p.hi; k += 8)
        _mm_stream_si128(reinterpret_cast<__m128i*>(o + k * 2), _mm_packs_epi32(load4(k), load4(k + 4)));
    } else {
      for (; k + 16 <= p.hi; k += 16) {
        const __m128i lo16 = _mm_packs_epi32(load4(k), load4(k + 4)), hi16 = _mm_packs_epi32(load4(k + 8), load4(k + 12));
        _mm_stream_si128(reinterpret_cast<__m128i*>(o + k), _mm_packs_epi16(lo16, hi16));
      }
    }
    _mm_sfence();
#endif
    // The tail (and everything without SSE2); the packs above saturate, but every value
    // was checked to fit, so both paths store the same numbers.
    if (b.bytes == 4) {
      std::memcpy(o + k * 4, src + k, (p.hi - k) * 4);
    } else if (b.bytes == 2) {
      auto* o16 = reinterpret_cast<std::int16_t*>(o);
      for (; k < p.hi; ++k) o16[k] = static_cast<std::int16_t>(src[k]);
    } else {
      auto* o8 = reinterpret_cast<std::int8_t*>(o);
      for (; k < p.hi; ++k) o8[k] = static_cast<std::int8_t>(src[k]);
    }
  });
  return pos;
}


/// What submit() works out before anything is queued: sizes, offsets, per-tile plans.
struct FramePlan {
  PlanarImage geom;                     // planes without samples
  std::vector<std::size_t> plane_off;   // elements, per component (+ the total)
  std::vector<TilePlan> tiles;
  std::size_t work_elems = 0;           // per work area (a or b)
  std::size_t coeff_count = 0;          // all tile-components' coefficients
  std::size_t coeff_off = 0;            // staging bytes before the coefficients (descriptors)
  std::size_t staging_capacity = 0;     // the device's staging area (the host's: host_staging())
  bool split_upload = false;            // the last level's bands in a second copy
  bool tier1 = false;                   // coefficients made here by the GPU tier-1
  detail::Tier1Layout t1;               // its tables in the staging area
  std::span<const std::uint32_t> t1_gpu_rows, t1_host_rows;  // hybrid: the kernel's rows, the CPU's
  detail::Tier1HostLayout t1h;          // the CPU's share in slot.t1_host
  bool t1_bytes_direct = false;         // the code-block bytes go to the device from the batch (page-locked), not staged
  bool t1_early = false;                // the slot's started tier-1 (start_tier1) holds the other rows: cleared, decoding
  bool covered = false, fused = false;  // one tile covers every plane; colour straight from the work buffers

  /// The host's staging area: the device's, less the code-block bytes that go direct.
  std::size_t host_staging() const { return t1_bytes_direct ? t1.bytes_off : staging_capacity; }
};

/// What submit() staged: the bytes to copy and how.
struct Staged {
  std::size_t staging_bytes = 0;
  std::size_t late_start = 0;  // split upload: where the second part starts (from coeff_off)
  bool split = false;
  bool fits16 = false;
  const void* d_coeffs = nullptr;  // the coefficient area the band descriptors count from
  std::int32_t* t1_packed = nullptr;  // hybrid tier-1: where the CPU writes its share
};

}  // namespace

struct CudaReconstructor::Impl {
  Options options;
  std::vector<Slot> slots;
  int next = 0;
  int tickets = 0;
  PiecePool pool;  // staging copies (the CPU's share of the upload) and the planar copy-out
  Tier1Split t1_all;  // tier-1 without a host share: every row, heaviest first

  ~Impl() {
    for (Slot& s : slots) {
      if (s.stream) cudaStreamSynchronize(s.stream);
      if (s.copy_stream) cudaStreamSynchronize(s.copy_stream);
      for (cudaEvent_t e : s.ev)
        if (e) cudaEventDestroy(e);
      if (s.early_stream) cudaStreamSynchronize(s.early_stream);
      for (cudaEvent_t e : {s.early, s.late, s.t1_cleared, s.t1_early_start, s.t1_early_done})
        if (e) cudaEventDestroy(e);
      if (s.early_stream) cudaStreamDestroy(s.early_stream);
      if (s.copy_stream) cudaStreamDestroy(s.copy_stream);
      if (s.stream) cudaStreamDestroy(s.stream);
    }
  }

  Status init() {
    J2K_CUDA_TRY(cudaSetDevice(options.device));
    slots = std::vector<Slot>(static_cast<std::size_t>(std::max(2, options.slots)));
    for (Slot& s : slots) {
      J2K_CUDA_TRY(cudaStreamCreateWithFlags(&s.stream, cudaStreamNonBlocking));
      J2K_CUDA_TRY(cudaStreamCreateWithFlags(&s.copy_stream, cudaStreamNonBlocking));
      J2K_CUDA_TRY(cudaEventCreateWithFlags(&s.early, cudaEventDisableTiming));
      J2K_CUDA_TRY(cudaEventCreateWithFlags(&s.late, options.timing ? cudaEventDefault : cudaEventDisableTiming));
      J2K_CUDA_TRY(cudaStreamCreateWithFlags(&s.early_stream, cudaStreamNonBlocking));
      J2K_CUDA_TRY(cudaEventCreateWithFlags(&s.t1_cleared, cudaEventDisableTiming));
      const unsigned timed = options.timing ? cudaEventDefault : cudaEventDisableTiming;
      J2K_CUDA_TRY(cudaEventCreateWithFlags(&s.t1_early_start, timed));
      J2K_CUDA_TRY(cudaEventCreateWithFlags(&s.t1_early_done, timed));
      for (int i = 0; i < ev_count; ++i) {
        unsigned flags = (options.timing || i == ev_done) ? cudaEventDefault : cudaEventDisableTiming;
        // collect() waits on ev_done: sleeping there instead of spinning is what keeps a
        // live 2160p50 stream's CPU use to the work it does (issue 15).
        if (i == ev_done && !options.spin_wait) flags |= cudaEventBlockingSync;
        J2K_CUDA_TRY(cudaEventCreateWithFlags(&s.ev[static_cast<std::size_t>(i)], flags));
      }
    }
    return {};
  }

  Status record(Slot& s, Ev e) {
    if (!options.timing && e != ev_done) return {};
    J2K_CUDA_TRY(cudaEventRecord(s.ev[e], s.stream));
    return {};
  }

  Result<int> submit(const CoefficientFrame& frame, const ReconstructRequest& req);
  Result<PlanarImage> collect(int ticket, GpuTimes* times);

  // The steps of submit().
  Result<FramePlan> plan_frame(const CoefficientFrame& frame, const ReconstructRequest& req);
  Status reserve(Slot& slot, const FramePlan& plan, const ReconstructRequest& req);
  Result<Staged> stage(Slot& slot, const CoefficientFrame& frame, const ReconstructRequest& req, FramePlan& plan);
  Status enqueue_reconstruction(Slot& slot, const FramePlan& plan, const Staged& staged, const ReconstructRequest& req);
  Status enqueue_host_tier1(Slot& slot, const FramePlan& plan, const Staged& staged, const ReconstructRequest& req);
  Status enqueue_display(Slot& slot, const FramePlan& plan, const ReconstructRequest& req);
  Result<std::int32_t*> start_tier1(const decoder::Tier1Batch& batch, std::span<const std::uint32_t> gpu_rows,
                                    std::span<const std::uint32_t> host_rows);
  void cancel_tier1() {
    for (Slot& s : slots)
      if (s.early_pending) {
        (void)cudaStreamSynchronize(s.early_stream);
        s.early_pending = false;
      }
  }
  /// Waits for whatever the slot's streams hold and frees it (after a failure).
  void release(Slot& slot) {
    for (cudaStream_t st : {slot.stream, slot.copy_stream, slot.early_stream})
      if (st) (void)cudaStreamSynchronize(st);
    slot.busy = false;
    slot.early_pending = false;
    slot.reuse = nullptr;
    slot.geometry = {};
  }
};

namespace {

/// The colour kernel's output: a picture of `width` x `height` into `target` (RGBA8 or
/// RGB10_A2, field rows by row0/row_step).
void set_output(cuda::ColourLaunch& L, const DeviceTarget& target, int width, int height) {
  L.width = width;
  L.height = height;
  L.out = target.data;
  L.pitch = static_cast<std::int64_t>(target.pitch);
  L.out_w = target.width;
  L.out_h = target.height;
  L.row0 = target.row0;
  L.row_step = std::max(1, target.row_step);
  L.rgb10 = target.format == OutputFormat::rgb10a2 ? 1 : 0;
}

/// The picture geometry that reconstruct() produces (planes sized, samples empty).
PlanarImage frame_geometry(const CoefficientFrame& frame) {
  PlanarImage img;
  img.width = ceil_shift(frame.image.x1, frame.reduce) - ceil_shift(frame.image.x0, frame.reduce);
  img.height = ceil_shift(frame.image.y1, frame.reduce) - ceil_shift(frame.image.y0, frame.reduce);
  for (const decoder::ComponentInfo& ci : frame.components) {
    Plane p;
    p.width = std::max(0, ci.rect.width());
    p.height = std::max(0, ci.rect.height());
    p.dx = ci.dx;
    p.dy = ci.dy;
    p.precision = ci.precision;
    p.is_signed = ci.is_signed;
    img.planes.push_back(std::move(p));
  }
  img.colour = frame.components.size() == 1 ? ColourCoding::grey : frame.stated_colour;
  img.full_range = frame.stated_full_range;
  return img;
}

/// A tier-1 table that belongs to this frame: valid on its own, and laid out over exactly
/// the frame's tile-components (so its blocks land inside the coefficient buffer).
Status check_tier1_batch(const decoder::Tier1Batch& batch, const CoefficientFrame& frame) {
  if (Status st = decoder::validate_tier1_batch(batch); !st) return st;
  std::size_t i = 0;
  std::uint64_t base = 0;
  for (const decoder::TileCoefficients& tile : frame.tiles)
    for (const ComponentCoefficients& cc : tile.components) {
      if (i >= batch.component_base.size() || batch.component_base[i] != base)
        return make_error(ErrorKind::corrupt, "tier-1 table does not match the frame's layout");
      base += cc.data.size();
      ++i;
    }
  if (i != batch.component_base.size() || batch.coefficient_count != base)
    return make_error(ErrorKind::corrupt, "tier-1 table does not match the frame's coefficient count");
  return {};
}

/// A host share that covers the table: its rows in range and as many as the table has.
Status check_tier1_share(const decoder::Tier1Batch& batch, const Tier1HostShare& share) {
  const std::size_t n = batch.blocks.size();
  if (share.gpu_rows.size() + share.host_rows.size() + share.early_rows.size() + share.early_host_rows.size() != n ||
      ((!share.host_rows.empty() || !share.early_host_rows.empty()) && !share.decode))
    return make_error(ErrorKind::corrupt, "tier-1 split does not cover the table");
  for (const auto rows : {share.gpu_rows, share.host_rows, share.early_rows, share.early_host_rows})
    for (const std::uint32_t r : rows)
      if (r >= n) return make_error(ErrorKind::corrupt, "tier-1 split names a row outside the table");
  return {};
}

}  // namespace

Result<FramePlan> CudaReconstructor::Impl::plan_frame(const CoefficientFrame& frame, const ReconstructRequest& req) {
  const std::size_t ncomp = frame.components.size();
  if (ncomp == 0) return make_error(ErrorKind::corrupt, "frame without components");
  if (frame.reduce < 0 || frame.reduce > cuda::kMaxLevels) return make_error(ErrorKind::unsupported, "reduce out of range");
  FramePlan plan;
  plan.geom = frame_geometry(frame);
  plan.plane_off.assign(ncomp + 1, 0);
  for (std::size_t c = 0; c < ncomp; ++c)
    plan.plane_off[c + 1] = plan.plane_off[c] + static_cast<std::size_t>(plan.geom.planes[c].width) * plan.geom.planes[c].height;
  plan.tiles.resize(frame.tiles.size());
  std::size_t blob = 0;
  for (std::size_t t = 0; t < frame.tiles.size(); ++t) {
    const decoder::TileCoefficients& tile = frame.tiles[t];
    if (tile.components.size() != ncomp) return make_error(ErrorKind::corrupt, "tile without all its components");
    TilePlan& tp = plan.tiles[t];
    tp.ncomp = static_cast<int>(ncomp);
    tp.mct = decoder::component_transform_applies(tile);
    std::size_t tile_work = 0;
    for (const ComponentCoefficients& cc : tile.components) {
      if (cc.decoded_levels < 0 || cc.decoded_levels > cc.levels || cc.levels > cuda::kMaxLevels)
        return make_error(ErrorKind::unsupported, "decomposition levels out of range");
      const Rect r = shift_rect(cc.rect, cc.levels - cc.decoded_levels);
      const int w = std::max(0, r.width()), h = std::max(0, r.height());
      tp.max_w = std::max(tp.max_w, w);
      tp.max_h = std::max(tp.max_h, h);
      tp.max_levels = std::max(tp.max_levels, cc.decoded_levels);
      tp.min_levels = std::min(tp.min_levels, cc.decoded_levels);
      (cc.wavelet == decoder::Wavelet::irreversible_9_7 ? tp.has_float : tp.has_int) = true;
      tile_work += align_up(static_cast<std::size_t>(w) * h, 64);
      plan.coeff_count += cc.data.size();
    }
    plan.work_elems = std::max(plan.work_elems, tile_work);
    tp.dequant_off = blob;
    blob = align_up(blob + sizeof(cuda::DequantDesc) * ncomp);
    tp.levels_off = blob;
    blob = align_up(blob + sizeof(cuda::LevelDesc) * ncomp * static_cast<std::size_t>(tp.max_levels));
    tp.store_off = blob;
    blob = align_up(blob + sizeof(cuda::StoreDesc) * ncomp);
  }
  plan.coeff_off = blob;
  plan.tier1 = req.tier1 != nullptr;
  if (plan.tier1) {
    // The coefficients are made on the device; only the code-block tables travel.
    if (Status st = check_tier1_batch(*req.tier1, frame); !st) return st.error();
    if (req.tier1_share) {
      if (Status st = check_tier1_share(*req.tier1, *req.tier1_share); !st) return st.error();
      plan.t1_gpu_rows = req.tier1_share->gpu_rows;
      plan.t1_host_rows = req.tier1_share->host_rows;
    } else {
      split_tier1(*req.tier1, {}, t1_all, 0);
      plan.t1_gpu_rows = t1_all.gpu_rows();
    }
    plan.t1 = detail::plan_tier1(*req.tier1, plan.t1_gpu_rows, blob);
    plan.t1h = detail::plan_tier1_host(*req.tier1, plan.t1_host_rows);
    // Bytes gathered into page-locked memory (the GPU backend's batch) go to the device from
    // where they are (the host's staging area then has no room for them); others through it.
    plan.t1_bytes_direct = req.tier1->bytes.get_allocator().resource() == cuda_pinned_resource();
    plan.staging_capacity = plan.t1.end;
  } else {
    // Room for 32-bit coefficients; they travel as 16-bit values when every one fits
    // (typical for lossy frames up to 12 bits): half the bytes over the bus.
    plan.staging_capacity = align_up(blob + plan.coeff_count * 4 + 16 * cuda::kMaxBands * frame.tiles.size() * ncomp);
    plan.split_upload = !options.zero_copy && frame.tiles.size() == 1;
  }
  // Frames whose tiles do not cover every plane start from zero, like the CPU. A frame
  // of one tile that is exactly every component (the usual video frame) may skip the
  // planes altogether when only the display picture is wanted: the colour kernel then
  // finishes samples (MCT, DC shift, clamp) straight from the work buffers.
  bool covered = frame.tiles.size() == 1, exact = covered;
  if (covered)
    for (std::size_t c = 0; c < ncomp; ++c) {
      const ComponentCoefficients& cc = frame.tiles[0].components[c];
      const Rect r = shift_rect(cc.rect, cc.levels - cc.decoded_levels);
      const Rect& pr = frame.components[c].rect;
      if (r.x0 > pr.x0 || r.y0 > pr.y0 || r.x1 < pr.x1 || r.y1 < pr.y1) covered = false;
      if (r.x0 != pr.x0 || r.y0 != pr.y0 || r.x1 != pr.x1 || r.y1 != pr.y1) exact = false;
    }
  plan.covered = covered;
  plan.fused = exact && !req.planar && req.target;
  return plan;
}

Status CudaReconstructor::Impl::reserve(Slot& slot, const FramePlan& plan, const ReconstructRequest& req) {
  // Grow-only: reused while the geometry fits.
  const std::size_t planes = plan.plane_off.back();
  if (Status st = slot.staging.reserve(plan.host_staging()); !st) return st;
  if (Status st = slot.d_staging.reserve(plan.staging_capacity); !st) return st;
  if (Status st = slot.work.reserve(std::max<std::size_t>(1, 2 * plan.work_elems * 4)); !st) return st;
  if (Status st = slot.planes.reserve(std::max<std::size_t>(1, planes * 4)); !st) return st;
  if (req.planar)
    if (Status st = slot.planes_host.reserve(std::max<std::size_t>(1, planes * 4)); !st) return st;
  if (plan.tier1) {
    if (Status st = slot.coeffs.reserve(std::max<std::size_t>(4, plan.coeff_count * 4)); !st) return st;
    if (Status st = slot.t1_scratch.reserve(256); !st) return st;
    if (Status st = slot.t1_damaged.reserve(2 * sizeof(unsigned)); !st) return st;
    if (plan.t1h.count > 0) {
      if (Status st = slot.t1_host.reserve(plan.t1h.end); !st) return st;
      if (Status st = slot.d_t1_host.reserve(plan.t1h.end); !st) return st;
    }
  }
  return {};
}

Result<Staged> CudaReconstructor::Impl::stage(Slot& slot, const CoefficientFrame& frame, const ReconstructRequest& req,
                                              FramePlan& plan) {
  const std::size_t ncomp = frame.components.size();
  std::byte* host = slot.staging.get();
  std::byte* dev = slot.d_staging.get();
  Staged out;
  out.d_coeffs = dev + plan.coeff_off;
  if (plan.tier1) {
    out.d_coeffs = slot.coeffs.get();
  } else if (options.zero_copy) {
    // The kernels read the coefficients straight from pinned host memory, so the
    // transfer overlaps their work; only the descriptors are copied.
    void* mapped = nullptr;
    J2K_CUDA_TRY(cudaHostGetDevicePointer(&mapped, host, 0));
    out.d_coeffs = static_cast<const std::byte*>(mapped) + plan.coeff_off;
  }
  std::vector<BandJob> band_jobs;
  float* work_a = reinterpret_cast<float*>(slot.work.get());
  float* work_b = work_a + plan.work_elems;
  std::int32_t* planes = reinterpret_cast<std::int32_t*>(slot.planes.get());
  std::size_t tc_index = 0;  // tile-component, for the tier-1 layout
  for (std::size_t t = 0; t < frame.tiles.size(); ++t) {
    const decoder::TileCoefficients& tile = frame.tiles[t];
    TilePlan& tp = plan.tiles[t];
    auto* dq = reinterpret_cast<cuda::DequantDesc*>(host + tp.dequant_off);
    auto* lv = reinterpret_cast<cuda::LevelDesc*>(host + tp.levels_off);
    auto* st = reinterpret_cast<cuda::StoreDesc*>(host + tp.store_off);
    tp.level_max_w.assign(static_cast<std::size_t>(tp.max_levels), 0);
    tp.level_max_h.assign(static_cast<std::size_t>(tp.max_levels), 0);
    std::size_t work_pos = 0;
    for (std::size_t c = 0; c < ncomp; ++c, ++tc_index) {
      const ComponentCoefficients& cc = tile.components[c];
      const int dl = cc.decoded_levels;
      const Rect r = shift_rect(cc.rect, cc.levels - dl);
      const int w = std::max(0, r.width()), h = std::max(0, r.height());
      const bool is_float = cc.wavelet == decoder::Wavelet::irreversible_9_7;
      // Dequantisation descriptor.
      cuda::DequantDesc& d = *new (&dq[c]) cuda::DequantDesc{};
      d.dst = work_a + work_pos;
      d.width = w;
      d.height = h;
      d.stride = std::max(w, 1);
      d.levels = dl;
      d.is_float = is_float ? 1 : 0;
      for (int res = 0; res <= dl; ++res) {
        const Rect rr = shift_rect(cc.rect, cc.levels - res);
        d.res_w[res] = rr.width();
        d.res_h[res] = rr.height();
      }
      for (const decoder::SubbandCoefficients& sb : cc.subbands) {
        if (sb.resolution < 0 || sb.resolution > dl) continue;  // discarded by reduce
        int idx = 0;
        if (sb.resolution > 0) {
          if (sb.orientation == BandOrientation::LL) continue;
          idx = 1 + 3 * (sb.resolution - 1) + (static_cast<int>(sb.orientation) - 1);
        } else if (sb.orientation != BandOrientation::LL) {
          continue;
        }
        const std::size_t n = static_cast<std::size_t>(std::max(0, sb.rect.width())) * std::max(0, sb.rect.height());
        if (sb.offset > cc.data.size() || n > cc.data.size() - sb.offset)
          return make_error(ErrorKind::corrupt, "subband outside its component's coefficients");
        cuda::BandDesc& b = d.bands[idx];
        if (plan.tier1) {
          // Straight from the GPU tier-1's output: 32-bit values in the Tier1Batch layout.
          b.offset = static_cast<std::int64_t>((req.tier1->component_base[tc_index] + sb.offset) * 4);
          b.bytes = 4;
        } else {
          // The last level's bands of a one-tile frame (3/4 of the data) are uploaded in a
          // second copy that overlaps the synthesis of the lower levels.
          const bool late = plan.split_upload && dl == tp.max_levels && sb.resolution == dl && dl >= 1;
          band_jobs.push_back({cc.data.data() + sb.offset, n, &b, 1, late});
        }
        b.width = sb.rect.width();
        b.height = sb.rect.height();
        b.scale = sb.step * 0.5f;
        b.present = 1;
      }
      // Synthesis levels.
      for (int res = 1; res <= tp.max_levels; ++res) {
        cuda::LevelDesc& l = lv[static_cast<std::size_t>(res - 1) * ncomp + c];
        l = cuda::LevelDesc{};
        if (res > dl || w == 0 || h == 0) continue;
        const Rect rr = shift_rect(cc.rect, cc.levels - res);
        l = {.a = work_a + work_pos,
             .b = work_b + work_pos,
             .stride = d.stride,
             .x0 = rr.x0, .y0 = rr.y0, .x1 = rr.x1, .y1 = rr.y1,
             .is_float = d.is_float,
             .active = rr.width() > 0 && rr.height() > 0 ? 1 : 0,
             .level = res,
             .dq = reinterpret_cast<const cuda::DequantDesc*>(dev + tp.dequant_off) + c,
             .coeffs = out.d_coeffs};
        auto& mw = tp.level_max_w[static_cast<std::size_t>(res - 1)];
        auto& mh = tp.level_max_h[static_cast<std::size_t>(res - 1)];
        mw = std::max(mw, rr.width());
        mh = std::max(mh, rr.height());
      }
      // Store descriptor.
      const decoder::ComponentInfo& ci = frame.components[c];
      if (ci.precision < 1 || ci.precision > 30) return make_error(ErrorKind::unsupported, "component precision out of range");
      cuda::StoreDesc& s = st[c];
      s = cuda::StoreDesc{};
      s.src = work_a + work_pos;
      s.stride = d.stride;
      s.width = w;
      s.height = h;
      s.is_float = d.is_float;
      s.plane = planes + plan.plane_off[c];
      s.plane_w = plan.geom.planes[c].width;
      s.plane_h = plan.geom.planes[c].height;
      s.ox = r.x0 - ci.rect.x0;
      s.oy = r.y0 - ci.rect.y0;
      s.shift = ci.is_signed ? 0 : 1 << (ci.precision - 1);
      s.lo = ci.is_signed ? -(1 << (ci.precision - 1)) : 0;
      s.hi = ci.is_signed ? (1 << (ci.precision - 1)) - 1 : static_cast<std::int32_t>((1LL << ci.precision) - 1);
      work_pos += align_up(static_cast<std::size_t>(w) * h, 64);
    }
    if (tp.mct) plan.geom.colour = ColourCoding::rgb;
  }

  if (plan.tier1) {
    NvtxRange range("j2k gpu stage tier-1 tables");
    detail::stage_tier1(*req.tier1, plan.t1_gpu_rows, plan.t1, host, !plan.t1_bytes_direct);
    if (plan.t1h.count > 0)
      out.t1_packed = detail::stage_tier1_host(*req.tier1, plan.t1_host_rows, plan.t1h, slot.t1_host.get());
    out.staging_bytes = plan.host_staging();
    out.fits16 = false;
    return out;
  }
  std::size_t coeff_bytes = 0;
  {
    NvtxRange range("j2k gpu stage coefficients");
    coeff_bytes = stage_bands(pool, band_jobs, host + plan.coeff_off, out.late_start);
  }
  out.split = plan.split_upload && out.late_start < coeff_bytes;
  out.staging_bytes = align_up(plan.coeff_off + coeff_bytes);
  out.fits16 = std::none_of(band_jobs.begin(), band_jobs.end(), [](const BandJob& b) { return b.bytes == 4; });
  return out;
}

Status CudaReconstructor::Impl::enqueue_host_tier1(Slot& slot, const FramePlan& plan, const Staged& staged,
                                                   const ReconstructRequest& req) {
  // The CPU decodes its share now, while the kernel runs; then one copy and the scatter on
  // the copy stream (after the coefficients were cleared: event `early`), which the
  // inverse DWT waits for (event `late`).
  const auto t0 = std::chrono::steady_clock::now();
  Result<std::uint64_t> damaged = [&] {
    NvtxRange range("j2k gpu tier-1 host share");
    return req.tier1_share->decode(plan.t1_host_rows, staged.t1_packed);
  }();
  slot.times.tier1_host_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (!damaged) return damaged.error();
  slot.times.tier1_host_damaged = *damaged;
  const bool early_share = plan.t1_early && slot.e_t1h.count > 0;  // decoded beside tier-2 (start_tier1)
  slot.times.tier1_host_blocks = plan.t1_host_rows.size() + (early_share ? static_cast<std::size_t>(slot.e_t1h.count) : 0);
  J2K_CUDA_TRY(cudaStreamWaitEvent(slot.copy_stream, slot.early, 0));
  auto* coeffs = reinterpret_cast<std::int32_t*>(slot.coeffs.get());
  if (plan.t1h.count > 0) {
    J2K_CUDA_TRY(cudaMemcpyAsync(slot.d_t1_host.get(), slot.t1_host.get(), plan.t1h.end, cudaMemcpyHostToDevice,
                                 slot.copy_stream));
    J2K_CUDA_TRY(detail::scatter_tier1_host(plan.t1h, slot.d_t1_host.get(), coeffs, slot.copy_stream));
  }
  if (early_share) {
    J2K_CUDA_TRY(cudaMemcpyAsync(slot.d_e_t1_host.get(), slot.e_t1_host.get(), slot.e_t1h.end, cudaMemcpyHostToDevice,
                                 slot.copy_stream));
    J2K_CUDA_TRY(detail::scatter_tier1_host(slot.e_t1h, slot.d_e_t1_host.get(), coeffs, slot.copy_stream));
  }
  J2K_CUDA_TRY(cudaEventRecord(slot.late, slot.copy_stream));
  J2K_CUDA_TRY(cudaStreamWaitEvent(slot.stream, slot.late, 0));
  return {};
}

Status CudaReconstructor::Impl::enqueue_reconstruction(Slot& slot, const FramePlan& plan, const Staged& staged,
                                                       const ReconstructRequest& req) {
  std::byte* host = slot.staging.get();
  std::byte* dev = slot.d_staging.get();
  const std::size_t ncomp = plan.geom.planes.size();
  std::int32_t* planes = reinterpret_cast<std::int32_t*>(slot.planes.get());
  if (Status s = record(slot, ev_start); !s) return s;
  // ---- Upload: one copy (or two, the second beside the lower levels' synthesis) ----------
  if (options.zero_copy && !plan.tier1) {
    J2K_CUDA_TRY(cudaMemcpyAsync(dev, host, plan.coeff_off, cudaMemcpyHostToDevice, slot.stream));
  } else if (staged.split) {
    // Descriptors and the lower levels' bands first; the last level's bands follow on the
    // copy stream (after the first part: one copy engine, no point in sharing it) while
    // the kernels of the lower levels run.
    const std::size_t first = plan.coeff_off + staged.late_start;
    J2K_CUDA_TRY(cudaMemcpyAsync(dev, host, first, cudaMemcpyHostToDevice, slot.stream));
    J2K_CUDA_TRY(cudaEventRecord(slot.early, slot.stream));
    J2K_CUDA_TRY(cudaStreamWaitEvent(slot.copy_stream, slot.early, 0));
    J2K_CUDA_TRY(cudaMemcpyAsync(dev + first, host + first, staged.staging_bytes - first, cudaMemcpyHostToDevice,
                                 slot.copy_stream));
    J2K_CUDA_TRY(cudaEventRecord(slot.late, slot.copy_stream));
  } else {
    J2K_CUDA_TRY(cudaMemcpyAsync(dev, host, staged.staging_bytes, cudaMemcpyHostToDevice, slot.stream));
  }
  if (plan.t1_bytes_direct && !req.tier1->bytes.empty())
    J2K_CUDA_TRY(cudaMemcpyAsync(dev + plan.t1.bytes_off, req.tier1->bytes.data(), req.tier1->bytes.size(),
                                 cudaMemcpyHostToDevice, slot.stream));
  if (Status s = record(slot, ev_uploaded); !s) return s;
  // ---- Tier-1 on the GPU: code-blocks straight into the coefficient layout -------------
  if (plan.tier1) {
    auto* counter = reinterpret_cast<unsigned*>(slot.t1_scratch.get());
    auto* coeffs = reinterpret_cast<std::int32_t*>(slot.coeffs.get());
    if (plan.t1_early) {
      // Cleared (and the early rows decoding) on the early stream since start_tier1.
      J2K_CUDA_TRY(cudaStreamWaitEvent(slot.stream, slot.t1_cleared, 0));
    } else {
      // Code-blocks that tier-1 leaves alone are zero.
      J2K_CUDA_TRY(cudaMemsetAsync(coeffs, 0, plan.coeff_count * 4, slot.stream));
      J2K_CUDA_TRY(cudaMemsetAsync(counter, 0, 2 * sizeof(unsigned), slot.stream));
    }
    if (plan.t1h.count > 0 || (plan.t1_early && slot.e_t1h.count > 0))
      J2K_CUDA_TRY(cudaEventRecord(slot.early, slot.stream));
    if (plan.t1.count > 0) {
      const cuda::T1Launch L = detail::tier1_launch(plan.t1, dev, coeffs, counter);
      J2K_CUDA_TRY(cuda::launch_tier1(L, slot.stream));
    }
  }
  if (Status s = record(slot, ev_tier1); !s) return s;
  if (plan.t1_early) J2K_CUDA_TRY(cudaStreamWaitEvent(slot.stream, slot.t1_early_done, 0));
  if (plan.tier1 && (plan.t1h.count > 0 || (plan.t1_early && slot.e_t1h.count > 0)))
    if (Status s = enqueue_host_tier1(slot, plan, staged, req); !s) return s;
  // ---- Dequantisation, inverse DWT, store -----------------------------------------------
  if (!plan.covered && !plan.fused && plan.plane_off[ncomp] > 0)
    J2K_CUDA_TRY(cudaMemsetAsync(planes, 0, plan.plane_off[ncomp] * 4, slot.stream));
  for (std::size_t t = 0; t < plan.tiles.size(); ++t) {
    const TilePlan& tp = plan.tiles[t];
    const int n = tp.ncomp;
    if (tp.min_levels == 0)  // components with synthesis levels are dequantised by their first pass
      J2K_CUDA_TRY(cuda::launch_dequant(reinterpret_cast<const cuda::DequantDesc*>(dev + tp.dequant_off), n, tp.max_w,
                                        tp.max_h, staged.d_coeffs, slot.stream));
    for (int res = 1; res <= tp.max_levels; ++res) {
      if (staged.split && res == tp.max_levels) J2K_CUDA_TRY(cudaStreamWaitEvent(slot.stream, slot.late, 0));
      J2K_CUDA_TRY(cuda::launch_idwt_level(
          reinterpret_cast<const cuda::LevelDesc*>(dev + tp.levels_off) + static_cast<std::size_t>(res - 1) * ncomp, n,
          tp.level_max_w[static_cast<std::size_t>(res - 1)], tp.level_max_h[static_cast<std::size_t>(res - 1)],
          tp.has_int, tp.has_float, slot.stream));
    }
    if (t + 1 == plan.tiles.size())
      if (Status s = record(slot, ev_idwt); !s) return s;
    if (!plan.fused)
      J2K_CUDA_TRY(cuda::launch_store(reinterpret_cast<const cuda::StoreDesc*>(dev + tp.store_off), n, tp.max_w,
                                      tp.max_h, tp.mct, slot.stream));
  }
  if (plan.tiles.empty())
    if (Status s = record(slot, ev_idwt); !s) return s;
  return record(slot, ev_stored);
}

Status CudaReconstructor::Impl::enqueue_display(Slot& slot, const FramePlan& plan, const ReconstructRequest& req) {
  slot.coloured = false;
  if (!req.target) return {};
  const std::size_t ncomp = plan.geom.planes.size();
  std::int32_t* planes = reinterpret_cast<std::int32_t*>(slot.planes.get());
  const DeviceTarget& target = *req.target;
  auto params = detail::make_colour_params(plan.geom, req.colour, target.format == OutputFormat::rgb10a2 ? 1023.0f : 255.0f);
  if (!params) return params.error();
  cuda::ColourLaunch L;
  L.params = *params;
  for (std::size_t c = 0; c < std::min<std::size_t>(3, ncomp); ++c)
    L.planes[c] = {planes + plan.plane_off[c], plan.geom.planes[c].width, plan.geom.planes[c].height,
                   plan.geom.planes[c].dx, plan.geom.planes[c].dy};
  if (plan.fused) {
    const auto* st = reinterpret_cast<const cuda::StoreDesc*>(slot.staging.get() + plan.tiles[0].store_off);
    L.fused = 1;
    L.mct = plan.tiles[0].mct ? 1 : 0;
    for (std::size_t c = 0; c < std::min<std::size_t>(3, ncomp); ++c)
      L.works[c] = {st[c].src, st[c].stride, st[c].is_float, st[c].shift, st[c].lo, st[c].hi};
  }
  set_output(L, target, plan.geom.planes[0].width, plan.geom.planes[0].height);
  J2K_CUDA_TRY(cuda::launch_colour(L, slot.stream));
  slot.coloured = true;
  return {};
}

Result<int> CudaReconstructor::Impl::submit(const CoefficientFrame& frame, const ReconstructRequest& req) {
  NvtxRange range("j2k gpu submit (stage + enqueue)");
  const auto t_submit = std::chrono::steady_clock::now();
  J2K_CUDA_TRY(cudaSetDevice(options.device));  // the current device is per host thread
  Slot& slot = slots[static_cast<std::size_t>(next)];
  if (slot.busy) return make_error(ErrorKind::limit, "CUDA reconstructor: every slot holds an uncollected frame");
  auto plan = plan_frame(frame, req);
  if (!plan) return plan.error();
  plan->t1_early = plan->tier1 && slot.early_pending && req.tier1_early;
  if (plan->tier1 && req.tier1_early && !plan->t1_early)
    return make_error(ErrorKind::corrupt, "tier-1 was not started early on this reconstructor");
  if (slot.early_pending && !plan->t1_early) {
    // A start this frame does not use (void): it finishes before its buffers are touched.
    J2K_CUDA_TRY(cudaStreamSynchronize(slot.early_stream));
    slot.early_pending = false;
  }
  if (Status st = reserve(slot, *plan, req); !st) return st.error();
  auto staged = stage(slot, frame, req, *plan);
  if (!staged) return staged.error();

  slot.times = GpuTimes{};
  slot.times.upload_bytes = staged->staging_bytes + (plan->t1_bytes_direct ? req.tier1->bytes.size() : 0);
  slot.times.tier1_bytes_direct = plan->t1_bytes_direct;
  slot.times.packed16 = staged->fits16;
  slot.times.tier1_blocks = plan->tier1 ? plan->t1_gpu_rows.size() : 0;
  const auto t_staged = std::chrono::steady_clock::now();
  slot.times.host_stage_ms = std::chrono::duration<double, std::milli>(t_staged - t_submit).count();
  // From here on work is queued: if this submit fails half-way, wait for what was queued
  // before returning, so that the next submit cannot overwrite buffers still in use.
  struct DrainOnError {
    Slot& slot;
    bool armed = true;
    ~DrainOnError() {
      if (!armed) return;
      for (cudaStream_t st : {slot.stream, slot.copy_stream, slot.early_stream}) (void)cudaStreamSynchronize(st);
      slot.early_pending = false;
    }
  } drain{slot};
  if (Status s = enqueue_reconstruction(slot, *plan, *staged, req); !s) return s.error();
  if (Status s = enqueue_display(slot, *plan, req); !s) return s.error();
  if (Status s = record(slot, ev_coloured); !s) return s.error();
  const std::size_t plane_elems = plan->plane_off.back();
  if (req.planar && plane_elems > 0)
    J2K_CUDA_TRY(cudaMemcpyAsync(slot.planes_host.get(), slot.planes.get(), plane_elems * 4, cudaMemcpyDeviceToHost,
                                 slot.stream));
  if (plan->tier1)
    J2K_CUDA_TRY(cudaMemcpyAsync(slot.t1_damaged.get(), slot.t1_scratch.get(), 2 * sizeof(unsigned),
                                 cudaMemcpyDeviceToHost, slot.stream));
  J2K_CUDA_TRY(cudaEventRecord(slot.ev[ev_done], slot.stream));
  slot.times.host_enqueue_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t_staged).count();

  drain.armed = false;
  slot.early_used = plan->t1_early;
  slot.early_pending = false;
  slot.busy = true;
  slot.split = staged->split;
  slot.tier1 = plan->tier1;
  slot.planar = req.planar;
  slot.reuse = req.planar ? req.reuse : nullptr;
  slot.geometry = std::move(plan->geom);
  slot.plane_offsets = std::move(plan->plane_off);
  slot.ticket = tickets++;
  next = (next + 1) % static_cast<int>(slots.size());
  return slot.ticket;
}

Result<PlanarImage> CudaReconstructor::Impl::collect(int ticket, GpuTimes* times) {
  NvtxRange range("j2k gpu collect");
  Slot* found = nullptr;
  for (Slot& s : slots)
    if (s.busy && s.ticket == ticket) found = &s;
  if (!found) return make_error(ErrorKind::corrupt, fmt::format("CUDA reconstructor: no frame in flight for ticket {}", ticket));
  Slot& slot = *found;
  // The slot stays busy until its work is known to be finished; on any failure it is
  // drained and freed, so that an error never leaves it taken for good (issue 9 item 13).
  // (cuda_error takes a failed call back from the runtime's "last error".)
  if (const cudaError_t e = cudaSetDevice(options.device); e != cudaSuccess) {
    release(slot);  // a stream carries its device: waiting on it needs no current device
    return cuda::cuda_error(e, "cudaSetDevice(options.device)", __FILE__, __LINE__);
  }
  const auto t_wait = std::chrono::steady_clock::now();
  if (const cudaError_t e = cudaEventSynchronize(slot.ev[ev_done]); e != cudaSuccess) {
    release(slot);
    return cuda::cuda_error(e, "cudaEventSynchronize(slot.ev[ev_done])", __FILE__, __LINE__);
  }
  slot.times.host_wait_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t_wait).count();
  slot.busy = false;
  J2K_CUDA_TRY(cudaGetLastError());
  if (options.timing) {
    auto between = [&](Ev a, Ev b) {
      float ms = 0;
      return cudaEventElapsedTime(&ms, slot.ev[a], slot.ev[b]) == cudaSuccess ? static_cast<double>(ms) : 0.0;
    };
    if (slot.split) {
      float ms = 0;  // the upload ends with its second part, on the copy stream
      slot.times.upload_ms = cudaEventElapsedTime(&ms, slot.ev[ev_start], slot.late) == cudaSuccess ? ms : 0.0;
    } else {
      slot.times.upload_ms = between(ev_start, ev_uploaded);
    }
    slot.times.tier1_ms = slot.tier1 ? between(ev_uploaded, ev_tier1) : 0.0;
    if (slot.early_used) {
      float ms = 0;
      slot.times.tier1_early_ms =
          cudaEventElapsedTime(&ms, slot.t1_early_start, slot.t1_early_done) == cudaSuccess ? ms : 0.0;
    }
    slot.times.idwt_ms = between(ev_tier1, ev_idwt);
    slot.times.store_ms = between(ev_idwt, ev_stored);
    slot.times.colour_ms = slot.coloured ? between(ev_stored, ev_coloured) : 0.0;
    slot.times.download_ms = slot.planar ? between(ev_coloured, ev_done) : 0.0;
    slot.times.total_ms = between(ev_start, ev_done);
  }
  if (slot.tier1) {
    const auto* counters = reinterpret_cast<const unsigned*>(slot.t1_damaged.get());
    slot.times.tier1_damaged = counters[0] + (slot.early_used ? counters[1] : 0u) + slot.times.tier1_host_damaged;
  }
  if (slot.early_used) slot.times.tier1_early_blocks = slot.early_blocks;
  if (times) *times = slot.times;
  PlanarImage img = std::move(slot.geometry);
  slot.geometry = {};
  PlanarImage* const reuse = std::exchange(slot.reuse, nullptr);
  if (!slot.planar) {
    img.planes.clear();
    return img;
  }
  // Out of pinned memory into the picture's own vectors, on several threads: for a
  // 1080 4:2:2 frame this is 16 MB of fresh pages, slower than the GPU's whole work,
  // unless the caller handed in the last frame's picture, whose pages are in place.
  if (reuse)
    for (std::size_t c = 0; c < img.planes.size() && c < reuse->planes.size(); ++c)
      img.planes[c].samples.swap(reuse->planes[c].samples);
  const auto* src = reinterpret_cast<const std::int32_t*>(slot.planes_host.get());
  constexpr std::size_t kPiece = 1u << 18;
  struct Piece {
    std::size_t plane, lo, hi;
  };
  std::vector<Piece> pieces;
  for (std::size_t c = 0; c < img.planes.size(); ++c) {
    const std::size_t n = slot.plane_offsets[c + 1] - slot.plane_offsets[c];
    img.planes[c].samples.resize(n);  // value-initialised: the page faults happen here
    for (std::size_t lo = 0; lo < n; lo += kPiece) pieces.push_back({c, lo, std::min(n, lo + kPiece)});
  }
  pool.run(pieces.size(), slot.plane_offsets.back(), [&](std::size_t i) {
    const Piece& p = pieces[i];
    std::memcpy(img.planes[p.plane].samples.data() + p.lo, src + slot.plane_offsets[p.plane] + p.lo, (p.hi - p.lo) * 4);
  });
  return img;
}

Result<std::int32_t*> CudaReconstructor::Impl::start_tier1(const decoder::Tier1Batch& batch,
                                                           std::span<const std::uint32_t> gpu_rows,
                                                           std::span<const std::uint32_t> host_rows) {
  NvtxRange range("j2k gpu tier-1 early start");
  J2K_CUDA_TRY(cudaSetDevice(options.device));
  Slot& slot = slots[static_cast<std::size_t>(next)];
  if (slot.busy) return make_error(ErrorKind::limit, "CUDA reconstructor: every slot holds an uncollected frame");
  if (slot.early_pending) {  // an earlier start nobody took: void
    J2K_CUDA_TRY(cudaStreamSynchronize(slot.early_stream));
    slot.early_pending = false;
  }
  if (Status st = decoder::validate_tier1_batch(batch); !st) return st.error();
  const std::size_t n = batch.blocks.size();
  for (const auto rows : {gpu_rows, host_rows})
    for (const std::uint32_t r : rows)
      if (r >= n) return make_error(ErrorKind::corrupt, "tier-1 split names a row outside the table");
  const detail::Tier1Layout l = detail::plan_tier1(batch, gpu_rows, 0);
  const detail::Tier1HostLayout hl = detail::plan_tier1_host(batch, host_rows);
  const bool direct = batch.bytes.get_allocator().resource() == cuda_pinned_resource();
  const std::size_t staged = direct ? l.bytes_off : l.end;
  if (Status st = slot.e_staging.reserve(std::max<std::size_t>(1, staged)); !st) return st.error();
  if (Status st = slot.d_e_staging.reserve(std::max<std::size_t>(1, l.end)); !st) return st.error();
  if (Status st = slot.coeffs.reserve(std::max<std::size_t>(4, batch.coefficient_count * 4)); !st) return st.error();
  if (Status st = slot.t1_scratch.reserve(256); !st) return st.error();
  std::int32_t* packed = nullptr;
  slot.e_t1h = hl;
  if (hl.count > 0) {
    if (Status st = slot.e_t1_host.reserve(hl.end); !st) return st.error();
    if (Status st = slot.d_e_t1_host.reserve(hl.end); !st) return st.error();
    packed = detail::stage_tier1_host(batch, host_rows, hl, slot.e_t1_host.get());
  }
  detail::stage_tier1(batch, gpu_rows, l, slot.e_staging.get(), !direct);
  auto* counters = reinterpret_cast<unsigned*>(slot.t1_scratch.get());
  auto* coeffs = reinterpret_cast<std::int32_t*>(slot.coeffs.get());
  std::byte* dev = slot.d_e_staging.get();
  cudaStream_t st = slot.early_stream;
  struct DrainOnError {  // as in submit: nothing half-queued outlives a failure
    Slot& slot;
    bool armed = true;
    ~DrainOnError() {
      if (armed) (void)cudaStreamSynchronize(slot.early_stream);
    }
  } drain{slot};
  J2K_CUDA_TRY(cudaEventRecord(slot.t1_early_start, st));
  J2K_CUDA_TRY(cudaMemsetAsync(coeffs, 0, batch.coefficient_count * 4, st));
  J2K_CUDA_TRY(cudaMemsetAsync(counters, 0, 2 * sizeof(unsigned), st));
  J2K_CUDA_TRY(cudaEventRecord(slot.t1_cleared, st));
  J2K_CUDA_TRY(cudaMemcpyAsync(dev, slot.e_staging.get(), staged, cudaMemcpyHostToDevice, st));
  if (direct && !batch.bytes.empty())
    J2K_CUDA_TRY(cudaMemcpyAsync(dev + l.bytes_off, batch.bytes.data(), batch.bytes.size(), cudaMemcpyHostToDevice, st));
  if (l.count > 0) {
    // The second counter: the submit's kernel counts in the first.
    const cuda::T1Launch L = detail::tier1_launch(l, dev, coeffs, counters + 1);
    J2K_CUDA_TRY(cuda::launch_tier1(L, st));
  }
  J2K_CUDA_TRY(cudaEventRecord(slot.t1_early_done, st));
  drain.armed = false;
  slot.early_pending = true;
  slot.early_blocks = gpu_rows.size();
  return packed;
}

CudaReconstructor::CudaReconstructor(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
CudaReconstructor::~CudaReconstructor() = default;

Result<std::unique_ptr<CudaReconstructor>> CudaReconstructor::create(const Options& options) {
  if (!cuda_available()) return make_error(ErrorKind::unsupported, "CUDA: " + cuda_describe());
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  if (Status st = impl->init(); !st) return st.error();
  return std::unique_ptr<CudaReconstructor>(new CudaReconstructor(std::move(impl)));
}

Result<int> CudaReconstructor::submit(const CoefficientFrame& frame, const ReconstructRequest& request) {
  return impl_->submit(frame, request);
}
Result<PlanarImage> CudaReconstructor::collect(int ticket, GpuTimes* times) { return impl_->collect(ticket, times); }
Result<PlanarImage> CudaReconstructor::reconstruct(const CoefficientFrame& frame, const ReconstructRequest& request,
                                                   GpuTimes* times) {
  auto ticket = submit(frame, request);
  if (!ticket) return ticket.error();
  return collect(*ticket, times);
}
Result<std::int32_t*> CudaReconstructor::start_tier1(const decoder::Tier1Batch& batch,
                                                     std::span<const std::uint32_t> gpu_rows,
                                                     std::span<const std::uint32_t> host_rows) {
  auto packed = impl_->start_tier1(batch, gpu_rows, host_rows);
  // A start that failed in the runtime (pinned memory short, say) leaves its error as the
  // thread's last: cleared here, or the frame's own launch would report it as its own.
  if (!packed) (void)cudaGetLastError();
  return packed;
}
void CudaReconstructor::cancel_tier1() { impl_->cancel_tier1(); }
int CudaReconstructor::slots() const noexcept { return static_cast<int>(impl_->slots.size()); }
std::size_t CudaReconstructor::device_bytes() const noexcept {
  std::size_t n = 0;
  for (const Slot& s : impl_->slots)
    n += s.d_staging.size() + s.work.size() + s.planes.size() + s.coeffs.size() + s.t1_scratch.size() +
         s.d_t1_host.size() + s.d_e_staging.size() + s.d_e_t1_host.size();
  return n;
}

void CudaReconstructorTestAccess::set_device(CudaReconstructor& r, int device) { r.impl_->options.device = device; }

Status upload_and_convert(const PlanarImage& image, const ColourInterpretation& colour, const DeviceTarget& target,
                          cudaStream_t stream) {
  auto params = detail::make_colour_params(image, colour, target.format == OutputFormat::rgb10a2 ? 1023.0f : 255.0f);
  if (!params) return params.error();
  std::size_t total = 0;
  const std::size_t n = std::min<std::size_t>(3, image.planes.size());
  for (std::size_t c = 0; c < n; ++c) total += image.planes[c].samples.size();
  void* d = nullptr;
  J2K_CUDA_TRY(cudaMallocAsync(&d, std::max<std::size_t>(4, total * 4), stream));
  cuda::ColourLaunch L;
  L.params = *params;
  std::size_t off = 0;
  cudaError_t e = cudaSuccess;
  for (std::size_t c = 0; c < n && e == cudaSuccess; ++c) {
    const Plane& p = image.planes[c];
    auto* dst = static_cast<std::int32_t*>(d) + off;
    e = cudaMemcpyAsync(dst, p.samples.data(), p.samples.size() * 4, cudaMemcpyHostToDevice, stream);
    L.planes[c] = {dst, p.width, p.height, p.dx, p.dy};
    off += p.samples.size();
  }
  set_output(L, target, image.planes[0].width, image.planes[0].height);
  if (e == cudaSuccess) e = cuda::launch_colour(L, stream);
  const cudaError_t f = cudaFreeAsync(d, stream);
  const cudaError_t g = cudaStreamSynchronize(stream);
  J2K_CUDA_TRY(e);
  J2K_CUDA_TRY(f);
  J2K_CUDA_TRY(g);
  return {};
}

}  // namespace j2k::gpu
