#include "depacketizer/audio.hpp"

#include <fmt/format.h>

#include <cmath>

namespace j2k::depacketizer {

namespace {

constexpr int kMaxChannels = 16;

std::uint8_t reverse_bits(std::uint8_t b) {
  b = static_cast<std::uint8_t>((b & 0xF0) >> 4 | (b & 0x0F) << 4);
  b = static_cast<std::uint8_t>((b & 0xCC) >> 2 | (b & 0x33) << 2);
  return static_cast<std::uint8_t>((b & 0xAA) >> 1 | (b & 0x55) << 1);
}

std::int32_t sign_extend(std::uint32_t v, int bits) {
  const std::uint32_t m = 1u << (bits - 1);
  return static_cast<std::int32_t>((v ^ m) - m);
}

int bytes_per_sample(int bits) { return (bits + 7) / 8; }

}  // namespace

Result<AudioFormat> SoundDescriptor::format() const {
  if (channels < 1 || channels > kMaxChannels)
    return make_error(ErrorKind::unsupported, fmt::format("sound with {} channels (1-16 are played)", channels));
  if (bits != 16 && bits != 20 && bits != 24)
    return make_error(ErrorKind::unsupported, fmt::format("{}-bit sound (16, 20 or 24 bits are played)", bits));
  if (rate_den <= 0 || rate_num <= 0 || rate_num % rate_den != 0 || rate_num / rate_den < 8000 || rate_num / rate_den > 192000)
    return make_error(ErrorKind::unsupported, fmt::format("sound sampled at {}/{} Hz", rate_num, rate_den));
  const std::uint32_t align = channels * static_cast<std::uint32_t>(bytes_per_sample(static_cast<int>(bits)));
  if (block_align != 0 && block_align != align)
    return make_error(ErrorKind::corrupt,
                      fmt::format("sound block align {} is not {} channels × {} bytes", block_align, channels, align / channels));
  return AudioFormat{static_cast<int>(channels), rate_num / rate_den, static_cast<int>(bits)};
}

Result<SoundDescriptor> parse_sound_descriptor(Bytes value, bool aes3) {
  SoundDescriptor d;
  d.aes3 = aes3;
  ByteReader r(value);
  while (r.remaining() >= 4) {
    const std::uint16_t tag = r.u16();
    const std::uint16_t len = r.u16();
    if (!r.has(len)) return make_error(ErrorKind::corrupt, fmt::format("sound descriptor item 0x{:04X} longer than the set", tag));
    ByteReader item(r.bytes(len));
    auto number = [&]() -> std::uint32_t { return len == 1 ? item.u8() : len == 2 ? item.u16() : item.u32(); };
    switch (tag) {
      case 0x3D03:
        if (len == 8) {
          d.rate_num = static_cast<std::int32_t>(item.u32());
          d.rate_den = static_cast<std::int32_t>(item.u32());
        }
        break;
      case 0x3D07: d.channels = number(); break;
      case 0x3D01: d.bits = number(); break;
      case 0x3D0A: d.block_align = number(); break;
      default: break;
    }
  }
  return d;
}

std::vector<std::uint8_t> sound_descriptor_items(const AudioFormat& f, int edit_rate_num, int edit_rate_den) {
  std::vector<std::uint8_t> out;
  ByteWriter w(out);
  auto item = [&](std::uint16_t tag, std::uint16_t len) { w.u16(tag); w.u16(len); };
  item(0x3001, 8);  // sample rate of the essence container (the video's edit rate)
  w.u32(static_cast<std::uint32_t>(edit_rate_num));
  w.u32(static_cast<std::uint32_t>(edit_rate_den));
  item(0x3D03, 8);
  w.u32(static_cast<std::uint32_t>(f.sample_rate));
  w.u32(1);
  item(0x3D07, 4);
  w.u32(static_cast<std::uint32_t>(f.channels));
  item(0x3D01, 4);
  w.u32(static_cast<std::uint32_t>(f.bits));
  item(0x3D0A, 2);
  w.u16(static_cast<std::uint16_t>(f.channels * bytes_per_sample(f.bits)));
  item(0x3D09, 4);
  w.u32(static_cast<std::uint32_t>(f.sample_rate * f.channels * bytes_per_sample(f.bits)));
  return out;
}

Result<AudioBlock> decode_pcm_element(Bytes value, const AudioFormat& format) {
  if (format.channels < 1 || format.channels > kMaxChannels || (format.bits != 16 && format.bits != 20 && format.bits != 24))
    return make_error(ErrorKind::unsupported, "sound format not played");
  const std::size_t bps = static_cast<std::size_t>(bytes_per_sample(format.bits));
  const std::size_t align = bps * static_cast<std::size_t>(format.channels);
  if (value.size() % align != 0)
    return make_error(ErrorKind::corrupt, fmt::format("sound element of {} bytes is not whole {}-byte sample frames", value.size(), align));
  if (value.size() / align > static_cast<std::size_t>(format.sample_rate))
    return make_error(ErrorKind::limit, fmt::format("sound element of {} bytes holds more than a second", value.size()));
  AudioBlock b;
  b.format = format;
  b.samples.resize(value.size() / bps);
  for (std::size_t i = 0, at = 0; i < b.samples.size(); ++i, at += bps) {
    std::uint32_t v = 0;
    for (std::size_t k = 0; k < bps; ++k) v |= static_cast<std::uint32_t>(value[at + k]) << (8 * k);
    // 20-bit samples sit in 3 bytes, left-justified as WAVE stores them.
    b.samples[i] = format.bits == 20 ? sign_extend(v >> 4, 20) : sign_extend(v, static_cast<int>(8 * bps));
  }
  return b;
}

std::vector<std::uint8_t> encode_pcm_element(const AudioBlock& block) {
  const int bps = bytes_per_sample(block.format.bits);
  std::vector<std::uint8_t> out;
  out.reserve(block.samples.size() * static_cast<std::size_t>(bps));
  for (std::int32_t s : block.samples) {
    const std::uint32_t v = block.format.bits == 20 ? static_cast<std::uint32_t>(s) << 4 : static_cast<std::uint32_t>(s);
    for (int k = 0; k < bps; ++k) out.push_back(static_cast<std::uint8_t>(v >> (8 * k)));
  }
  return out;
}

Result<AudioBlock> decode_s302m(Bytes payload) {
  if (payload.size() < 4) return make_error(ErrorKind::corrupt, "ST 302M payload shorter than its 4-byte header");
  const std::uint32_t h = static_cast<std::uint32_t>(payload[0]) << 24 | static_cast<std::uint32_t>(payload[1]) << 16 |
                          static_cast<std::uint32_t>(payload[2]) << 8 | payload[3];
  const std::size_t size = h >> 16;
  const int channels = 2 * (static_cast<int>((h >> 14) & 3) + 1);
  const int bits_code = static_cast<int>((h >> 4) & 3);
  if (bits_code == 3) return make_error(ErrorKind::corrupt, "ST 302M bits_per_sample 3 is reserved");
  const int bits = 16 + 4 * bits_code;
  if (size != payload.size() - 4)
    return make_error(ErrorKind::corrupt,
                      fmt::format("ST 302M audio_packet_size {} but {} bytes follow the header", size, payload.size() - 4));
  const std::size_t pair_bytes = static_cast<std::size_t>(bits + 4) / 4;  // (2 × (bits + 4)) / 8
  const std::size_t frame_bytes = pair_bytes * static_cast<std::size_t>(channels / 2);
  if (size % frame_bytes != 0)
    return make_error(ErrorKind::corrupt, fmt::format("ST 302M payload of {} bytes is not whole {}-channel sample frames", size, channels));
  AudioBlock b;
  b.format = AudioFormat{channels, 48000, bits};
  b.samples.reserve(size / pair_bytes * 2);
  const std::uint64_t sample_mask = (1ull << bits) - 1;
  for (std::size_t at = 4; at + pair_bytes <= payload.size(); at += pair_bytes) {
    std::uint64_t v = 0;  // the pair as a little-endian bit string, after reversing each byte
    for (std::size_t k = 0; k < pair_bytes; ++k) v |= static_cast<std::uint64_t>(reverse_bits(payload[at + k])) << (8 * k);
    b.samples.push_back(sign_extend(static_cast<std::uint32_t>(v & sample_mask), bits));
    b.samples.push_back(sign_extend(static_cast<std::uint32_t>((v >> (bits + 4)) & sample_mask), bits));
  }
  return b;
}

std::size_t s302m_max_frames(const AudioFormat& format) {
  // PES_packet_length counts 3 + 5 (PTS) + 4 (302M header) + the pairs; both fields are 16-bit.
  const std::size_t pair_bytes = static_cast<std::size_t>(format.bits + 4) / 4;
  const std::size_t frame_bytes = std::max<std::size_t>(1, static_cast<std::size_t>(format.channels / 2) * pair_bytes);
  const std::size_t frames = (0xFFFFu - 12) / frame_bytes;
  return frames >= 192 ? frames / 192 * 192 : std::max<std::size_t>(frames, 1);
}

std::vector<std::uint8_t> encode_s302m(const AudioBlock& block, std::size_t first_frame) {
  const int channels = block.format.channels;
  const int bits = block.format.bits;
  const std::size_t pair_bytes = static_cast<std::size_t>(bits + 4) / 4;
  const std::size_t size = block.samples.size() / 2 * pair_bytes;
  std::vector<std::uint8_t> out;
  out.reserve(4 + size);
  const std::uint32_t h = static_cast<std::uint32_t>(size) << 16 | static_cast<std::uint32_t>(channels / 2 - 1) << 14 |
                          static_cast<std::uint32_t>((bits - 16) / 4) << 4;
  for (int i = 3; i >= 0; --i) out.push_back(static_cast<std::uint8_t>(h >> (8 * i)));
  const std::uint64_t mask = (1ull << bits) - 1;
  const std::size_t frames = block.frames();
  for (std::size_t f = 0; f < frames; ++f) {
    for (int c = 0; c + 1 < channels; c += 2) {
      const std::size_t i = f * static_cast<std::size_t>(channels) + static_cast<std::size_t>(c);
      // The F bit (bit 3 of the first nibble) marks the start of each 192-frame AES3 block.
      const std::uint64_t vucf = (first_frame + f) % 192 == 0 ? 0x8 : 0x0;
      const std::uint64_t v = (static_cast<std::uint64_t>(static_cast<std::uint32_t>(block.samples[i])) & mask) |
                              vucf << bits |
                              (static_cast<std::uint64_t>(static_cast<std::uint32_t>(block.samples[i + 1])) & mask) << (bits + 4);
      for (std::size_t k = 0; k < pair_bytes; ++k) out.push_back(reverse_bits(static_cast<std::uint8_t>(v >> (8 * k))));
    }
  }
  return out;
}

std::uint64_t samples_before_frame(int sample_rate, int fps_num, int fps_den, std::uint64_t index) {
  if (fps_num <= 0 || fps_den <= 0 || sample_rate <= 0) return 0;
  // The sample count up to the frame's start, rounded to the nearest: the differences give
  // 1920 every frame at 25 fps and the 1602, 1601, 1602, 1601, 1602 cycle at 30000/1001,
  // the sequence SMPTE ST 299-1 gives for 48 kHz with 29.97 Hz video.
  const std::uint64_t num = static_cast<std::uint64_t>(fps_num);
  return (static_cast<std::uint64_t>(sample_rate) * static_cast<std::uint64_t>(fps_den) * index + num / 2) / num;
}

int samples_in_frame(int sample_rate, int fps_num, int fps_den, std::uint64_t index) {
  return static_cast<int>(samples_before_frame(sample_rate, fps_num, fps_den, index + 1) -
                          samples_before_frame(sample_rate, fps_num, fps_den, index));
}

void AudioSequenceCheck::anchor(const AudioBlock& block) {
  have_anchor_ = true;
  format_ = block.format;
  ticks_since_ = 0;
  samples_since_ = block.frames();
  last_ts_ = block.rtp_timestamp;
  last_frames_ = block.frames();
}

AudioSequenceCheck::Verdict AudioSequenceCheck::check(const AudioBlock& block) {
  if (!have_anchor_ || !(block.format == format_) || format_.sample_rate <= 0) {
    anchor(block);
    return Verdict::first;
  }
  const auto step = static_cast<std::int32_t>(block.rtp_timestamp - last_ts_);
  const double rate = format_.sample_rate;
  const double last_ticks = static_cast<double>(last_frames_) * 90000.0 / rate;
  // Time that stands still or runs back, or a gap of more than half a block again: content
  // packages went missing (or the sender restarted). Start counting afresh.
  if (step <= 0 || static_cast<double>(step) > 1.5 * last_ticks + 1.0) {
    anchor(block);
    return Verdict::discontinuity;
  }
  ticks_since_ += step;
  const double expected = static_cast<double>(ticks_since_) * rate / 90000.0;
  if (std::abs(static_cast<double>(samples_since_) - expected) > 1.5) {
    anchor(block);
    return Verdict::sequence_error;
  }
  samples_since_ += block.frames();
  last_ts_ = block.rtp_timestamp;
  last_frames_ = block.frames();
  return Verdict::ok;
}

void count_block(AudioCounters& counters, AudioSequenceCheck& check, std::optional<AudioFormat>& last_format,
                 const AudioBlock& block) {
  if (last_format && !(*last_format == block.format)) ++counters.format_changes;
  last_format = block.format;
  switch (check.check(block)) {
    case AudioSequenceCheck::Verdict::sequence_error: ++counters.sequence_errors; break;
    case AudioSequenceCheck::Verdict::discontinuity: ++counters.discontinuities; break;
    default: break;
  }
  ++counters.blocks;
  counters.sample_frames += block.frames();
}

}  // namespace j2k::depacketizer
