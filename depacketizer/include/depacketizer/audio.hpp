#pragma once
// Sound as contribution links carry it beside the picture:
//  - MXF sound essence (SMPTE ST 382): a sound descriptor (WAVE 0x48 or AES3 0x47 local
//    set) and frame-wrapped elements of interleaved little-endian PCM, one per content
//    package (what FFmpeg and GStreamer write, whatever the element key's AES3/BWF byte says);
//  - SMPTE ST 302M LPCM in MPEG-2 TS PES packets (TR-01 links).
// Samples are kept interleaved as int32 holding the signed value at its own bit depth.
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "core/byte_reader.hpp"
#include "core/result.hpp"

namespace j2k::depacketizer {

struct AudioFormat {
  int channels = 0;
  int sample_rate = 48000;
  int bits = 24;  ///< 16, 20 or 24
  bool operator==(const AudioFormat&) const = default;
};

struct AudioBlock {
  AudioFormat format;
  std::vector<std::int32_t> samples;  ///< interleaved, channels × frames
  /// When its first sample is due, on the 90 kHz clock of the video it came with: the
  /// content package's RTP timestamp (MXF in RTP), or the PES PTS (TS; the low 32 bits,
  /// as the video units carry theirs). Audio and picture with equal times play together.
  std::uint32_t rtp_timestamp = 0;
  std::optional<std::uint64_t> pts;   ///< 90 kHz (TS), all 33 bits
  std::uint64_t index = 0;            ///< running number of blocks handed on
  std::size_t frames() const noexcept {
    return format.channels > 0 ? samples.size() / static_cast<std::size_t>(format.channels) : 0;
  }
};

/// What an MXF sound descriptor says (zero when not given).
struct SoundDescriptor {
  std::int32_t rate_num = 0, rate_den = 0;  ///< 0x3D03 audio sampling rate
  std::uint32_t channels = 0;               ///< 0x3D07
  std::uint32_t bits = 0;                   ///< 0x3D01 quantization bits
  std::uint32_t block_align = 0;            ///< 0x3D0A bytes per sample frame (all channels)
  bool aes3 = false;                        ///< an AES3 descriptor (0x47) rather than WAVE (0x48)
  /// The format, if the values are ones we play: 1–16 channels, 16/20/24 bits, 8–192 kHz,
  /// block align = channels × bytes per sample. Otherwise why not.
  Result<AudioFormat> format() const;
};

/// Reads the value of a WAVE or AES3 audio descriptor local set (item lengths checked).
Result<SoundDescriptor> parse_sound_descriptor(Bytes value, bool aes3);
/// Writes a WAVE audio descriptor's local items for `format` (for the sender).
std::vector<std::uint8_t> sound_descriptor_items(const AudioFormat& format, int edit_rate_num, int edit_rate_den);

/// A frame-wrapped sound element's value: interleaved little-endian PCM, whole sample
/// frames only; at most one second of sound (a bigger element is refused, not allocated).
Result<AudioBlock> decode_pcm_element(Bytes value, const AudioFormat& format);
std::vector<std::uint8_t> encode_pcm_element(const AudioBlock& block);

/// SMPTE ST 302M: a 4-byte header (audio_packet_size 16, number_channels 2 → 2/4/6/8,
/// channel_identification 8, bits_per_sample 2 → 16/20/24, alignment 4), then for each
/// sample time the channel pairs, each pair packed as [s0, 4 VUCF bits, s1, 4 VUCF bits]
/// least significant bit first with every byte's bits reversed: 5, 6 or 7 bytes a pair.
Result<AudioBlock> decode_s302m(Bytes pes_payload);
/// `first_frame`: the block's first sample frame's number in the stream (the F bit marks every
/// 192nd, the start of an AES3 block). The caller keeps the payload under 65 536 bytes (the
/// header's 16-bit size: s302m_max_frames).
std::vector<std::uint8_t> encode_s302m(const AudioBlock& block, std::size_t first_frame = 0);
/// The most sample frames of `format` one ST 302M packet carries (its 16-bit size, and the
/// 16-bit PES_packet_length around it), a multiple of 192 (whole AES3 blocks).
std::size_t s302m_max_frames(const AudioFormat& format);

/// Samples per video frame for 48 kHz audio at `fps_num/fps_den`: 1920 at 25 fps, and the
/// 1602, 1601, 1602, 1601, 1602 cycle at 30000/1001 (8008 samples per 5 frames). `index`
/// is the frame's number in the stream.
int samples_in_frame(int sample_rate, int fps_num, int fps_den, std::uint64_t index);
/// Samples in the frames before frame `index` (the first sample of its sound).
std::uint64_t samples_before_frame(int sample_rate, int fps_num, int fps_den, std::uint64_t index);

/// What a receiver counts about the sound it is handed (depacketizer thread).
struct AudioCounters {
  std::uint64_t blocks = 0;                ///< blocks handed on (one per content package or PES)
  std::uint64_t sample_frames = 0;         ///< of those, samples per channel
  std::uint64_t malformed = 0;             ///< elements/PES whose length, channel count or sample size is wrong (dropped)
  std::uint64_t damaged = 0;               ///< cut by packet loss or a continuity error (dropped)
  std::uint64_t without_descriptor = 0;    ///< MXF sound elements before any usable sound descriptor (dropped)
  std::uint64_t descriptors = 0;           ///< sound descriptors read
  std::uint64_t descriptors_rejected = 0;  ///< sound descriptors with values we do not play
  std::uint64_t other_tracks = 0;          ///< elements of further sound tracks (only the first is followed)
  std::uint64_t sequence_errors = 0;       ///< a block's sample count disagrees with its timing (e.g. 1600 at 29.97)
  std::uint64_t discontinuities = 0;       ///< the blocks' timing jumped (lost content packages)
  std::uint64_t format_changes = 0;
};

using AudioSink = std::function<void(AudioBlock&&)>;

/// Checks the sample counts of consecutive blocks against their 90 kHz times: from an
/// anchor (the first block, or the last jump), the samples received must match the time
/// passed to within one sample — what the 1602/1601 cycle at 29.97 fps keeps and a sender
/// writing 1600 (or 1601 always) does not. A gap of more than 1.5 times the usual block
/// spacing (content packages lost) is a discontinuity, not a sequence error; both re-anchor.
class AudioSequenceCheck {
 public:
  enum class Verdict { first, ok, sequence_error, discontinuity };
  Verdict check(const AudioBlock& block);
  void reset() { have_anchor_ = false; }

 private:
  void anchor(const AudioBlock& block);

  bool have_anchor_ = false;
  AudioFormat format_;
  std::int64_t ticks_since_ = 0;      // 90 kHz ticks from the anchor to the last block's start
  std::uint64_t samples_since_ = 0;   // sample frames from the anchor to the end of the last block
  std::uint32_t last_ts_ = 0;
  std::size_t last_frames_ = 0;
};

/// Applies the checks and counts a block about to be handed on (both receivers use it).
void count_block(AudioCounters& counters, AudioSequenceCheck& check, std::optional<AudioFormat>& last_format,
                 const AudioBlock& block);

}  // namespace j2k::depacketizer
