#include "net/interface_address.hpp"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>

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

}  // namespace j2k::net
