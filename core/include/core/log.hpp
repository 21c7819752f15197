#pragma once
// One logging facade: a named spdlog logger per module, plus a rate limiter for
// warnings that could otherwise fire once per packet.
#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

namespace j2k {

/// The logger for a module ("net", "depacketizer", "decoder", "gpu", "ui", "app").
/// All loggers write to stderr so that stdout stays clean for JSON output.
std::shared_ptr<spdlog::logger> logger(const std::string& module);

/// Sets the level of every module logger ("trace" … "off").
void set_log_level(const std::string& level);

/// Allows at most one event per interval; counts what it suppressed in between.
class RateLimiter {
 public:
  explicit RateLimiter(std::chrono::milliseconds interval = std::chrono::seconds(1)) : interval_(interval) {}
  /// True when the caller may log now. `suppressed()` then tells how many were skipped since.
  bool allow() {
    auto now = std::chrono::steady_clock::now();
    if (now - last_ >= interval_) {
      last_ = now;
      reported_suppressed_ = suppressed_;
      suppressed_ = 0;
      return true;
    }
    ++suppressed_;
    return false;
  }
  std::uint64_t suppressed() const noexcept { return reported_suppressed_; }

 private:
  std::chrono::milliseconds interval_;
  std::chrono::steady_clock::time_point last_{};
  std::uint64_t suppressed_ = 0;
  std::uint64_t reported_suppressed_ = 0;
};

}  // namespace j2k
