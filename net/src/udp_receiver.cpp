#include "net/udp_receiver.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <array>
#include <cstring>
#include <ctime>
#include <functional>
#include <boost/asio.hpp>

#include "core/log.hpp"
#include "net/interface_address.hpp"

namespace j2k::net {

namespace asio = boost::asio;
using asio::ip::udp;

namespace {

constexpr std::size_t kBatch = 64;  // datagrams per recvmmsg call

Result<asio::ip::address_v4> parse_v4(const std::string& text, const char* what) {
  boost::system::error_code ec;
  auto addr = asio::ip::make_address_v4(text, ec);
  if (ec) return make_error(ErrorKind::corrupt, fmt::format("{} '{}' is not an IPv4 address", what, text));
  return addr;
}

}  // namespace

struct UdpReceiver::Impl {
  asio::io_context io;
  udp::socket socket{io};
  PacketPool pool;
  Impl(std::size_t count, std::size_t size) : pool(count, size) {}
};

UdpReceiver::UdpReceiver(const ReceiverConfig& config, PacketQueue& out)
    : config_(config), out_(out), impl_(std::make_unique<Impl>(config.pool_packets, config.packet_size)) {}

UdpReceiver::~UdpReceiver() { stop(); }

Result<std::unique_ptr<UdpReceiver>> UdpReceiver::open(const ReceiverConfig& config, PacketQueue& out) {
  auto log = logger("net");
  auto address = parse_v4(config.address.empty() ? "0.0.0.0" : config.address, "address");
  if (!address) return address.error();
  std::unique_ptr<UdpReceiver> rx(new UdpReceiver(config, out));
  udp::socket& sock = rx->impl_->socket;
  boost::system::error_code ec;
  const bool multicast = address->is_multicast();

  sock.open(udp::v4(), ec);
  if (ec) return make_error(ErrorKind::io, fmt::format("cannot open a UDP socket: {}", ec.message()));
  // Receivers of a group share its port (two monitors of one stream); a unicast port is
  // one program's: with SO_REUSEADDR a second one would take its datagrams from it.
  if (multicast) sock.set_option(udp::socket::reuse_address(true), ec);

  // Ask for a large buffer so bursts (a whole frame arrives in a few ms) are not dropped.
  // SO_RCVBUFFORCE passes the rmem_max cap when we are privileged; otherwise fall back.
  int want = config.receive_buffer;
  if (setsockopt(sock.native_handle(), SOL_SOCKET, SO_RCVBUFFORCE, &want, sizeof want) != 0)
    sock.set_option(asio::socket_base::receive_buffer_size(want), ec);
  asio::socket_base::receive_buffer_size granted;
  sock.get_option(granted, ec);
  // Linux reports the doubled size it books (data + overhead); compare that with the request.
  rx->granted_buffer_ = granted.value();
  if (rx->granted_buffer_ < want)
    log->warn("receive buffer is {} KiB, asked for {} KiB: bursts may be dropped; raise the limit with "
              "'sudo sysctl -w net.core.rmem_max={}'",
              rx->granted_buffer_ / 1024, want / 1024, want);

  // Binding to the group address (not 0.0.0.0) keeps other groups on the same port out.
  sock.bind(udp::endpoint(*address, config.port), ec);
  if (ec)
    return make_error(ErrorKind::io, fmt::format("cannot bind {}:{}: {} (is another program using the port, "
                                                 "or is the address not local?)",
                                                 address->to_string(), config.port, ec.message()));

  rx->bound_port_ = sock.local_endpoint(ec).port();
  rx->bound_address_ = address->to_uint();
  if (multicast) {
    // Linux hands a socket bound to G:port every datagram to G:port that any socket of the host
    // joined, on any interface: the two paths of an ST 2022-7 link on one group and port (one
    // per network) would each see both networks' packets. Only this socket's own joins, on its
    // own interface, then.
    int all = 0;
    rx->own_groups_only_ = setsockopt(sock.native_handle(), IPPROTO_IP, IP_MULTICAST_ALL, &all, sizeof all) == 0;
    if (!rx->own_groups_only_)
      log->warn("this kernel cannot keep a group socket to its own joins (IP_MULTICAST_ALL): two paths on one group "
                "and port may see each other's packets");
    asio::ip::address_v4 iface = asio::ip::address_v4::any();
    if (!config.iface.empty()) {
      auto found = interface_address(config.iface);
      if (!found) return found.error();
      iface = *found;
    } else if (config.channel <= 1) {  // the media paths' sockets (their RTCP and FEC join alike)
      // Joined where the routes say: name it, so that a laptop on Wi-Fi and a cable to the
      // video network sees which one listens.
      const std::string via = route_interface(*address);
      log->info("joining {} on {} (the routes' choice; ?iface= picks another: {})", address->to_string(),
                via.empty() ? "no interface with a route to it" : via, ipv4_interfaces());
    }
    if (!config.source.empty()) {
      auto src = parse_v4(config.source, "source");
      if (!src) return src.error();
      ip_mreq_source mreq{};
      mreq.imr_multiaddr.s_addr = htonl(address->to_uint());
      mreq.imr_interface.s_addr = htonl(iface.to_uint());
      mreq.imr_sourceaddr.s_addr = htonl(src->to_uint());
      if (setsockopt(sock.native_handle(), IPPROTO_IP, IP_ADD_SOURCE_MEMBERSHIP, &mreq, sizeof mreq) != 0)
        return make_error(ErrorKind::io, fmt::format("cannot join {} from source {} via {}: {}", address->to_string(),
                                                     config.source, iface.to_string(), std::strerror(errno)));
    } else {
      sock.set_option(asio::ip::multicast::join_group(*address, iface), ec);
      if (ec)
        return make_error(ErrorKind::io,
                          fmt::format("cannot join multicast group {} via {}: {} (does the interface exist and "
                                      "have a route for multicast?)",
                                      address->to_string(), iface.to_string(), ec.message()));
    }
  } else if (!config.source.empty()) {
    return make_error(ErrorKind::corrupt, "source= applies only to multicast groups");
  } else if (!config.iface.empty()) {
    // Unicast: the interface joins nothing, so nothing else would say that it is wrong.
    if (auto found = local_interface_address(config.iface); !found) return found.error();
  }
  // Kernel receive timestamps: arrival times unaffected by when this thread got to run.
  const int on = 1;
  rx->kernel_timestamps_ = setsockopt(sock.native_handle(), SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof on) == 0;
  // The kernel's count of datagrams dropped for want of buffer room, with each datagram: a
  // loss on this host (a full socket buffer) is then told apart from one on the network.
  (void)setsockopt(sock.native_handle(), SOL_SOCKET, SO_RXQ_OVFL, &on, sizeof on);
  sock.non_blocking(true, ec);
  log->info("listening on {}:{}{}{} (receive buffer {} KiB)", address->to_string(), rx->bound_port_,
            config.iface.empty() || !multicast ? "" : " via " + config.iface, config.source.empty() ? "" : " from " + config.source,
            rx->granted_buffer_ / 1024);
  return rx;
}

void UdpReceiver::start() {
  if (running_.exchange(true)) return;
  thread_ = std::thread([this] {
    Impl& impl = *impl_;
    std::array<PacketPtr, kBatch> slots;
    std::array<mmsghdr, kBatch> headers{};
    std::array<iovec, kBatch> iovs{};
    std::array<sockaddr_in, kBatch> from{};
    // Control buffers for the SCM_TIMESTAMPNS and SO_RXQ_OVFL messages of each datagram.
    constexpr std::size_t kControl = CMSG_SPACE(sizeof(timespec)) + CMSG_SPACE(sizeof(std::uint32_t));
    std::array<std::array<std::uint8_t, kControl>, kBatch> control{};
    std::array<std::size_t, kBatch> slot_of{};
    std::uint32_t socket_drops_seen = 0;  // the kernel's last SO_RXQ_OVFL count

    // Drains the socket with recvmmsg (many datagrams per system call) until it would block.
    auto drain = [&] {
      for (;;) {
        // Every slot that holds (or can get) a buffer takes part; slot_of maps a message to its slot.
        std::size_t n = 0;
        for (std::size_t slot = 0; slot < kBatch; ++slot) {
          if (!slots[slot]) slots[slot] = impl.pool.acquire();
          if (!slots[slot]) continue;
          slot_of[n] = slot;
          iovs[n] = {slots[slot]->storage.data(), slots[slot]->storage.size()};
          headers[n] = {};
          headers[n].msg_hdr.msg_iov = &iovs[n];
          headers[n].msg_hdr.msg_iovlen = 1;
          headers[n].msg_hdr.msg_name = &from[n];
          headers[n].msg_hdr.msg_namelen = sizeof(sockaddr_in);
          headers[n].msg_hdr.msg_control = control[n].data();
          headers[n].msg_hdr.msg_controllen = kControl;
          ++n;
        }
        if (n == 0) {
          // Every buffer is in flight: read one datagram into scratch space and count it as dropped.
          std::array<std::uint8_t, 64> scratch;
          if (recv(impl.socket.native_handle(), scratch.data(), scratch.size(), MSG_DONTWAIT | MSG_TRUNC) < 0) return;
          counters_.dropped_pool_empty.fetch_add(1, std::memory_order_relaxed);
          continue;
        }
        int got = recvmmsg(impl.socket.native_handle(), headers.data(), static_cast<unsigned>(n), MSG_DONTWAIT, nullptr);
        if (got <= 0) {
          if (got < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
            counters_.socket_errors.fetch_add(1, std::memory_order_relaxed);
          return;
        }
        const auto now = std::chrono::steady_clock::now();
        // Kernel stamps are CLOCK_REALTIME: move them onto the steady clock with one offset per batch.
        timespec real_now{};
        clock_gettime(CLOCK_REALTIME, &real_now);
        const std::int64_t real_now_ns = static_cast<std::int64_t>(real_now.tv_sec) * 1000000000 + real_now.tv_nsec;
        for (int i = 0; i < got; ++i) {
          PacketPtr p = std::move(slots[slot_of[static_cast<std::size_t>(i)]]);
          p->received = now;
          for (cmsghdr* c = CMSG_FIRSTHDR(&headers[i].msg_hdr); c; c = CMSG_NXTHDR(&headers[i].msg_hdr, c)) {
            if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SO_RXQ_OVFL) {
              // The socket's drops so far (a 32-bit count that wraps): its growth is counted.
              std::uint32_t drops = 0;
              std::memcpy(&drops, CMSG_DATA(c), sizeof drops);
              counters_.dropped_socket_buffer.fetch_add(static_cast<std::uint32_t>(drops - socket_drops_seen), std::memory_order_relaxed);
              socket_drops_seen = drops;
              continue;
            }
            if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_TIMESTAMPNS) continue;
            timespec ts{};
            std::memcpy(&ts, CMSG_DATA(c), sizeof ts);
            const std::int64_t stamp = static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
            const std::int64_t age = real_now_ns - stamp;
            if (age >= 0 && age < 10'000'000'000) p->received = now - std::chrono::nanoseconds(age);
          }
          p->size = std::min<std::size_t>(headers[i].msg_len, p->storage.size());
          p->truncated = (headers[i].msg_hdr.msg_flags & MSG_TRUNC) != 0;
          p->source_address = ntohl(from[i].sin_addr.s_addr);
          p->source_port = ntohs(from[i].sin_port);
          p->channel = config_.channel;
          p->destination_address = bound_address_;
          p->destination_port = bound_port_;
          counters_.datagrams.fetch_add(1, std::memory_order_relaxed);
          counters_.bytes.fetch_add(p->size, std::memory_order_relaxed);
          if (p->truncated) counters_.truncated.fetch_add(1, std::memory_order_relaxed);
          if (!out_.try_push(p)) counters_.dropped_queue_full.fetch_add(1, std::memory_order_relaxed);
        }
        // Slots not filled this round keep their buffers for the next call.
      }
    };

    std::function<void()> wait_readable = [&] {
      impl.socket.async_wait(udp::socket::wait_read, [&](const boost::system::error_code& ec) {
        if (ec || !running_.load()) return;
        drain();
        wait_readable();
      });
    };
    wait_readable();
    impl.io.run();
  });
}

void UdpReceiver::stop() {
  if (!running_.exchange(false)) return;
  impl_->io.stop();
  if (thread_.joinable()) thread_.join();
}

}  // namespace j2k::net
