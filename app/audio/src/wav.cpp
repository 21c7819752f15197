#include "audio/wav.hpp"

#include <algorithm>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <numbers>
#include <vector>

#include <fmt/format.h>

namespace j2k::audio {

namespace {

void le(std::vector<std::uint8_t>& b, std::uint32_t v, int n) {
  for (int i = 0; i < n; ++i) b.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}

int container_bytes(int bits) { return (bits + 7) / 8; }

/// RIFF header with WAVE_FORMAT_EXTENSIBLE (fmt chunk of 40 bytes); sizes patched at close.
std::vector<std::uint8_t> header(const depacketizer::AudioFormat& f, std::uint64_t data_bytes) {
  const int bytes = container_bytes(f.bits);
  const std::uint32_t align = static_cast<std::uint32_t>(f.channels * bytes);
  const std::uint32_t data = static_cast<std::uint32_t>(std::min<std::uint64_t>(data_bytes, 0xFFFFFFFFu - 60));
  std::vector<std::uint8_t> b;
  for (char c : std::string("RIFF")) b.push_back(static_cast<std::uint8_t>(c));
  le(b, 4 + 8 + 40 + 8 + data, 4);
  for (char c : std::string("WAVEfmt ")) b.push_back(static_cast<std::uint8_t>(c));
  le(b, 40, 4);
  le(b, 0xFFFE, 2);  // WAVE_FORMAT_EXTENSIBLE
  le(b, static_cast<std::uint32_t>(f.channels), 2);
  le(b, static_cast<std::uint32_t>(f.sample_rate), 4);
  le(b, static_cast<std::uint32_t>(f.sample_rate) * align, 4);
  le(b, align, 2);
  le(b, static_cast<std::uint32_t>(8 * bytes), 2);  // container bits
  le(b, 22, 2);                                      // extension size
  le(b, static_cast<std::uint32_t>(f.bits), 2);      // valid bits
  le(b, 0, 4);                                       // channel mask: none assigned
  // KSDATAFORMAT_SUBTYPE_PCM {00000001-0000-0010-8000-00aa00389b71}
  for (std::uint8_t v : {0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0xAA, 0x00, 0x38, 0x9B, 0x71})
    b.push_back(v);
  for (char c : std::string("data")) b.push_back(static_cast<std::uint8_t>(c));
  le(b, data, 4);
  return b;
}

}  // namespace

Result<std::unique_ptr<WavWriter>> WavWriter::create(const std::string& path, const depacketizer::AudioFormat& format) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return make_error(ErrorKind::io, fmt::format("cannot write '{}': {}", path, std::strerror(errno)));
  const auto h = header(format, 0);
  if (std::fwrite(h.data(), 1, h.size(), f) != h.size()) {
    const int e = errno;
    std::fclose(f);
    return make_error(ErrorKind::io, fmt::format("cannot write '{}': {}", path, std::strerror(e)));
  }
  return std::unique_ptr<WavWriter>(new WavWriter(f, format));
}

WavWriter::~WavWriter() { (void)close(); }

Status WavWriter::write(const depacketizer::AudioBlock& block) {
  if (!file_) return make_error(ErrorKind::io, "the WAV file is closed");
  if (!(block.format == format_))
    return make_error(ErrorKind::unsupported, fmt::format("sound changed to {} channels, {} bits during the dump",
                                                          block.format.channels, block.format.bits));
  // WAVE stores samples left-justified in their container, little-endian.
  const int bytes = container_bytes(format_.bits);
  const int shift = 8 * bytes - format_.bits;
  std::vector<std::uint8_t> out;
  out.reserve(block.samples.size() * static_cast<std::size_t>(bytes));
  for (std::int32_t s : block.samples) le(out, static_cast<std::uint32_t>(s) << shift, bytes);
  const std::uint64_t frame_bytes = static_cast<std::uint64_t>(format_.channels) * static_cast<std::uint64_t>(bytes);
  if ((frames_ + block.frames()) * frame_bytes > kMaxDataBytes)
    return make_error(ErrorKind::limit, "the WAV file reached the 4 GiB its header can describe: the dump ends here");
  if (std::fwrite(out.data(), 1, out.size(), file_) != out.size())
    return make_error(ErrorKind::io, fmt::format("writing the WAV file failed: {}", std::strerror(errno)));
  frames_ += block.frames();
  return {};
}

Status WavWriter::close() {
  if (!file_) return {};
  const std::uint64_t data = frames_ * static_cast<std::uint64_t>(format_.channels * container_bytes(format_.bits));
  const auto h = header(format_, data);
  bool ok = std::fflush(file_) == 0;
  int e = ok ? 0 : errno;
  ok = ok && std::fseek(file_, 0, SEEK_SET) == 0 && std::fwrite(h.data(), 1, h.size(), file_) == h.size();
  if (!ok && e == 0) e = errno;
  if (std::fclose(file_) != 0 && ok) {
    ok = false;
    e = errno;
  }
  file_ = nullptr;
  if (!ok) return make_error(ErrorKind::io, fmt::format("writing the WAV file failed: {}", std::strerror(e)));
  return {};
}

depacketizer::AudioBlock lineup_tone(const depacketizer::AudioFormat& format, std::uint64_t first_frame, std::size_t frames,
                                     double level_dbfs) {
  depacketizer::AudioBlock b;
  b.format = format;
  b.samples.resize(frames * static_cast<std::size_t>(format.channels));
  const double amplitude = std::ldexp(1.0, format.bits - 1) * std::pow(10.0, level_dbfs / 20.0);
  const double rate = format.sample_rate;
  const std::uint64_t cycle = static_cast<std::uint64_t>(3 * rate);
  for (std::size_t f = 0; f < frames; ++f) {
    const std::uint64_t n = first_frame + f;
    const double v = amplitude * std::sin(2.0 * std::numbers::pi * 1000.0 * static_cast<double>(n % cycle) / rate);
    // At 0 dBFS the crest would be 2^(bits-1), one past the largest code: clip it there.
    const double top = std::ldexp(1.0, format.bits - 1) - 1;
    const std::int32_t s = static_cast<std::int32_t>(std::lround(std::clamp(v, -top - 1, top)));
    const double in_cycle = static_cast<double>(n % cycle) / rate;  // seconds into the 3 s cycle
    for (int c = 0; c < format.channels; ++c) {
      const bool gap = in_cycle < 0.25 * (c + 1);
      b.samples[f * static_cast<std::size_t>(format.channels) + static_cast<std::size_t>(c)] = gap ? 0 : s;
    }
  }
  return b;
}

}  // namespace j2k::audio
