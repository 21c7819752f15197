#pragma once
// Where datagrams come from: a socket (UdpReceiver) or a capture file (PcapReplay).
// Either fills pooled packets into the same bounded queue on its own thread.
#include <atomic>
#include <cstdint>

#include "core/bounded_queue.hpp"
#include "core/result.hpp"
#include "net/packet.hpp"

namespace j2k::net {

/// Counters the input thread writes and anyone may read.
struct ReceiverCounters {
  std::atomic<std::uint64_t> datagrams{0};
  std::atomic<std::uint64_t> bytes{0};
  std::atomic<std::uint64_t> dropped_queue_full{0};   ///< consumer too slow
  std::atomic<std::uint64_t> dropped_pool_empty{0};   ///< all buffers in flight
  std::atomic<std::uint64_t> truncated{0};            ///< larger than a pool buffer
  std::atomic<std::uint64_t> socket_errors{0};
  /// Datagrams the kernel dropped because the socket's receive buffer was full (SO_RXQ_OVFL):
  /// lost on this host, not on the network. Known when the next datagram after them arrives.
  std::atomic<std::uint64_t> dropped_socket_buffer{0};
};

using PacketQueue = BoundedQueue<PacketPtr>;

class PacketSource {
 public:
  virtual ~PacketSource() = default;
  virtual void start() = 0;
  virtual void stop() = 0;
  virtual const ReceiverCounters& counters() const noexcept = 0;
  /// Local port (sockets) or the port filtered on (captures).
  virtual std::uint16_t port() const noexcept = 0;
  /// True when the input has ended (end of a capture file); a socket never ends.
  virtual bool finished() const noexcept { return false; }
};

}  // namespace j2k::net
