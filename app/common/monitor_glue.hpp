#pragma once
// The receive pipeline's counters and frames in the operator view's terms (monitor/): the
// glue both receivers (j2kprobe, j2kplay) use, so they report alike.
#include <arpa/inet.h>

#include <CLI/CLI.hpp>

#include <chrono>
#include <optional>
#include <string>

#include "monitor/stream_monitor.hpp"
#include "net/capture_writer.hpp"
#include "pipeline/receive_pipeline.hpp"
#include "pipeline/stats.hpp"

namespace j2k::cli {

/// One second of counters (the deltas between two samples) for the monitor.
inline monitor::SecondReport second_report(const pipeline::StatsSample& now, const pipeline::StatsSample& before,
                                           double t) {
  auto delta = [](std::uint64_t a, std::uint64_t b) { return a >= b ? a - b : 0; };
  const auto& s = now.stream;
  const auto& b = before.stream;
  monitor::SecondReport r;
  r.t = t;
  r.seconds = std::chrono::duration<double>(now.at - before.at).count();
  r.packets_received = delta(s.packets_received, b.packets_received);
  r.packets_lost = delta(s.packets_lost, b.packets_lost);
  r.packets_late = delta(s.packets_late, b.packets_late);
  r.packets_duplicate = delta(s.packets_duplicate, b.packets_duplicate);
  r.packets_out_of_window = delta(s.packets_out_of_window, b.packets_out_of_window);
  r.packets_recovered_by_fec = delta(now.protection.fec_counters.recovered, before.protection.fec_counters.recovered);
  r.payload_bytes = delta(s.payload_bytes, b.payload_bytes);
  r.frames_received = delta(s.frames_complete + s.frames_incomplete, b.frames_complete + b.frames_incomplete);
  // Frames of which nothing came are errors of the second too (the alarms' last error), and so
  // are whole frames whose codestream was damaged as sent.
  r.frames_damaged = delta(s.frames_incomplete + s.frames_missing + now.decode.codestream_damaged,
                           b.frames_incomplete + b.frames_missing + before.decode.codestream_damaged);
  r.frames_decoded = delta(now.decode.decoded, before.decode.decoded);
  r.frames_degraded = delta(now.decode.degraded, before.decode.degraded);
  r.frames_failed = delta(now.decode.failed, before.decode.failed);
  r.frames_dropped_behind = delta(now.decode.dropped_behind(), before.decode.dropped_behind());
  r.jitter_ms = s.jitter_ms;
  const double decode_ms = now.decode.decode_ms_total - before.decode.decode_ms_total;
  r.decode_ms = r.frames_decoded ? decode_ms / static_cast<double>(r.frames_decoded) : 0.0;
  const auto latency = pipeline::LatencyFigures::of(now.decode.receive_to_decoded.since(before.decode.receive_to_decoded));
  r.latency_ms = latency.p50;
  r.latency_p99_ms = latency.p99;
  r.latency_samples = latency.count;
  if (now.protection.two_paths)
    for (const auto& p : now.protection.paths) r.paths_down += p.down ? 1 : 0;
  for (const auto& silence : now.silences)
    if (silence.seen > before.at && silence.seen <= now.at)
      r.longest_silence_s = std::max(r.longest_silence_s, std::chrono::duration<double>(silence.length).count());
  return r;
}

/// The part of a second since the last look (`before`), taken before the pipeline stops: the
/// stop gives up the gaps still waiting for their packets (a lagging 2022-7 path's, the
/// sender's final report's), which are the stop's, not the link's. Nothing when it brought no
/// packets (a look at it would only clear alarms for lack of them).
inline std::optional<pipeline::StatsSample> last_part_before_stop(pipeline::ReceivePipeline& pipe,
                                                                    const pipeline::StatsSample& before) {
  auto last = pipeline::StatsSample::take(pipe);
  if (last.stream.packets_received == before.stream.packets_received) return std::nullopt;
  return last;
}

/// A delivered frame as the monitor sees it (on the pipeline's delivery thread).
inline monitor::FrameReport frame_report(const pipeline::DecodedFrame& f) {
  monitor::FrameReport r;
  r.index = f.index;
  r.rtp_timestamp = f.rtp_timestamp;
  r.complete = f.complete;
  r.decoded = f.decoded;
  r.dropped_decoder_behind = !f.decoded && f.error.rfind("dropped", 0) == 0;
  r.degraded = f.decoded && f.reduce > 0;
  r.time_code = f.time_code;
  if (f.descriptor) r.frame_rate = f.descriptor->frame_rate();
  r.new_timeline = f.new_timeline;
  if (!f.decoded && !r.dropped_decoder_behind && f.error != "decode off") r.error = f.error;
  if (f.decoded && f.complete) r.damage = f.damage;
  if (f.decoded) {
    // The stream's format: a picture decoded at reduced resolution (degraded) is not a change.
    if (!f.image.empty() && f.reduce == 0) r.format = f.image.describe();
    monitor::FrameLook look;
    look.fingerprint = f.fingerprint;
    if (!f.image.empty()) look.black = monitor::is_black(f.image);
    r.look = look;
  }
  return r;
}

inline monitor::EventKind event_kind(depacketizer::SessionEvent::Kind kind) {
  switch (kind) {
    case depacketizer::SessionEvent::Kind::sequence_gap: return monitor::EventKind::sequence_gap;
    case depacketizer::SessionEvent::Kind::ssrc_change: return monitor::EventKind::ssrc_change;
    case depacketizer::SessionEvent::Kind::descriptor_change: return monitor::EventKind::descriptor_change;
    case depacketizer::SessionEvent::Kind::restart: return monitor::EventKind::source_restart;
    case depacketizer::SessionEvent::Kind::ssrc_collision: return monitor::EventKind::ssrc_collision;
    case depacketizer::SessionEvent::Kind::path_down: return monitor::EventKind::path_down;
    case depacketizer::SessionEvent::Kind::path_back: return monitor::EventKind::path_back;
  }
  return monitor::EventKind::sequence_gap;
}

inline monitor::StreamEvent stream_event(const depacketizer::SessionEvent& e) {
  return {.kind = event_kind(e.kind), .rtp_timestamp = e.rtp_timestamp, .first = e.first, .last = e.last, .count = e.count,
          .message = e.message};
}

/// Where a captured datagram was received: the address and port of its socket (or of the
/// capture it was replayed from); for a packet that does not say (a test's source), the URL's
/// address and port, the second path's, or the FEC ports (port + 2, port + 4) by its channel.
inline std::pair<std::uint32_t, std::uint16_t> capture_destination(const pipeline::PipelineConfig& config, const net::Packet& p) {
  const int channel = p.channel;
  const StreamUrl& u = channel == 1 && config.url2 ? *config.url2 : config.url;
  if (p.destination_port != 0) {
    in_addr a{};
    const std::uint32_t url_address = inet_pton(AF_INET, u.host.c_str(), &a) == 1 ? ntohl(a.s_addr) : 0;
    return {p.destination_address ? p.destination_address : url_address, p.destination_port};
  }
  in_addr a{};
  const std::uint32_t address = inet_pton(AF_INET, u.host.c_str(), &a) == 1 ? ntohl(a.s_addr) : 0;
  const int port = channel == 2 ? u.port + 2 : channel == 3 ? u.port + 4 : u.port;
  return {address, static_cast<std::uint16_t>(port)};
}

/// The receive time of a packet (steady clock) on the wall clock, for captures and events.
inline std::chrono::system_clock::time_point wall_time(std::chrono::steady_clock::time_point t) {
  const auto now_steady = std::chrono::steady_clock::now();
  return std::chrono::system_clock::now() -
         std::chrono::duration_cast<std::chrono::system_clock::duration>(now_steady - t);
}

/// --events, --alarm, --metrics, --capture, --capture-limit: the operator's options, the same in
/// j2kprobe and j2kplay. After parsing, `open()` makes the monitor and the capture and hooks
/// them into the pipeline's configuration (both live as long as this object).
class OperatorOptions {
 public:
  void add_to(CLI::App& app) {
    app.add_option("--events", events_, "write the event log to FILE (JSON lines; '-' for stdout)");
    app.add_option("--alarm", alarm_,
                   "alarm thresholds, e.g. loss=0.1%,jitter=5ms,freeze=2s,signal=2s,black=2s,silence=2s,clipping=on,path=on "
                   "('off' disables one)");
    app.add_option("--metrics", metrics_, "serve Prometheus text at /metrics and the JSON summary at /stats on ADDR:PORT");
    app.add_option("--capture", capture_file_, "record every datagram received (all sockets) to FILE.pcapng");
    app.add_option("--capture-limit", capture_limit_, "with --capture: keep the last SIZE or TIME (1GB, 10min), a ring of two files");
    app.add_option("--events-limit", events_limit_,
                   "with --events FILE: keep the last SIZE, a ring of two files (default 1GB; 'none': the file grows "
                   "without a limit)");
  }
  /// Checks the values; the error is a usage error (status 2). `json_on_stdout`: the tool
  /// prints its --json summary there, which event lines must not break into.
  Status check(bool json_on_stdout) {
    if (events_ == "-" && json_on_stdout)
      return make_error(ErrorKind::corrupt, "--events - and --json both write to stdout: give --events a FILE");
    if (!alarm_.empty()) {
      auto thresholds = monitor::parse_alarm_spec(alarm_);
      if (!thresholds) return make_error(ErrorKind::corrupt, "--alarm: " + thresholds.error().message);
      options_.alarms = *thresholds;
    }
    // A monitor runs for days: an event log file is bounded unless told otherwise (a link
    // losing a packet in every frame writes ~0.5 GB a day, a sender hopping SSRCs more).
    if (!events_.empty() && events_ != "-") options_.events_max_bytes = kDefaultEventsLimit;
    if (events_limit_ == "none") {
      if (events_.empty() || events_ == "-")
        return make_error(ErrorKind::corrupt, "--events-limit limits an event log file: give --events FILE as well");
      options_.events_max_bytes = 0;
    } else if (!events_limit_.empty()) {
      if (events_.empty() || events_ == "-")
        return make_error(ErrorKind::corrupt, "--events-limit limits an event log file: give --events FILE as well");
      auto limit = net::parse_capture_limit(events_limit_);
      if (!limit) {
        std::string message = limit.error().message;  // said of --capture-limit, whose parser this is
        if (auto at = message.find("--capture-limit"); at != std::string::npos) message.replace(at, 15, "--events-limit");
        return make_error(ErrorKind::corrupt, message);
      }
      if (limit->max_bytes == 0) return make_error(ErrorKind::corrupt, "--events-limit takes a size (100MB), not a time");
      options_.events_max_bytes = limit->max_bytes;
    }
    if (!capture_limit_.empty()) {
      if (capture_file_.empty())
        return make_error(ErrorKind::corrupt, "--capture-limit limits a capture: give --capture FILE as well");
      auto limit = net::parse_capture_limit(capture_limit_);
      if (!limit) return limit.error();
      limit_ = *limit;
    }
    return {};
  }
  /// Makes the monitor (and the capture) and sets the pipeline's hooks; `config` must outlive
  /// the pipeline (its hooks read it). Errors: unwritable files, a metrics port in use.
  Status open(pipeline::PipelineConfig& config, const std::string& url_label) {
    options_.events_path = events_;
    options_.metrics_address = metrics_;
    options_.url_label = url_label;
    auto made = monitor::StreamMonitor::create(options_, std::chrono::steady_clock::now());
    if (!made) return made.error();
    monitor_ = std::move(made).value();
    if (!capture_file_.empty()) {
      auto opened = net::CaptureWriter::open(capture_file_, limit_);
      if (!opened) return opened.error();
      capture_ = std::move(opened).value();
      config.on_datagram = [this, &config](const net::Packet& p) {
        const auto [address, port] = capture_destination(config, p);
        capture_->record(p.bytes(), wall_time(p.received), p.source_address, p.source_port, address, port);
      };
    }
    config.on_stream_event = [this](const depacketizer::SessionEvent& e) { monitor_->on_stream_event(stream_event(e)); };
    return {};
  }
  monitor::StreamMonitor& monitor() { return *monitor_; }
  bool alarms_armed() const noexcept { return !alarm_.empty(); }
  const monitor::AlarmThresholds& thresholds() const noexcept { return options_.alarms; }
  /// The summary's additions ("alarms", "events", "history", "capture"); closes the files.
  void finish(nlohmann::json& summary) {
    monitor_->add_to_summary(summary, std::chrono::steady_clock::now());
    if (capture_) {
      capture_->close();
      summary["capture"] = {{"file", capture_file_}, {"datagrams", capture_->written()}, {"dropped", capture_->dropped()},
                            {"rotations", capture_->rotations()}};
    }
    monitor_->close();
  }

 private:
  static constexpr std::uint64_t kDefaultEventsLimit = 1'000'000'000;  // 1GB, as --events-limit reads it
  std::string events_, alarm_, metrics_, capture_file_, capture_limit_, events_limit_;
  monitor::MonitorOptions options_;
  net::CaptureLimit limit_;
  std::unique_ptr<monitor::StreamMonitor> monitor_;
  std::unique_ptr<net::CaptureWriter> capture_;
};

}  // namespace j2k::cli
