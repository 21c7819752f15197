#pragma once
// The sound j2ksend sends beside the pictures: the frames' own (the PCM track of an --mxf
// file), a generated line-up tone with channel identification (--audio tone), or, for
// measuring lip sync (--sync-test), silence with a click at the start of every flash frame.
// Each frame carries the samples due in its period (1920 at 25 fps; 1602/1601 at 29.97).
#include <cstdint>
#include <memory>

#include "depacketizer/audio.hpp"
#include "sender/source.hpp"

namespace j2k::sender {

enum class SoundKind { none, file, tone, click };

struct SoundSpec {
  SoundKind kind = SoundKind::none;
  depacketizer::AudioFormat format{2, 48000, 24};
  double level_dbfs = -18;   ///< the tone's peak level
  int click_period = 25;     ///< click: every this many frames (frame 0, N, 2N, …)
  bool any() const noexcept { return kind != SoundKind::none; }
};

/// The generated sound of frame `frame` of a stream at fps_num/fps_den (tone or click).
depacketizer::AudioBlock generated_sound(const SoundSpec& spec, int fps_num, int fps_den, std::uint64_t frame);

/// The click of --sync-test: 1 ms at -6 dBFS from the frame's first sample, on every channel.
constexpr double kClickDbfs = -6;
constexpr double kClickSeconds = 0.001;

/// Pictures of `inner`, except that every `period`-th frame of the loop (0, N, 2N, …) is
/// white: the flash --sync-test pairs with a click.
std::unique_ptr<FrameSource> make_flash_source(std::unique_ptr<FrameSource> inner, int period, const PictureFormat& format);

}  // namespace j2k::sender
