#pragma once
// When a GPU step that failed is tried again (CudaDecoderOptions::gpu_retry_first).
#include <algorithm>
#include <chrono>
#include <cstdint>

namespace j2k::gpu {

/// A pause after each failure, doubling while the step keeps failing (up to `most`). The
/// failures are forgotten only once the step has gone `most` without one: a step that fails
/// on some frames and works on others (GPU memory enough for the small frames only) backs
/// off as one that always fails, rather than being tried again every `first`. One thread
/// uses it (the decoder's).
class RetryAfterPause {
 public:
  using Clock = std::chrono::steady_clock;
  using ms = std::chrono::milliseconds;
  RetryAfterPause(ms first, ms most)
      : first_(std::clamp(first, ms{0}, kLongest)), most_(std::clamp(most, first_, kLongest)) {}

  /// The step failed at `now`: it is due again after the pause.
  void failed(Clock::time_point now) {
    failures_ = std::min(failures_ + 1, kDoublings + 1);
    last_failure_ = now;
    due_ = now + pause();
  }
  /// The step worked at `now`.
  void worked(Clock::time_point now) {
    if (failures_ > 0 && now - last_failure_ >= most_) failures_ = 0;
  }
  bool due(Clock::time_point now) const { return now >= due_; }
  /// The pause the last failure set (0 once the failures are forgotten).
  ms pause() const { return failures_ == 0 ? ms{0} : std::min(first_ * (std::int64_t{1} << (failures_ - 1)), most_); }

 private:
  static constexpr int kDoublings = 20;                        // 2^20 x any first pause is past the longest
  static constexpr ms kLongest = std::chrono::hours(24 * 7);   // no overflow in time_point arithmetic
  ms first_, most_;
  int failures_ = 0;
  Clock::time_point last_failure_{}, due_{};
};

}  // namespace j2k::gpu
