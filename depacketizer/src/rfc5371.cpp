#include "depacketizer/rfc5371.hpp"

#include <algorithm>

#include "depacketizer/mxf_rtp_depacketizer.hpp"
#include "depacketizer/ts_depacketizer.hpp"

namespace j2k::depacketizer {

Result<Rfc5371Header> parse_rfc5371_header(Bytes payload, Bytes& body) {
  if (payload.size() < 8) return make_error(ErrorKind::corrupt, "RFC 5371 payload shorter than its 8-byte header");
  ByteReader r(payload);
  const std::uint8_t b0 = r.u8();
  Rfc5371Header h;
  h.tp = b0 >> 6;
  h.mhf = (b0 >> 4) & 3;
  h.mh_id = (b0 >> 1) & 7;
  h.tile_invalid = b0 & 1;
  h.priority = r.u8();
  h.tile = r.u16();
  r.skip(1);  // reserved
  h.fragment_offset = r.u24();
  if (h.tp == 3) return make_error(ErrorKind::corrupt, "RFC 5371 tp = 3 is reserved");
  body = r.rest();
  return h;
}

void append_rfc5371_header(std::vector<std::uint8_t>& out, const Rfc5371Header& h) {
  out.push_back(static_cast<std::uint8_t>(h.tp << 6 | h.mhf << 4 | (h.mh_id & 7) << 1 | (h.tile_invalid ? 1 : 0)));
  out.push_back(static_cast<std::uint8_t>(h.priority));
  out.push_back(static_cast<std::uint8_t>(h.tile >> 8));
  out.push_back(static_cast<std::uint8_t>(h.tile));
  out.push_back(0);
  out.push_back(static_cast<std::uint8_t>(h.fragment_offset >> 16));
  out.push_back(static_cast<std::uint8_t>(h.fragment_offset >> 8));
  out.push_back(static_cast<std::uint8_t>(h.fragment_offset));
}

Rfc5371Depacketizer::Rfc5371Depacketizer(Sink sink, std::size_t max_codestream_bytes)
    : sink_(std::move(sink)), max_bytes_(max_codestream_bytes) {}

void Rfc5371Depacketizer::push(const RtpPacket& packet, bool loss_before,
                               std::chrono::steady_clock::time_point arrival) {
  if (active_ && packet.timestamp != timestamp_) finish_unit();
  if (active_ && arrival - first_arrival_ > kMaxUnitAge) {
    ++counters_.units_capped;
    first_.damaged = second_.damaged = true;
    finish_unit();
  }
  Bytes body;
  auto header = parse_rfc5371_header(packet.payload, body);
  if (!header) {
    ++counters_.malformed;
    if (active_) first_.damaged = second_.damaged = true;
    return;
  }
  if (!active_) {
    active_ = true;
    timestamp_ = packet.timestamp;
    first_arrival_ = arrival;
  }
  last_arrival_ = arrival;
  if (header->tp != 0) interlaced_ = true;  // (for this unit: a stream may change)
  Assembly& a = field(header->tp);
  // Loss needs no flag of its own here: a lost fragment shows as a hole in the offsets, a
  // lost last fragment as a missing M bit, a lost first fragment as a missing SOC.
  (void)loss_before;
  const std::uint64_t end = static_cast<std::uint64_t>(header->fragment_offset) + body.size();
  if (end > max_bytes_) {
    ++counters_.malformed;
    a.damaged = true;
    return;
  }
  // Memory follows the data received: a fragment far beyond what arrived of its codestream
  // is not believed (RFC 5371 3.2 offsets count bytes the sender sent; with most of them
  // lost the frame is unusable anyway).
  if (end > a.bytes.size() && end > kOffsetSlack + kOffsetFactor * (a.received + body.size())) {
    ++counters_.offsets_rejected;
    a.damaged = true;
    return;
  }
  a.received += body.size();
  // Whole is judged by the bytes covered, not by the order they came in: a repeated main
  // header, or fragments sent out of offset order, join up (what is left uncovered at the
  // end is the codestream's holes).
  if (!body.empty() && !add_run(a, header->fragment_offset, end)) a.damaged = true;
  if (a.bytes.size() < end) a.bytes.resize(static_cast<std::size_t>(end));
  std::copy(body.begin(), body.end(), a.bytes.begin() + header->fragment_offset);
  a.started = true;
  if (packet.marker) {
    a.ended = true;
    // A progressive frame, or the second field, ends the unit.
    if (header->tp == 0 || header->tp == 2) finish_unit();
  }
}

bool Rfc5371Depacketizer::add_run(Assembly& a, std::uint64_t begin, std::uint64_t end) {
  auto& runs = a.runs;
  // The first run ending at or after `begin` (touching counts), and the first starting after `end`.
  auto first = std::lower_bound(runs.begin(), runs.end(), begin,
                                [](const auto& run, std::uint64_t b) { return run.second < b; });
  auto last = std::upper_bound(first, runs.end(), end, [](std::uint64_t e, const auto& run) { return e < run.first; });
  if (first == last) {
    if (runs.size() + 1 >= kMaxHoles) return false;  // (with the tail, at most kMaxHoles holes)
    runs.insert(first, {begin, end});
    return true;
  }
  first->first = std::min(first->first, begin);
  first->second = std::max(std::prev(last)->second, end);
  runs.erase(std::next(first), last);
  return true;
}

void Rfc5371Depacketizer::finish_unit() {
  if (!active_) return;
  CodestreamUnit unit;
  unit.rtp_timestamp = timestamp_;
  unit.first_arrival = first_arrival_;
  unit.last_arrival = last_arrival_;
  unit.expected_elements = interlaced_ ? 2 : 1;
  for (Assembly* a : {&first_, &second_}) {
    if (!a->started) continue;
    // The holes: what no fragment covered between offset 0 and the end seen.
    std::uint64_t at = 0;
    for (const auto& [b, e] : a->runs) {
      if (b > at) {
        unit.missing_bytes += b - at;
        unit.missing_ranges.push_back({unit.codestreams.size(), at, b});
      }
      at = e;
    }
    if (a->bytes.size() > at) {  // fragments past the last run kept (the list was full)
      unit.missing_bytes += a->bytes.size() - at;
      unit.missing_ranges.push_back({unit.codestreams.size(), at, a->bytes.size()});
    }
    // Whole means: every byte from offset 0 covered, starting with SOC, and the M bit seen.
    const bool covered = a->runs.size() == 1 && a->runs.front().first == 0;
    const bool whole = !a->damaged && covered && a->ended && a->bytes.size() >= 2 && a->bytes[0] == 0xFF &&
                       a->bytes[1] == 0x4F;
    if (!whole) unit.complete = false;
    unit.codestreams.push_back(std::move(a->bytes));
  }
  if (static_cast<int>(unit.codestreams.size()) < unit.expected_elements) unit.complete = false;
  first_ = Assembly{};
  second_ = Assembly{};
  interlaced_ = false;
  active_ = false;
  unit.index = next_index_++;
  if (unit.complete) ++counters_.units_complete;
  else ++counters_.units_incomplete;
  sink_(std::move(unit));
}

void Rfc5371Depacketizer::flush() { finish_unit(); }

std::optional<PayloadFormat> parse_payload_format(const std::string& name) {
  if (name == "mxf") return PayloadFormat::mxf;
  if (name == "rfc5371" || name == "j2k") return PayloadFormat::rfc5371;
  if (name == "ts") return PayloadFormat::ts;
  return std::nullopt;
}

std::unique_ptr<PayloadDepacketizer> make_depacketizer(PayloadFormat format, PayloadDepacketizer::Sink sink) {
  if (format == PayloadFormat::rfc5371) return std::make_unique<Rfc5371Depacketizer>(std::move(sink));
  if (format == PayloadFormat::ts) return std::make_unique<TsDepacketizer>(std::move(sink));
  return std::make_unique<MxfRtpDepacketizer>(std::move(sink));
}

}  // namespace j2k::depacketizer
