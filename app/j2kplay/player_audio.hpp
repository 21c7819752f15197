#pragma once
// The player's sound: metered like j2kprobe's (common/audio_glue.hpp), played through the
// output (ui/audio_output) in step with the pictures on screen (audio/playout), drawn as
// meters over the picture (ui/audio_meters), muted with M, and — with --sync-probe — the
// lip-sync offset measured on j2ksend --sync-test's flashes and clicks.
//
// Threads: the depacketizer feeds the audio monitor's queue; its thread meters and hands
// the blocks to the playout; the output's thread pulls from the playout; the delivery
// thread (`on_frame`) notes which picture is which frame; the GUI thread reports the swaps
// (`on_shown`), opens the output (`tick`) and paints the meters.
#include <array>
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "audio/playout.hpp"
#include "common/audio_glue.hpp"
#include "gpu/colour.hpp"
#include "ui/audio_meters.hpp"
#include "ui/audio_output.hpp"

namespace j2k::player {

struct AudioOptions {
  bool play = true;            ///< --audio off: metered, not played
  std::vector<int> channels;   ///< 0-based channels to play (--audio 3,4); empty: the first two
  std::string device;          ///< --audio-device ("" default, "null")
  bool sync_probe = false;     ///< --sync-probe
};

/// "off", "on", or channel numbers from 1 ("3,4": channel 3 left, 4 right; "2": both sides).
Result<AudioOptions> parse_audio_option(const std::string& text);

class PlayerAudio {
 public:
  using Clock = std::chrono::steady_clock;
  /// Before the pipeline opens. `window`: whether there is a window to play along with (headless
  /// j2kplay meters the sound but plays none).
  Status open(pipeline::PipelineConfig& config, monitor::StreamMonitor& mon, const monitor::AlarmThresholds& alarms,
              AudioOptions options, bool window);
  /// Delivery thread: `picture` (the pointer the window is given) is frame `rtp_timestamp`.
  void on_frame(const void* picture, std::uint32_t rtp_timestamp, const gpu::RgbaImage* host);
  /// While sound plays: how long after it arrives a picture must wait at least — the delay the
  /// sound needs (it arrives after its picture and must reach the output ahead of being heard:
  /// the output's lead plus a frame). Zero while none plays. The presenter's playout delay
  /// (pipeline/presenter.hpp) never goes below it, so pictures keep their own cadence and the
  /// sound plays along with them.
  Clock::duration picture_delay() const;
  /// GUI thread: the window put `picture` on screen at `swapped`.
  void on_shown(const void* picture, Clock::time_point swapped);
  /// GUI thread, often (every 100 ms): opens the output once the sound's format is known.
  void tick();
  void toggle_mute();
  ui::AudioMetersView meters_view();
  bool has_sound() { return glue_.monitor().snapshot().seen; }
  /// A line for the overlay ("" without sound).
  std::string overlay_line();
  cli::AudioGlue& glue() { return glue_; }
  /// Stops the output and logs what the playout did and, with --sync-probe, the lip sync.
  void finish();

 private:
  struct Shown {
    const void* picture = nullptr;
    std::uint32_t rtp_timestamp = 0;
    bool flash = false;
  };

  AudioOptions options_;
  cli::AudioGlue glue_;
  std::unique_ptr<audio::AudioPlayout> playout_;
  std::unique_ptr<ui::AudioOutput> output_;  // GUI thread
  std::string output_error_;                 // GUI thread: why none could be opened (said once)
  std::atomic<double> picture_delay_ms_{0};   // set by the GUI thread when the output opens
  audio::SyncProbe probe_;
  mutable std::mutex frames_mutex_;           // guards frames_, next_frame_, last_flash_
  std::array<Shown, 64> frames_{};            // the pictures handed to the window lately
  std::size_t next_frame_ = 0;
  bool last_flash_ = false;                   // delivery thread's: the previous frame was a flash
};

}  // namespace j2k::player
