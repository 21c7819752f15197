#include "net/pcap_replay.hpp"

#include <arpa/inet.h>
#include <cstdio>
#include <fmt/format.h>
#include <pcap/pcap.h>

#include <map>
#include <optional>
#include <utility>

#include <boost/asio/ip/address_v4.hpp>

#include "core/byte_reader.hpp"
#include "core/log.hpp"

namespace j2k::net {

namespace {

bool is_vlan_tag(std::uint16_t ethertype) {
  return ethertype == 0x8100 || ethertype == 0x88A8 || ethertype == 0x9100;  // 802.1Q, 802.1ad, older QinQ
}

}  // namespace

FrameVerdict parse_udp(std::span<const std::uint8_t> ip_payload, std::size_t udp_bytes, UdpDatagramView& out) {
  ByteReader udp(ip_payload);
  out.source_port = udp.u16();
  out.destination_port = udp.u16();
  const std::uint16_t udp_length = udp.u16();
  udp.skip(2);  // checksum
  if (udp.failed()) return FrameVerdict::truncated;
  out.ports_known = true;
  if (udp_length < 8 || udp_length > udp_bytes) return FrameVerdict::truncated;
  out.payload = udp.bytes(udp_length - 8u);
  return udp.failed() ? FrameVerdict::truncated : FrameVerdict::udp;
}

FrameVerdict parse_captured_frame(int link_type, std::span<const std::uint8_t> frame, UdpDatagramView& out,
                                  Ipv4Fragment* fragment) {
  out = {};
  ByteReader r(frame);
  std::uint16_t ethertype = 0x0800;
  switch (link_type) {
    case DLT_EN10MB:
      r.skip(12);  // destination and source MAC
      ethertype = r.u16();
      break;
    case DLT_LINUX_SLL:  // Linux "cooked" capture v1: 16 bytes, protocol in the last two
      r.skip(14);
      ethertype = r.u16();
      break;
    case DLT_LINUX_SLL2:  // v2: 20 bytes, protocol first
      ethertype = r.u16();
      r.skip(18);
      break;
    case DLT_NULL:  // BSD loopback: 4-byte address family in host order
    case DLT_LOOP: {
      Bytes family = r.bytes(4);
      if (family.size() == 4 && family[0] != 2 && family[3] != 2) return FrameVerdict::not_udp;
      break;
    }
    case DLT_RAW:
    case DLT_IPV4:
      break;
    default:
      return FrameVerdict::not_udp;
  }
  // VLAN tags (a tag control word, then the next type), also inside a cooked capture of a
  // tagged interface (-i any).
  while (is_vlan_tag(ethertype) && !r.failed()) {
    r.skip(2);
    ethertype = r.u16();
  }
  if (r.failed()) return FrameVerdict::truncated;
  if (ethertype == 0x86DD) return FrameVerdict::ipv6;
  if (ethertype != 0x0800) return FrameVerdict::not_udp;

  // IPv4 header (RFC 791): version/IHL, total length, flags/fragment offset, protocol.
  ByteReader ip(r.rest());
  const std::uint8_t version_ihl = ip.u8();
  if ((version_ihl >> 4) == 6 && ip.size() > 0) return FrameVerdict::ipv6;
  if ((version_ihl >> 4) != 4) return FrameVerdict::not_udp;
  const std::size_t ihl = static_cast<std::size_t>(version_ihl & 0x0F) * 4;
  ip.skip(1);
  const std::uint16_t total = ip.u16();
  const std::uint16_t id = ip.u16();
  const std::uint16_t flags_fragment = ip.u16();
  ip.skip(1);
  const std::uint8_t protocol = ip.u8();
  ip.skip(2);
  out.source = ip.u32();
  out.destination = ip.u32();
  if (ip.failed() || ihl < 20 || total < ihl) return FrameVerdict::truncated;
  if (protocol != 17) return FrameVerdict::not_udp;
  const std::size_t captured = std::min<std::size_t>(total, ip.size());  // padding after the datagram is not its
  if ((flags_fragment & 0x2000) || (flags_fragment & 0x1FFF)) {
    if (total > ip.size()) return FrameVerdict::truncated;  // a fragment cut by the snap length
    if (fragment) {
      fragment->source = out.source;
      fragment->destination = out.destination;
      fragment->id = id;
      fragment->protocol = protocol;
      fragment->offset = static_cast<std::uint32_t>(flags_fragment & 0x1FFF) * 8;
      fragment->more = (flags_fragment & 0x2000) != 0;
      fragment->data = r.rest().subspan(ihl, total - ihl);
    }
    return FrameVerdict::fragment;
  }
  if (ihl > captured) return FrameVerdict::truncated;
  // A datagram the capture cut (snap length) still names its ports, for the count and the
  // message; its payload is not handed on.
  const FrameVerdict v = parse_udp(r.rest().subspan(ihl, captured - ihl), total - ihl, out);
  return total > ip.size() && v == FrameVerdict::udp ? FrameVerdict::truncated : v;
}

struct PcapReplay::Impl {
  pcap_t* handle = nullptr;
  int link_type = 0;
  PacketPool pool;
  Ipv4Reassembler fragments;
  Impl(std::size_t n, std::size_t size) : pool(n, size) {}
  ~Impl() {
    if (handle) pcap_close(handle);
  }
};

PcapReplay::PcapReplay(const PcapConfig& config, PacketQueue& out)
    : config_(config), out_(out), impl_(std::make_unique<Impl>(config.pool_packets, config.packet_size)) {}

PcapReplay::~PcapReplay() { stop(); }

Result<std::unique_ptr<PcapReplay>> PcapReplay::open(const PcapConfig& config, PacketQueue& out) {
  std::unique_ptr<PcapReplay> replay(new PcapReplay(config, out));
  char error[PCAP_ERRBUF_SIZE] = {};
  replay->impl_->handle = pcap_open_offline(config.file.c_str(), error);
  if (!replay->impl_->handle)
    return make_error(ErrorKind::io, fmt::format("cannot open capture '{}': {}", config.file, error));
  replay->impl_->link_type = pcap_datalink(replay->impl_->handle);
  switch (replay->impl_->link_type) {
    case DLT_EN10MB: case DLT_LINUX_SLL: case DLT_LINUX_SLL2: case DLT_NULL: case DLT_LOOP: case DLT_RAW: case DLT_IPV4:
      break;
    default:
      return make_error(ErrorKind::unsupported,
                        fmt::format("capture '{}' has link type {} ({}); supported: Ethernet, Linux cooked, raw IP, loopback",
                                    config.file, replay->impl_->link_type,
                                    pcap_datalink_val_to_name(replay->impl_->link_type)));
  }
  logger("net")->info("replaying {} ({}), UDP port {}{}", config.file,
                      pcap_datalink_val_to_name(replay->impl_->link_type),
                      config.port ? std::to_string(config.port) : std::string("any"),
                      config.capture_timing ? ", at capture timing" : ", as fast as possible");
  return replay;
}

void PcapReplay::start() {
  if (running_.exchange(true)) return;
  thread_ = std::thread([this] { run(); });
}

void PcapReplay::stop() {
  {
    std::lock_guard lock(wake_mutex_);
    running_.store(false);
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void PcapReplay::run() {
  using Clock = std::chrono::steady_clock;
  std::uint32_t want_destination = 0;
  if (!config_.destination.empty()) {
    in_addr a{};
    if (inet_pton(AF_INET, config_.destination.c_str(), &a) == 1) want_destination = ntohl(a.s_addr);
  }
  double last_capture_time = 0;   // of the last datagram handed on in this pass
  std::optional<std::uint32_t> first_destination;  // without dst=: the stream port's first address
  bool destinations_said = false;
  RateLimiter gap_log;
  bool have_first = false;
  // UDP destination ports in the capture, to name them when none matched (bounded: a capture
  // of random traffic could hold every port).
  constexpr std::size_t kMaxPortsListed = 1024;
  std::map<std::uint16_t, std::uint64_t> udp_ports;
  Clock::time_point replay_start = Clock::now();
  Clock::time_point last_due = replay_start;
  Clock::duration last_gap{};        // between the last two datagrams handed on (a loop's seam)
  std::uint64_t pass_datagrams = 0;  // handed on in this pass
  bool restart = false;              // the next datagram handed on starts a new pass
  pcap_pkthdr* header = nullptr;
  const u_char* data = nullptr;
  RateLimiter read_error_log;
  bool cut_said = false, malformed_said = false;
  // Datagrams whose fragments never all came (given up, or impossible): the reassembler's
  // counts, published as they grow.
  std::uint64_t fragments_lost_said = 0;
  auto count_lost_fragments = [&] {
    const auto& c = impl_->fragments.counters();
    const std::uint64_t lost = c.given_up + c.malformed;
    capture_.fragments_lost.fetch_add(lost - fragments_lost_said, std::memory_order_relaxed);
    fragments_lost_said = lost;
  };
  auto say_read_error = [&] {
    // libpcap stops at a record it cannot read (a file cut mid-record by a killed tcpdump, a
    // damaged block, a pcapng interface of another link type): say where and why.
    capture_.read_errors.fetch_add(1, std::memory_order_relaxed);
    if (read_error_log.allow())
      logger("net")->warn("{}: cannot be read past frame {}: {}; {}", config_.file,
                          capture_.frames.load(std::memory_order_relaxed), pcap_geterr(impl_->handle),
                          config_.loop ? "played again from its start" : "the rest of the file is not replayed");
  };
  while (running_.load()) {
    const int rc = pcap_next_ex(impl_->handle, &header, &data);
    if (rc == PCAP_ERROR) say_read_error();
    if ((rc == PCAP_ERROR_BREAK || rc == PCAP_ERROR) && config_.loop && pass_datagrams > 0 && rewind()) {
      // Looping: the next pass follows the last datagram after the capture's own last gap,
      // and its first datagram tells the depacketizer that the stream starts afresh.
      capture_.passes.fetch_add(1, std::memory_order_relaxed);
      // At least 10 ms: a pass of one datagram, or of datagrams that share one timestamp, has
      // no gap of its own, and the file would be reopened as fast as the CPU allows.
      replay_start = last_due + std::max<Clock::duration>(last_gap, std::chrono::milliseconds(10));
      have_first = false;
      pass_datagrams = 0;
      restart = true;
      continue;
    }
    if (rc != 1) break;  // end of file (-2) or a read error (-1, said above)
    capture_.frames.fetch_add(1, std::memory_order_relaxed);
    if (header->caplen < header->len) capture_.truncated.fetch_add(1, std::memory_order_relaxed);
    const double t = static_cast<double>(header->ts.tv_sec) + header->ts.tv_usec * 1e-6;
    UdpDatagramView udp;
    Ipv4Fragment piece;
    auto verdict = parse_captured_frame(impl_->link_type, {data, header->caplen}, udp, &piece);
    if (verdict == FrameVerdict::fragment) {
      // Put back together, as the receiving host's kernel does for a socket.
      capture_.fragments.fetch_add(1, std::memory_order_relaxed);
      if (piece.offset == 0 && piece.protocol == 17 && piece.data.size() >= 8) {
        // The first fragment holds the UDP header: its port is listed when nothing matches.
        const auto port = static_cast<std::uint16_t>(piece.data[2] << 8 | piece.data[3]);
        if (udp_ports.size() < kMaxPortsListed || udp_ports.count(port)) ++udp_ports[port];
      }
      auto whole = impl_->fragments.add(piece, std::chrono::nanoseconds(static_cast<std::int64_t>(t * 1e9)));
      count_lost_fragments();
      if (!whole) continue;
      capture_.reassembled.fetch_add(1, std::memory_order_relaxed);
      verdict = parse_udp(*whole, whole->size(), udp);
    }
    if (verdict == FrameVerdict::ipv6) {
      capture_.ipv6.fetch_add(1, std::memory_order_relaxed);
      continue;
    }
    // The stream's own port, or one of its side ports (RTCP, FEC) with their channel.
    int channel = -1;
    if (!config_.port || udp.destination_port == config_.port) channel = 0;
    for (const auto& [side_port, side_channel] : config_.side_ports)
      if (channel < 0 && udp.destination_port == side_port) channel = side_channel;
    const bool wanted = channel >= 0 && (!want_destination || udp.destination == want_destination);
    if (verdict == FrameVerdict::truncated) {
      // Headers cut short. A frame captured whole (caplen = len) whose IP or UDP lengths
      // reach past it is malformed, not cut by the snap length: said as such.
      if (header->caplen >= header->len) {
        capture_.malformed.fetch_add(1, std::memory_order_relaxed);
        if (udp.ports_known && wanted && !std::exchange(malformed_said, true))
          logger("net")->warn("{}: a datagram to port {} at frame {} is malformed: its IP or UDP length does not fit the "
                              "{} bytes captured whole (a broken sender or capture tool); it cannot be replayed",
                              config_.file, udp.destination_port, capture_.frames.load(std::memory_order_relaxed),
                              header->caplen);
      } else if (udp.ports_known && wanted) {
        // A datagram of the stream, cut by the capture's snap length: lost to the replay (the
        // stream counts it lost), and said once, with what to do.
        capture_.cut_matching.fetch_add(1, std::memory_order_relaxed);
        if (!std::exchange(cut_said, true))
          logger("net")->warn("{}: datagrams to port {} were captured cut short ({} of {} bytes at frame {}): the "
                              "capture's snap length was too small and they cannot be replayed (capture with "
                              "`tcpdump -s 0`)",
                              config_.file, udp.destination_port, header->caplen, header->len,
                              capture_.frames.load(std::memory_order_relaxed));
      }
      if (udp.ports_known && (udp_ports.size() < kMaxPortsListed || udp_ports.count(udp.destination_port)))
        ++udp_ports[udp.destination_port];
      continue;
    }
    if (verdict == FrameVerdict::udp && (udp_ports.size() < kMaxPortsListed || udp_ports.count(udp.destination_port)))
      ++udp_ports[udp.destination_port];
    if (verdict != FrameVerdict::udp || !wanted) {
      capture_.not_udp.fetch_add(1, std::memory_order_relaxed);
      continue;
    }
    // Without dst=, every address the port is seen at is taken: a capture of both paths of an
    // ST 2022-7 link (or of two streams on one port) replays as one stream with every packet
    // twice. Said once, with the way out.
    if (!want_destination && channel == 0) {
      if (!first_destination) {
        first_destination = udp.destination;
      } else if (udp.destination != *first_destination && !std::exchange(destinations_said, true)) {
        auto dotted = [](std::uint32_t a) { return boost::asio::ip::address_v4(a).to_string(); };
        logger("net")->warn("{}: datagrams to port {} go to {} and to {} (both paths of an ST 2022-7 link, or two "
                            "streams, captured together): replayed as one stream, each packet comes twice "
                            "(duplicates, or one SSRC from two senders). Replay one: add &dst={} (or &dst={}) to the "
                            "pcap: URL",
                            config_.file, udp.destination_port, dotted(*first_destination), dotted(udp.destination),
                            dotted(*first_destination), dotted(udp.destination));
      }
    }
    // The capture's times, relative to this pass's first datagram; a silence longer than
    // max_gap is cut to it (a timestamp years ahead must not make the replay sleep for
    // years), and a time that goes back is taken as no gap at all.
    Clock::duration gap{};
    if (have_first) {
      const double seconds = std::max(0.0, t - last_capture_time);
      const double most = std::chrono::duration<double>(config_.max_gap).count();
      if (seconds > most) {
        capture_.gaps_shortened.fetch_add(1, std::memory_order_relaxed);
        if (gap_log.allow())
          logger("net")->warn("{}: {:.1f} s without a datagram before frame {} of the capture: {} {:.1f} s",
                              config_.file, seconds, capture_.frames.load(std::memory_order_relaxed),
                              config_.capture_timing ? "replayed as" : "taken as", most);
      }
      gap = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(std::min(seconds, most)));
    }
    const auto due = have_first ? last_due + gap : replay_start;
    // A time a little back (a capture merged from several queues: neighbours swapped) does
    // not move the clock back, so the swaps do not add up; one far off (a clock stepped, a
    // bad record) re-anchors it, or every later gap would read 0.
    if (!have_first || t >= last_capture_time || last_capture_time - t > 1.0) last_capture_time = t;
    have_first = true;
    if (config_.capture_timing) {
      std::unique_lock lock(wake_mutex_);
      wake_.wait_until(lock, due, [this] { return !running_.load(); });
      if (!running_.load()) break;
    }
    // A file can wait for its consumer: take a buffer (waiting for one to come back).
    PacketPtr p = impl_->pool.acquire();
    while (!p && running_.load()) {
      std::this_thread::sleep_for(std::chrono::microseconds(200));
      p = impl_->pool.acquire();
    }
    if (!p) break;
    const std::size_t n = std::min(udp.payload.size(), p->storage.size());
    std::copy_n(udp.payload.begin(), n, p->storage.begin());
    p->size = n;
    p->truncated = n < udp.payload.size();
    if (p->truncated) counters_.truncated.fetch_add(1, std::memory_order_relaxed);
    // Arrival times follow the capture, so jitter and rates describe the link, not the replay.
    p->received = due;
    p->restart = channel == 0 && std::exchange(restart, false);  // marked on the stream's own datagrams
    if (pass_datagrams++ > 0) last_gap = due - last_due;
    last_due = due;
    p->source_address = udp.source;
    p->source_port = udp.source_port;
    p->destination_address = udp.destination;
    p->destination_port = udp.destination_port;
    p->channel = channel;
    if (channel == 0) {
      counters_.datagrams.fetch_add(1, std::memory_order_relaxed);
      counters_.bytes.fetch_add(n, std::memory_order_relaxed);
    }
    if (!out_.push_wait(std::move(p))) break;
  }
  impl_->fragments.give_up_all();  // what is still being put back together will never complete
  count_lost_fragments();
  if (counters_.datagrams.load(std::memory_order_relaxed) == 0 && running_.load()) {
    // Nothing matched: say what the capture does hold, so that the right ?port= is one look away.
    std::string ports;
    for (const auto& [port, count] : udp_ports)
      ports += fmt::format("{}{} ({} datagram{})", ports.empty() ? "" : ", ", port, count, count == 1 ? "" : "s");
    std::string also;
    if (const auto n = capture_.cut_matching.load(std::memory_order_relaxed))
      also += fmt::format("; {} datagram{} to the port cut short by the capture's snap length (capture with `tcpdump -s 0`)",
                          n, n == 1 ? "" : "s");
    if (const auto n = capture_.fragments_lost.load(std::memory_order_relaxed))
      also += fmt::format("; {} datagram{} whose IPv4 fragments did not all come (a capture filtered by port, e.g. "
                          "`tcpdump udp port N`, keeps only first fragments: filter by host instead)",
                          n, n == 1 ? "" : "s");
    if (const auto n = capture_.malformed.load(std::memory_order_relaxed))
      also += fmt::format("; {} frame{} whose IP or UDP lengths do not fit them (malformed)", n, n == 1 ? "" : "s");
    if (const auto n = capture_.ipv6.load(std::memory_order_relaxed))
      also += fmt::format("; {} IPv6 packet{} (not read: streams are received over IPv4)", n, n == 1 ? "" : "s");
    logger("net")->error("{}: no UDP datagrams{}{}; UDP destination ports in the capture: {}{}", config_.file,
                         config_.port ? fmt::format(" to port {}", config_.port) : std::string(),
                         config_.destination.empty() ? std::string() : " for " + config_.destination,
                         ports.empty() ? std::string("none") : ports, also);
  }
  capture_.passes.fetch_add(1, std::memory_order_relaxed);
  finished_.store(true);
}

bool PcapReplay::rewind() {
  char error[PCAP_ERRBUF_SIZE] = {};
  pcap_t* again = pcap_open_offline(config_.file.c_str(), error);
  if (!again) {
    logger("net")->error("{}: cannot read it again to loop ({})", config_.file, error);
    return false;
  }
  pcap_close(impl_->handle);
  impl_->handle = again;
  return true;
}

CaptureScan scan_capture(std::span<const std::uint8_t> file, std::uint64_t max_frames) {
  CaptureScan scan;
  if (file.empty()) return scan;
  // fmemopen only reads ("rb"), so the const_cast never leads to a write.
  FILE* f = fmemopen(const_cast<std::uint8_t*>(file.data()), file.size(), "rb");
  if (!f) return scan;
  char error[PCAP_ERRBUF_SIZE] = {};
  pcap_t* handle = pcap_fopen_offline(f, error);
  if (!handle) {
    std::fclose(f);
    return scan;
  }
  scan.opened = true;
  const int link_type = pcap_datalink(handle);
  Ipv4Reassembler reassembler;
  pcap_pkthdr* header = nullptr;
  const u_char* data = nullptr;
  while (scan.frames < max_frames && pcap_next_ex(handle, &header, &data) == 1) {
    ++scan.frames;
    UdpDatagramView udp;
    const std::span<const std::uint8_t> frame(data, header->caplen);
    Ipv4Fragment piece;
    switch (parse_captured_frame(link_type, frame, udp, &piece)) {
      case FrameVerdict::udp:
        ++scan.udp;
        if (udp.payload.data() < frame.data() || udp.payload.data() + udp.payload.size() > frame.data() + frame.size())
          ++scan.payload_outside_frame;
        break;
      case FrameVerdict::not_udp: ++scan.not_udp; break;
      case FrameVerdict::fragment: {
        ++scan.fragments;
        if (piece.data.data() < frame.data() || piece.data.data() + piece.data.size() > frame.data() + frame.size())
          ++scan.payload_outside_frame;
        const auto at = std::chrono::seconds(header->ts.tv_sec) + std::chrono::microseconds(header->ts.tv_usec);
        if (auto whole = reassembler.add(piece, at))
          if (parse_udp(*whole, whole->size(), udp) == FrameVerdict::udp) ++scan.reassembled;
        break;
      }
      case FrameVerdict::truncated: ++scan.truncated; break;
      case FrameVerdict::ipv6: ++scan.ipv6; break;
    }
  }
  pcap_close(handle);  // closes f
  return scan;
}

}  // namespace j2k::net
