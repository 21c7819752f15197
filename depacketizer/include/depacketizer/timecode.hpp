#pragma once
// Time code as it arrives with the picture: the SMPTE ST 12-1 time code in the user
// date/time stamp of an MXF system item (SMPTE ST 385 / ST 326 system metadata pack).
#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "core/byte_reader.hpp"

namespace j2k::depacketizer {

struct TimeCode {
  int hours = 0, minutes = 0, seconds = 0, frames = 0;
  bool drop_frame = false;
  bool operator==(const TimeCode&) const = default;
  /// "10:20:30:12", or "10:20:30;12" for drop-frame time code.
  std::string to_string() const;
};

/// Four bytes of ST 12-1 binary-coded decimal (frames, seconds, minutes, hours, each with
/// its flag bits); nullopt when a digit is not decimal or a field is out of range.
/// Above 30 frames/s (`frame_rate`, 0 when unknown) the frames field counts frame pairs
/// (ST 12-1 12.1: its tens digit has two bits, so 0-39 at most) and the second frame of a
/// pair is flagged: bit 7 of the hours byte at 50 frames/s, of the seconds byte at the
/// other rates (59.94, 60); `frames` is then the frame, 0 to the rate - 1.
std::optional<TimeCode> parse_smpte12m(Bytes four, double frame_rate = 0);
/// The four bytes parse_smpte12m reads (frame pairs above 30 frames/s).
std::array<std::uint8_t, 4> smpte12m_bytes(const TimeCode& tc, double frame_rate = 0);

/// The value of an MXF system item (system metadata pack): bitmap, rate, type, channel
/// handle, continuity count, SMPTE label (16), creation stamp (17), user stamp (17), always
/// in that place; bitmap bit 0x10 marks the user stamp valid, and type 0x81 there is the time code. nullopt when absent or malformed.
std::optional<TimeCode> system_item_timecode(Bytes value, double frame_rate = 0);

}  // namespace j2k::depacketizer
