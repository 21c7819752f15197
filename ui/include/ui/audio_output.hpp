#pragma once
// The player's sound output: a Qt Multimedia QAudioSink on a thread of its own (16-bit PCM
// at the sound's rate), or the "null" output that consumes the sound at its real pace on a
// thread of ours (tests, machines without sound). Either asks the `pull` function for the
// samples it is about to play, saying when the first of them will be heard: the playout
// (app/audio) then hands out the sound due at that moment on the picture's clock.
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "core/result.hpp"

namespace j2k::ui {

class AudioOutput {
 public:
  using Clock = std::chrono::steady_clock;
  using Pull = std::function<void(std::int16_t* out, std::size_t frames, Clock::time_point heard_at)>;

  /// `device`: "" the system's default output, "null" no device, else the first output whose
  /// description contains it. Call from the GUI thread (a QApplication exists). An error says
  /// why no device could be opened (none present, format refused).
  static Result<std::unique_ptr<AudioOutput>> open(const std::string& device, int sample_rate, int channels, Pull pull);
  virtual ~AudioOutput() = default;
  /// "null (sound discarded at its real pace)" or the device's description.
  virtual std::string describe() const = 0;
  /// False for the null output: the sound is taken at its pace and discarded, never heard.
  virtual bool audible() const { return true; }
  virtual int sample_rate() const = 0;
  /// How far ahead of being heard the output asks for sound at most (its buffer): the sound
  /// must be there that long before it is due.
  virtual double lead_ms() const = 0;
  /// What the output's buffer held at its last fill (for the overlay).
  virtual double latency_ms() const = 0;
};

}  // namespace j2k::ui
