#pragma once
// Sends datagrams to a unicast or multicast destination (the test sender's socket).
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "core/result.hpp"

namespace j2k::net {

struct SenderConfig {
  std::string address;   ///< destination (unicast or multicast group)
  std::uint16_t port = 0;
  std::string iface;     ///< local interface address for outgoing multicast
  int ttl = 1;
  int send_buffer = 8 << 20;
  std::string bind_address;  ///< local source address ("" = the kernel's choice)
};

class UdpSender {
 public:
  static Result<std::unique_ptr<UdpSender>> open(const SenderConfig& config);
  ~UdpSender();
  /// Sends one datagram; false when the kernel refused it (counted by the caller).
  bool send(std::span<const std::uint8_t> datagram);

 private:
  struct Impl;
  explicit UdpSender(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace j2k::net
