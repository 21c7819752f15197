#pragma once
// The sender's RTCP (RFC 3550 6.4.1, 6.5, 6.6): compound packets of a sender report and an
// SDES CNAME item (required in every compound, 6.1), and a BYE at the end of the stream.
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "depacketizer/rtcp.hpp"

namespace j2k::packetizer {

/// NTP format (32.32 fixed point, seconds since 1900-01-01) of a system-clock time.
std::uint64_t ntp_timestamp(std::chrono::system_clock::time_point t);

/// SR (no report blocks: we receive nothing) + SDES CNAME [+ BYE of the same SSRC].
std::vector<std::uint8_t> rtcp_sender_report(const depacketizer::SenderReport& report, const std::string& cname,
                                             bool bye);

}  // namespace j2k::packetizer
