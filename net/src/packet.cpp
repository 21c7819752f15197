#include "net/packet.hpp"

namespace j2k::net {

void PacketReturner::operator()(Packet* p) const noexcept {
  if (pool && p) pool->release(p);
}

PacketPool::PacketPool(std::size_t count, std::size_t buffer_size) : buffer_size_(buffer_size) {
  packets_.reserve(count);
  free_.reserve(count);
  for (std::size_t i = 0; i < count; ++i) {
    auto p = std::make_unique<Packet>();
    p->storage.resize(buffer_size);
    free_.push_back(p.get());
    packets_.push_back(std::move(p));
  }
}

PacketPtr PacketPool::acquire() {
  std::lock_guard lock(mutex_);
  if (free_.empty()) return PacketPtr(nullptr, PacketReturner{this});
  Packet* p = free_.back();
  free_.pop_back();
  p->size = 0;
  p->truncated = false;
  return PacketPtr(p, PacketReturner{this});
}

void PacketPool::release(Packet* p) noexcept {
  std::lock_guard lock(mutex_);
  free_.push_back(p);
}

std::size_t PacketPool::available() const {
  std::lock_guard lock(mutex_);
  return free_.size();
}

}  // namespace j2k::net
