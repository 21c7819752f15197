#pragma once
// Datagrams as they come off the socket, in buffers from a fixed pool:
// no allocation per packet, and a hard upper bound on memory in flight.
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

namespace j2k::net {

struct Packet {
  std::vector<std::uint8_t> storage;  ///< fixed capacity, allocated once by the pool
  std::size_t size = 0;               ///< bytes of the datagram in storage
  std::chrono::steady_clock::time_point received{};
  std::uint32_t source_address = 0;   ///< IPv4, host order (0 for other families)
  std::uint16_t source_port = 0;
  std::uint32_t destination_address = 0;  ///< IPv4, host order: the group (or local address) bound, or the capture's; 0: any
  std::uint16_t destination_port = 0;     ///< the port it arrived on (the socket's, or the capture's)
  bool truncated = false;             ///< datagram was larger than the buffer
  int channel = 0;                    ///< which socket of a stream (ReceiverConfig::channel)
  bool restart = false;               ///< the source started again (a looped capture's first datagram):
                                      ///< sequence numbers and timestamps begin afresh here

  std::span<const std::uint8_t> bytes() const { return {storage.data(), size}; }
};

/// The buffers and free list of a pool. Shared by the pool and every packet handed out, so a
/// packet still queued somewhere when the pool object goes away returns to live memory.
struct PacketPoolState {
  std::size_t buffer_size = 0;
  std::size_t capacity = 0;
  std::mutex mutex;  // guards packets (made on demand, up to capacity) and free
  std::vector<std::unique_ptr<Packet>> packets;
  std::vector<Packet*> free;
};

/// Returns a packet to its pool when released.
struct PacketReturner {
  std::shared_ptr<PacketPoolState> pool;
  void operator()(Packet* p) const noexcept;
};
using PacketPtr = std::unique_ptr<Packet, PacketReturner>;

/// A bounded set of packet buffers, made on first use. Thread-safe; acquire returns null
/// when all `count` are in use.
class PacketPool {
 public:
  PacketPool(std::size_t count, std::size_t buffer_size);
  PacketPool(const PacketPool&) = delete;
  PacketPool& operator=(const PacketPool&) = delete;

  PacketPtr acquire();
  std::size_t capacity() const noexcept { return state_->capacity; }
  std::size_t buffer_size() const noexcept { return state_->buffer_size; }
  std::size_t available() const;

 private:
  std::shared_ptr<PacketPoolState> state_;
};

}  // namespace j2k::net
