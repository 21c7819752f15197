#pragma once
// `--dump-audio FILE.wav`: PCM as received, in a RIFF/WAVE file (WAVE_FORMAT_EXTENSIBLE for
// more than two channels or more than 16 bits, as the format requires), and the line-up
// tone the sender generates.
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

#include "core/result.hpp"
#include "depacketizer/audio.hpp"

namespace j2k::audio {

class WavWriter {
 public:
  static Result<std::unique_ptr<WavWriter>> create(const std::string& path, const depacketizer::AudioFormat& format);
  ~WavWriter();
  /// Appends a block (its format must be the file's; else an error and nothing written). An
  /// `io` error when the file refuses it (a full disk); a `limit` error when the file would
  /// pass the 4 GiB that a WAVE file's sizes can say (the dump ends there, complete).
  Status write(const depacketizer::AudioBlock& block);
  /// Patches the sizes in the header and closes (also done by the destructor); an `io` error
  /// when what was buffered could not be written.
  Status close();
  std::uint64_t frames_written() const noexcept { return frames_; }

 private:
  WavWriter(std::FILE* f, depacketizer::AudioFormat format) : file_(f), format_(format) {}
  /// The data chunk's size is 32 bits, less the header's bytes the RIFF size counts.
  static constexpr std::uint64_t kMaxDataBytes = 0xFFFFFFFFull - 4 - 8 - 40 - 8;
  std::FILE* file_ = nullptr;
  depacketizer::AudioFormat format_;
  std::uint64_t frames_ = 0;
};

/// The line-up tone: a 1 kHz sine at `level_dbfs` on every channel, with channel
/// identification — channel N is interrupted for 250 ms·N at the start of every 3 s cycle
/// (so channel 1 has one short gap, channel 2 a longer one, ...). `first_frame` is the
/// absolute sample number of the block's first sample, so blocks join without clicks.
depacketizer::AudioBlock lineup_tone(const depacketizer::AudioFormat& format, std::uint64_t first_frame, std::size_t frames,
                                     double level_dbfs = -18.0);

}  // namespace j2k::audio
