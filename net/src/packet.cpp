#include "net/packet.hpp"

namespace j2k::net {

void PacketReturner::operator()(Packet* p) const noexcept {
  if (!pool || !p) return;
  std::lock_guard lock(pool->mutex);
  pool->free.push_back(p);
}

PacketPool::PacketPool(std::size_t count, std::size_t buffer_size) : state_(std::make_shared<PacketPoolState>()) {
  // Buffers are made on demand, up to `count`: a receiver binds its socket at once instead
  // of zero-filling tens of MB first, and memory follows the traffic actually in flight.
  state_->buffer_size = buffer_size;
  state_->capacity = count;
  state_->packets.reserve(count);
  state_->free.reserve(count);
}

PacketPtr PacketPool::acquire() {
  std::lock_guard lock(state_->mutex);
  if (state_->free.empty() && state_->packets.size() < state_->capacity) {
    auto p = std::make_unique<Packet>();
    p->storage.resize(state_->buffer_size);
    state_->free.push_back(p.get());
    state_->packets.push_back(std::move(p));
  }
  if (state_->free.empty()) return PacketPtr(nullptr, PacketReturner{});
  Packet* p = state_->free.back();
  state_->free.pop_back();
  p->size = 0;
  p->truncated = false;
  return PacketPtr(p, PacketReturner{state_});
}

std::size_t PacketPool::available() const {
  std::lock_guard lock(state_->mutex);
  return state_->free.size() + (state_->capacity - state_->packets.size());
}

}  // namespace j2k::net
