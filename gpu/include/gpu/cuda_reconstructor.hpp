#pragma once
// GPU reconstruction after tier-1: dequantisation, inverse DWT (5/3 exact, 9/7 float),
// inverse RCT/ICT, DC level shift and clamp, then optionally chroma upsampling and
// YCbCr -> RGB straight into a device buffer (a mapped GL PBO, say).
//
// The CPU twins: decoder::reconstruct() for the planar picture (bit-exact for 5/3 and
// 9/7 alike: the kernels evaluate the same float expressions without contraction) and
// gpu::to_rgba8 / to_rgb10a2 / weave_fields for the display picture (|diff| <= 1).
//
// Pipeline: the object owns `slots` (>= 2) CUDA streams, each with its own pinned
// staging buffer and device buffers, allocated on first use and reused while the
// frame geometry fits. submit() stages a frame on the CPU and enqueues upload + kernels
// on its slot's stream, then returns at once, so frame N+1 uploads while frame N's
// kernels run; within a frame the last level's bands upload on a side stream while the
// lower levels are synthesised. collect() waits on that slot's event (never a
// device-wide sync).
// Errors come back as values; after any error the caller can reconstruct on the CPU.
//
// Threading: one object is used by one thread at a time (submit and collect from the
// decode thread, say); several objects may share a device. The device is selected with
// cudaSetDevice(options.device) in create(), submit() and collect().
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>

#include "core/planar_image.hpp"
#include "core/result.hpp"
#include "decoder/coefficients.hpp"
#include "decoder/tier1_batch.hpp"
#include "gpu/colour.hpp"
#include "gpu/cuda.hpp"
#include "gpu/device_target.hpp"

namespace j2k::gpu {

/// Hybrid tier-1 (gpu/tier1_split.hpp): the kernel decodes `gpu_rows` of the table while
/// `decode` (the CPU tier-1 on the caller's pool) decodes `host_rows` on the calling thread
/// into `packed` (decoder::tier1_packed_offsets layout, pinned memory), returning its
/// damaged-block count; those blocks then travel in one copy and are scattered into the
/// coefficients before the inverse DWT. Every row of the table in exactly one of the two.
struct Tier1HostShare {
  std::span<const std::uint32_t> gpu_rows, host_rows;
  /// With ReconstructRequest::tier1_early: the rows the kernel that start_tier1() launched
  /// decodes and the rows start_tier1() gave the CPU (decoded meanwhile: `decode`, called
  /// for `host_rows`, returns once both CPU shares are done, with their damaged count);
  /// `gpu_rows` and `host_rows` are then the rows read after the start. Every row in
  /// exactly one of the four.
  std::span<const std::uint32_t> early_rows, early_host_rows;
  std::function<Result<std::uint64_t>(std::span<const std::uint32_t> rows, std::int32_t* packed)> decode;
};

struct ReconstructRequest {
  bool planar = true;                     ///< download the planar picture (decoder::reconstruct's twin)
  /// With `planar`: a picture whose planes' memory the result takes over (it is left without
  /// it), so that a stream's frames are written into the same pages frame after frame rather
  /// than into fresh ones (66 MB of page faults per 2160 4:2:2 frame: ~5 ms of a decode
  /// worker's 17). Must stay alive until collect().
  PlanarImage* reuse = nullptr;
  const DeviceTarget* target = nullptr;   ///< also convert for display into this device buffer
  ColourInterpretation colour;
  /// Tier-1 on the GPU: the frame's coefficients are not read from `frame` (its `data`
  /// vectors only give sizes) but decoded on the device from this table, which must
  /// describe exactly the frame's tile-components (CoefficientDecoder::decode_deferred);
  /// a table that does not is rejected before anything is queued. The table must stay as
  /// it is until collect(): bytes in cuda_pinned_resource() memory are copied from where
  /// they are, after submit() has returned.
  const decoder::Tier1Batch* tier1 = nullptr;
  /// With `tier1`: how its rows are shared with the CPU (null: every row on the GPU).
  const Tier1HostShare* tier1_share = nullptr;
  /// With `tier1_share`: this frame's tier-1 started early (start_tier1) and those rows stand
  /// (Tier1HostShare::early_rows and early_host_rows, as start_tier1 was given them). False
  /// while a start is pending: it is void (waited for, then every row decoded anew).
  bool tier1_early = false;
};

/// GPU time of one frame, from events on its stream (filled when Options::timing).
struct GpuTimes {
  double upload_ms = 0;   ///< host -> device copy of the coefficients, or of the tier-1 tables
  double tier1_ms = 0;    ///< GPU tier-1 (0 when the coefficients came from the CPU)
  double idwt_ms = 0;     ///< dequantisation + inverse DWT (from the end of the first upload part:
                          ///< the last level's bands arrive while the lower levels run)
  double store_ms = 0;    ///< inverse MCT, DC shift, clamp (0 when fused into the colour kernel)
  double colour_ms = 0;   ///< upsampling + matrix into the target
  double download_ms = 0; ///< device -> host copy of the planar picture
  double total_ms = 0;    ///< first event to last
  std::size_t upload_bytes = 0;
  bool packed16 = false;  ///< no band needed 32-bit values (each went as int8 or int16)
  std::size_t tier1_blocks = 0;      ///< code-blocks decoded by the GPU kernel
  bool tier1_bytes_direct = false;   ///< their bytes copied from the table itself (page-locked), not staged
  std::uint64_t tier1_damaged = 0;   ///< of those and the CPU's share, zeroed for a wrong segmentation symbol
  std::size_t tier1_host_blocks = 0;  ///< hybrid tier-1: code-blocks decoded on the CPU meanwhile
  double tier1_host_ms = 0;           ///< their host wall time (beside the kernel)
  double tier1_early_ms = 0;          ///< tier-1 started early (start_tier1): its kernel's time
  double tier1_early_host_ms = 0;     ///< and its CPU share's (CudaDecoder: beside tier-2)
  std::size_t tier1_early_blocks = 0; ///< code-blocks that kernel decoded
  std::uint64_t tier1_host_damaged = 0;
  // The host's side of the frame (wall time), where the GPU's time above is not all of it:
  double host_deferred_ms = 0;  ///< CudaDecoder: tier-2 and the code-block tables (decode_deferred)
  double host_split_ms = 0;     ///< CudaDecoder: the hybrid's order and split
  double host_stage_ms = 0;     ///< submit: plan, buffers, staging, up to the first event
  double host_enqueue_ms = 0;   ///< submit: queuing the work (with the CPU's tier-1 share)
  double host_wait_ms = 0;      ///< collect: waiting for the last event
};

class CudaReconstructor {
 public:
  struct Options {
    int device = 0;
    int slots = 2;        ///< frames in flight (>= 2)
    bool timing = false;  ///< record per-stage events (cheap, but not free)
    /// Let the dequantisation kernel read the coefficients from pinned host memory
    /// over the bus instead of copying them first (the copy then overlaps the kernel).
    bool zero_copy = false;
    /// How collect() waits for a frame: false (the default) sleeps until the GPU signals
    /// (cudaEventBlockingSync); true spins on a core, which answers a few microseconds
    /// sooner but keeps one core busy per waiting thread for the whole GPU time.
    bool spin_wait = false;
  };

  /// Fails with ErrorKind::unsupported when no usable CUDA device exists.
  static Result<std::unique_ptr<CudaReconstructor>> create(const Options& options);
  static Result<std::unique_ptr<CudaReconstructor>> create() { return create(Options{}); }
  ~CudaReconstructor();
  CudaReconstructor(const CudaReconstructor&) = delete;
  CudaReconstructor& operator=(const CudaReconstructor&) = delete;

  /// Stages `frame` and enqueues its reconstruction; returns a ticket for collect().
  /// `frame` may be released as soon as this returns. Fails with ErrorKind::limit when
  /// every slot holds an uncollected frame.
  Result<int> submit(const decoder::CoefficientFrame& frame, const ReconstructRequest& request);
  /// Waits for the ticket's frame; returns its planar picture (empty if not requested).
  Result<PlanarImage> collect(int ticket, GpuTimes* times = nullptr);
  /// submit + collect.
  Result<PlanarImage> reconstruct(const decoder::CoefficientFrame& frame, const ReconstructRequest& request,
                                  GpuTimes* times = nullptr);
  /// Tier-1 of the next submitted frame started before its tier-2 ends (decoder::EarlyTier1):
  /// clears the frame's coefficients and decodes `gpu_rows` of `batch` as it stands now (the
  /// rows are copied; the bytes are read where they are, until the frame is collected), on
  /// a stream of the slot the next submit() takes. Returns where the CPU writes its share
  /// `host_rows` meanwhile (decoder::tier1_packed_offsets layout). The next submit() with
  /// ReconstructRequest::tier1_early decodes the remaining rows and waits for these; without
  /// it, or after cancel_tier1(), the start is void. An invalid batch is refused here.
  Result<std::int32_t*> start_tier1(const decoder::Tier1Batch& batch, std::span<const std::uint32_t> gpu_rows,
                                    std::span<const std::uint32_t> host_rows);
  /// Voids a pending start (its frame will not be submitted): waits for its work.
  void cancel_tier1();

  int slots() const noexcept;
  /// Device bytes held by all slots (grows with the largest geometry seen).
  std::size_t device_bytes() const noexcept;

  struct Impl;

 private:
  friend struct CudaReconstructorTestAccess;
  explicit CudaReconstructor(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

/// Test seam: points a reconstructor at another device number, so that its next CUDA call
/// fails (the slot bookkeeping after errors is tested with it).
struct CudaReconstructorTestAccess {
  static void set_device(CudaReconstructor& r, int device);
};

/// Converts a host planar picture into a device target (uploading it on `stream`); for
/// frames that were reconstructed on the CPU. Synchronises `stream` before returning.
Status upload_and_convert(const PlanarImage& image, const ColourInterpretation& colour, const DeviceTarget& target,
                          cudaStream_t stream);

}  // namespace j2k::gpu
