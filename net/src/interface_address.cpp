#include "net/interface_address.hpp"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <optional>
#include <vector>

#include <fmt/format.h>

namespace j2k::net {

namespace {

struct Ipv4Interface {
  std::string name;
  boost::asio::ip::address_v4 address;
};

/// This machine's interfaces with an IPv4 address, in getifaddrs order; nothing when they
/// cannot be listed (errno says why).
std::optional<std::vector<Ipv4Interface>> ipv4_list() {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return std::nullopt;
  const std::unique_ptr<ifaddrs, decltype(&freeifaddrs)> owner(list, &freeifaddrs);
  std::vector<Ipv4Interface> out;
  for (const ifaddrs* a = list; a; a = a->ifa_next) {
    if (!a->ifa_addr || a->ifa_addr->sa_family != AF_INET || !a->ifa_name) continue;
    const auto* in = reinterpret_cast<const sockaddr_in*>(a->ifa_addr);
    out.push_back({a->ifa_name, boost::asio::ip::address_v4(ntohl(in->sin_addr.s_addr))});
  }
  return out;
}

/// "eth0 10.0.0.5, lo 127.0.0.1".
std::string describe(const std::vector<Ipv4Interface>& list) {
  std::string known;
  for (const auto& i : list) known += fmt::format("{}{} {}", known.empty() ? "" : ", ", i.name, i.address.to_string());
  return known;
}

/// By name, or (`address_must_be_local`) by an address this machine has.
Result<boost::asio::ip::address_v4> find_interface(const std::string& iface, bool address_must_be_local) {
  boost::system::error_code ec;
  const auto literal = boost::asio::ip::make_address_v4(iface, ec);
  if (!ec && !address_must_be_local) return literal;
  const auto list = ipv4_list();
  if (!list)
    return make_error(ErrorKind::io, fmt::format("cannot list the interfaces for '{}': {}", iface, std::strerror(errno)));
  for (const auto& i : *list)
    if (iface == i.name || (!ec && i.address == literal)) return i.address;
  const std::string known = list->empty() ? "none with IPv4" : describe(*list);
  if (!ec)
    return make_error(ErrorKind::corrupt,
                      fmt::format("interface address {} is not one of this machine's (interfaces: {})", iface, known));
  return make_error(ErrorKind::corrupt,
                    fmt::format("interface '{}' is neither an IPv4 address nor an interface with one (interfaces: {})",
                                iface, known));
}

}  // namespace

Result<boost::asio::ip::address_v4> interface_address(const std::string& iface) { return find_interface(iface, false); }

Result<boost::asio::ip::address_v4> local_interface_address(const std::string& iface) { return find_interface(iface, true); }

std::string ipv4_interfaces() {
  const auto list = ipv4_list();
  return list ? describe(*list) : std::string();
}

std::string route_interface(const boost::asio::ip::address_v4& destination) {
  // A UDP socket "connected" to the destination sends nothing: the kernel only picks the route
  // and with it the local address, which names the interface.
  const int fd = ::socket(AF_INET, SOCK_DGRAM, 0);
  if (fd < 0) return {};
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(9);
  to.sin_addr.s_addr = htonl(destination.to_uint());
  sockaddr_in local{};
  socklen_t len = sizeof local;
  const bool routed = ::connect(fd, reinterpret_cast<const sockaddr*>(&to), sizeof to) == 0 &&
                      ::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &len) == 0;
  ::close(fd);
  if (!routed) return {};
  const boost::asio::ip::address_v4 address(ntohl(local.sin_addr.s_addr));
  if (const auto list = ipv4_list())
    for (const auto& i : *list)
      if (i.address == address) return fmt::format("{} {}", i.name, address.to_string());
  return address.to_string();
}

}  // namespace j2k::net
