#pragma once
// One access unit handed from the depacketizer to the decoder: a frame (or a field pair),
// as one or more J2K codestreams, with what is known of its completeness.
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "depacketizer/mxf.hpp"

namespace j2k::depacketizer {

struct CodestreamUnit {
  std::vector<std::vector<std::uint8_t>> codestreams;  ///< in picture-element order
  std::uint32_t rtp_timestamp = 0;
  std::uint64_t index = 0;            ///< running number of units emitted by this depacketizer
  bool complete = true;               ///< every expected element arrived intact
  std::uint64_t missing_bytes = 0;    ///< bytes declared but not received (lower bound)
  /// Where bytes are missing, when known: {codestream index, first byte, end byte (exclusive)}.
  /// RFC 5371 knows every hole from the fragment offsets; MXF knows the cut tail of an element
  /// from its KLV length. Lost elements as a whole show as a shortfall of `codestreams`.
  struct MissingRange {
    std::size_t codestream = 0;
    std::uint64_t begin = 0;
    std::uint64_t end = 0;
  };
  std::vector<MissingRange> missing_ranges;
  int expected_elements = 1;
  /// After normalisation: 1 = codestreams[0] is the frame; 2 = codestreams[0..1] are the
  /// temporally first and second fields of an interlaced frame.
  int fields = 1;
  bool first_field_is_top = true;  ///< field dominance: where the first field's lines go
  bool merged = false;             ///< luma and chroma codestreams were merged into one
  std::string problem;             ///< why the unit could not be normalised, if it could not
  std::optional<PictureDescriptor> descriptor;  ///< latest descriptor seen, if any
  /// Transport timing and time code, where the transport carries them (MPEG-2 TS: the PES
  /// PTS, the program's last PCR, the elsm tcod box as "HH:MM:SS:FF").
  std::optional<std::uint64_t> pts_90khz;
  std::optional<std::uint64_t> pcr_27mhz;
  std::string time_code;
  /// The first unit after the source started again (a looped capture's next pass) or the
  /// followed stream changed (another SSRC): its timing and time code begin afresh.
  bool new_timeline = false;
  std::chrono::steady_clock::time_point first_arrival{};
  std::chrono::steady_clock::time_point last_arrival{};

  std::size_t total_bytes() const noexcept {
    std::size_t n = 0;
    for (const auto& c : codestreams) n += c.size();
    return n;
  }
};

}  // namespace j2k::depacketizer
