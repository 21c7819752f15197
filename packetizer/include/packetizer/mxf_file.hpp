#pragma once
// Reads an MXF file (e.g. written by FFmpeg or GStreamer) into what a sender streams:
// its header (partition pack, primer, header metadata) and one content package per frame.
#include <optional>
#include <string>
#include <vector>

#include "core/byte_reader.hpp"
#include "core/result.hpp"
#include "depacketizer/audio.hpp"
#include "depacketizer/mxf.hpp"

namespace j2k::packetizer {

struct MxfFileContents {
  std::vector<std::vector<std::uint8_t>> header;                  ///< KLVs, in file order
  /// Per frame: system item(s), picture element(s) and the sound elements that follow them.
  std::vector<std::vector<std::vector<std::uint8_t>>> packages;
  std::optional<depacketizer::PictureDescriptor> descriptor;
  /// The first sound track's format (its sound descriptor), when the file has sound we play.
  std::optional<depacketizer::AudioFormat> audio;
  std::string audio_problem;     ///< why a sound track present is not played (e.g. 32-bit float)
  std::size_t sound_elements = 0;
  std::size_t skipped_klvs = 0;  ///< fill, index, body/footer partitions, unknown keys
};

/// A content package's picture element values and its first sound track's PCM (decoded with
/// `audio`; empty without).
struct PackageParts {
  std::vector<Bytes> pictures;
  std::optional<depacketizer::AudioBlock> sound;
};
Result<PackageParts> package_parts(const std::vector<std::vector<std::uint8_t>>& klvs,
                                   const std::optional<depacketizer::AudioFormat>& audio);

/// Parses the whole file. Lengths are checked against what remains; an error names the offset.
Result<MxfFileContents> read_mxf(Bytes file);

}  // namespace j2k::packetizer
