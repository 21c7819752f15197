#pragma once
// Per-second history of a link for the last hour: what the graphs draw and what
// `j2kprobe --json` reports as `history`. Bounded: a ring of `capacity` rows (3600 by
// default, about 300 KB), written once a second by the tool's main loop and read by the
// window, the metrics endpoint and the summary (a mutex guards the ring).
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <vector>

#include <nlohmann/json.hpp>

namespace j2k::monitor {

/// One second of a stream. Rates are per second over that second; nothing here is a total.
struct HistoryRow {
  double t = 0;                 ///< seconds since the first packet
  std::chrono::system_clock::time_point wall{};
  double bitrate_mbps = 0;
  double packets_per_s = 0;
  double lost_per_s = 0;
  double late_per_s = 0;
  double duplicates_per_s = 0;
  double jitter_ms = 0;         ///< RFC 3550 interarrival jitter at the end of the second
  double frames_received_per_s = 0;
  double frames_decoded_per_s = 0;
  double frames_degraded_per_s = 0;
  double frames_shown_per_s = 0;
  double decode_ms = 0;         ///< mean decode time of the frames decoded in that second
  double latency_ms = 0;        ///< receive -> decoded (or shown), mean over the second
};

nlohmann::json to_json(const HistoryRow& row);

class History {
 public:
  explicit History(std::size_t capacity = 3600) : capacity_(capacity ? capacity : 1) {}

  void push(const HistoryRow& row);
  /// Rows oldest first; at most `last` of them (0: all).
  std::vector<HistoryRow> rows(std::size_t last = 0) const;
  std::size_t size() const;
  std::size_t capacity() const noexcept { return capacity_; }
  nlohmann::json to_json() const;

 private:
  const std::size_t capacity_;
  mutable std::mutex mutex_;  // guards rows_
  std::deque<HistoryRow> rows_;
};

}  // namespace j2k::monitor
