#include "net/interface_address.hpp"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include <fmt/format.h>

namespace j2k::net {

namespace {

/// By name, or (`address_must_be_local`) by an address this machine has.
Result<boost::asio::ip::address_v4> find_interface(const std::string& iface, bool address_must_be_local) {
  boost::system::error_code ec;
  const auto literal = boost::asio::ip::make_address_v4(iface, ec);
  if (!ec && !address_must_be_local) return literal;
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0)
    return make_error(ErrorKind::io, fmt::format("cannot list the interfaces for '{}': {}", iface, std::strerror(errno)));
  const std::unique_ptr<ifaddrs, decltype(&freeifaddrs)> owner(list, &freeifaddrs);
  std::string known;
  for (const ifaddrs* a = list; a; a = a->ifa_next) {
    if (!a->ifa_addr || a->ifa_addr->sa_family != AF_INET || !a->ifa_name) continue;
    const auto* in = reinterpret_cast<const sockaddr_in*>(a->ifa_addr);
    const boost::asio::ip::address_v4 address(ntohl(in->sin_addr.s_addr));
    if (iface == a->ifa_name || (!ec && address == literal)) return address;
    known += fmt::format("{}{} {}", known.empty() ? "" : ", ", a->ifa_name, address.to_string());
  }
  if (!ec)
    return make_error(ErrorKind::corrupt, fmt::format("interface address {} is not one of this machine's (interfaces: {})",
                                                      iface, known.empty() ? "none with IPv4" : known));
  return make_error(ErrorKind::corrupt,
                    fmt::format("interface '{}' is neither an IPv4 address nor an interface with one (interfaces: {})",
                                iface, known.empty() ? "none with IPv4" : known));
}

}  // namespace

Result<boost::asio::ip::address_v4> interface_address(const std::string& iface) { return find_interface(iface, false); }

Result<boost::asio::ip::address_v4> local_interface_address(const std::string& iface) { return find_interface(iface, true); }

std::string ipv4_interfaces() {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return {};
  const std::unique_ptr<ifaddrs, decltype(&freeifaddrs)> owner(list, &freeifaddrs);
  std::string known;
  for (const ifaddrs* a = list; a; a = a->ifa_next) {
    if (!a->ifa_addr || a->ifa_addr->sa_family != AF_INET || !a->ifa_name) continue;
    const auto* in = reinterpret_cast<const sockaddr_in*>(a->ifa_addr);
    known += fmt::format("{}{} {}", known.empty() ? "" : ", ", a->ifa_name,
                         boost::asio::ip::address_v4(ntohl(in->sin_addr.s_addr)).to_string());
  }
  return known;
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
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return address.to_string();
  const std::unique_ptr<ifaddrs, decltype(&freeifaddrs)> owner(list, &freeifaddrs);
  for (const ifaddrs* a = list; a; a = a->ifa_next)
    if (a->ifa_addr && a->ifa_addr->sa_family == AF_INET && a->ifa_name &&
        reinterpret_cast<const sockaddr_in*>(a->ifa_addr)->sin_addr.s_addr == local.sin_addr.s_addr)
      return fmt::format("{} {}", a->ifa_name, address.to_string());
  return address.to_string();
}

}  // namespace j2k::net
