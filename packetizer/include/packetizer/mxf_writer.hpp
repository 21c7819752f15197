#pragma once
#include <optional>

#include "depacketizer/timecode.hpp"
// Writes the MXF KLVs a sender transmits (wire-format.md §2): partition packs, primer
// pack, a CDCI picture descriptor, system items and frame-wrapped JPEG 2000 picture elements.
#include <cstdint>
#include <vector>

#include "core/byte_reader.hpp"
#include "core/planar_image.hpp"
#include "depacketizer/audio.hpp"

namespace j2k::packetizer {

struct MxfPictureParams {
  std::uint32_t width = 0;
  std::uint32_t height = 0;        ///< stored height (field height for separate fields)
  int frame_layout = 0;            ///< 0 full frame, 1 separate fields
  int field_dominance = 1;
  std::uint32_t depth = 8;
  std::uint32_t chroma_dx = 2;     ///< horizontal subsampling
  std::uint32_t chroma_dy = 1;
  std::int32_t rate_num = 50;
  std::int32_t rate_den = 1;
  ColourCoding coding = ColourCoding::ycbcr_bt709;
  TransferFunction transfer = TransferFunction::sdr;  ///< PQ or HLG: a TransferCharacteristic is written
  bool full_range = false;
};

using KlvBytes = std::vector<std::uint8_t>;

/// Header (first) or body (repeated) partition pack; `header_byte_count` covers the
/// primer pack and header metadata that follow it.
KlvBytes mxf_partition_pack(bool header, std::uint64_t this_partition, std::uint64_t header_byte_count);
KlvBytes mxf_primer_pack();
KlvBytes mxf_cdci_descriptor(const MxfPictureParams& params);
/// A minimal SMPTE 385 system metadata pack with a continuity count (frame number).
/// The content package's system item; with `time_code`, its user date/time stamp carries it
/// (SMPTE ST 12-1, type 0x81), as FFmpeg writes it.
/// `frame_rate`: the stream's (above 30 frames/s the time code counts frame pairs, ST 12-1).
KlvBytes mxf_system_item(std::uint16_t continuity, const std::optional<depacketizer::TimeCode>& time_code = std::nullopt,
                         double frame_rate = 0);
/// Frame-wrapped JPEG 2000 picture element `number` of `count` in the content package.
KlvBytes mxf_picture_element(Bytes codestream, int count = 1, int number = 1);
/// A WAVE audio descriptor (ST 382) for frame-wrapped PCM of `format`, in a container whose
/// edit rate is the video's.
KlvBytes mxf_sound_descriptor(const depacketizer::AudioFormat& format, std::int32_t rate_num, std::int32_t rate_den);
/// A frame-wrapped BWF sound element (ST 382): the block's interleaved little-endian PCM.
KlvBytes mxf_sound_element(const depacketizer::AudioBlock& block, int count = 1, int number = 1);

}  // namespace j2k::packetizer
