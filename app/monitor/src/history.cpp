#include "monitor/history.hpp"

#include "monitor/event_log.hpp"

namespace j2k::monitor {

nlohmann::json to_json(const HistoryRow& r) {
  return {{"t", r.t},
          {"time", iso8601_ms(r.wall)},
          {"bitrate_mbps", r.bitrate_mbps},
          {"packets_per_s", r.packets_per_s},
          {"lost_per_s", r.lost_per_s},
          {"late_per_s", r.late_per_s},
          {"duplicates_per_s", r.duplicates_per_s},
          {"jitter_ms", r.jitter_ms},
          {"frames_received_per_s", r.frames_received_per_s},
          {"frames_decoded_per_s", r.frames_decoded_per_s},
          {"frames_degraded_per_s", r.frames_degraded_per_s},
          {"frames_shown_per_s", r.frames_shown_per_s},
          {"decode_ms", r.decode_ms},
          {"latency_ms", r.latency_ms}};
}

void History::push(const HistoryRow& row) {
  std::lock_guard lock(mutex_);
  rows_.push_back(row);
  while (rows_.size() > capacity_) rows_.pop_front();
}

std::vector<HistoryRow> History::rows(std::size_t last) const {
  std::lock_guard lock(mutex_);
  const std::size_t n = last == 0 || last > rows_.size() ? rows_.size() : last;
  return {rows_.end() - static_cast<std::ptrdiff_t>(n), rows_.end()};
}

std::size_t History::size() const {
  std::lock_guard lock(mutex_);
  return rows_.size();
}

nlohmann::json History::to_json() const {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& r : rows()) a.push_back(monitor::to_json(r));
  return a;
}

}  // namespace j2k::monitor
