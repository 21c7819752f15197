#pragma once
// Receives UDP datagrams (unicast, or multicast any-source / source-specific on a
// chosen interface) on its own thread into pooled packets, and hands them on
// through a bounded queue. The receive thread only receives: it never parses.
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>

#include "core/bounded_queue.hpp"
#include "core/result.hpp"
#include "net/packet_source.hpp"

namespace j2k::net {

struct ReceiverConfig {
  std::string address;        ///< multicast group or local unicast address ("0.0.0.0" = any)
  std::uint16_t port = 0;
  std::string iface;          ///< local interface address used to join the group ("" = kernel's choice)
  std::string source;         ///< source-specific multicast: only this sender ("" = any source)
  int receive_buffer = 32 << 20;  ///< SO_RCVBUF to ask for, bytes
  std::size_t pool_packets = 8192;
  std::size_t packet_size = 9216;  ///< jumbo frames fit
  int channel = 0;                 ///< stamped on each packet (2022-7 path, 2022-1 FEC stream)
};


class UdpReceiver final : public PacketSource {
 public:
  /// Opens and binds the socket and joins the group. Errors say what to check.
  static Result<std::unique_ptr<UdpReceiver>> open(const ReceiverConfig& config, PacketQueue& out);
  ~UdpReceiver() override;

  void start() override;  ///< starts the receive thread
  void stop() override;   ///< stops and joins it; idempotent

  const ReceiverCounters& counters() const noexcept override { return counters_; }
  std::uint16_t port() const noexcept override { return bound_port_; }
  int granted_receive_buffer() const noexcept { return granted_buffer_; }
  /// True when arrival times come from the kernel (SO_TIMESTAMPNS), not from this thread.
  bool kernel_timestamps() const noexcept { return kernel_timestamps_; }
  /// A group socket takes only the groups it joined itself, on the interface it joined them
  /// on (IP_MULTICAST_ALL off; false where the kernel lacks the option).
  bool own_groups_only() const noexcept { return own_groups_only_; }
  /// The local port actually bound (useful when the config asked for port 0).
  std::uint16_t bound_port() const noexcept { return bound_port_; }
  const ReceiverConfig& config() const noexcept { return config_; }

 private:
  struct Impl;
  UdpReceiver(const ReceiverConfig& config, PacketQueue& out);

  ReceiverConfig config_;
  PacketQueue& out_;
  ReceiverCounters counters_;
  int granted_buffer_ = 0;
  std::uint16_t bound_port_ = 0;
  std::uint32_t bound_address_ = 0;  ///< the group or local address bound (0: any)
  bool kernel_timestamps_ = false;
  bool own_groups_only_ = false;
  std::unique_ptr<Impl> impl_;
  std::thread thread_;
  std::atomic<bool> running_{false};
};

}  // namespace j2k::net
