#include "monitor/alarms.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>

#include <fmt/format.h>

#include "core/enum_names.hpp"

namespace j2k::monitor {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

/// "2s" -> 2, "500ms" -> 0.5, "5ms" in ms units -> 5; `unit_ms`: the result is in ms.
std::optional<double> parse_quantity(std::string_view text, bool unit_ms, bool percent) {
  std::string s(text);
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end == s.c_str() || !std::isfinite(v) || v < 0) return std::nullopt;
  const std::string_view unit = trim(std::string_view(end));
  if (percent) {
    if (unit.empty() || unit == "%") return v;
    return std::nullopt;
  }
  double seconds = 0;
  if (unit == "ms") seconds = v / 1000.0;
  else if (unit == "s") seconds = v;
  else if (unit.empty()) return v;  // bare number: the key's own unit
  else return std::nullopt;
  return unit_ms ? seconds * 1000.0 : seconds;
}

constexpr int index_of(Alarm a) { return static_cast<int>(a); }

constexpr EnumName<Alarm> kAlarmNames[] = {{Alarm::no_signal, "no_signal"}, {Alarm::freeze, "freeze"}, {Alarm::black, "black"},
                                           {Alarm::loss, "loss"},           {Alarm::jitter, "jitter"},
                                           {Alarm::audio_silence, "audio_silence"},
                                           {Alarm::audio_clipping, "audio_clipping"}, {Alarm::path_down, "path_down"}};
constexpr EnumName<Severity> kSeverityNames[] = {
    {Severity::ok, "ok"}, {Severity::warning, "warning"}, {Severity::critical, "critical"}};

}  // namespace

Result<AlarmThresholds> parse_alarm_spec(std::string_view spec) {
  AlarmThresholds t;
  while (!spec.empty()) {
    const auto comma = spec.find(',');
    const std::string_view item = trim(spec.substr(0, comma));
    spec = comma == std::string_view::npos ? std::string_view{} : spec.substr(comma + 1);
    if (item.empty()) continue;
    const auto eq = item.find('=');
    if (eq == std::string_view::npos)
      return make_error(ErrorKind::corrupt, fmt::format("alarm '{}' has no value (e.g. loss=0.1%,jitter=5ms,freeze=2s)", item));
    const std::string_view key = trim(item.substr(0, eq));
    const std::string_view value = trim(item.substr(eq + 1));
    double* field = nullptr;
    bool unit_ms = false, percent = false;
    if (key == "loss") { field = &t.loss_percent; percent = true; }
    else if (key == "jitter") { field = &t.jitter_ms; unit_ms = true; }
    else if (key == "freeze") field = &t.freeze_s;
    else if (key == "signal") field = &t.signal_s;
    else if (key == "black") field = &t.black_s;
    else if (key == "silence") field = &t.silence_s;
    else if (key == "clipping" || key == "path") {
      if (value != "on" && value != "off")
        return make_error(ErrorKind::corrupt, fmt::format("alarm {}={} is not on or off", key, value));
      (key == "path" ? t.path : t.clipping) = value == "on" ? 0 : -1;
      continue;
    } else
      return make_error(ErrorKind::corrupt,
                        fmt::format("unknown alarm '{}': use loss, jitter, freeze, signal, black, silence, clipping or path", key));
    if (value == "off") { *field = -1; continue; }
    auto q = parse_quantity(value, unit_ms, percent);
    if (!q)
      return make_error(ErrorKind::corrupt, fmt::format("alarm {}={} is not a non-negative {}", key, value,
                                                        percent ? "percentage" : unit_ms ? "time (5ms)" : "time (2s)"));
    // A time of 0 would call every moment silent, frozen, black or without signal: refused.
    if (!percent && !unit_ms && *q <= 0)
      return make_error(ErrorKind::corrupt, fmt::format("alarm {}={}: a {} must last some time (e.g. {}=500ms), or say "
                                                        "{}=off", key, value, key == "signal" ? "loss of signal" : key, key, key));
    *field = *q;
  }
  return t;
}

const char* to_string(Alarm alarm) noexcept { return name_of(kAlarmNames, alarm, "unknown"); }
const char* to_string(Severity severity) noexcept { return name_of(kSeverityNames, severity, "unknown"); }

std::string AlarmStatus::headline() const {
  if (active.empty()) return "OK";
  std::string s;
  for (Alarm a : active) {
    if (!s.empty()) s += ", ";
    switch (a) {
      case Alarm::no_signal: s += "NO SIGNAL"; break;
      case Alarm::freeze: s += "FROZEN PICTURE"; break;
      case Alarm::black: s += "BLACK PICTURE"; break;
      case Alarm::loss: s += "PACKET LOSS"; break;
      case Alarm::jitter: s += "JITTER"; break;
      case Alarm::audio_silence: s += "AUDIO SILENCE"; break;
      case Alarm::audio_clipping: s += "AUDIO CLIPPING"; break;
      case Alarm::path_down: s += "PATH DOWN"; break;
    }
  }
  return s;
}

std::uint64_t fingerprint_bytes(const std::uint8_t* data, std::size_t size) {
  // FNV-1a over the length and up to 64 samples of 64 bytes spread over the data.
  std::uint64_t h = 1469598103934665603ull;
  auto mix = [&h](std::uint8_t b) { h = (h ^ b) * 1099511628211ull; };
  for (int i = 0; i < 8; ++i) mix(static_cast<std::uint8_t>(size >> (8 * i)));
  if (size == 0 || data == nullptr) return h;
  constexpr std::size_t kSamples = 64, kRun = 64;
  for (std::size_t s = 0; s < kSamples; ++s) {
    const std::size_t at = size * s / kSamples;
    const std::size_t n = std::min(kRun, size - at);
    for (std::size_t i = 0; i < n; ++i) mix(data[at + i]);
  }
  return h;
}

bool is_black(const PlanarImage& picture) {
  if (picture.planes.empty()) return false;
  const Plane& y = picture.planes[0];
  if (y.samples.empty() || y.width <= 0 || y.height <= 0) return false;
  const double full = static_cast<double>((1u << std::clamp(y.precision, 1, 16)) - 1);
  const double black_limit = full * (16.0 / 255.0 + 0.03);  // narrow-range black plus a margin
  const double peak_limit = full * (16.0 / 255.0 + 0.10);
  double sum = 0, peak = 0;
  std::size_t n = 0;
  const int step = std::max(1, std::min(y.width, y.height) / 64);  // ~64x64 samples
  for (int row = 0; row < y.height; row += step)
    for (int col = 0; col < y.width; col += step) {
      double v = y.samples[static_cast<std::size_t>(row) * y.width + col];
      if (y.is_signed) v += full / 2 + 0.5;
      sum += v;
      peak = std::max(peak, v);
      ++n;
    }
  return n > 0 && sum / static_cast<double>(n) <= black_limit && peak <= peak_limit;
}

AlarmMonitor::AlarmMonitor(AlarmThresholds thresholds, Clock::time_point start)
    : thresholds_(thresholds), start_(start) {}

namespace {

/// What an alarm's value and threshold mean, with their units: "3.8 % of the last second's
/// packets lost (threshold 0.1 %)", "2 channels silent (threshold 2 s)".
std::string describe_value(Alarm alarm, double value, double threshold) {
  const auto count = [](double n, const char* one, const char* many) {
    return fmt::format("{:.0f} {}", n, std::lround(n) == 1 ? one : many);
  };
  switch (alarm) {
    case Alarm::no_signal: return fmt::format("no packets for {:.1f} s (threshold {:.3g} s)", value, threshold);
    case Alarm::freeze: return fmt::format("the same picture for {:.1f} s (threshold {:.3g} s)", value, threshold);
    case Alarm::black: return fmt::format("black for {:.1f} s (threshold {:.3g} s)", value, threshold);
    case Alarm::loss:
      return fmt::format("{:.3g} % of the last second's packets lost (threshold {:.3g} %)", value, threshold);
    case Alarm::jitter: return fmt::format("{:.3g} ms (threshold {:.3g} ms)", value, threshold);
    case Alarm::audio_silence:
      return fmt::format("{} silent or stalled (threshold {:.3g} s)", count(value, "channel", "channels"), threshold);
    case Alarm::audio_clipping: return fmt::format("{} at full scale", count(value, "channel", "channels"));
    case Alarm::path_down: return fmt::format("{} bringing nothing", count(value, "path", "paths"));
  }
  return fmt::format("{:.3g} (threshold {:.3g})", value, threshold);
}

}  // namespace

Event AlarmMonitor::transition(Alarm alarm, bool active, double value, double threshold, Clock::time_point now,
                               std::optional<Clock::time_point> since) {
  active_[index_of(alarm)] = active;
  if (active) ++raised_;
  if (active && (alarm == Alarm::no_signal || alarm == Alarm::freeze || alarm == Alarm::audio_silence)) {
    if (silence_raises_.size() == 16) silence_raises_.erase(silence_raises_.begin());
    silence_raises_.push_back(since.value_or(now));
  }
  Event e = Event::now(active ? EventKind::alarm_raised : EventKind::alarm_cleared,
                       fmt::format("{} {}: {}", to_string(alarm), active ? "raised" : "cleared",
                                   describe_value(alarm, value, threshold)));
  e.detail = {{"alarm", to_string(alarm)}, {"value", value}, {"threshold", threshold}};
  return e;
}

std::vector<Event> AlarmMonitor::on_second(const SecondSample& s, Clock::time_point now) {
  std::lock_guard lock(mutex_);
  std::vector<Event> events;
  auto seconds_since = [now](std::optional<Clock::time_point> t, Clock::time_point fallback) {
    return std::chrono::duration<double>(now - t.value_or(fallback)).count();
  };
  // When the tool last saw packets arrive (else this look): the silence is measured on this
  // clock, not on the packets' receive times, which are a capture's own when one is replayed
  // (and fall behind the clock when decoding holds the replay back). Up to a second earlier
  // than the look: an outage is dated from its start, not from the look after it.
  if (s.packets_received > 0)
    last_packet_ = s.last_packet_seen && *s.last_packet_seen <= now ? *s.last_packet_seen : now;
  if (s.packets_lost > 0 || s.frame_errors > 0) last_error_ = now;

  // A raise says when its condition began (the look that raised it comes up to a second
  // after the threshold was passed, and the threshold after the cause): "began" in the event.
  auto date = [&](Event& e, Clock::time_point began) {
    const auto ago = std::chrono::duration_cast<std::chrono::system_clock::duration>(now - began);
    e.detail["began"] = iso8601_ms(e.wall - ago);
    e.detail["began_s_ago"] = std::chrono::duration<double>(now - began).count();
  };
  auto evaluate = [&](Alarm a, double threshold, double value, bool condition,
                      std::optional<Clock::time_point> began = std::nullopt) {
    const bool want = threshold >= 0 && condition;
    if (want == active_[index_of(a)]) return;
    events.push_back(transition(a, want, value, threshold, now));
    if (want && began) date(events.back(), *began);
  };
  // An episode that began and ended between two evaluations: raised and cleared at once, so
  // that the log and the count hold it (a 2.6 s outage between two looks a second apart was
  // seen as 1.6 s at most).
  auto episode = [&](Alarm a, double threshold, double length, bool was_active) {
    if (threshold < 0 || was_active || active_[index_of(a)] || length < threshold) return;
    // It began before the packets (or pictures) that ended it, at least `length` ago.
    const auto began = now - std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(length));
    events.push_back(transition(a, true, length, threshold, now, began));
    date(events.back(), began);
    events.push_back(transition(a, false, length, threshold, now));
  };
  const bool no_signal_was = active_[index_of(Alarm::no_signal)], freeze_was = active_[index_of(Alarm::freeze)];
  const double silent = s.packets_received > 0 ? 0.0 : seconds_since(last_packet_, start_);
  // The silence began after the last look that saw packets (or the start), within its second.
  evaluate(Alarm::no_signal, thresholds_.signal_s, silent, silent >= thresholds_.signal_s, last_packet_.value_or(start_));
  episode(Alarm::no_signal, thresholds_.signal_s, s.longest_silence_s, no_signal_was);
  // Freeze only once a stream was seen (no signal already covers silence from the start).
  const double frozen = last_packet_ ? seconds_since(last_new_picture_, *last_packet_) : 0.0;
  evaluate(Alarm::freeze, thresholds_.freeze_s, frozen, last_packet_ && frozen >= thresholds_.freeze_s,
           last_new_picture_.value_or(last_packet_.value_or(now)));
  episode(Alarm::freeze, thresholds_.freeze_s, std::exchange(longest_freeze_s_, 0.0), freeze_was);
  const double black_for = black_since_ ? std::chrono::duration<double>(now - *black_since_).count() : 0.0;
  evaluate(Alarm::black, thresholds_.black_s, black_for, black_since_ && black_for >= thresholds_.black_s,
           black_since_.value_or(now));
  const double expected = static_cast<double>(s.packets_received + s.packets_lost);
  const double loss = expected > 0 ? 100.0 * static_cast<double>(s.packets_lost) / expected : 0.0;
  evaluate(Alarm::loss, thresholds_.loss_percent, loss, s.packets_lost > 0 && loss > thresholds_.loss_percent);
  if (s.packets_received == 0 && active_[index_of(Alarm::jitter)]) {
    // No packets to measure it on (the stream stopped: no signal speaks for that): cleared,
    // said as such rather than with the last figure, which is still over the threshold.
    Event e = transition(Alarm::jitter, false, s.jitter_ms, thresholds_.jitter_ms, now);
    e.message = fmt::format("jitter cleared: no packets to measure it (last {:.3g} ms, threshold {:.3g})", s.jitter_ms,
                            thresholds_.jitter_ms);
    events.push_back(std::move(e));
  } else {
    evaluate(Alarm::jitter, thresholds_.jitter_ms, s.jitter_ms, s.packets_received > 0 && s.jitter_ms > thresholds_.jitter_ms);
  }
  // Sound: a dead channel is as serious as a frozen picture; the meters time the silence.
  const auto& a = s.audio;
  // Without packets it is no signal, not silence.
  const bool sound = a && s.packets_received > 0;
  for (const Alarm sound_alarm : {Alarm::audio_silence, Alarm::audio_clipping}) {
    if (s.packets_received > 0 || !active_[index_of(sound_alarm)]) continue;
    // The stream stopped: cleared, said as such (not with the count of the channels that were
    // silent, which reads as a contradiction).
    Event e = transition(sound_alarm, false, 0, sound_alarm == Alarm::audio_silence ? thresholds_.silence_s : thresholds_.clipping, now);
    e.message = fmt::format("{} cleared: no packets (no signal speaks for the sound)", to_string(sound_alarm));
    events.push_back(std::move(e));
  }
  // A stalled sound (none arriving) counts all its channels once.
  const bool silence_was = active_[index_of(Alarm::audio_silence)], clipping_was = active_[index_of(Alarm::audio_clipping)];
  const double silent_channels = a ? (a->stalled ? a->channels : a->silent_channels) : 0;
  evaluate(Alarm::audio_silence, thresholds_.silence_s, silent_channels, sound && (a->silent_channels > 0 || a->stalled));
  evaluate(Alarm::audio_clipping, thresholds_.clipping, a ? a->clipping_channels : 0, sound && a->clipping_channels > 0);
  // Episodes over before this look: raised and cleared at once, so the log and the count
  // hold them without an alarm that stays up a second while the sound is fine.
  auto sound_episode = [&](Alarm alarm, double threshold, int began, bool was_active) {
    if (!sound || threshold < 0 || began <= 0 || was_active || active_[index_of(alarm)]) return;
    events.push_back(transition(alarm, true, began, threshold, now));
    events.back().message = fmt::format("{} raised: {}, within the last second and over now", to_string(alarm),
                                        describe_value(alarm, began, threshold));
    events.back().detail["over"] = true;
    events.push_back(transition(alarm, false, 0, threshold, now));
    events.back().message = fmt::format("{} cleared: over within the second it was seen", to_string(alarm));
  };
  sound_episode(Alarm::audio_silence, thresholds_.silence_s, a ? a->silence_began : 0, silence_was);
  sound_episode(Alarm::audio_clipping, thresholds_.clipping, a ? a->clipping_began : 0, clipping_was);
  // One path of two lost: the picture is still whole, but the link has no protection left.
  evaluate(Alarm::path_down, thresholds_.path, s.paths_down, s.paths_down > 0);
  return events;
}

void AlarmMonitor::first_datagram(Clock::time_point t) {
  std::lock_guard lock(mutex_);
  if (!last_packet_) start_ = std::max(start_, t);
}

void AlarmMonitor::on_frame(const std::optional<FrameLook>& look, Clock::time_point now) {
  std::lock_guard lock(mutex_);
  if (!look) {
    last_error_ = now;  // a frame without a picture (damaged, failed or dropped)
    return;
  }
  if (!last_fingerprint_ || *last_fingerprint_ != look->fingerprint) {
    if (last_new_picture_)
      longest_freeze_s_ = std::max(longest_freeze_s_, std::chrono::duration<double>(now - *last_new_picture_).count());
    last_new_picture_ = now;
  }
  last_fingerprint_ = look->fingerprint;
  if (look->black) {
    if (*look->black && !black_since_) black_since_ = now;
    if (!*look->black) black_since_.reset();
  }
}

AlarmStatus AlarmMonitor::status(Clock::time_point now) const {
  std::lock_guard lock(mutex_);
  AlarmStatus st;
  for (Alarm a : {Alarm::no_signal, Alarm::freeze, Alarm::black, Alarm::loss, Alarm::jitter, Alarm::audio_silence,
                  Alarm::audio_clipping, Alarm::path_down})
    if (active_[index_of(a)]) st.active.push_back(a);
  for (Alarm a : st.active) {
    const Severity s = (a == Alarm::loss || a == Alarm::jitter || a == Alarm::audio_clipping || a == Alarm::path_down)
                           ? Severity::warning
                           : Severity::critical;
    st.severity = std::max(st.severity, s);
  }
  if (last_error_) st.since_last_error_s = std::chrono::duration<double>(now - *last_error_).count();
  return st;
}

std::uint64_t AlarmMonitor::raised() const {
  std::lock_guard lock(mutex_);
  return raised_;
}

std::uint64_t AlarmMonitor::raised_by_silence_after(Clock::time_point t) const {
  std::lock_guard lock(mutex_);
  return static_cast<std::uint64_t>(
      std::count_if(silence_raises_.begin(), silence_raises_.end(), [t](auto began) { return began > t; }));
}

}  // namespace j2k::monitor
