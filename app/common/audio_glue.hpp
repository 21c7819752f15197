#pragma once
// The sound that comes with the pictures, the same in both receivers (j2kprobe, j2kplay):
// the audio monitor (app/audio: its own thread and bounded queue) fed by the pipeline's
// depacketizer, its silence and clipping episodes in the operator's event log and alarms, a
// short part of the per-second line and the JSON summary's "audio".
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "audio/audio_monitor.hpp"
#include "monitor/stream_monitor.hpp"
#include "pipeline/receive_pipeline.hpp"

namespace j2k::cli {

class AudioGlue {
 public:
  /// Makes the audio monitor and hooks it into the pipeline's configuration (before the
  /// pipeline opens) and the operator's view; `on_block` gets every block after metering
  /// (the player's output). The silence time is the --alarm's (2 s unless set).
  Status open(pipeline::PipelineConfig& config, monitor::StreamMonitor& mon, const monitor::AlarmThresholds& alarms,
              const std::string& dump_path, audio::AudioMonitor::BlockSink on_block = {}) {
    audio::AudioMonitorOptions o;
    if (alarms.silence_s >= 0) o.meter.silence_s = alarms.silence_s;
    o.dump_path = dump_path;
    dump_path_ = dump_path;
    auto made = audio::AudioMonitor::create(
        o, [&mon](const audio::AudioEvent& e) { mon.post(to_event(e)); }, std::move(on_block));
    if (!made) return made.error();
    monitor_ = std::move(made).value();
    config.on_audio = [m = monitor_.get()](depacketizer::AudioBlock&& b) { m->push(std::move(b)); };
    return {};
  }

  audio::AudioMonitor& monitor() { return *monitor_; }

  /// The sound's state over the last second for the alarms (nothing while no sound has
  /// arrived). Once a second, from the tool's per-second loop only.
  void add_to(monitor::SecondReport& r) {
    const auto s = monitor_->snapshot();
    if (!s.seen) return;
    monitor::AudioSecond a;
    a.channels = s.format.channels;
    for (const auto& l : s.levels) {
      a.silent_channels += l.silent;
      a.clipping_channels += l.clipping;
      a.levels.push_back({.peak_dbfs = l.peak_dbfs, .rms_dbfs = l.rms_dbfs, .momentary_lufs = l.momentary_db,
                          .silent = l.silent != 0, .clipping = l.clipping != 0});
    }
    // Episodes that began within the second (some already over): the alarms raise and clear
    // those at once rather than hold an alarm for a second while the sound is back.
    a.silence_began = static_cast<int>(s.silence_events - silence_events_);
    a.clipping_began = static_cast<int>(s.clipping_events - clipping_events_);
    silence_events_ = s.silence_events;
    clipping_events_ = s.clipping_events;
    a.stalled = last_is_stall(s);  // the monitor times it: no sound for the silence time
    r.audio = a;
  }

  /// "audio 2ch -18.0/-18.1 dBFS" (peaks of the last 400 ms), with SILENT/CLIP flags; "" without sound.
  std::string line_part() {
    const auto s = monitor_->snapshot();
    if (!s.seen) return {};
    std::string text = fmt::format("audio {}ch", s.format.channels);
    if (last_is_stall(s)) return text + " NO SOUND";
    std::string peaks;
    int silent = 0, clipping = 0;
    for (std::size_t c = 0; c < s.levels.size(); ++c) {
      if (c < 4) peaks += fmt::format("{}{:.1f}", c ? "/" : " ", std::max(-99.9, s.levels[c].peak_dbfs));
      silent += s.levels[c].silent;
      clipping += s.levels[c].clipping;
    }
    text += peaks + (s.levels.size() > 4 ? "/… dBFS" : " dBFS");
    if (silent) text += fmt::format(" SILENT {}", silent);
    if (clipping) text += fmt::format(" CLIP {}", clipping);
    return text;
  }

  /// Stops the sound path (after the pipeline stopped) and writes the summary's "audio".
  void finish(nlohmann::json& summary, const depacketizer::AudioCounters& received) {
    monitor_->stop();
    const auto s = monitor_->snapshot();
    nlohmann::json a;
    a["present"] = s.seen;
    a["received"] = {{"blocks", received.blocks},
                     {"sample_frames", received.sample_frames},
                     {"malformed", received.malformed},
                     {"damaged", received.damaged},
                     {"without_descriptor", received.without_descriptor},
                     {"descriptors", received.descriptors},
                     {"descriptors_rejected", received.descriptors_rejected},
                     {"other_tracks", received.other_tracks},
                     {"sequence_errors", received.sequence_errors},
                     {"discontinuities", received.discontinuities},
                     {"format_changes", received.format_changes}};
    a["dropped_queue_full"] = s.dropped_queue_full;
    if (s.seen) {
      a["channels"] = s.format.channels;
      a["sample_rate"] = s.format.sample_rate;
      a["bits"] = s.format.bits;
      a["blocks"] = s.blocks;
      a["sample_frames"] = s.sample_frames;
      a["seconds"] = s.seconds;
      a["format_seconds"] = s.format.sample_rate ? static_cast<double>(s.format_sample_frames) / s.format.sample_rate : 0.0;
      auto& per = a["per_channel"] = nlohmann::json::array();
      for (std::size_t c = 0; c < s.totals.size(); ++c) {
        const auto& t = s.totals[c];
        nlohmann::json ch = {{"channel", c + 1},
                             {"peak_dbfs", t.peak_dbfs},
                             {"rms_dbfs", t.rms_dbfs},
                             {"momentary_max_lufs", t.momentary_max_db}};
        if (c < s.levels.size())
          ch["last"] = {{"peak_dbfs", s.levels[c].peak_dbfs},
                        {"rms_dbfs", s.levels[c].rms_dbfs},
                        {"momentary_lufs", s.levels[c].momentary_db},
                        {"silent", s.levels[c].silent},
                        {"clipping", s.levels[c].clipping}};
        per.push_back(std::move(ch));
      }
      a["silence_events"] = s.silence_events;
      a["clipping_events"] = s.clipping_events;
      auto& events = a["events"] = nlohmann::json::array();
      for (const auto& e : s.events) {
        if (e.kind == audio::AudioEvent::Kind::format) continue;
        nlohmann::json j = {{"time", monitor::iso8601_ms(e.wall)}, {"kind", audio::to_string(e.kind)}, {"message", e.message}};
        if (e.channel) j["channel"] = e.channel;
        if (e.rtp_timestamp) j["rtp_timestamp"] = *e.rtp_timestamp;
        events.push_back(std::move(j));
      }
    }
    if (!dump_path_.empty()) {
      a["dump"] = {{"file", dump_path_}, {"sample_frames", s.dump_frames}};
      if (!s.dump_error.empty()) a["dump"]["error"] = s.dump_error;
      if (s.dump_failed) a["dump"]["failed"] = true;
    }
    summary["audio"] = std::move(a);
  }

 private:
  static bool last_is_stall(const audio::AudioSnapshot& s) {
    for (auto it = s.events.rbegin(); it != s.events.rend(); ++it) {
      if (it->kind == audio::AudioEvent::Kind::stalled) return true;
      if (it->kind == audio::AudioEvent::Kind::silence_end && it->channel == 0) return false;
    }
    return false;
  }

  static monitor::Event to_event(const audio::AudioEvent& e) {
    using K = audio::AudioEvent::Kind;
    const auto kind = e.kind == K::format          ? monitor::EventKind::audio_format
                      : e.kind == K::clipping      ? monitor::EventKind::audio_clipping
                      : e.kind == K::silence_end   ? monitor::EventKind::audio_back
                                                   : monitor::EventKind::audio_silence;
    monitor::Event m = monitor::Event::now(kind, e.message);
    m.wall = e.wall;
    m.rtp_timestamp = e.rtp_timestamp;
    if (e.channel) m.detail["channel"] = e.channel;
    return m;
  }

  std::unique_ptr<audio::AudioMonitor> monitor_;
  std::string dump_path_;
  std::uint64_t silence_events_ = 0, clipping_events_ = 0;  // at the last add_to (the tool's per-second loop)
};

}  // namespace j2k::cli
