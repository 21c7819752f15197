#pragma once
// The receivers' sound path, off the reception threads: the depacketizer hands each block of
// sound to `push` (never blocks: a bounded queue, the newest dropped and counted when full);
// the monitor's own thread meters it (BS.1770 momentary, peak with hold, RMS), finds silence
// and clipping episodes, appends it to the --dump-audio WAV file and passes it on to the
// player's output. Readers (`snapshot`, `levels`) may be on any thread.
//
//   depacketizer thread ─push─▶ blocks_ (256, drop newest) ─▶ audio thread ─▶ meter, WAV, events, player
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "audio/meter.hpp"
#include "audio/wav.hpp"
#include "core/bounded_queue.hpp"
#include "core/result.hpp"
#include "depacketizer/audio.hpp"

namespace j2k::audio {

/// Something the operator should know about the sound, as it happens.
struct AudioEvent {
  enum class Kind { format, silence, silence_end, clipping, stalled };
  Kind kind = Kind::format;
  int channel = 0;                  ///< 1-based; 0: every channel (format, stalled)
  std::optional<std::uint32_t> rtp_timestamp;
  std::chrono::system_clock::time_point wall{};
  std::string message;
};
const char* to_string(AudioEvent::Kind kind) noexcept;

struct AudioMonitorOptions {
  MeterOptions meter;               ///< silence level and time
  std::string dump_path;            ///< --dump-audio FILE.wav; "" none
  std::size_t queue_blocks = 256;   ///< blocks waiting for the audio thread (5 to 10 s of sound)
  std::size_t kept_events = 256;    ///< events kept for the summary (the oldest go first)
};

/// Per channel, since the sound's format (channels, rate, depth) last changed: the whole
/// run when it never did.
struct ChannelTotals {
  double peak_dbfs = -150;          ///< the highest sample
  double rms_dbfs = -150;           ///< over every sample received in that format
  double momentary_max_db = -150;   ///< the loudest 400 ms
};

struct AudioSnapshot {
  bool seen = false;                ///< any sound arrived
  depacketizer::AudioFormat format;
  std::uint64_t blocks = 0, sample_frames = 0;
  double seconds = 0;                   ///< of sound received, each block at its own rate
  std::uint64_t format_sample_frames = 0;  ///< since the format last changed (what `totals` cover)
  std::uint64_t dropped_queue_full = 0;
  std::vector<ChannelLevel> levels;     ///< the last 400 ms
  std::vector<ChannelTotals> totals;
  std::uint64_t silence_events = 0, clipping_events = 0;
  std::vector<AudioEvent> events;       ///< the last kept_events
  std::optional<double> seconds_since_sound;  ///< wall time since the last block arrived
  std::uint64_t dump_frames = 0;
  std::string dump_error;
  bool dump_failed = false;  ///< the file refused the sound (a full disk, 4 GiB): the dump ended there
};

class AudioMonitor {
 public:
  using EventSink = std::function<void(const AudioEvent&)>;
  /// Called on the audio thread with every block, after metering (the player's output).
  using BlockSink = std::function<void(const depacketizer::AudioBlock&)>;

  /// Checks that the dump file can be written (an error says why) and starts the thread.
  static Result<std::unique_ptr<AudioMonitor>> create(AudioMonitorOptions options, EventSink on_event = {},
                                                      BlockSink on_block = {});
  ~AudioMonitor();
  AudioMonitor(const AudioMonitor&) = delete;
  AudioMonitor& operator=(const AudioMonitor&) = delete;

  /// Any thread (the depacketizer's); never waits.
  void push(depacketizer::AudioBlock&& block);
  /// Meters and writes what is queued, closes the dump and stops the thread.
  void stop();
  /// Any thread. `now`: for the time since the last block (a stall is reported as an event
  /// once, when it passes the silence time).
  AudioSnapshot snapshot(std::chrono::steady_clock::time_point now = std::chrono::steady_clock::now());
  std::vector<ChannelLevel> levels() const { return meter_.levels(); }
  depacketizer::AudioFormat format() const { return meter_.format(); }

 private:
  AudioMonitor(AudioMonitorOptions options, EventSink on_event, BlockSink on_block);
  void run();
  void consume(const depacketizer::AudioBlock& block);
  void post(AudioEvent e);  // under mutex_

  const AudioMonitorOptions options_;
  EventSink on_event_;
  BlockSink on_block_;
  BoundedQueue<depacketizer::AudioBlock> blocks_;
  LevelMeter meter_;
  std::atomic<std::uint64_t> dropped_{0};
  std::thread thread_;

  // Audio thread only.
  std::unique_ptr<WavWriter> dump_;
  std::vector<ChannelLevel> previous_;   // flags after the previous block
  std::vector<double> sum_squares_;      // per channel, in full-scale units

  mutable std::mutex mutex_;  // guards everything below (audio thread writes, readers copy)
  AudioSnapshot state_;
  std::optional<std::chrono::steady_clock::time_point> last_block_;
  bool stalled_ = false;
  bool stopped_ = false;  // after stop(): the end of the stream is no stall
};

}  // namespace j2k::audio
