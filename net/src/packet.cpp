#include "net/packet.hpp"

namespace j2k::net {

void PacketReturner::operator()(Packet* p) const noexcept {
  if (!pool || !p) return;
  std::lock_guard lock(pool->mutex);
  pool->free.push_back(p);
}

PacketPool::PacketPool(std::size_t count, std::size_t buffer_size) : state_(std::make_shared<PacketPoolState>()) {
  state_->buffer_size = buffer_size;
  state_->packets.reserve(count);
  state_->free.reserve(count);
  for (std::size_t i = 0; i < count; ++i) {
    auto p = std::make_unique<Packet>();
    p->storage.resize(buffer_size);
    state_->free.push_back(p.get());
    state_->packets.push_back(std::move(p));
  }
}

PacketPtr PacketPool::acquire() {
  std::lock_guard lock(state_->mutex);
  if (state_->free.empty()) return PacketPtr(nullptr, PacketReturner{});
  Packet* p = state_->free.back();
  state_->free.pop_back();
  p->size = 0;
  p->truncated = false;
  return PacketPtr(p, PacketReturner{state_});
}

std::size_t PacketPool::available() const {
  std::lock_guard lock(state_->mutex);
  return state_->free.size();
}

}  // namespace j2k::net
