#pragma once
// Replays the UDP datagrams of a capture file (pcap or pcapng, via libpcap) as if they
// arrived on a socket: as fast as the consumer takes them, or at the capture's timing.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "net/ipv4_reassembly.hpp"
#include "net/packet_source.hpp"

namespace j2k::net {

struct PcapConfig {
  std::string file;
  std::uint16_t port = 0;        ///< UDP destination port to keep (0 = every UDP datagram)
  /// Other ports of the stream (its RTCP, its ST 2022-1 FEC) whose datagrams are handed on
  /// too, stamped with the channel given; they are not counted as the stream's datagrams.
  std::vector<std::pair<std::uint16_t, int>> side_ports;
  std::string destination;       ///< destination IPv4 address to keep ("" = any)
  bool capture_timing = false;   ///< sleep to reproduce the capture's inter-packet times
  bool loop = false;             ///< start again at the end (the first datagram of each pass is marked `restart`)
  /// With capture timing: a longer silence between two datagrams (a link that was down, or
  /// a timestamp that is wrong) is replayed this long, said in the log and counted.
  std::chrono::milliseconds max_gap{10000};
  std::size_t pool_packets = 4096;
  std::size_t packet_size = 9216;
};

/// Counts what a capture held besides the datagrams it handed on.
struct PcapCounters {
  std::atomic<std::uint64_t> frames{0};         ///< link-layer frames read
  std::atomic<std::uint64_t> not_udp{0};        ///< other protocols, other ports
  std::atomic<std::uint64_t> fragments{0};      ///< IPv4 fragments of UDP datagrams taken in
  std::atomic<std::uint64_t> reassembled{0};    ///< datagrams put back together from them
  std::atomic<std::uint64_t> fragments_lost{0};  ///< datagrams whose fragments never all came (or could not fit)
  std::atomic<std::uint64_t> truncated{0};      ///< captured shorter than on the wire
  std::atomic<std::uint64_t> cut_matching{0};   ///< of those, datagrams to the port replayed (lost to the snap length)
  std::atomic<std::uint64_t> ipv6{0};           ///< IPv6 packets (not read: the streams we receive are IPv4)
  /// Frames captured whole whose IP or UDP lengths do not fit them (a broken sender or
  /// capture tool, not the snap length); to the port replayed, lost to the replay.
  std::atomic<std::uint64_t> malformed{0};
  std::atomic<std::uint64_t> read_errors{0};    ///< files libpcap could not read to their end (damaged, cut mid-record)
  std::atomic<std::uint64_t> passes{0};         ///< times the file was read to its end (loop)
  std::atomic<std::uint64_t> gaps_shortened{0};  ///< silences longer than max_gap, replayed at max_gap
};

class PcapReplay final : public PacketSource {
 public:
  /// Opens the file (errors say what is wrong: missing, not a capture, unknown link type).
  static Result<std::unique_ptr<PcapReplay>> open(const PcapConfig& config, PacketQueue& out);
  ~PcapReplay() override;

  void start() override;
  void stop() override;
  const ReceiverCounters& counters() const noexcept override { return counters_; }
  std::uint16_t port() const noexcept override { return config_.port; }
  bool finished() const noexcept override { return finished_.load(); }
  const PcapCounters& capture_counters() const noexcept { return capture_; }

 private:
  struct Impl;
  PcapReplay(const PcapConfig& config, PacketQueue& out);
  void run();
  bool rewind();  ///< reopens the file at its start (loop); false, said in the log, if it cannot

  PcapConfig config_;
  PacketQueue& out_;
  ReceiverCounters counters_;
  PcapCounters capture_;
  std::unique_ptr<Impl> impl_;
  std::thread thread_;
  std::atomic<bool> running_{false};
  std::atomic<bool> finished_{false};
  std::mutex wake_mutex_;  // the capture-timing wait ends early when stop() is called
  std::condition_variable wake_;
};

/// Finds the UDP payload in one captured link-layer frame: Ethernet (802.1Q/802.1ad tags),
/// Linux cooked v1/v2 (tags too), BSD loopback, raw IPv4. `udp` for a whole, unfragmented
/// IPv4/UDP datagram; otherwise why not. A datagram cut by the capture's snap length is
/// `truncated` with its ports known (`ports_known`). For a `fragment` of a UDP datagram,
/// `fragment` (when given) is filled for Ipv4Reassembler. `link_type` is a libpcap DLT_*
/// value. Exposed for tests and the fuzz harness.
struct UdpDatagramView {
  std::span<const std::uint8_t> payload;
  std::uint32_t source = 0, destination = 0;  ///< IPv4, host order
  std::uint16_t source_port = 0, destination_port = 0;
  bool ports_known = false;  ///< the UDP header was read (also for a datagram cut short)
};
enum class FrameVerdict { udp, not_udp, fragment, truncated, ipv6 };
FrameVerdict parse_captured_frame(int link_type, std::span<const std::uint8_t> frame, UdpDatagramView& out,
                                  Ipv4Fragment* fragment = nullptr);
/// The UDP header and payload at the start of `ip_payload` (of a datagram whose IP payload is
/// `udp_bytes` long; fewer may have been captured). Keeps `out`'s addresses.
FrameVerdict parse_udp(std::span<const std::uint8_t> ip_payload, std::size_t udp_bytes, UdpDatagramView& out);

/// Reads a whole capture held in memory the way PcapReplay reads a file (libpcap, then
/// parse_captured_frame per frame) and counts the verdicts: the pcap reader's fuzz entry.
struct CaptureScan {
  bool opened = false;
  std::uint64_t frames = 0, udp = 0, not_udp = 0, fragments = 0, truncated = 0, ipv6 = 0;
  std::uint64_t reassembled = 0;  ///< UDP datagrams put back together from the fragments
  std::uint64_t payload_outside_frame = 0;  ///< must stay 0: a view past the captured bytes
};
CaptureScan scan_capture(std::span<const std::uint8_t> file, std::uint64_t max_frames = 1u << 20);

}  // namespace j2k::net
