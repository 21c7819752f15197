// The "cuda" backend: the own decoder's tier-2 on CPU threads, tier-1 on CPU threads or
// on the GPU, reconstruction on the GPU, CPU reconstruction as the fallback. Built with
// and without CUDA (without, the reconstructor's create() fails and the factory hands out
// the CPU decoder).
#include "gpu/cuda_decoder.hpp"

#include <fmt/format.h>

#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>

#include "core/work_pool.hpp"
#include "decoder/own_decoder.hpp"
#include "gpu/cuda_tier1.hpp"
#include "gpu/tier1_split.hpp"

namespace j2k::gpu {

namespace {

/// The reconstructors of one device, shared by every CudaBackend that uses it: created on
/// demand up to cuda_reconstructor_limit, leased for one frame (submit + collect), so
/// the GPU memory of 16 decode workers is that of 2-4 reconstructors, not sixteen.
class ReconstructorPool {
 public:
  explicit ReconstructorPool(int device) : device_(device), limit_(std::max(1, cuda_reconstructor_limit(device))) {}

  /// The pool of `device`, shared while any backend holds it (destroyed with the last one,
  /// so never after the CUDA runtime has shut down at exit).
  static std::shared_ptr<ReconstructorPool> of(int device) {
    std::lock_guard lock(registry_mutex());
    std::weak_ptr<ReconstructorPool>& slot = registry()[device];
    auto pool = slot.lock();
    if (!pool) {
      pool = std::make_shared<ReconstructorPool>(device);
      slot = pool;
    }
    return pool;
  }
  static int alive(int device) {
    std::lock_guard lock(registry_mutex());
    auto it = registry().find(device);
    if (it == registry().end()) return 0;
    auto pool = it->second.lock();
    if (!pool) return 0;
    std::lock_guard inner(pool->mutex_);
    return static_cast<int>(pool->all_.size());
  }

  class Lease {
   public:
    Lease(ReconstructorPool* pool, CudaReconstructor* rec) : pool_(pool), rec_(rec) {}
    Lease(Lease&& o) noexcept : pool_(o.pool_), rec_(o.rec_) { o.rec_ = nullptr; }
    Lease& operator=(Lease&&) = delete;
    ~Lease() {
      if (rec_) pool_->give_back(rec_);
    }
    CudaReconstructor* operator->() const { return rec_; }

   private:
    ReconstructorPool* pool_;
    CudaReconstructor* rec_;
  };

  /// Waits while every reconstructor is leased and no more may be made.
  Result<Lease> acquire(bool spin_wait) {
    std::unique_lock lock(mutex_);
    free_cv_.wait(lock, [this] { return !free_.empty() || static_cast<int>(all_.size()) < limit_; });
    if (free_.empty()) {
      CudaReconstructor::Options ro;
      ro.device = device_;
      ro.timing = true;
      ro.spin_wait = spin_wait;
      auto rec = CudaReconstructor::create(ro);
      if (!rec) return rec.error();
      all_.push_back(std::move(*rec));
      free_.push_back(all_.back().get());
    }
    CudaReconstructor* r = free_.back();
    free_.pop_back();
    return Lease(this, r);
  }

 private:
  void give_back(CudaReconstructor* r) {
    {
      std::lock_guard lock(mutex_);
      free_.push_back(r);
    }
    free_cv_.notify_one();
  }
  static std::mutex& registry_mutex() {
    static std::mutex m;
    return m;
  }
  static std::map<int, std::weak_ptr<ReconstructorPool>>& registry() {
    static std::map<int, std::weak_ptr<ReconstructorPool>> r;
    return r;
  }

  int device_;
  int limit_;
  std::mutex mutex_;
  std::condition_variable free_cv_;
  std::vector<std::unique_ptr<CudaReconstructor>> all_;
  std::vector<CudaReconstructor*> free_;
};

/// Gives a frame's coefficient buffers back to the decoder they came from when the scope ends.
struct RecycleOnExit {
  decoder::CoefficientDecoder& to;
  decoder::CoefficientFrame& frame;
  ~RecycleOnExit() { to.recycle(std::move(frame)); }
};

class CudaBackend final : public CudaDecoder {
 public:
  CudaBackend(const CudaDecoderOptions& options, std::shared_ptr<ReconstructorPool> pool)
      : options_(options), pool_(std::move(pool)), coefficients_(options.limits) {}

  bool gpu_active() const noexcept override { return active_; }
  decoder::DecodeStats last_stats() const override { return stats_; }
  GpuTimes last_gpu_times() const override { return times_; }
  bool last_tier1_on_gpu() const noexcept override { return last_tier1_gpu_; }
  std::uint64_t tier1_fallbacks() const noexcept override { return tier1_fallbacks_; }

  Result<PlanarImage> decode(Bytes codestream, const decoder::DecodeOptions& options) override {
    ReconstructRequest req;
    req.planar = true;
    return run(codestream, options, req);
  }

  Result<PlanarImage> decode_to_device(Bytes codestream, const decoder::DecodeOptions& options, const DeviceTarget& target,
                                       const ColourInterpretation& colour, bool want_planar) override {
    ReconstructRequest req;
    req.planar = want_planar;
    req.target = &target;
    req.colour = colour;
    return run(codestream, options, req);
  }

 private:
  /// Tier-2 here, tier-1 and reconstruction on the GPU. Errors come back as they are.
  Result<PlanarImage> run_gpu_tier1(Bytes codestream, const decoder::DecodeOptions& options, ReconstructRequest req) {
    const auto t0 = std::chrono::steady_clock::now();
    auto frame = coefficients_.decode_deferred(codestream, options, batch_, &stats_);
    if (!frame) return frame.error();
    const auto t1 = std::chrono::steady_clock::now();
    RecycleOnExit recycle{coefficients_, *frame};
    // Hybrid: the heaviest code-blocks on the CPU's threads while the kernel runs the rest.
    model_.cpu_threads = options.pool ? options.pool->size() : std::max(1, options.threads);
    split_tier1(batch_, model_, split_, options_.tier1_host_blocks);
    const auto t2 = std::chrono::steady_clock::now();
    Tier1HostShare share;
    share.gpu_rows = split_.gpu_rows();
    share.host_rows = split_.host_rows();
    share.decode = [this](std::span<const std::uint32_t> rows, std::int32_t* packed) {
      return coefficients_.decode_tier1_rows(batch_, rows, packed);
    };
    req.tier1 = &batch_;
    req.tier1_share = &share;
    auto lease = pool_->acquire(options_.spin_wait);
    if (!lease) return lease.error();
    auto img = (*lease)->reconstruct(*frame, req, &times_);
    if (!img) return img.error();
    calibrate_tier1(model_, split_, times_.tier1_ms, times_.tier1_host_ms);
    times_.host_deferred_ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
    times_.host_split_ms = std::chrono::duration<double, std::milli>(t2 - t1).count();
    stats_.tier1_ms = times_.tier1_ms;
    stats_.idwt_ms = times_.idwt_ms;
    stats_.colour_ms = times_.store_ms + times_.colour_ms;
    stats_.damaged_codeblocks += times_.tier1_damaged;
    if (options.strict && stats_.damaged_codeblocks > 0)
      return make_error(ErrorKind::corrupt, fmt::format("{} damaged code-blocks", stats_.damaged_codeblocks));
    return img;
  }

  Result<PlanarImage> run(Bytes codestream, const decoder::DecodeOptions& options, const ReconstructRequest& req) {
    stats_ = {};
    times_ = {};
    last_tier1_gpu_ = false;
    if (active_ && tier1_gpu_) {
      auto img = run_gpu_tier1(codestream, options, req);
      if (img) {
        last_tier1_gpu_ = true;
        return img;
      }
      // A corrupt codestream fails the same way on the CPU: report it as it is.
      if (options_.tier1 == Tier1Mode::gpu || img.error().kind == ErrorKind::corrupt ||
          img.error().kind == ErrorKind::limit)
        return img.error();
      // --tier1 auto: this and every later frame decode their code-blocks on the CPU (counted).
      tier1_gpu_ = false;
      ++tier1_fallbacks_;
      last_error_ = img.error().message;
      stats_ = {};
      times_ = {};
    }
    // One CoefficientDecoder per backend: its thread pool and coefficient buffers live
    // across frames (the reconstruction below is complete when it returns, so the frame's
    // buffers go back to it right after).
    auto frame = coefficients_.decode(codestream, options, &stats_);
    if (!frame) return frame.error();
    RecycleOnExit recycle{coefficients_, *frame};
    if (active_) {
      auto lease = pool_->acquire(options_.spin_wait);
      auto img = lease ? (*lease)->reconstruct(*frame, req, &times_) : Result<PlanarImage>(lease.error());
      if (img) {
        stats_.idwt_ms = times_.idwt_ms;
        stats_.colour_ms = times_.store_ms + times_.colour_ms;
        return img;
      }
      if (options_.mode == GpuMode::on || img.error().kind != ErrorKind::io) return img.error();
      // A device failure in auto mode: this and every later frame go to the CPU.
      active_ = false;
      last_error_ = img.error().message;
    }
    decoder::ReconstructTimes rt;
    PlanarImage img;
    if (auto st = coefficients_.reconstruct(*frame, img, &rt); !st) return st.error();
    stats_.idwt_ms = rt.idwt_ms;
    stats_.colour_ms = rt.colour_ms;
    if (req.target)
      return make_error(ErrorKind::io, "GPU unavailable after an error (" + last_error_ +
                                           "); decoded on the CPU, display through the CPU path");
    return img;
  }

  CudaDecoderOptions options_;
  std::shared_ptr<ReconstructorPool> pool_;
  decoder::CoefficientDecoder coefficients_;  // tier-2 + tier-1; used by one thread at a time
  // The GPU tier-1's tables, reused frame to frame. Tier-2 gathers the code-block bytes
  // straight into page-locked memory, which the reconstructor's copy reads as they are.
  decoder::Tier1Batch batch_{cuda_pinned_resource()};
  Tier1CostModel model_{.gpu_chains = std::max(1, tier1_gpu_chains(options_.device))};  // calibrated per frame
  Tier1Split split_;                          // this frame's hybrid split
  bool active_ = true;
  bool tier1_gpu_ = options_.tier1 != Tier1Mode::cpu;
  bool last_tier1_gpu_ = false;
  std::uint64_t tier1_fallbacks_ = 0;
  std::string last_error_;
  decoder::DecodeStats stats_;
  GpuTimes times_;
};

}  // namespace

int cuda_reconstructors_alive(int device) { return ReconstructorPool::alive(device); }

int cuda_reconstructor_limit(int device) { return reconstructor_limit_for_memory(cuda_device_memory(device)); }

Result<std::unique_ptr<CudaDecoder>> make_cuda_decoder_typed(const CudaDecoderOptions& options) {
  if (options.mode == GpuMode::off) return make_error(ErrorKind::unsupported, "--gpu off");
  if (!cuda_available()) return make_error(ErrorKind::unsupported, "CUDA: " + cuda_describe());
  auto pool = ReconstructorPool::of(options.device);
  {
    // The first lease makes a reconstructor: a device that cannot run one fails here.
    auto lease = pool->acquire(options.spin_wait);
    if (!lease) return lease.error();
  }
  return std::unique_ptr<CudaDecoder>(new CudaBackend(options, std::move(pool)));
}

Result<std::unique_ptr<decoder::Decoder>> make_cuda_decoder(const CudaDecoderOptions& options) {
  if (options.mode == GpuMode::off) return decoder::make_own_decoder(options.limits);
  auto typed = make_cuda_decoder_typed(options);
  if (typed) return std::unique_ptr<decoder::Decoder>(std::move(*typed));
  if (options.mode == GpuMode::on) return typed.error();
  return decoder::make_own_decoder(options.limits);  // automatic: CPU reconstruction
}

}  // namespace j2k::gpu
