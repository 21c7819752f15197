#pragma once
// When a GPU step that failed is tried again (CudaDecoderOptions::gpu_retry_first).
#include <algorithm>
#include <chrono>
#include <cstdint>

namespace j2k::gpu {

/// A pause after each failure, doubling while the step keeps failing (up to `most`),
/// forgotten once the step works. One thread uses it (the decoder's).
class RetryAfterPause {
 public:
  using Clock = std::chrono::steady_clock;
  RetryAfterPause(std::chrono::milliseconds first, std::chrono::milliseconds most) : first_(first), most_(most) {}

  /// The step failed at `now`: it is due again after the pause.
  void failed(Clock::time_point now) {
    const int doublings = std::min(failures_++, 20);  // 2^20 times any sane first pause is past `most`
    due_ = now + std::min<std::chrono::milliseconds>(first_ * (std::int64_t{1} << doublings), most_);
  }
  /// The step worked: the next failure pauses for `first` again.
  void worked() { failures_ = 0; }
  bool due(Clock::time_point now) const { return now >= due_; }
  /// The pause the last failure set (0 before any).
  std::chrono::milliseconds pause() const {
    return failures_ == 0 ? std::chrono::milliseconds{0}
                          : std::min<std::chrono::milliseconds>(first_ * (std::int64_t{1} << std::min(failures_ - 1, 20)), most_);
  }

 private:
  std::chrono::milliseconds first_, most_;
  int failures_ = 0;  // in a row
  Clock::time_point due_{};
};

}  // namespace j2k::gpu
