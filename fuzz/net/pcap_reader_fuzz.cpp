// Fuzz harness: arbitrary bytes as a capture file (pcap or pcapng) through libpcap and our
// link-layer/IPv4/UDP frame parser and IPv4 fragment reassembly, as `pcap:` URLs read them.
#include <cstddef>
#include <cstdint>

#include "net/pcap_replay.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto scan = j2k::net::scan_capture({data, size}, 1u << 16);
  // Every frame gets exactly one verdict, a datagram (or a fragment) never reaches past its
  // frame, and fragments make fewer datagrams than there are fragments.
  if (scan.frames != scan.udp + scan.not_udp + scan.fragments + scan.truncated + scan.ipv6) __builtin_trap();
  if (scan.reassembled > scan.fragments / 2) __builtin_trap();
  if (scan.payload_outside_frame != 0) __builtin_trap();
  return 0;
}
