#include "net/udp_sender.hpp"

#include <fmt/format.h>
#include <sys/socket.h>

#include <boost/asio.hpp>

#include "net/interface_address.hpp"

namespace j2k::net {

namespace asio = boost::asio;
using asio::ip::udp;

struct UdpSender::Impl {
  asio::io_context io;
  udp::socket socket{io};
  udp::endpoint destination;
};

UdpSender::UdpSender(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
UdpSender::~UdpSender() = default;

Result<std::unique_ptr<UdpSender>> UdpSender::open(const SenderConfig& config) {
  boost::system::error_code ec;
  auto address = asio::ip::make_address_v4(config.address, ec);
  if (ec) return make_error(ErrorKind::corrupt, fmt::format("destination '{}' is not an IPv4 address", config.address));
  auto impl = std::make_unique<Impl>();
  impl->destination = udp::endpoint(address, config.port);
  impl->socket.open(udp::v4(), ec);
  if (ec) return make_error(ErrorKind::io, fmt::format("cannot open a UDP socket: {}", ec.message()));
  if (!config.bind_address.empty()) {
    auto local = asio::ip::make_address_v4(config.bind_address, ec);
    if (ec) return make_error(ErrorKind::corrupt, fmt::format("source address '{}' is not an IPv4 address", config.bind_address));
    impl->socket.bind(udp::endpoint(local, 0), ec);
    if (ec) return make_error(ErrorKind::io, fmt::format("cannot send from {}: {} (is it a local address?)", config.bind_address, ec.message()));
  }
  int want = config.send_buffer;
  if (setsockopt(impl->socket.native_handle(), SOL_SOCKET, SO_SNDBUFFORCE, &want, sizeof want) != 0)
    impl->socket.set_option(asio::socket_base::send_buffer_size(want), ec);
  if (address.is_multicast()) {
    impl->socket.set_option(asio::ip::multicast::hops(config.ttl), ec);
    impl->socket.set_option(asio::ip::multicast::enable_loopback(true), ec);
    if (!config.iface.empty()) {
      auto found = interface_address(config.iface);
      if (!found) return found.error();
      const auto iface = *found;
      impl->socket.set_option(asio::ip::multicast::outbound_interface(iface), ec);
      if (ec)
        return make_error(ErrorKind::io, fmt::format("cannot send multicast via {}: {}", config.iface, ec.message()));
    }
  }
  return std::unique_ptr<UdpSender>(new UdpSender(std::move(impl)));
}

bool UdpSender::send(std::span<const std::uint8_t> datagram) {
  boost::system::error_code ec;
  impl_->socket.send_to(asio::buffer(datagram.data(), datagram.size()), impl_->destination, 0, ec);
  return !ec;
}

}  // namespace j2k::net
