#include "net/ipv4_reassembly.hpp"

#include <algorithm>

namespace j2k::net {

std::size_t Ipv4Reassembler::in_progress() const noexcept {
  return static_cast<std::size_t>(std::count_if(slots_.begin(), slots_.end(), [](const Slot& s) { return s.used; }));
}

void Ipv4Reassembler::give_up_all() noexcept {
  for (Slot& s : slots_)
    if (s.used) {
      s.used = false;
      ++counters_.given_up;
    }
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
  s.max_end = 0;
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
  // Past the end its last fragment gave, now or before it came (a fragment beyond the end
  // would have counted toward a datagram with a hole in it).
  s.max_end = std::max<std::uint32_t>(s.max_end, static_cast<std::uint32_t>(end));
  if (s.length != 0 && s.max_end > s.length) {
    s.used = false;
    ++counters_.malformed;
    return std::nullopt;
  }
  // Overlaps (RFC 5722's rule, which Linux applies to IPv4 too): a fragment received twice
  // with the same bytes is a duplicate, dropped; one over bytes already held with other bytes
  // makes the datagram ambiguous, dropped whole.
  const std::size_t first_unit = f.offset / 8, end_unit = (end + 7) / 8;
  auto held = [&](std::size_t u) { return (s.have[u / 64] >> (u % 64)) & 1; };
  std::size_t already = 0;
  for (std::size_t u = first_unit; u < end_unit; ++u) already += held(u);
  if (end_unit > first_unit && already == end_unit - first_unit &&
      std::equal(f.data.begin(), f.data.end(), s.bytes.begin() + f.offset)) {
    ++counters_.duplicates;
    return std::nullopt;
  }
  if (already > 0) {
    s.used = false;
    ++counters_.malformed;
    return std::nullopt;
  }
  std::copy(f.data.begin(), f.data.end(), s.bytes.begin() + f.offset);
  for (std::size_t u = first_unit; u < end_unit; ++u) {
    s.have[u / 64] |= std::uint64_t{1} << (u % 64);
    ++s.covered;
  }
  if (s.length == 0 || s.covered != (s.length + 7) / 8) return std::nullopt;
  s.used = false;
  ++counters_.datagrams;
  done_.assign(s.bytes.begin(), s.bytes.begin() + s.length);
  return std::span<const std::uint8_t>(done_);
}

}  // namespace j2k::net
