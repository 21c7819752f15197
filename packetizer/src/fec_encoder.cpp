#include "packetizer/fec_encoder.hpp"

#include <algorithm>

#include "depacketizer/fec_2022_1.hpp"
#include "depacketizer/rtp.hpp"

namespace j2k::packetizer {

FecEncoder::FecEncoder(int columns, int rows, std::uint8_t payload_type)
    : l_(std::max(1, columns)), d_(std::max(0, rows)), pt_(payload_type), columns_(static_cast<std::size_t>(l_)) {}

void FecEncoder::update(Parity& p, std::uint16_t seq, bool marker, std::uint8_t pt, std::uint32_t ts, Bytes payload) {
  if (p.n == 0) {
    p.base = seq;
    p.length = 0;
    p.pt = 0;
    p.ts = 0;
    p.marker = false;
    p.payload.clear();
  }
  if (p.payload.size() < payload.size()) p.payload.resize(payload.size(), 0);  // zero-padded to the longest
  for (std::size_t i = 0; i < payload.size(); ++i) p.payload[i] ^= payload[i];
  p.length ^= static_cast<std::uint16_t>(payload.size());
  p.pt ^= pt;
  p.ts ^= ts;
  p.marker ^= marker;
  ++p.n;
}

std::vector<std::uint8_t> FecEncoder::finish(Parity& p, bool row, std::uint16_t sequence, std::uint32_t timestamp) const {
  std::vector<std::uint8_t> out;
  out.reserve(12 + depacketizer::fec::kFecHeaderSize + p.payload.size());
  ByteWriter w(out);
  w.u8(0x80);
  w.u8(static_cast<std::uint8_t>((p.marker ? 0x80 : 0) | (pt_ & 0x7F)));
  w.u16(sequence);
  w.u32(timestamp);
  w.u32(0);  // SSRC 0, as 2022-1 senders (and GStreamer) write it
  depacketizer::fec::FecHeader h;
  h.sn_base_low = p.base;
  h.length_recovery = p.length;
  h.pt_recovery = p.pt;
  h.ts_recovery = p.ts;
  h.row = row;
  h.offset = static_cast<std::uint8_t>(row ? 1 : l_);
  h.na = static_cast<std::uint8_t>(p.n);
  depacketizer::fec::append_fec_header(out, h);
  w.bytes(p.payload);
  p.n = 0;
  return out;
}

void FecEncoder::add(Bytes media, std::vector<std::vector<std::uint8_t>>& column_out,
                     std::vector<std::vector<std::uint8_t>>& row_out) {
  auto packet = depacketizer::parse_rtp(media);
  if (!packet.ok()) return;
  const int column = position_ % l_;
  update(row_, packet->sequence, packet->marker, packet->payload_type, packet->timestamp, packet->payload);
  if (row_.n == l_) row_out.push_back(finish(row_, true, row_sequence_++, packet->timestamp));
  if (d_ > 0) {
    Parity& c = columns_[static_cast<std::size_t>(column)];
    update(c, packet->sequence, packet->marker, packet->payload_type, packet->timestamp, packet->payload);
    if (c.n == d_) column_out.push_back(finish(c, false, column_sequence_++, packet->timestamp));
  }
  position_ = (position_ + 1) % (l_ * std::max(1, d_));
}

}  // namespace j2k::packetizer
