#include "syntax/segments.hpp"

#include <fmt/format.h>

#include "syntax/markers.hpp"

namespace j2k::syntax {

namespace {

Error corrupt(std::string what) { return make_error(ErrorKind::corrupt, std::move(what)); }

}  // namespace

Result<Segment> read_segment(ByteReader& r) {
  Segment s;
  s.offset = r.position();
  s.marker = r.u16();
  if (r.failed()) return corrupt("marker cut short at the end of the data");
  if (!is_marker(s.marker)) return corrupt(fmt::format("expected a marker at byte {}, found {:04X}", s.offset, s.marker));
  if (!has_segment(s.marker)) return corrupt(fmt::format("marker {:04X} at byte {} has no marker segment", s.marker, s.offset));
  // Lmar counts its own two bytes but not the marker (A.1.4); compare it with what is left first.
  const std::uint16_t length = r.u16();
  if (r.failed() || length < 2 || !r.has(length - 2u))
    return corrupt(fmt::format("marker {:04X} runs past the end of the data", s.marker));
  s.body = r.bytes(length - 2u);
  return s;
}

Status write_segment(Out& out, std::uint16_t marker, Bytes body) {
  if (body.size() > 0xFFFFu - 2u) return corrupt(fmt::format("marker {:04X}: {} bytes do not fit a marker segment", marker, body.size()));
  ByteWriter w(out);
  w.u16(marker);
  w.u16(static_cast<std::uint16_t>(body.size() + 2));
  w.bytes(body);
  return {};
}

const Segment* MainHeader::find(std::uint16_t code) const noexcept {
  if (code == marker::SIZ) return &siz;
  for (const Segment& s : segments)
    if (s.marker == code) return &s;
  return nullptr;
}

Result<MainHeader> read_main_header(Bytes cs) {
  ByteReader r(cs);
  if (r.u16() != marker::SOC) return corrupt("no SOC marker at the start of the codestream");
  MainHeader h;
  // A.4.1: SIZ immediately follows SOC.
  if (r.peek_u16() != marker::SIZ) return corrupt("SIZ must follow SOC");
  auto siz = read_segment(r);
  if (!siz) return corrupt("SIZ marker segment is truncated");
  h.siz = *siz;
  for (;;) {
    if (r.remaining() < 2) return corrupt("main header ends before the first tile-part (no SOT)");
    const std::uint16_t code = r.peek_u16();
    if (code == marker::SOT) break;
    if (is_reserved_parameterless(code)) {  // A.1.4: a marker without a segment; skip it
      r.skip(2);
      continue;
    }
    switch (code) {
      case marker::SIZ: case marker::SOD: case marker::PPT: case marker::SOP: case marker::EPH: case marker::EOC:
        return corrupt(fmt::format("marker {:04X} is not allowed in the main header", code));
      default: break;
    }
    auto seg = read_segment(r);
    if (!seg) return seg.error();
    h.segments.push_back(*seg);
  }
  h.length = r.position();
  return h;
}

Result<Sot> read_sot(ByteReader& r) {
  Sot s;
  const std::uint16_t code = r.u16();
  const std::uint16_t lsot = r.u16();
  s.tile = r.u16();
  s.length = r.u32();
  s.index = r.u8();
  s.count = r.u8();
  if (r.failed() || code != marker::SOT || lsot != 10) return corrupt("SOT marker segment is truncated or malformed");
  // A.4.2: Psot is 0 (the last tile-part, up to EOC) or covers at least SOT (12 bytes) and SOD (2).
  if (s.length != 0 && s.length < 14) return corrupt("SOT: Psot smaller than the SOT segment");
  return s;
}

void write_sot(Out& out, const Sot& s) {
  ByteWriter w(out);
  w.u16(marker::SOT);
  w.u16(10);
  w.u16(s.tile);
  w.u32(s.length);
  w.u8(s.index);
  w.u8(s.count);
}

Result<TilePartHeader> read_tile_part_header(Bytes data, std::size_t offset, std::size_t end) {
  if (end > data.size() || offset > end) return corrupt("tile-part header outside the data");
  ByteReader r(data.first(end));
  r.seek(offset);
  TilePartHeader h;
  for (;;) {
    if (r.remaining() < 2) return make_error(ErrorKind::need_more_data, "tile-part header ends before SOD");
    const std::uint16_t code = r.peek_u16();
    if (code == marker::SOD) {
      r.skip(2);
      break;
    }
    if (is_reserved_parameterless(code)) {  // A.1.4
      r.skip(2);
      continue;
    }
    if (r.remaining() < 4) return make_error(ErrorKind::need_more_data, "tile-part header ends before SOD");
    if (!is_marker(code)) return corrupt(fmt::format("expected a marker in a tile-part header, found {:04X}", code));
    auto seg = read_segment(r);
    if (!seg) return corrupt(fmt::format("marker {:04X} runs past its tile-part", code));
    h.segments.push_back(*seg);
  }
  h.body = r.position();
  return h;
}

}  // namespace j2k::syntax
