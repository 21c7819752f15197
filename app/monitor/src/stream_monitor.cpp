#include "monitor/stream_monitor.hpp"

#include <fmt/format.h>

namespace j2k::monitor {

StreamMonitor::StreamMonitor(const MonitorOptions& options, Clock::time_point start)
    : options_(options), history_(options.history_seconds), alarms_(options.alarms, start) {}

StreamMonitor::~StreamMonitor() { close(); }

Result<std::unique_ptr<StreamMonitor>> StreamMonitor::create(const MonitorOptions& options, Clock::time_point start) {
  std::unique_ptr<StreamMonitor> m(new StreamMonitor(options, start));
  auto log = EventLog::open(options.events_path, 256, options.events_max_bytes);
  if (!log) return log.error();
  m->events_ = std::move(log).value();
  if (!options.metrics_address.empty()) {
    auto server = MetricsServer::start(options.metrics_address);
    if (!server) return server.error();
    m->metrics_ = std::move(server).value();
  }
  return m;
}

void StreamMonitor::post(Event e) { events_->post(std::move(e)); }

void StreamMonitor::on_second(const SecondReport& s, Clock::time_point now, const nlohmann::json& summary) {
  const double dt = s.seconds > 0 ? s.seconds : 1.0;
  HistoryRow row;
  row.t = s.t;
  row.wall = std::chrono::system_clock::now();
  row.bitrate_mbps = static_cast<double>(s.payload_bytes) * 8e-6 / dt;
  row.packets_per_s = static_cast<double>(s.packets_received) / dt;
  row.lost_per_s = static_cast<double>(s.packets_lost) / dt;
  row.late_per_s = static_cast<double>(s.packets_late) / dt;
  row.duplicates_per_s = static_cast<double>(s.packets_duplicate) / dt;
  row.jitter_ms = s.jitter_ms;
  row.frames_received_per_s = static_cast<double>(s.frames_received) / dt;
  row.frames_decoded_per_s = static_cast<double>(s.frames_decoded) / dt;
  row.frames_degraded_per_s = static_cast<double>(s.frames_degraded) / dt;
  row.frames_shown_per_s = static_cast<double>(s.frames_shown) / dt;
  row.decode_ms = s.decode_ms;
  row.latency_ms = s.latency_ms;
  history_.push(row);

  // Bursts of one second, reported once per second at most (the gap events carry numbers).
  auto burst = [&](EventKind kind, std::uint64_t n, const char* what) {
    if (n == 0) return;
    Event e = Event::now(kind, fmt::format("{} {} in the last second", n, what));
    e.detail = {{"count", n}, {"t", s.t}};
    post(std::move(e));
  };
  burst(EventKind::duplicates, s.packets_duplicate, "duplicate packets");
  burst(EventKind::late, s.packets_late, "late packets");
  burst(EventKind::out_of_window, s.packets_out_of_window, "packets out of the sequence window");
  burst(EventKind::fec_recovery, s.packets_recovered_by_fec, "packets rebuilt by FEC");
  burst(EventKind::decoder_behind, s.frames_dropped_behind, "frames dropped: decoding fell behind");
  burst(EventKind::degraded, s.frames_degraded, "frames decoded below full resolution or quality");

  {
    std::lock_guard lock(mutex_);
    if (s.packets_received > 0) seen_packets_ = true;
  }
  SecondSample sample;
  sample.packets_received = s.packets_received;
  sample.packets_lost = s.packets_lost;
  sample.frame_errors = s.frames_damaged + s.frames_failed;
  sample.jitter_ms = s.jitter_ms;
  sample.audio = s.audio;
  sample.longest_silence_s = s.longest_silence_s;
  sample.last_packet_seen = s.last_packet_seen;
  sample.paths_down = s.paths_down;
  for (auto& e : alarms_.on_second(sample, now)) {
    // No signal doubles as the signal lost / back events.
    const bool signal = e.detail.value("alarm", "") == to_string(Alarm::no_signal);
    if (signal) {
      std::lock_guard lock(mutex_);
      const bool raised = e.kind == EventKind::alarm_raised;
      if (raised != signal_lost_ && (seen_packets_ || raised)) {
        signal_lost_ = raised;
        Event s2 = Event::now(raised ? EventKind::signal_lost : EventKind::signal_back,
                              raised ? "signal lost: no packets" : "signal back");
        if (raised && e.detail.contains("began")) {
          // Said when seen (the once-a-second look), dated when the packets stopped.
          s2.detail["began"] = e.detail["began"];
          s2.message = fmt::format("signal lost: no packets since {} ({:.1f} s)", e.detail["began"].get<std::string>(),
                                   e.detail["began_s_ago"].get<double>());
        }
        events_->post(std::move(s2));
      }
    }
    post(std::move(e));
  }
  if (metrics_) {
    nlohmann::json full = summary;
    add_to_summary(full, now);
    // The gauges a monitoring system alerts on say what the link does now: the summary's
    // bit rate and latencies are over the whole run, which after days barely moves.
    full["now"] = {{"bitrate_mbps", s.seconds > 0 ? static_cast<double>(s.payload_bytes) * 8e-6 / s.seconds : 0.0}};
    // A second in which nothing was decoded has no latency (not 0 ms: an alert on latency
    // would clear just when the decoder stalls): the gauges are left out then.
    if (s.latency_samples > 0) {
      full["now"]["latency_p50_ms"] = s.latency_ms;
      full["now"]["latency_p99_ms"] = s.latency_p99_ms;
    }
    if (s.audio) {
      // The sound as a monitoring system graphs it: each channel's levels now.
      nlohmann::json channels = nlohmann::json::array();
      for (const auto& l : s.audio->levels)
        channels.push_back({{"peak_dbfs", l.peak_dbfs}, {"rms_dbfs", l.rms_dbfs}, {"momentary_lufs", l.momentary_lufs},
                            {"silent", l.silent}, {"clipping", l.clipping}});
      full["now"]["audio"] = {{"channels", s.audio->channels},
                              {"silent_channels", s.audio->silent_channels},
                              {"clipping_channels", s.audio->clipping_channels},
                              {"stalled", s.audio->stalled},
                              {"per_channel", std::move(channels)}};
    }
    full.erase("history");  // the scrape stays small; /stats has the live numbers
    metrics_->publish(prometheus_text(full, options_.url_label), full.dump());
  }
}

void StreamMonitor::on_frame(const FrameReport& f, Clock::time_point now) {
  {
    // Every frame the depacketizer delivered, decoded or not, carries its time code.
    std::unique_lock lock(mutex_);
    // A looped capture's next pass or another sender: its time code starts afresh, said by
    // the source_restart / ssrc_change event, not a break.
    if (f.new_timeline) time_code_.restart();
    if (auto tc = time_code_.on_frame(f.index, f.time_code, f.frame_rate)) {
      lock.unlock();
      Event e = Event::now(EventKind::time_code, std::move(tc->message));
      e.frame = f.index;
      e.rtp_timestamp = f.rtp_timestamp;
      e.detail = std::move(tc->detail);
      post(std::move(e));
    }
  }
  if (f.dropped_decoder_behind) {
    alarms_.on_frame(std::nullopt, now);
    return;  // counted per second (decoder_behind), not one event per frame
  }
  if (!f.complete || (!f.decoded && !f.error.empty())) {
    Event e = Event::now(f.complete ? EventKind::frame_failed : EventKind::frame_damaged,
                         f.complete ? fmt::format("frame {} not decoded: {}", f.index, f.error)
                                    : fmt::format("frame {} arrived incomplete", f.index));
    e.frame = f.index;
    e.rtp_timestamp = f.rtp_timestamp;
    if (!f.error.empty()) e.detail["error"] = f.error;
    if (!f.complete) e.detail["cause"] = "packets lost";
    if (!f.time_code.empty()) e.detail["time_code"] = f.time_code;
    post(std::move(e));
  } else if (f.decoded && !f.damage.empty()) {
    // Every packet came and the codestream is still damaged: the fault lies before the
    // network (the encoder, or a device that rewrote the stream), not in the link.
    Event e = Event::now(EventKind::frame_damaged,
                         fmt::format("frame {}: every packet arrived but the codestream is damaged: {}", f.index, f.damage));
    e.frame = f.index;
    e.rtp_timestamp = f.rtp_timestamp;
    e.detail["damage"] = f.damage;
    e.detail["cause"] = "codestream";
    if (!f.time_code.empty()) e.detail["time_code"] = f.time_code;
    post(std::move(e));
  }
  // A frame that was not decoded only because decoding is off (--no-decode) is no error: it
  // gives the alarms nothing (no picture, no last error).
  const bool not_asked = !f.decoded && f.complete && f.error.empty();
  if (!not_asked) alarms_.on_frame(f.decoded ? f.look : std::nullopt, now);
  if (f.decoded && !f.format.empty()) {
    std::lock_guard lock(mutex_);
    if (f.format != last_format_) {
      if (!last_format_.empty()) {
        Event e = Event::now(EventKind::format_change, fmt::format("format {} -> {}", last_format_, f.format));
        e.frame = f.index;
        e.rtp_timestamp = f.rtp_timestamp;
        e.detail = {{"from", last_format_}, {"to", f.format}};
        events_->post(std::move(e));
      }
      last_format_ = f.format;
    }
  }
}

void StreamMonitor::on_stream_event(const StreamEvent& se) {
  Event e = Event::now(se.kind, se.message);
  e.rtp_timestamp = se.rtp_timestamp;
  if (se.kind == EventKind::sequence_gap) {
    // Sequence numbers as they are on the wire (16 bits), and the extended ones.
    e.detail = {{"first_missing", se.first & 0xFFFF}, {"last_missing", se.last & 0xFFFF}, {"count", se.count},
                {"first_missing_extended", se.first}, {"last_missing_extended", se.last}};
  } else if (se.kind == EventKind::path_down || se.kind == EventKind::path_back) {
    e.detail = {{"path", se.first}};
    if (se.kind == EventKind::path_back) e.detail["packets_missed"] = se.count;
  } else if (se.count) {
    e.detail = {{"count", se.count}};
  }
  post(std::move(e));
}

void StreamMonitor::add_to_summary(nlohmann::json& summary, Clock::time_point now) const {
  const AlarmStatus st = alarms_.status(now);
  nlohmann::json active = nlohmann::json::array();
  for (Alarm a : st.active) active.push_back(to_string(a));
  summary["alarms"] = {{"severity", to_string(st.severity)},
                       {"active", active},
                       {"active_count", st.active.size()},
                       {"raised", alarms_.raised()},
                       {"thresholds",
                        {{"loss_percent", options_.alarms.loss_percent},
                         {"jitter_ms", options_.alarms.jitter_ms},
                         {"freeze_s", options_.alarms.freeze_s},
                         {"signal_s", options_.alarms.signal_s},
                         {"black_s", options_.alarms.black_s},
                         {"silence_s", options_.alarms.silence_s},
                         {"clipping", options_.alarms.clipping >= 0 ? "on" : "off"},
                         {"path", options_.alarms.path >= 0 ? "on" : "off"}}}};
  if (st.since_last_error_s) summary["alarms"]["since_last_error_s"] = *st.since_last_error_s;
  {
    std::lock_guard lock(mutex_);
    summary["time_code"] = {{"frames_out_of_sequence", time_code_.out_of_sequence()},
                            {"frames_without", time_code_.missing()}};
  }
  summary["events"] = {{"count", events_->posted()}, {"write_dropped", events_->write_dropped()},
                       {"rotations", events_->rotations()}, {"limit_bytes", events_->max_bytes()}};
  summary["history"] = history_.to_json();
}

void StreamMonitor::close() {
  if (events_) events_->close();
  metrics_.reset();
}

}  // namespace j2k::monitor
