#pragma once
// The operator's event log: what happened to the watched link, and when.
//
// Events come from several threads (the depacketizer, decode workers, the tool's main
// loop). `post` never waits for the disk: events go through a bounded queue to a writer
// thread that appends JSON lines to the file (or stdout); when the queue is full the event
// is still kept in the in-memory list of recent events and the loss is counted.
//
// One line per event:
//   {"time":"2026-11-24T06:40:01.123Z","event":"sequence_gap","rtp_timestamp":12345,
//    "frame":17,"first_missing":100,"last_missing":103,"count":4,"message":"4 packets lost (100-103)"}
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/bounded_queue.hpp"
#include "core/log.hpp"
#include "core/record_file.hpp"
#include "core/result.hpp"

namespace j2k::monitor {

enum class EventKind {
  sequence_gap,         ///< packets lost (first and last missing sequence number, count)
  duplicates,           ///< duplicate packets in the last second
  late,                 ///< packets that arrived after their gap was given up
  out_of_window,        ///< stray sequence numbers
  ssrc_change,          ///< the followed stream changed SSRC
  source_restart,       ///< the source started again with fresh sequence numbers (a looped capture)
  ssrc_collision,       ///< a second source sends the followed SSRC (RFC 3550 8.2), or took it over
  format_change,        ///< picture size, sampling or bit depth changed
  descriptor_change,    ///< the MXF picture descriptor changed
  signal_lost,          ///< no packet for the configured silence
  signal_back,
  decoder_behind,       ///< whole frames dropped before decoding
  degraded,             ///< frames decoded below full resolution / with fewer layers
  frame_damaged,        ///< a frame arrived incomplete
  frame_failed,         ///< a frame could not be decoded
  fec_recovery,         ///< packets rebuilt by ST 2022-1 FEC
  path_down,            ///< ST 2022-7: a path brought nothing for a second while the other did
  path_back,            ///< ST 2022-7: the path is back (how long, what it did not bring)
  audio_format,         ///< sound arrived, or its channels, rate or depth changed
  audio_silence,        ///< a sound channel fell silent (or all sound stopped arriving)
  audio_back,           ///< a silent sound channel has sound again
  audio_clipping,       ///< a sound channel reached full scale
  time_code,            ///< the time code stopped running on (a jump, standing still, going back, missing)
  alarm_raised,
  alarm_cleared,
};

const char* to_string(EventKind kind) noexcept;

struct Event {
  EventKind kind = EventKind::sequence_gap;
  std::chrono::system_clock::time_point wall{};
  std::optional<std::uint32_t> rtp_timestamp;
  std::optional<std::uint64_t> frame;
  nlohmann::json detail = nlohmann::json::object();  ///< kind-specific fields
  std::string message;                               ///< one line for people

  static Event now(EventKind kind, std::string message);
};

/// ISO 8601 UTC with milliseconds: "2026-11-24T06:40:01.123Z".
std::string iso8601_ms(std::chrono::system_clock::time_point t);

/// The event as one JSON object (a line of the log).
nlohmann::json to_json(const Event& e);

class EventLog {
 public:
  /// `path`: "" keeps events in memory only, "-" writes to stdout, else a file (truncated).
  /// `max_bytes` > 0 (a file only): the log is a ring of two files, each up to half of it;
  /// PATH.1 (before the extension: events.1.jsonl) holds the previous one.
  static Result<std::unique_ptr<EventLog>> open(const std::string& path, std::size_t recent_capacity = 256,
                                                std::uint64_t max_bytes = 0);
  ~EventLog();
  EventLog(const EventLog&) = delete;
  EventLog& operator=(const EventLog&) = delete;

  /// Any thread. Never blocks on the disk.
  void post(Event event);
  /// The last `n` events, oldest first (for the player's panel and the graphs' marks).
  std::vector<Event> recent(std::size_t n) const;
  std::uint64_t posted() const noexcept { return posted_.load(); }
  /// Events not written: the writer fell behind, or the file refused them (a full disk);
  /// they stay in recent().
  std::uint64_t write_dropped() const noexcept { return write_dropped_.load(); }
  /// Times the file was started afresh at the size limit (the previous one kept as PATH.1).
  std::uint64_t rotations() const noexcept { return rotations_.load(); }
  /// The size the file and its previous part keep together (0: no limit; also when the
  /// previous part could not be kept and the log grows on).
  std::uint64_t max_bytes() const noexcept { return max_bytes_.load(std::memory_order_relaxed); }
  /// Writes what is queued and stops the writer (also done by the destructor).
  void close();

 private:
  explicit EventLog(std::size_t recent_capacity);
  void write_loop();

  /// Writes the lines appended since the last call; counts those the file refused.
  void settle();

  BoundedQueue<std::string> lines_{4096};
  RecordFile file_;              // the writer thread's once it runs (a rotation reopens it)
  bool to_stdout_ = false;       // "-": lines go to stdout through stdio, whole lines at a time
  bool writes_ = false;          // set by open(): post() queues lines for the writer
  std::string path_;
  std::atomic<std::uint64_t> max_bytes_{0};  // 0: no limit (written by open() and the writer thread)
  RateLimiter error_log_;         // writer thread
  std::thread writer_;
  mutable std::mutex recent_mutex_;  // guards recent_
  std::deque<Event> recent_;
  const std::size_t recent_capacity_;
  std::atomic<std::uint64_t> posted_{0}, write_dropped_{0}, rotations_{0};
};

}  // namespace j2k::monitor
