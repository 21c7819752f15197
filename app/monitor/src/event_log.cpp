#include "monitor/event_log.hpp"

#include <cstring>
#include <filesystem>
#include <ctime>

#include <fmt/format.h>

#include "core/log.hpp"

namespace j2k::monitor {

const char* to_string(EventKind kind) noexcept {
  switch (kind) {
    case EventKind::sequence_gap: return "sequence_gap";
    case EventKind::duplicates: return "duplicates";
    case EventKind::late: return "late";
    case EventKind::out_of_window: return "out_of_window";
    case EventKind::ssrc_change: return "ssrc_change";
    case EventKind::source_restart: return "source_restart";
    case EventKind::ssrc_collision: return "ssrc_collision";
    case EventKind::format_change: return "format_change";
    case EventKind::descriptor_change: return "descriptor_change";
    case EventKind::signal_lost: return "signal_lost";
    case EventKind::signal_back: return "signal_back";
    case EventKind::decoder_behind: return "decoder_behind";
    case EventKind::degraded: return "degraded";
    case EventKind::frame_damaged: return "frame_damaged";
    case EventKind::frame_failed: return "frame_failed";
    case EventKind::fec_recovery: return "fec_recovery";
    case EventKind::path_down: return "path_down";
    case EventKind::path_back: return "path_back";
    case EventKind::audio_format: return "audio_format";
    case EventKind::audio_silence: return "audio_silence";
    case EventKind::audio_back: return "audio_back";
    case EventKind::audio_clipping: return "audio_clipping";
    case EventKind::time_code: return "time_code";
    case EventKind::alarm_raised: return "alarm_raised";
    case EventKind::alarm_cleared: return "alarm_cleared";
  }
  return "unknown";
}

Event Event::now(EventKind kind, std::string message) {
  Event e;
  e.kind = kind;
  e.wall = std::chrono::system_clock::now();
  e.message = std::move(message);
  return e;
}

std::string iso8601_ms(std::chrono::system_clock::time_point t) {
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
  const std::time_t secs = static_cast<std::time_t>(ms / 1000);
  std::tm utc{};
  gmtime_r(&secs, &utc);
  return fmt::format("{:04d}-{:02d}-{:02d}T{:02d}:{:02d}:{:02d}.{:03d}Z", utc.tm_year + 1900, utc.tm_mon + 1,
                     utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec, static_cast<int>(ms % 1000));
}

nlohmann::json to_json(const Event& e) {
  nlohmann::json j;
  j["time"] = iso8601_ms(e.wall);
  j["event"] = to_string(e.kind);
  if (e.rtp_timestamp) j["rtp_timestamp"] = *e.rtp_timestamp;
  if (e.frame) j["frame"] = *e.frame;
  if (e.detail.is_object())
    for (const auto& [key, value] : e.detail.items()) j[key] = value;
  j["message"] = e.message;
  return j;
}

EventLog::EventLog(std::size_t recent_capacity) : recent_capacity_(recent_capacity ? recent_capacity : 1) {}

Result<std::unique_ptr<EventLog>> EventLog::open(const std::string& path, std::size_t recent_capacity,
                                                 std::uint64_t max_bytes) {
  std::unique_ptr<EventLog> log(new EventLog(recent_capacity));
  log->path_ = path;
  log->max_bytes_.store(path == "-" ? 0 : max_bytes);
  if (path == "-") {
    log->to_stdout_ = true;
  } else if (!path.empty()) {
    auto file = RecordFile::open(path);
    if (!file) return make_error(ErrorKind::io, fmt::format("cannot write the event log '{}': {}", path, file.error().message));
    log->file_ = std::move(*file);
  }
  log->writes_ = log->to_stdout_ || log->file_.is_open();
  if (log->writes_) log->writer_ = std::thread([raw = log.get()] { raw->write_loop(); });
  return log;
}

EventLog::~EventLog() { close(); }

void EventLog::post(Event event) {
  posted_.fetch_add(1, std::memory_order_relaxed);
  if (writes_) {
    std::string line = to_json(event).dump();
    if (!lines_.try_push(line)) write_dropped_.fetch_add(1, std::memory_order_relaxed);
  }
  std::lock_guard lock(recent_mutex_);
  recent_.push_back(std::move(event));
  while (recent_.size() > recent_capacity_) recent_.pop_front();
}

std::vector<Event> EventLog::recent(std::size_t n) const {
  std::lock_guard lock(recent_mutex_);
  const std::size_t first = recent_.size() > n ? recent_.size() - n : 0;
  return {recent_.begin() + static_cast<std::ptrdiff_t>(first), recent_.end()};
}

void EventLog::settle() {
  const RecordFile::Settled s = file_.settle();
  write_dropped_.fetch_add(s.lost, std::memory_order_relaxed);
  if (s.error && error_log_.allow())
    logger("monitor")->error("writing the event log failed ({}): events are dropped, and counted, until it can be "
                             "written again", std::strerror(s.error));
}

void EventLog::write_loop() {
  if (to_stdout_) {
    // stdio, whole lines at a time beside the tool's other output; a line counts as written
    // once a flush took it (stdout to a full disk or a closed pipe).
    std::uint64_t unflushed = 0;
    auto flush = [&] {
      if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
        write_dropped_.fetch_add(unflushed, std::memory_order_relaxed);
        if (error_log_.allow())
          logger("monitor")->error("writing the event log to stdout failed ({}): events are dropped, and counted",
                                   std::strerror(errno));
        std::clearerr(stdout);
      }
      unflushed = 0;
    };
    while (auto line = lines_.pop()) {
      std::fputs(line->c_str(), stdout);
      std::fputc('\n', stdout);
      ++unflushed;
      if (lines_.size() == 0) flush();  // a pipe sees each burst at once
    }
    flush();
    return;
  }
  while (auto line = lines_.pop()) {
    const std::uint64_t max_bytes = max_bytes_.load(std::memory_order_relaxed);
    if (max_bytes && file_.size() > 0 && file_.size() + line->size() + 1 > max_bytes / 2) {
      // Ring of two files, each up to half the limit: PATH.1 holds the previous one.
      settle();
      file_.close();
      std::filesystem::path previous(path_);
      const auto extension = previous.extension();
      previous.replace_extension();
      previous += ".1";
      previous += extension;
      std::error_code ec;
      std::filesystem::rename(path_, previous, ec);
      if (ec) {
        // Keep every event rather than truncate the only file: the limit is given up, said once.
        logger("monitor")->error("cannot keep the event log's previous part as '{}' ({}): the log grows on without a limit",
                                 previous.string(), ec.message());
        max_bytes_.store(0, std::memory_order_relaxed);
      }
      auto file = RecordFile::open(path_, /*append=*/static_cast<bool>(ec));
      if (!file) {
        logger("monitor")->error("cannot write the event log '{}' again ({}): no more events are written",
                                 path_, file.error().message);
        write_dropped_.fetch_add(1, std::memory_order_relaxed);
        while (lines_.pop()) write_dropped_.fetch_add(1, std::memory_order_relaxed);  // until close()
        return;
      }
      file_ = std::move(*file);
      if (!ec) rotations_.fetch_add(1, std::memory_order_relaxed);
    }
    *line += '\n';
    file_.append(*line);
    if (lines_.size() == 0 || file_.pending_records() >= 256) settle();  // a tail -f sees each burst at once
  }
  settle();
}

void EventLog::close() {
  lines_.close();
  if (writer_.joinable()) writer_.join();
  file_.close();
}

}  // namespace j2k::monitor
