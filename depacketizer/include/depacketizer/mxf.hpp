#pragma once
// MXF (SMPTE ST 377-1) as j2kplay meets it on the wire: KLV triplets (SMPTE 336),
// the keys a receiver must recognise, and the picture descriptor it reads.
#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "core/byte_reader.hpp"
#include "core/planar_image.hpp"
#include "core/result.hpp"

namespace j2k::depacketizer {

using Ul = std::array<std::uint8_t, 16>;

/// Every SMPTE Universal Label starts with these four bytes.
constexpr std::uint8_t kUlPrefix[4] = {0x06, 0x0E, 0x2B, 0x34};

struct KlvHeader {
  Ul key{};
  std::uint64_t length = 0;      ///< value length from the BER length field
  std::size_t header_size = 0;   ///< key + length field bytes
};

/// Parses key + BER length at the start of `data`. need_more_data when cut short,
/// corrupt when the key prefix is wrong or the BER form is invalid (> 8 length bytes).
Result<KlvHeader> parse_klv_header(Bytes data);

/// Writes a BER length in the 4-byte long form (0x83 + 3 bytes) or longer when needed.
void append_ber_length(std::vector<std::uint8_t>& out, std::uint64_t length);

enum class KlvKind {
  header_partition, body_partition, footer_partition, primer_pack,
  cdci_descriptor, rgba_descriptor, j2k_subdescriptor, other_metadata, index_segment,
  system_item, picture_element, fill, unknown,
  sound_descriptor,  ///< generic sound (0x42), AES3 (0x47) or WAVE (0x48) audio descriptor (ST 382)
  sound_element,     ///< a GC sound item element (ST 382): PCM of one track
};
const char* to_string(KlvKind kind) noexcept;

/// Classifies a key, ignoring the registry version byte (byte 7) as receivers must.
KlvKind classify_key(const Ul& key) noexcept;

/// For a picture element key (ST 422): number of elements in the content package (cc)
/// and this element's number (nn).
struct PictureElementId {
  int count = 1;
  int number = 1;
  bool clip_wrapped = false;
};
PictureElementId picture_element_id(const Ul& key) noexcept;

/// For a sound element key (06 0E 2B 34 01 02 01 vv 0D 01 03 01 16 cc tt nn): the element
/// count (cc), type (tt: 01 BWF frame-wrapped, 02 BWF clip, 03 AES3 frame-wrapped, 04 AES3
/// clip) and number (nn; FFmpeg writes 0 for its first track).
struct SoundElementId {
  int count = 1;
  int type = 0;
  int number = 0;
  bool clip_wrapped() const noexcept { return type == 0x02 || type == 0x04; }
};
SoundElementId sound_element_id(const Ul& key) noexcept;

/// What the header metadata says about the picture (zero/empty when not given).
struct PictureDescriptor {
  std::uint32_t stored_width = 0;
  std::uint32_t stored_height = 0;     ///< the field height when fields are separate
  std::uint32_t display_width = 0;     ///< 0 = not given (then the stored size is shown)
  std::uint32_t display_height = 0;
  int frame_layout = -1;               ///< 0 full frame, 1 separate fields, 2 single field, 3 mixed, 4 segmented
  int field_dominance = 0;             ///< 1 or 2; 0 = not given
  std::uint32_t component_depth = 0;   ///< 0 = not given (RGBA: from the pixel layout)
  std::uint32_t horizontal_subsampling = 0;
  std::uint32_t vertical_subsampling = 0;
  std::int32_t sample_rate_num = 0;
  std::int32_t sample_rate_den = 0;
  std::uint32_t black_level = 0;
  std::uint32_t white_level = 0;
  std::uint32_t colour_range = 0;
  ColourCoding coding = ColourCoding::unknown;
  /// TransferCharacteristic (0x3210): SMPTE ST 2084 (PQ) or HLG; anything else, or none, is SDR.
  TransferFunction transfer = TransferFunction::sdr;
  int wrapping = 0;                    ///< essence container byte 14: 1 frame, 2 clip, 3 I1, 4 I2, 5 field, 6 progressive
  bool rgba = false;                   ///< came from an RGBA descriptor

  double frame_rate() const noexcept {
    return sample_rate_den > 0 ? static_cast<double>(sample_rate_num) / sample_rate_den : 0.0;
  }
  /// Full-range video unless black/white levels say otherwise.
  bool full_range() const noexcept;
  std::string describe() const;
};

/// Reads a CDCI or RGBA picture descriptor local set (the value of the KLV).
/// Unknown and dynamic items are skipped; item lengths are checked against the set.
/// Values no JPEG 2000 video stream can have (a size beyond 16384, a depth beyond 38 bits,
/// ISO/IEC 15444-1 A.5.1; a rate above 1000 frames/s; subsampling other than 1, 2, 4; an
/// undefined frame layout) are rejected with ErrorKind::limit.
Result<PictureDescriptor> parse_picture_descriptor(Bytes value, bool rgba);

}  // namespace j2k::depacketizer
