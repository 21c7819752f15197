#pragma once
// Sound test material shared by the sound tests and the sound fuzz replay: deterministic PCM
// blocks, a stand-in codestream for the pictures beside them, and a small TR-01 mux with an
// ST 302M PID.
#include <cstdint>
#include <vector>

#include "depacketizer/audio.hpp"
#include "packetizer/ts_mux.hpp"

namespace j2k::test {

/// `frames` sample frames of `format`: a ramp per channel, every value in range, channels
/// told apart (odd channels negative).
inline depacketizer::AudioBlock sound_ramp(const depacketizer::AudioFormat& format, std::size_t frames, std::int32_t seed = 0) {
  depacketizer::AudioBlock b;
  b.format = format;
  const std::int64_t max = (std::int64_t{1} << (format.bits - 1)) - 1;
  for (std::size_t i = 0; i < frames; ++i)
    for (int c = 0; c < format.channels; ++c)
      b.samples.push_back(static_cast<std::int32_t>((seed + static_cast<std::int64_t>(i) * 37 + c * 1000) % max) * (c % 2 ? -1 : 1));
  return b;
}

/// `n` bytes that begin like a codestream (SOC): what the depacketizers carry, not decoded.
inline std::vector<std::uint8_t> stand_in_codestream(std::size_t n) {
  std::vector<std::uint8_t> v(n, 0x11);
  v[0] = 0xFF;
  v[1] = 0x4F;
  return v;
}

/// A 64x48, 25 fps TR-01 mux with ST 302M on `audio_pid`.
inline packetizer::TsMuxConfig ts_config_with_sound(std::uint16_t audio_pid) {
  packetizer::TsMuxConfig c;
  c.descriptor.horizontal_size = 64;
  c.descriptor.vertical_size = 48;
  c.descriptor.den_frame_rate = 1;
  c.descriptor.num_frame_rate = 25;
  c.audio_pid = audio_pid;
  return c;
}

}  // namespace j2k::test
