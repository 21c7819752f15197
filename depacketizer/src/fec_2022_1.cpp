// SMPTE ST 2022-1 FEC decoder (column and row XOR parity).
#include "depacketizer/fec_2022_1.hpp"

#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "depacketizer/rtp.hpp"

namespace j2k::depacketizer::fec {

Result<FecHeader> parse_fec_header(Bytes payload, Bytes& body) {
  if (payload.size() < kFecHeaderSize)
    return make_error(ErrorKind::corrupt, fmt::format("FEC payload of {} bytes, shorter than its header", payload.size()));
  ByteReader r(payload);
  FecHeader h;
  h.sn_base_low = r.u16();
  h.length_recovery = r.u16();
  const std::uint32_t w = r.u32();
  h.extension = w >> 31;
  h.pt_recovery = static_cast<std::uint8_t>((w >> 24) & 0x7F);
  h.mask = w & 0xFFFFFF;
  h.ts_recovery = r.u32();
  const std::uint8_t b = r.u8();
  h.n = b & 0x80;
  h.row = b & 0x40;
  h.type = (b >> 3) & 7;
  h.index = b & 7;
  h.offset = r.u8();
  h.na = r.u8();
  h.sn_base_ext = r.u8();
  body = r.rest();
  // 2022-1 8.2: type 0 (XOR) only; a row protects consecutive packets (offset 1).
  if (h.type != 0) return make_error(ErrorKind::unsupported, fmt::format("FEC type {} (only XOR, 0)", h.type));
  if (h.offset == 0 || h.na == 0) return make_error(ErrorKind::corrupt, "FEC offset or NA of 0");
  if (h.row && h.offset != 1) return make_error(ErrorKind::corrupt, fmt::format("row FEC with offset {}", h.offset));
  return h;
}

void append_fec_header(std::vector<std::uint8_t>& out, const FecHeader& h) {
  ByteWriter w(out);
  w.u16(h.sn_base_low);
  w.u16(h.length_recovery);
  w.u32((h.extension ? 0x80000000u : 0) | static_cast<std::uint32_t>(h.pt_recovery & 0x7F) << 24 | (h.mask & 0xFFFFFF));
  w.u32(h.ts_recovery);
  w.u8(static_cast<std::uint8_t>((h.n ? 0x80 : 0) | (h.row ? 0x40 : 0) | (h.type & 7) << 3 | (h.index & 7)));
  w.u8(h.offset);
  w.u8(h.na);
  w.u8(h.sn_base_ext);
}

FecDecoder::FecDecoder(Recovered recovered, FecConfig config)
    : recovered_(std::move(recovered)),
      config_(config),
      slots_(std::max<std::uint32_t>(config.history, 64)),
      follower_(config.ssrc_quiet) {}

std::int64_t FecDecoder::extend(std::uint16_t seq) const {
  // Nearest extended number to the highest seen (16-bit serial arithmetic, RFC 3550 A.1).
  const auto delta = static_cast<std::int16_t>(static_cast<std::uint16_t>(seq - static_cast<std::uint16_t>(highest_)));
  return highest_ + delta;
}

bool FecDecoder::have(std::int64_t seq) const {
  if (seq < 0) return false;
  const Slot& s = slots_[index(seq)];
  return s.seq == seq && s.present;
}

void FecDecoder::advance_to(std::int64_t seq) {
  // New positions enter the window; what they displace leaves it.
  const std::int64_t history = static_cast<std::int64_t>(slots_.size());
  std::int64_t from = highest_ + 1;
  if (seq - from >= history) from = seq - history + 1;
  for (std::int64_t s = from; s <= seq; ++s) {
    Slot& sl = slot(s);
    sl.seq = s;
    sl.present = false;
    sl.written_off = false;
    sl.rebuilt = false;
  }
  highest_ = seq;
  expire_old();
}

void FecDecoder::store(std::int64_t seq, Bytes datagram) {
  if (seq < 0 || seq <= highest_ - static_cast<std::int64_t>(slots_.size())) return;  // older than the window
  if (seq > highest_) advance_to(seq);
  Slot& sl = slot(seq);
  if (sl.seq > seq) return;  // cannot happen inside the window; kept as a guard
  if (sl.seq != seq) {
    // A position the window never advanced over (older than the first packet seen), or one
    // still holding a number a whole history ago: it is this number's slot now.
    sl.seq = seq;
    sl.written_off = false;
  }
  sl.present = true;
  sl.rebuilt = false;
  sl.data.assign(datagram.begin(), datagram.end());  // reuses the slot's capacity
}

void FecDecoder::clear_window() {
  // What the groups still wait for is given up (counted), then every slot is forgotten.
  for (const Group& g : pending_) write_off(g);
  pending_.clear();
  arrived_.clear();
  for (auto& sl : slots_) {
    sl.seq = -1;
    sl.present = false;
    sl.written_off = false;
    sl.rebuilt = false;
  }
  stray_.clear();
}

void FecDecoder::finish() {
  solve_without_waiting();  // nothing more comes by any path
  for (const Group& g : pending_) write_off(g);
  pending_.clear();
}

void FecDecoder::start_over(std::uint16_t sequence, bool told) {
  if (started_) {
    ++counters_.restarts;
    clear_window();
  }
  started_ = true;
  highest_ = sequence;
  // Told to follow a stream already running, its packets before this one went to the session
  // unseen here; the very first packets of a stream may come reordered and stay welcome.
  first_ = told ? highest_ : std::numeric_limits<std::int64_t>::min();
  slot(highest_).seq = highest_;
}

void FecDecoder::reset() {
  if (started_) {
    solve_without_waiting();  // the source starts again: no copy comes for what waited
    clear_window();
  }
  started_ = false;
  start_at_next_ = false;
  highest_ = 0;
  follower_.reset();
}

void FecDecoder::follow(std::uint32_t ssrc) {
  if (follower_.followed() == ssrc) return;
  follower_.follow(ssrc);
  start_at_next_ = true;
}

void FecDecoder::on_media(Bytes datagram, std::optional<std::chrono::steady_clock::time_point> arrival) {
  auto packet = parse_rtp(datagram);
  if (!packet.ok() || datagram.size() > config_.max_packet_bytes) return;  // the session counts these
  switch (follower_.accept(packet->ssrc, packet->sequence, arrival)) {
    case SsrcFollower::Verdict::foreign:
      ++counters_.foreign;  // another sender's packet: never kept, never moves the window
      return;
    case SsrcFollower::Verdict::changed:
      start_over(packet->sequence);  // the first packet, or a new SSRC: new numbers
      break;
    case SsrcFollower::Verdict::followed:
      if (start_at_next_) start_over(packet->sequence, /*told=*/true);
      break;
  }
  start_at_next_ = false;
  std::int64_t seq = extend(packet->sequence);
  const std::int64_t history = static_cast<std::int64_t>(slots_.size());
  // Does it fit the window? A jump far ahead (not believable as loss), a number behind the
  // window, or a number already held with other content is a stray — or the sender started
  // again with new numbers: one stray is dropped, a run of them starts the window afresh.
  bool stray = seq < 0 || seq > highest_ + history * 4 || seq <= highest_ - history;
  if (!stray && have(seq)) {
    const Slot& held = slot(seq);
    if (held.rebuilt || std::equal(held.data.begin(), held.data.end(), datagram.begin(), datagram.end())) {
      stray_.clear();
      return;  // a copy (or the original of a packet rebuilt meanwhile)
    }
    stray = true;
  }
  if (stray) {
    if (!config_.restart_on_strays || stray_.add(packet->sequence) < kRestartRun) return;
    start_over(packet->sequence);
    seq = highest_;
  } else {
    stray_.clear();
  }
  store(seq, datagram);
  if (have(seq)) arrived(seq);
}

void FecDecoder::arrived(std::int64_t seq) {
  arrived_.push_back(seq);
  drain();
}

void FecDecoder::drain() {
  while (!arrived_.empty()) {
    const std::int64_t seq = arrived_.back();
    arrived_.pop_back();
    // Only counters change here; a group's packets are looked at again when it is down to one.
    for (Group& g : pending_)
      if (g.covers(seq) && --g.missing == 1) count_missing(g);
    solve_ready();
  }
}

void FecDecoder::count_missing(Group& g) {
  g.missing = 0;
  g.lost = -1;
  for (int k = 0; k < g.count; ++k) {
    const std::int64_t s = g.base + static_cast<std::int64_t>(k) * g.offset;
    ++lookups_;
    if (!have(s)) {
      ++g.missing;
      g.lost = s;
    }
  }
}

void FecDecoder::solve_without_waiting() {
  // What waited for another path's copy is rebuilt now (and what that completes in turn).
  final_ = true;
  solve_ready();
  drain();
  final_ = false;
}

void FecDecoder::retry_waiting() {
  if (waiting_ == 0) return;
  solve_ready();
  drain();
}

void FecDecoder::solve_ready() {
  waiting_ = 0;
  for (std::size_t i = 0; i < pending_.size();) {
    Group& g = pending_[i];
    // One missing is rebuilt once a later packet has arrived (the gap is real, not a packet
    // still on its way), and behind an ST 2022-7 merge once the lagging path's copy of it
    // had its time; a group with more missing waits for other groups to rebuild them.
    const bool ready = g.missing <= 0 || (g.missing == 1 && g.lost < highest_);
    const bool awaited = ready && g.missing == 1 && !final_ && config_.awaited &&
                         config_.awaited(static_cast<std::uint16_t>(g.lost));
    if (!ready || awaited) {
      waiting_ += awaited;
      ++i;
      continue;
    }
    // Another group may have rebuilt the same packet a moment ago (not yet counted here).
    if (g.missing == 1 && !have(g.lost)) rebuild(g);
    else if (g.missing <= 0) learn_matrix(g);
    pending_.erase(pending_.begin() + static_cast<std::ptrdiff_t>(i));
  }
}

void FecDecoder::on_fec(Bytes datagram) {
  auto packet = parse_rtp(datagram);
  if (!packet.ok()) {
    ++counters_.fec_malformed;
    return;
  }
  Bytes body;
  auto header = parse_fec_header(packet->payload, body);
  if (!header.ok()) {
    ++counters_.fec_malformed;
    return;
  }
  ++counters_.fec_packets;
  if (body.size() > config_.max_packet_bytes) {
    ++counters_.fec_malformed;
    return;
  }
  Group g;
  g.offset = header->offset;
  g.count = header->na;
  g.row = header->row;
  g.header = *header;
  g.marker = packet->marker;
  // The matrices ST 2022-1 allows (L, D ≤ 20, L·D ≤ 100; a row is L long), and the whole
  // row/column must fit in half the remembered history, so that a group is solved or
  // expired while its packets are still known.
  const bool standard = g.row ? g.count <= 20 : g.offset <= 20 && g.count <= 20 && g.offset * g.count <= 100;
  const std::int64_t span = static_cast<std::int64_t>(g.offset) * (g.count - 1) + 1;
  if (!standard || span > static_cast<std::int64_t>(slots_.size()) / 2) {
    ++counters_.fec_rejected;
    return;
  }
  if (!started_) {
    ++counters_.fec_rejected;  // no media yet: nothing to anchor the sequence numbers to
    return;
  }
  g.base = extend(header->sn_base_low);
  const std::int64_t history = static_cast<std::int64_t>(slots_.size());
  // A base before the stream's first packet (negative extended number; fuzz case
  // crash-5390df2f: its write-off indexed the history with a negative number) is rejected.
  // So is one from before the window started on being told to follow a stream: its packets
  // before the start were never seen here, though the session has them (FEC following the
  // stream from its second packet would rebuild the first, a duplicate the network never sent).
  if (g.base < 0 || g.base < first_ || g.last() <= highest_ - history / 2 || g.base > highest_ + history / 2) {
    ++counters_.fec_rejected;  // far behind or far ahead of the media: stale or stray
    return;
  }
  for (const Group& o : pending_)
    if (o.same_as(g)) {
      ++counters_.fec_rejected;  // a copy of a row or column already waiting
      return;
    }
  count_missing(g);
  if (g.missing == 0) {
    learn_matrix(g);  // nothing lost here: only its parity is checked
    return;
  }
  g.body.assign(body.begin(), body.end());
  if (pending_.size() >= config_.max_pending) {
    write_off(pending_.front());
    pending_.pop_front();
  }
  pending_.push_back(std::move(g));
  solve_ready();
  drain();
}

bool FecDecoder::parity_fits(const Group& g) {
  // The recovery fields are the XOR of the protected packets' lengths, payload types,
  // timestamps and markers: a FEC packet that did not come from this media (junk, another
  // sender's) fails them with near certainty. Its XORed payload is not compared (the
  // header fields decide, at a header parse per packet).
  std::uint16_t length = g.header.length_recovery;
  std::uint8_t pt = g.header.pt_recovery;
  std::uint32_t ts = g.header.ts_recovery;
  bool marker = g.marker;
  for (int k = 0; k < g.count; ++k) {
    const std::int64_t s = g.base + static_cast<std::int64_t>(k) * g.offset;
    ++lookups_;
    auto p = parse_rtp(slot(s).data);
    if (!p.ok()) return false;
    length ^= static_cast<std::uint16_t>(p->payload.size());
    pt ^= p->payload_type;
    ts ^= p->timestamp;
    marker ^= p->marker;
  }
  return length == 0 && (pt & 0x7F) == 0 && ts == 0 && !marker;
}

void FecDecoder::learn_matrix(const Group& g) {
  // The matrix shown is the last one a complete row or column proved on the media; a FEC
  // packet that merely passed the header checks (junk near the stream's numbers) does not
  // change it, and is counted.
  if (g.row ? g.count == l_ : (g.offset == l_ && g.count == d_)) return;  // the shape shown: nothing to prove
  if (!parity_fits(g)) {
    ++counters_.fec_mismatched;
    return;
  }
  if (g.row) {
    l_ = g.count;
  } else {
    l_ = g.offset;
    d_ = g.count;
  }
}

bool FecDecoder::rebuild(const Group& g) {
  const std::int64_t lost = g.lost;
  if (lost < 0 || lost >= highest_ || lost <= highest_ - static_cast<std::int64_t>(slots_.size())) return false;
  std::uint16_t length = g.header.length_recovery;
  std::uint8_t pt = g.header.pt_recovery;
  std::uint32_t ts = g.header.ts_recovery;
  bool marker = g.marker;
  scratch_.assign(g.body.begin(), g.body.end());
  for (int k = 0; k < g.count; ++k) {
    const std::int64_t s = g.base + static_cast<std::int64_t>(k) * g.offset;
    if (s == lost) continue;
    ++lookups_;
    auto p = parse_rtp(slot(s).data);
    if (!p.ok()) return false;  // cannot happen: stored packets were parsed
    length ^= static_cast<std::uint16_t>(p->payload.size());
    pt ^= p->payload_type;
    ts ^= p->timestamp;
    marker ^= p->marker;
    if (p->payload.size() > scratch_.size()) {
      ++counters_.fec_malformed;  // the parity is shorter than a packet it claims to protect
      return false;
    }
    for (std::size_t i = 0; i < p->payload.size(); ++i) scratch_[i] ^= p->payload[i];
  }
  if (length > scratch_.size()) {
    ++counters_.fec_malformed;  // recovered length past the parity payload
    return false;
  }
  std::vector<std::uint8_t> packet;
  packet.reserve(12 + length);
  ByteWriter w(packet);
  w.u8(0x80);  // V=2; padding and extension are outside the protected payload
  w.u8(static_cast<std::uint8_t>((marker ? 0x80 : 0) | (pt & 0x7F)));
  w.u16(static_cast<std::uint16_t>(lost));
  w.u32(ts);
  w.u32(follower_.followed().value_or(0));  // the stream's SSRC, which the other packets carry
  w.bytes(Bytes(scratch_.data(), length));
  ++counters_.recovered;
  store(lost, packet);
  slot(lost).rebuilt = true;
  arrived_.push_back(lost);  // may complete other groups (counted by drain)
  recovered_(packet);
  return true;
}

void FecDecoder::write_off(const Group& g) {
  bool any = false;
  for (int k = 0; k < g.count; ++k) {
    const std::int64_t s = g.base + static_cast<std::int64_t>(k) * g.offset;
    if (s < 0 || s <= highest_ - static_cast<std::int64_t>(slots_.size()) || s > highest_) continue;
    Slot& sl = slot(s);
    if (sl.seq == s && !sl.present && !sl.written_off) {
      sl.written_off = true;  // counted once, though a row and a column may both cover it
      ++counters_.unrecoverable;
      any = true;
    }
  }
  if (any) ++counters_.fec_expired;
}

void FecDecoder::expire_old() {
  // A group whose last packet is half a history behind will not be solved: the packets it
  // would need from other groups have had their chance.
  const std::int64_t limit = highest_ - static_cast<std::int64_t>(slots_.size()) / 2;
  for (std::size_t i = 0; i < pending_.size();) {
    if (pending_[i].last() < limit) {
      const Group g = std::move(pending_[i]);
      pending_.erase(pending_.begin() + static_cast<std::ptrdiff_t>(i));
      // One missing that waited for the lagging path's copy (FecConfig::awaited): the window
      // cannot hold its group longer, so it is rebuilt now.
      if (g.missing == 1 && g.lost < highest_ && !have(g.lost) && rebuild(g)) continue;
      write_off(g);
    } else {
      ++i;
    }
  }
}

}  // namespace j2k::depacketizer::fec
