#include "packetizer/rtcp_writer.hpp"

#include <algorithm>

#include "core/byte_reader.hpp"

namespace j2k::packetizer {

namespace {
using Writer = ByteWriter<std::vector<std::uint8_t>>;
constexpr std::uint64_t kNtpUnixOffset = 2208988800ull;  // seconds from 1900 to 1970 (RFC 5905)
}  // namespace

std::uint64_t ntp_timestamp(std::chrono::system_clock::time_point t) {
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
  const auto seconds = static_cast<std::uint64_t>(ns / 1000000000);
  const auto fraction = static_cast<std::uint64_t>(ns % 1000000000) * (1ull << 32) / 1000000000ull;
  return (seconds + kNtpUnixOffset) << 32 | fraction;
}

std::vector<std::uint8_t> rtcp_sender_report(const depacketizer::SenderReport& sr, const std::string& cname, bool bye) {
  std::vector<std::uint8_t> out;
  Writer w(out);
  // SR, RC = 0: header + sender info = 7 words (length field = words − 1).
  w.u8(0x80);
  w.u8(200);
  w.u16(6);
  w.u32(sr.ssrc);
  w.u64(sr.ntp_timestamp);
  w.u32(sr.rtp_timestamp);
  w.u32(sr.packet_count);
  w.u32(sr.octet_count);
  // SDES, one chunk: SSRC, CNAME item (type 1, length, text), a null item, padded to 32 bits.
  const std::size_t text = std::min<std::size_t>(cname.size(), 255);
  const std::size_t chunk = 4 + 2 + text + 1;
  const std::size_t chunk_padded = (chunk + 3) / 4 * 4;
  w.u8(0x81);
  w.u8(202);
  w.u16(static_cast<std::uint16_t>(chunk_padded / 4));
  w.u32(sr.ssrc);
  w.u8(1);
  w.u8(static_cast<std::uint8_t>(text));
  w.bytes(Bytes(reinterpret_cast<const std::uint8_t*>(cname.data()), text));
  for (std::size_t i = chunk - 1; i < chunk_padded; ++i) w.u8(0);  // end of items + padding
  if (bye) {
    w.u8(0x81);  // SC = 1, no reason
    w.u8(203);
    w.u16(1);
    w.u32(sr.ssrc);
  }
  return out;
}

}  // namespace j2k::packetizer
