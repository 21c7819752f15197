#include "net/ipv4_reassembly.hpp"

#include <algorithm>

namespace j2k::net {

std::size_t Ipv4Reassembler::in_progress() const noexcept {
  return static_cast<std::size_t>(std::count_if(slots_.begin(), slots_.end(), [](const Slot& s) { return s.used; }));
}

void Ipv4Reassembler::give_up_older_than(std::chrono::nanoseconds time) {
  for (Slot& s : slots_)
    if (s.used && (time - s.first > kMaxAge || time < s.first - kMaxAge)) {  // (a clock stepped back: also stale)
      s.used = false;
      ++counters_.given_up;
    }
}

Ipv4Reassembler::Slot& Ipv4Reassembler::slot_for(const Ipv4Fragment& f, std::chrono::nanoseconds time) {
  // RFC 791: source, destination, protocol and identification name the datagram.
  for (Slot& s : slots_)
    if (s.used && s.id == f.id && s.source == f.source && s.destination == f.destination && s.protocol == f.protocol)
      return s;
  Slot* pick = nullptr;
  for (Slot& s : slots_)
    if (!s.used) {
      pick = &s;
      break;
    }
  if (!pick) {  // every slot busy: the oldest datagram's missing fragments are not coming
    pick = &*std::min_element(slots_.begin(), slots_.end(), [](const Slot& a, const Slot& b) { return a.first < b.first; });
    ++counters_.given_up;
  }
  Slot& s = *pick;
  s.used = true;
  s.source = f.source;
  s.destination = f.destination;
  s.id = f.id;
  s.protocol = f.protocol;
  s.first = time;
  s.length = 0;
  s.covered = 0;
  s.have.assign((kUnits + 63) / 64, 0);
  if (s.bytes.size() != kMaxDatagram) s.bytes.resize(kMaxDatagram);
  return s;
}

std::optional<std::span<const std::uint8_t>> Ipv4Reassembler::add(const Ipv4Fragment& f, std::chrono::nanoseconds time) {
  ++counters_.fragments;
  give_up_older_than(time);
  const std::size_t end = static_cast<std::size_t>(f.offset) + f.data.size();
  // A fragment that is not the last carries whole 8-byte units (the next one's offset could
  // not be said otherwise); none reaches past the largest datagram.
  if (end > kMaxDatagram || (f.more && (f.data.size() % 8 != 0 || f.data.empty())) || f.offset % 8 != 0) {
    ++counters_.malformed;
    return std::nullopt;
  }
  Slot& s = slot_for(f, time);
  if (!f.more) {
    if (s.length != 0 && s.length != end) {  // two different ends: not one datagram
      s.used = false;
      ++counters_.malformed;
      return std::nullopt;
    }
    s.length = static_cast<std::uint32_t>(end);
  }
  if (s.length != 0 && end > s.length) {  // past the end its last fragment gave
    s.used = false;
    ++counters_.malformed;
    return std::nullopt;
  }
  std::copy(f.data.begin(), f.data.end(), s.bytes.begin() + f.offset);
  for (std::size_t u = f.offset / 8; u < (end + 7) / 8; ++u) {
    std::uint64_t& word = s.have[u / 64];
    const std::uint64_t bit = std::uint64_t{1} << (u % 64);
    if (!(word & bit)) {
      word |= bit;
      ++s.covered;
    }
  }
  if (s.length == 0 || s.covered != (s.length + 7) / 8) return std::nullopt;
  s.used = false;
  ++counters_.datagrams;
  done_.assign(s.bytes.begin(), s.bytes.begin() + s.length);
  return std::span<const std::uint8_t>(done_);
}

}  // namespace j2k::net
