#pragma once
// Plays sound in step with the picture on screen. Blocks arrive with the 90 kHz time of
// their first sample (the clock of the pictures' RTP timestamps); the window reports each
// picture it puts on screen (its RTP timestamp and the moment of the swap). The output
// device asks for samples it will play at a known moment (`heard_at`): the playout gives the
// samples whose media time the picture clock says is due then — inserting silence when the
// sound is early, skipping it when late, once the error passes the tolerance; below it, and
// above 1 ms, one frame per pull is dropped or repeated so that the sound settles on the
// picture's clock. Without pictures it plays the sound on its own clock.
//
// The stream's time can jump (a looped capture starts again, a sender restarts): the sound
// after the jump waits as a timeline of its own while the old one plays out with the pictures
// still on screen, and takes over when those are through. Clearing the old sound at the jump
// instead cost a quarter to half a second of sound at each loop.
//
// Threads: `push` from the audio monitor's thread, `on_video_shown` from the GUI thread,
// `pull` from the output device's thread; one mutex guards the state (held briefly).
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <vector>

#include "depacketizer/audio.hpp"

namespace j2k::audio {

struct PlayoutOptions {
  /// Stream channels (0-based) sent to the output's channels in order; empty: the first two
  /// (one channel goes to both sides).
  std::vector<int> channels;
  int output_channels = 2;
  double max_buffer_s = 2.0;   ///< sound waiting to be played at most (older is dropped, counted)
  double tolerance_s = 0.015;  ///< a clock error below this is left alone (less than half a frame at 30 fps)
  double free_run_delay_s = 0.1;  ///< without pictures: the sound plays this long after it arrived
};

struct PlayoutStats {
  std::uint64_t frames_played = 0;      ///< output frames that carried sound
  std::uint64_t frames_silence = 0;     ///< output frames of silence (early sound, underrun, before any)
  std::uint64_t frames_skipped = 0;     ///< sound skipped because it was late
  std::uint64_t frames_dropped = 0;     ///< sound dropped: more than max_buffer_s waiting
  std::uint64_t corrections = 0;        ///< times the sound was moved to the picture's clock
  std::uint64_t frames_slewed = 0;      ///< single frames dropped or repeated to settle on the picture's clock
  std::uint64_t underruns = 0;          ///< the device asked and nothing was there
  std::uint64_t timeline_changes = 0;   ///< the stream's time jumped and the sound after it took over
  double last_error_ms = 0;             ///< sound minus picture time at the last pull (+: sound late)
  bool on_picture_clock = false;        ///< following the pictures (else free-running)
  /// Channels chosen (`--audio 3,4`, 1-based) that the stream does not have: heard as silence.
  std::vector<int> missing_channels;
};

class AudioPlayout {
 public:
  using Clock = std::chrono::steady_clock;
  explicit AudioPlayout(PlayoutOptions options = {});

  void push(const depacketizer::AudioBlock& block);
  void on_video_shown(std::uint32_t rtp_timestamp, Clock::time_point shown);
  /// Fills `frames` output frames (interleaved 16-bit, output_channels each) of which the
  /// first is heard at `heard_at`.
  void pull(std::int16_t* out, std::size_t frames, Clock::time_point heard_at);

  void set_muted(bool muted);
  bool muted() const;
  /// The sound's sample rate (0 before any arrived): the rate the output must run at.
  int sample_rate() const;
  int output_channels() const noexcept { return options_.output_channels; }
  PlayoutStats stats() const;
  /// Called from `pull` (device thread) with the moment each click is heard: a sample above
  /// -20 dBFS after at least 100 ms below -40 dBFS (the lip-sync probe). Set before playing.
  void set_onset_hook(std::function<void(Clock::time_point)> hook) { onset_hook_ = std::move(hook); }

 private:
  double unwrap(std::uint32_t ts);  // 90 kHz ticks on a 64-bit line (under mutex_)
  std::optional<double> due_media_time(Clock::time_point heard_at);  // under mutex_
  void reset(const depacketizer::AudioFormat& format);
  void next_timeline(Clock::time_point heard_at);  // under mutex_
  // The sound at the fifo's head starts a timeline, heard at `heard_at` (under mutex_).
  void begin_timeline(Clock::time_point heard_at, bool wait_for_pictures);
  std::size_t queued_frames() const;               // all timelines' (under mutex_)
  void detect_onsets(const std::int16_t* out, std::size_t frames, Clock::time_point heard_at);

  const PlayoutOptions options_;
  std::function<void(Clock::time_point)> onset_hook_;

  mutable std::mutex mutex_;  // guards everything below
  depacketizer::AudioFormat format_;
  std::optional<double> media_ref_;          // the last unwrapped time, for unwrapping the next
  std::deque<std::int16_t> fifo_;            // output frames waiting, interleaved (the timeline playing)
  double head_ticks_ = 0;                    // media time of the fifo's first frame
  struct Timeline {                          // sound after a jump of the stream's time
    double head_ticks = 0;
    std::deque<std::int16_t> frames;
  };
  std::deque<Timeline> later_;               // in order of arrival, at most kMaxTimelines
  // A later timeline took over (its media ticks heard at a moment); its pictures not yet shown.
  std::optional<std::pair<double, Clock::time_point>> switched_;
  bool jumped_ = false;     // the stream's time jumped while nothing was queued (see push)
  bool wait_for_pictures_ = false;  // such a timeline waits in silence for its pictures
  bool heard_any_ = false;  // sound of this format was queued before (head_ticks_ says where it was)
  std::deque<double> video_offsets_;         // shown time (s) minus media time (s), the last few
  std::optional<Clock::time_point> last_video_;
  std::optional<std::pair<double, Clock::time_point>> free_anchor_;  // media ticks heard at a moment
  bool muted_ = false;
  bool playing_ = false;                     // sound was being played (for underruns)
  PlayoutStats stats_;
  // Device thread only (onset detection).
  std::size_t quiet_frames_ = 0;
};

/// Lip sync as measured with j2ksend --sync-test: each flash put on screen and each click
/// heard; offsets pair each click with the nearest flash within half a second.
class SyncProbe {
 public:
  using Clock = std::chrono::steady_clock;
  void on_flash(Clock::time_point shown);
  void on_click(Clock::time_point heard);
  struct Report {
    std::size_t flashes = 0, clicks = 0, pairs = 0;
    std::vector<double> offsets_ms;  ///< click minus flash (+: sound after picture)
    double mean_ms = 0, min_ms = 0, max_ms = 0, max_abs_ms = 0;
  };
  Report report() const;

 private:
  static constexpr std::size_t kMax = 4096;
  mutable std::mutex mutex_;  // guards both lists
  std::vector<Clock::time_point> flashes_, clicks_;
};

}  // namespace j2k::audio
