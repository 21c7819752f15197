#include "depacketizer/timecode.hpp"

#include <fmt/format.h>

#include <cmath>

namespace j2k::depacketizer {

std::string TimeCode::to_string() const {
  return fmt::format("{:02d}:{:02d}:{:02d}{}{:02d}", hours, minutes, seconds, drop_frame ? ';' : ':', frames);
}

namespace {
/// Frames above 30 a second are counted in pairs (ST 12-1 12.1); the flag's place.
bool counts_pairs(double frame_rate) { return frame_rate > 30.5; }
bool flag_in_hours(double frame_rate) { return std::lround(frame_rate) == 50; }
}  // namespace

std::optional<TimeCode> parse_smpte12m(Bytes b, double frame_rate) {
  if (b.size() < 4) return std::nullopt;
  auto bcd = [](std::uint8_t v, std::uint8_t tens_mask) -> int {
    const int units = v & 0x0F, tens = (v >> 4) & tens_mask;
    return units > 9 ? -1 : tens * 10 + units;
  };
  TimeCode tc;
  tc.frames = bcd(b[0], 0x3);
  tc.drop_frame = (b[0] & 0x40) != 0;
  tc.seconds = bcd(b[1], 0x7);
  tc.minutes = bcd(b[2], 0x7);
  tc.hours = bcd(b[3], 0x3);
  if (tc.frames < 0 || tc.frames > 59 || tc.seconds < 0 || tc.seconds > 59 || tc.minutes < 0 || tc.minutes > 59 ||
      tc.hours < 0 || tc.hours > 23)
    return std::nullopt;
  if (counts_pairs(frame_rate)) {
    const bool second = flag_in_hours(frame_rate) ? (b[3] & 0x80) != 0 : (b[1] & 0x80) != 0;
    tc.frames = 2 * tc.frames + (second ? 1 : 0);
    if (tc.frames >= std::lround(frame_rate)) return std::nullopt;
  }
  return tc;
}

std::array<std::uint8_t, 4> smpte12m_bytes(const TimeCode& tc, double frame_rate) {
  auto bcd = [](int n) { return static_cast<std::uint8_t>((n / 10) << 4 | (n % 10)); };
  const bool pairs = counts_pairs(frame_rate);
  std::array<std::uint8_t, 4> b = {static_cast<std::uint8_t>(bcd(pairs ? tc.frames / 2 : tc.frames) | (tc.drop_frame ? 0x40 : 0)),
                                   bcd(tc.seconds), bcd(tc.minutes), bcd(tc.hours)};
  if (pairs && tc.frames % 2 == 1) b[flag_in_hours(frame_rate) ? 3 : 1] |= 0x80;
  return b;
}

std::optional<TimeCode> system_item_timecode(Bytes value, double frame_rate) {
  ByteReader r(value);
  const std::uint8_t bitmap = r.u8();
  // The pack's layout is fixed (57 bytes); the bitmap says which fields are valid, and
  // writers (FFmpeg) fill absent ones with zeros.
  r.skip(1 + 1 + 2 + 2);  // content package rate, type, channel handle, continuity count
  r.skip(16);             // SMPTE universal label
  r.skip(17);             // creation date/time stamp
  if (!(bitmap & 0x10) || r.failed() || !r.has(17)) return std::nullopt;  // no user date/time stamp
  if (r.u8() != 0x81) return std::nullopt;  // 0x81: SMPTE 12M time code
  return parse_smpte12m(r.bytes(4), frame_rate);
}

}  // namespace j2k::depacketizer
