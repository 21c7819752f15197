#pragma once
// Alarms an operator acts on: no signal, frozen picture, black picture, loss and jitter
// above thresholds. Fed once a second by the tool's main loop (`on_second`) and once per
// delivered frame by the pipeline's sink (`on_frame`); read by the window, the metrics
// endpoint and the summary. All members are guarded by one mutex: callers are three
// threads at most, each a few times a second.
//
// Severity: no signal, freeze and black are critical (red: the picture is wrong);
// loss and jitter are warnings (amber: the picture may still be right).
#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/planar_image.hpp"
#include "core/result.hpp"
#include "monitor/event_log.hpp"

namespace j2k::monitor {

struct AlarmThresholds {
  double loss_percent = 0.1;  ///< lost / expected packets over one second, in %; < 0: off
  double jitter_ms = 5;       ///< RFC 3550 interarrival jitter; < 0: off
  double freeze_s = 2;        ///< no new picture (or only identical ones) for this long; < 0: off
  double signal_s = 2;        ///< no packet for this long; < 0: off
  double black_s = 2;         ///< black pictures for this long; < 0: off
  double silence_s = 2;       ///< a sound channel below -60 dBFS (or no sound at all) for this long; < 0: off
  double clipping = 0;        ///< a sound channel at full scale in the last 400 ms (0 on); < 0: off
  double path = 0;            ///< an ST 2022-7 path down (nothing from it for 1 s while the other delivers; 0 on); < 0: off
};

/// "loss=0.1%,jitter=5ms,freeze=2s,signal=3s,black=off,silence=2s,clipping=on": keys loss (%,
/// optional sign), jitter (ms or s), freeze / signal / black / silence (s or ms), clipping
/// (on or off); "off" disables one.
Result<AlarmThresholds> parse_alarm_spec(std::string_view spec);

enum class Alarm { no_signal, freeze, black, loss, jitter, audio_silence, audio_clipping, path_down };
const char* to_string(Alarm alarm) noexcept;

enum class Severity { ok, warning, critical };
const char* to_string(Severity severity) noexcept;

struct AlarmStatus {
  Severity severity = Severity::ok;
  std::vector<Alarm> active;
  /// Seconds since the last error of any kind (a lost packet, a damaged or failed frame).
  std::optional<double> since_last_error_s;
  /// "NO SIGNAL, LOSS" or "OK".
  std::string headline() const;
};

/// The sound's state at the end of a second (only for streams that carry sound).
/// One sound channel's levels over the meter's last window (400 ms), for the metrics.
struct AudioChannelLevel {
  double peak_dbfs = 0;       ///< -inf for digital silence
  double rms_dbfs = 0;
  double momentary_lufs = 0;  ///< EBU R 128 momentary loudness
  bool silent = false;
  bool clipping = false;
};

struct AudioSecond {
  int channels = 0;
  int silent_channels = 0;    ///< below the silence level for the silence time, now
  int clipping_channels = 0;  ///< at full scale in the last 400 ms, now
  bool stalled = false;       ///< sound was there and has stopped arriving
  /// Episodes that began within the second, also those already over at its end (a 1.3 s
  /// gap in a channel is silence to a 1 s threshold even when the second ends after it).
  int silence_began = 0;
  int clipping_began = 0;
  std::vector<AudioChannelLevel> levels{};  ///< per channel, the levels at the end of the second
};

/// What one second of the stream looked like.
struct SecondSample {
  std::uint64_t packets_received = 0;  ///< in that second
  std::uint64_t packets_lost = 0;      ///< in that second
  std::uint64_t frame_errors = 0;      ///< damaged + failed frames in that second
  double jitter_ms = 0;
  std::optional<AudioSecond> audio{};  ///< absent while no sound has arrived
  /// The longest time without packets that ended since the last evaluation: an outage that
  /// began and ended between two of them raises (and clears) no signal all the same.
  double longest_silence_s = 0;
  int paths_down = 0;  ///< ST 2022-7 paths down now
  /// When the tool last saw datagrams arrive, on its own clock (its polls, within 50 ms; not
  /// the packets' receive times, a capture's own when replayed). Unset: at this look.
  std::optional<std::chrono::steady_clock::time_point> last_packet_seen{};
};

/// A picture's identity and whether it is black (for the freeze and black alarms).
struct FrameLook {
  std::uint64_t fingerprint = 0;  ///< equal for identical pictures (see fingerprint_bytes)
  std::optional<bool> black;      ///< unknown when the picture is not on the host
};

/// A fingerprint of a codestream: its length and sampled bytes. Identical codestreams give
/// identical pictures, which is what a frozen encoder source repeats.
std::uint64_t fingerprint_bytes(const std::uint8_t* data, std::size_t size);
/// Black: the first component's mean and peak (sampled) sit at the bottom of the range
/// (at or below narrow-range black, 16/255 of full scale, plus a small margin).
bool is_black(const PlanarImage& picture);

class AlarmMonitor {
 public:
  using Clock = std::chrono::steady_clock;
  AlarmMonitor(AlarmThresholds thresholds, Clock::time_point start);

  /// Once a second. Returns the raise/clear events of this evaluation.
  std::vector<Event> on_second(const SecondSample& sample, Clock::time_point now);
  /// The first datagram arrived at `t`: a silence before it is the wait for the sender (j2kprobe's
  /// --wait), not an outage, so no signal counts from here. No effect once packets were seen.
  void first_datagram(Clock::time_point t);
  /// Each frame delivered (decoded or not: `look` empty for frames without a picture).
  void on_frame(const std::optional<FrameLook>& look, Clock::time_point now);

  AlarmStatus status(Clock::time_point now) const;
  /// Alarms raised since the start (j2kprobe's exit status).
  std::uint64_t raised() const;
  /// Of them, the no signal, freeze and sound silence alarms raised after `t` (the stream's
  /// last packet: a stream that ends raises them; its end is not the link's fault), less
  /// the episodes among them that began before `t` (an outage the stream came back from).
  std::uint64_t raised_by_silence_after(Clock::time_point t) const;
  const AlarmThresholds& thresholds() const noexcept { return thresholds_; }

 private:
  /// `since`: when an episode that has already ended began (else `now`).
  Event transition(Alarm alarm, bool active, double value, double threshold, Clock::time_point now,
                   std::optional<Clock::time_point> since = std::nullopt);

  const AlarmThresholds thresholds_;
  mutable std::mutex mutex_;  // guards everything below
  Clock::time_point start_;
  std::optional<Clock::time_point> last_packet_;
  std::optional<Clock::time_point> last_new_picture_;
  double longest_freeze_s_ = 0;  // the longest freeze that ended since the last evaluation
  std::optional<std::uint64_t> last_fingerprint_;
  std::optional<Clock::time_point> black_since_;
  std::optional<Clock::time_point> last_error_;
  bool active_[8] = {};  // by Alarm
  std::uint64_t raised_ = 0;
  std::vector<Clock::time_point> silence_raises_;  // the last 16 such raises: when, or an episode's start
};

}  // namespace j2k::monitor
