#pragma once
// The operator's view of one stream, shared by j2kprobe and j2kplay: it turns the
// pipeline's counters and delivered frames into the event log, the per-second history, the
// alarms and the metrics endpoint's bodies.
//
// Threads: `on_second` from the tool's main loop (once a second); `on_frame` from the
// pipeline's delivery thread (the sink); `on_stream_event` from the depacketizer thread;
// the readers (`history`, `events`, `alarm_status`, `summary`) from any thread. Each member
// object guards itself (EventLog, History, AlarmMonitor); the few fields of our own are
// guarded by `mutex_`.
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "core/result.hpp"
#include "monitor/alarms.hpp"
#include "monitor/event_log.hpp"
#include "monitor/history.hpp"
#include "monitor/metrics_server.hpp"
#include "monitor/time_code_watch.hpp"

namespace j2k::monitor {

struct MonitorOptions {
  std::string events_path;      ///< --events FILE ("-" stdout, "" none)
  std::uint64_t events_max_bytes = 0;  ///< --events-limit: a ring of two files (0: no limit)
  AlarmThresholds alarms;       ///< --alarm
  std::string metrics_address;  ///< --metrics ADDR:PORT ("" none)
  std::string url_label;        ///< the stream's URL, the metrics' label
  std::size_t history_seconds = 3600;
};

/// What happened to one frame, as the pipeline delivered it.
struct FrameReport {
  std::uint64_t index = 0;
  std::uint32_t rtp_timestamp = 0;
  bool complete = true;
  bool decoded = false;
  bool dropped_decoder_behind = false;
  bool degraded = false;            ///< decoded below full resolution or quality
  std::string error;                ///< why it was not decoded
  /// Decoded from a codestream the decoder found damaged although every packet of the frame
  /// arrived (what it met, decoder::describe_damage); "" otherwise.
  std::string damage;
  std::string format;               ///< "1920x1080 4:2:2 10-bit" when decoded
  std::string time_code;            ///< the frame's time code ("" if the stream has none)
  double frame_rate = 0;            ///< the stream's, as its descriptor says (0 unknown)
  bool new_timeline = false;        ///< the first frame after a source restart or stream change
  std::optional<FrameLook> look;    ///< for freeze/black (decoded frames)
};

/// One second of counters (deltas over the second, except jitter).
struct SecondReport {
  double t = 0;                     ///< seconds since the first packet
  std::uint64_t packets_received = 0, packets_lost = 0, packets_late = 0, packets_duplicate = 0;
  std::uint64_t packets_out_of_window = 0, packets_recovered_by_fec = 0;
  std::uint64_t payload_bytes = 0;
  std::uint64_t frames_received = 0, frames_decoded = 0, frames_degraded = 0, frames_shown = 0;
  std::uint64_t frames_damaged = 0, frames_failed = 0, frames_dropped_behind = 0;
  double seconds = 1;               ///< the length of this "second" (the loop's real interval)
  double jitter_ms = 0;
  double decode_ms = 0;             ///< mean over the second
  double latency_ms = 0;            ///< median over the second
  double latency_p99_ms = 0;        ///< 99th percentile over the second
  std::uint64_t latency_samples = 0; ///< frames decoded in the second that the latency is of
  std::optional<AudioSecond> audio{};  ///< the sound's state (absent while none arrived)
  double longest_silence_s = 0;     ///< the longest time without packets that ended in this second
  int paths_down = 0;               ///< ST 2022-7 paths down at the end of the second
  std::optional<std::chrono::steady_clock::time_point> last_packet_seen{};  ///< SecondSample's
};

/// An event the depacketizer reports as it happens (sequence numbers are extended).
struct StreamEvent {
  EventKind kind = EventKind::sequence_gap;
  std::optional<std::uint32_t> rtp_timestamp;
  std::uint64_t first = 0, last = 0, count = 0;  ///< gaps: first and last missing, count
  std::string message;
};

class StreamMonitor {
 public:
  using Clock = std::chrono::steady_clock;
  static Result<std::unique_ptr<StreamMonitor>> create(const MonitorOptions& options, Clock::time_point start);
  ~StreamMonitor();

  /// `summary`: the live JSON summary when serves_metrics(), else ignored (may be empty).
  void on_second(const SecondReport& second, Clock::time_point now, const nlohmann::json& summary);
  void on_frame(const FrameReport& frame, Clock::time_point now);
  /// The first datagram's arrival: the alarms' silence counts from it (AlarmMonitor's).
  void first_datagram(Clock::time_point t) { alarms_.first_datagram(t); }
  void on_stream_event(const StreamEvent& event);
  /// Any thread: an event of the tool's own (the sound's silence and clipping episodes).
  void post(Event e);

  const History& history() const noexcept { return history_; }
  EventLog& events() noexcept { return *events_; }
  AlarmStatus alarm_status(Clock::time_point now) const { return alarms_.status(now); }
  std::uint64_t alarms_raised() const { return alarms_.raised(); }
  /// The no signal, freeze and sound silence alarms raised after `t` (AlarmMonitor's).
  std::uint64_t alarms_raised_by_silence_after(Clock::time_point t) const { return alarms_.raised_by_silence_after(t); }
  std::uint16_t metrics_port() const noexcept { return metrics_ ? metrics_->port() : 0; }
  std::string metrics_url() const { return metrics_ ? metrics_->url() : ""; }
  /// Whether on_second needs the live summary (only the metrics endpoint serves it).
  bool serves_metrics() const noexcept { return metrics_ != nullptr; }
  /// `summary` plus "history", "alarms" and "events" (the JSON summary's additions).
  void add_to_summary(nlohmann::json& summary, Clock::time_point now) const;
  /// Flushes the event log and stops the metrics server.
  void close();

 private:
  StreamMonitor(const MonitorOptions& options, Clock::time_point start);

  const MonitorOptions options_;
  std::unique_ptr<EventLog> events_;
  History history_;
  AlarmMonitor alarms_;
  std::unique_ptr<MetricsServer> metrics_;
  mutable std::mutex mutex_;  // guards the fields below
  std::string last_format_;
  bool signal_lost_ = false;
  bool seen_packets_ = false;
  TimeCodeWatch time_code_;  // the delivery thread's (on_frame); its counts read under mutex_
};

}  // namespace j2k::monitor
