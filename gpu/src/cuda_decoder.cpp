// The "cuda" backend: the own decoder's tier-2 on CPU threads, tier-1 on CPU threads or
// on the GPU, reconstruction on the GPU, CPU reconstruction as the fallback. Built with
// and without CUDA (without, the reconstructor's create() fails and the factory hands out
// the CPU decoder).
#include "gpu/cuda_decoder.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <numeric>
#include <optional>
#include <thread>

#include "core/work_pool.hpp"
#include "decoder/own_decoder.hpp"
#include "gpu/cuda_tier1.hpp"
#include "gpu/retry_after_pause.hpp"
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
    CudaReconstructor* get() const { return rec_; }

   private:
    ReconstructorPool* pool_;
    CudaReconstructor* rec_;
  };

  /// Waits while every reconstructor is leased and no more may be made; a caller inside a
  /// task of `work_pool` lends its run slot to the pool's helpers meanwhile.
  Result<Lease> acquire(bool spin_wait, WorkPool* work_pool = nullptr) {
    std::unique_lock lock(mutex_);
    const auto ready = [this] { return !free_.empty() || static_cast<int>(all_.size()) < limit_; };
    if (!ready()) {
      WorkPool::Waiting waiting(work_pool);
      free_cv_.wait(lock, ready);
    }
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

/// One thread that runs one job at a time beside the decoding thread: the CPU's share of a
/// tier-1 started early (EarlyTier1), while the decoding thread goes on with tier-2 (its
/// loops and the share's run on the same pool at once).
class SideRunner {
 public:
  SideRunner() : thread_([this] { loop(); }) {}
  ~SideRunner() {
    {
      std::lock_guard lock(mutex_);
      quit_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  SideRunner(const SideRunner&) = delete;
  SideRunner& operator=(const SideRunner&) = delete;

  /// Starts `job` (the previous one must have been waited for).
  void post(std::function<void()> job) {
    {
      std::lock_guard lock(mutex_);
      job_ = std::move(job);
      busy_ = true;
    }
    cv_.notify_all();
  }
  /// Returns once the posted job (if any) has finished.
  void wait() {
    std::unique_lock lock(mutex_);
    cv_.wait(lock, [this] { return !busy_; });
  }

 private:
  void loop() {
    std::unique_lock lock(mutex_);
    for (;;) {
      cv_.wait(lock, [this] { return quit_ || job_; });
      if (quit_) return;
      std::function<void()> job = std::move(job_);
      job_ = nullptr;
      lock.unlock();
      job();
      lock.lock();
      busy_ = false;
      cv_.notify_all();
    }
  }
  std::mutex mutex_;
  std::condition_variable cv_;
  std::function<void()> job_;
  bool busy_ = false, quit_ = false;
  std::thread thread_;
};

/// Tier-1 starts early only in frames of code-blocks of at most 32 x 32 (as broadcast and
/// IMF encoders write 1080 and 2160 frames): there the last resolution's blocks are light
/// and the start pays (2160 4:2:2 8 Mbit 4.05 -> 3.52 ms, 1080 2.24 -> 1.97 ms on an H100).
/// With 64 x 64 blocks the last resolution's are as heavy as the rest, its kernel then
/// starts later and tier-2 shares the cores with the CPU's share: 10-25 % slower. (Choosing
/// per stream by measuring both ways was tried: frame times are too noisy for it.)
bool early_start_pays(const decoder::Tier1Batch& batch) {
  return std::all_of(batch.blocks.begin(), batch.blocks.end(),
                     [](const decoder::Tier1Block& b) { return b.width <= 32 && b.height <= 32; });
}

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
  std::string last_gpu_error() const override { return last_error_; }

  Result<PlanarImage> decode(Bytes codestream, const decoder::DecodeOptions& options) override {
    ReconstructRequest req;
    req.planar = true;
    return run(codestream, options, req);
  }

  /// As decode(), writing into `out`'s planes (the last frame's picture, say): no fresh pages
  /// per frame, on the GPU path (ReconstructRequest::reuse) as on the CPU's.
  Status decode_into(Bytes codestream, const decoder::DecodeOptions& options, PlanarImage& out) override {
    ReconstructRequest req;
    req.planar = true;
    req.reuse = &out;
    auto img = run(codestream, options, req);
    if (!img) return img.error();
    out = std::move(*img);
    return {};
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
  using Clock = std::chrono::steady_clock;

  /// One frame's tier-1 started before tier-2 ends (decoder::EarlyTier1).
  struct EarlyRun {
    CudaReconstructor* reconstructor = nullptr;
    WorkPool* shared_pool = nullptr;  // the caller's pool, if the frame runs on one
    std::uint64_t urgency = 0;        // its frame's rank there
    bool started = false;             // a kernel runs on the rows handed over
    Clock::time_point at{};
    Result<std::uint64_t> share_done = std::uint64_t{0};  // the CPU's share of those rows
    double share_ms = 0;
  };

  /// EarlyTier1::start, on a thread of the decoder's pool (where nothing may throw): the
  /// split of the rows known now, their kernel, and the CPU's share on the side thread while
  /// tier-2 reads the rest.
  void start_early(const decoder::Tier1Batch& b, EarlyRun& run) noexcept {
    try {
      start_early_unguarded(b, run);
    } catch (const std::exception& e) {
      // Out of memory, or no thread for the share: a start already made is void (its share
      // was not decoded) and the frame fails as a decode that runs out of memory does.
      run.share_done = make_error(ErrorKind::limit, fmt::format("GPU tier-1 early start: {}", e.what()));
    }
  }
  void start_early_unguarded(const decoder::Tier1Batch& b, EarlyRun& run) {
    if (!early_start_pays(b)) return;
    run.at = Clock::now();
    // The kernel started now has until the last resolutions' kernel ends (as the last frames
    // measured it): the CPU takes only what keeps it within that.
    split_tier1(b, model_, split_, options_.tier1_host_blocks, early_slack_us_);
    auto packed = run.reconstructor->start_tier1(b, split_.gpu_rows(), split_.host_rows());
    if (!packed) return;  // not started: this frame goes the usual way
    run.started = true;
    early_gpu_.assign(split_.gpu_rows().begin(), split_.gpu_rows().end());
    early_host_.assign(split_.host_rows().begin(), split_.host_rows().end());
    if (early_host_.empty()) return;
    decoder::copy_tier1_rows(b, early_host_, share_batch_);
    share_rows_.resize(share_batch_.blocks.size());  // all of the copy's rows, in order
    std::iota(share_rows_.begin(), share_rows_.end(), 0u);
    if (!side_) side_.emplace();
    side_->post([this, out = *packed, &run] {
      // On a shared pool the share's loop ranks with its frame's (not after every frame's).
      std::optional<WorkPool::Task> task;
      if (run.shared_pool) task.emplace(*run.shared_pool, run.urgency);
      const auto s0 = Clock::now();
      run.share_done = coefficients_.decode_tier1_rows(share_batch_, share_rows_, out, /*beside=*/true);  // throws nothing
      run.share_ms = std::chrono::duration<double, std::milli>(Clock::now() - s0).count();
    });
  }

  /// Started early: the rows of the last resolutions, read after the start, go to a second
  /// kernel with their heaviest on the CPU beside it (a forced split applies to the start
  /// alone); `share` then also waits for the early share. `late_ms`: the CPU's late share.
  void share_after_early(const decoder::EarlyTier1& early, EarlyRun& run, Tier1HostShare& share, double& late_ms) {
    late_rows_.resize(batch_.blocks.size() - early.rows);
    std::iota(late_rows_.begin(), late_rows_.end(), static_cast<std::uint32_t>(early.rows));
    split_tier1_rows(batch_, &late_rows_, model_, late_split_, options_.tier1_host_blocks >= 0 ? 0 : -1);
    share.gpu_rows = late_split_.gpu_rows();
    share.host_rows = late_split_.host_rows();
    share.early_rows = early_gpu_;
    share.early_host_rows = early_host_;
    share.decode = [this, &run, &late_ms](std::span<const std::uint32_t> rows, std::int32_t* packed) -> Result<std::uint64_t> {
      Result<std::uint64_t> late = std::uint64_t{0};
      const auto s0 = Clock::now();
      if (!rows.empty()) late = coefficients_.decode_tier1_rows(batch_, rows, packed);
      late_ms = std::chrono::duration<double, std::milli>(Clock::now() - s0).count();
      if (side_) side_->wait();
      if (!late) return late;
      if (!run.share_done) return run.share_done;
      return *late + *run.share_done;
    };
  }

  /// Tier-2 here, tier-1 and reconstruction on the GPU. Errors come back as they are.
  Result<PlanarImage> run_gpu_tier1(Bytes codestream, const decoder::DecodeOptions& options, ReconstructRequest req) {
    const auto t0 = Clock::now();
    model_.cpu_threads = options.pool ? options.pool->size() : std::max(1, options.threads);
    // The reconstructor first: tier-1 may start on it before tier-2 ends.
    auto lease = pool_->acquire(options_.spin_wait, options.pool);
    if (!lease) return lease.error();
    EarlyRun run;
    run.reconstructor = lease->get();
    run.shared_pool = options.pool;
    run.urgency = options.pool ? WorkPool::current_urgency(*options.pool) : 0;
    decoder::EarlyTier1 early;
    if (options_.early_tier1) early.start = [this, &run](const decoder::Tier1Batch& b) { start_early(b, run); };
    // However this returns: the side thread is done with the share and a start that no
    // submit took is void (the GPU done with it) before the table is reused.
    struct Settle {
      CudaBackend& self;
      const EarlyRun& run;
      ~Settle() {
        if (self.side_) self.side_->wait();
        if (run.started) run.reconstructor->cancel_tier1();
      }
    } settle{*this, run};
    auto frame = coefficients_.decode_deferred(codestream, options, batch_, &stats_, &early);
    if (!frame) return frame.error();
    const auto t1 = Clock::now();
    RecycleOnExit recycle{coefficients_, *frame};
    Tier1HostShare share;
    const bool use_early = run.started && early.kept;
    double late_ms = 0;  // started early: the CPU's share of the last resolutions
    if (use_early) {
      share_after_early(early, run, share, late_ms);
      req.tier1_early = true;
    } else {
      if (run.started && side_) side_->wait();  // void: its share is not used
      // Hybrid: the heaviest code-blocks on the CPU's threads while the kernel runs the rest.
      split_tier1(batch_, model_, split_, options_.tier1_host_blocks);
      share.gpu_rows = split_.gpu_rows();
      share.host_rows = split_.host_rows();
      share.decode = [this](std::span<const std::uint32_t> rows, std::int32_t* packed) {
        return coefficients_.decode_tier1_rows(batch_, rows, packed);
      };
    }
    const auto t2 = Clock::now();
    req.tier1 = &batch_;
    req.tier1_share = &share;
    auto img = (*lease)->reconstruct(*frame, req, &times_);
    if (!img) return img.error();
    stats_.transform_skipped_tiles = decoder::transform_skipped_tiles(*frame);
    if (use_early) {
      // The model learns from the split it balanced: the last resolutions' kernel against
      // the CPU's share of them (the start's split only fills a budget).
      times_.tier1_host_ms = late_ms;
      calibrate_tier1(model_, late_split_, times_.tier1_ms, late_ms);
      times_.tier1_early_host_ms = run.share_ms;
      // From the start to the last resolutions' kernel's end: the next start's budget.
      const double slack_us = std::chrono::duration<double, std::micro>(t2 - run.at).count() + times_.tier1_ms * 1000.0;
      early_slack_us_ = early_slack_us_ > 0 ? early_slack_us_ + 0.25 * (slack_us - early_slack_us_) : slack_us;
    } else {
      calibrate_tier1(model_, split_, times_.tier1_ms, times_.tier1_host_ms);
      times_.tier1_early_host_ms = 0.0;
    }
    times_.host_deferred_ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
    times_.host_split_ms = std::chrono::duration<double, std::milli>(t2 - t1).count();
    stats_.tier1_ms = times_.tier1_ms;
    stats_.idwt_ms = times_.idwt_ms;
    stats_.colour_ms = times_.store_ms + times_.colour_ms;
    stats_.damaged_codeblocks += times_.tier1_damaged;
    if (options.strict && stats_.damaged_codeblocks > 0) {
      if (req.reuse) *req.reuse = std::move(*img);  // the caller keeps its picture's pages
      return make_error(ErrorKind::corrupt, fmt::format("{} damaged code-blocks", stats_.damaged_codeblocks));
    }
    return img;
  }

  Result<PlanarImage> run(Bytes codestream, const decoder::DecodeOptions& options, const ReconstructRequest& req) {
    stats_ = {};
    times_ = {};
    last_tier1_gpu_ = false;
    // A step that failed in automatic mode is tried again once its pause is over.
    const auto now = Clock::now();
    if (!active_ && gpu_retry_.due(now)) active_ = true;
    if (!tier1_gpu_ && options_.tier1 != Tier1Mode::cpu && tier1_retry_.due(now)) tier1_gpu_ = true;
    std::optional<Error> gpu_tier1_error;
    if (active_ && tier1_gpu_) {
      auto img = run_gpu_tier1(codestream, options, req);
      if (img) {
        last_tier1_gpu_ = true;
        tier1_retry_.worked(now);
        gpu_retry_.worked(now);
        return img;
      }
      // A corrupt codestream, or one over a limit, fails the same way on the CPU: reported as it is.
      if (options_.tier1 == Tier1Mode::gpu || img.error().kind == ErrorKind::corrupt ||
          img.error().kind == ErrorKind::limit)
        return img.error();
      // --tier1 auto: the frame again with tier-1 on the CPU, below.
      gpu_tier1_error = img.error();
      stats_ = {};
      times_ = {};
    }
    // One CoefficientDecoder per backend: its thread pool and coefficient buffers live
    // across frames (the reconstruction below is complete when it returns, so the frame's
    // buffers go back to it right after).
    auto frame = coefficients_.decode(codestream, options, &stats_);
    if (!frame) return frame.error();  // the codestream's error (say a reduction past its levels): GPU tier-1 stays
    if (gpu_tier1_error) {
      // The CPU decodes what the GPU's tier-1 could not (a device error, a table it cannot
      // carry): this frame and those until the GPU is tried again decode their code-blocks on
      // the CPU (counted).
      tier1_gpu_ = false;
      tier1_retry_.failed(now);
      ++tier1_fallbacks_;
      last_error_ = gpu_tier1_error->message;
    }
    RecycleOnExit recycle{coefficients_, *frame};
    if (active_) {
      auto lease = pool_->acquire(options_.spin_wait, options.pool);
      auto img = lease ? (*lease)->reconstruct(*frame, req, &times_) : Result<PlanarImage>(lease.error());
      if (img) {
        gpu_retry_.worked(now);
        stats_.idwt_ms = times_.idwt_ms;
        stats_.colour_ms = times_.store_ms + times_.colour_ms;
        stats_.transform_skipped_tiles = decoder::transform_skipped_tiles(*frame);
        return img;
      }
      if (options_.mode == GpuMode::on || img.error().kind != ErrorKind::io) return img.error();
      // A device failure in auto mode: this frame and those until the GPU is tried again go
      // to the CPU.
      active_ = false;
      gpu_retry_.failed(now);
      last_error_ = img.error().message;
    }
    decoder::ReconstructTimes rt;
    PlanarImage img = req.reuse ? std::move(*req.reuse) : PlanarImage{};
    if (auto st = coefficients_.reconstruct(*frame, img, &rt); !st) return st.error();
    stats_.idwt_ms = rt.idwt_ms;
    stats_.colour_ms = rt.colour_ms;
    stats_.transform_skipped_tiles = rt.transform_skipped_tiles;
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
  Tier1Split split_;                          // this frame's hybrid split (of the early rows, when started early)
  Tier1Split late_split_;                     // started early: the split of the rows read after the start
  // Tier-1 started early: the rows each side took then, the rows read after, the CPU's
  // share as a batch of its own, and the thread that decodes it beside tier-2.
  std::vector<std::uint32_t> early_gpu_, early_host_, late_rows_;
  decoder::Tier1Batch share_batch_;
  std::vector<std::uint32_t> share_rows_;  // 0 .. n-1: every row of share_batch_
  std::optional<SideRunner> side_;
  double early_slack_us_ = 0;  // the last early frames' time from the start to the second kernel's end (average)
  bool active_ = true;
  bool tier1_gpu_ = options_.tier1 != Tier1Mode::cpu;
  RetryAfterPause gpu_retry_{options_.gpu_retry_first, options_.gpu_retry_most};    // reconstruction, after !active_
  RetryAfterPause tier1_retry_{options_.gpu_retry_first, options_.gpu_retry_most};  // tier-1, after !tier1_gpu_
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
