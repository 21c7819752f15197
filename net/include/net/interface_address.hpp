#pragma once
// `?iface=`: the local interface a multicast group is joined (or sent) on, given as its IPv4
// address (10.0.0.5) or by name (eth0, enp3s0: its first IPv4 address).
#include <string>

#include <boost/asio/ip/address_v4.hpp>

#include "core/result.hpp"

namespace j2k::net {

/// The interface's IPv4 address; an error names the interfaces that have one. An address is
/// taken as given (joining a group on it says whether it is local).
Result<boost::asio::ip::address_v4> interface_address(const std::string& iface);

/// The same, for an address too: it must be one of this machine's (for a unicast receiver,
/// where nothing else would notice a wrong one).
Result<boost::asio::ip::address_v4> local_interface_address(const std::string& iface);

/// This machine's interfaces with an IPv4 address: "eth0 10.0.0.5, lo 127.0.0.1" ("" if none).
std::string ipv4_interfaces();

/// The interface the kernel's routes choose for `destination` (where a group joined without
/// ?iface= is joined): "wlan0 192.168.1.5", or "" when no route leads there.
std::string route_interface(const boost::asio::ip::address_v4& destination);

}  // namespace j2k::net
