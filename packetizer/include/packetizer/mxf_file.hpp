#pragma once
// Reads an MXF file (e.g. written by FFmpeg or GStreamer) into what a sender streams:
// its header (partition pack, primer, header metadata) and one content package per frame.
#include <optional>
#include <vector>

#include "core/byte_reader.hpp"
#include "core/result.hpp"
#include "depacketizer/mxf.hpp"

namespace j2k::packetizer {

struct MxfFileContents {
  std::vector<std::vector<std::uint8_t>> header;                  ///< KLVs, in file order
  std::vector<std::vector<std::vector<std::uint8_t>>> packages;   ///< per frame: system item(s), picture element(s)
  std::optional<depacketizer::PictureDescriptor> descriptor;
  std::size_t skipped_klvs = 0;  ///< fill, index, body/footer partitions, unknown keys
};

/// Parses the whole file. Lengths are checked against what remains; an error names the offset.
Result<MxfFileContents> read_mxf(Bytes file);

}  // namespace j2k::packetizer
