// Fuzz harness: MXF file reading, codestream splitting and luma+chroma merging on arbitrary
// bytes, and the JPEG 2000 syntax unit under them (syntax/: main-header walk, marker-segment
// reader, parameter readers/writers, tile-part headers, JP2 location). The first byte picks the
// target; for the merge, the rest is cut in two at a point given by the next two bytes.
#include <cstddef>
#include <cstdint>

#include "depacketizer/codestream_tools.hpp"
#include "packetizer/mxf_file.hpp"
#include "packetizer/rtp_j2k_packetizer.hpp"
#include "syntax/locate.hpp"
#include "syntax/markers.hpp"
#include "syntax/parameters.hpp"
#include "syntax/segments.hpp"

namespace {

using j2k::Bytes;
using j2k::syntax::Out;

/// A reader/writer pair must be idempotent after one round: write(read(write(read(b)))) equals
/// write(read(b)), and a segment the writer made is always read back. `csiz`: the component
/// count, for the pairs that take it.
template <typename Read, typename Write, typename... Csiz>
void round_trip(Bytes body, Read read, Write write, Csiz... csiz) {
  auto first = read(body, csiz...);
  if (!first.ok()) return;
  Out once;
  if (!write(once, *first, csiz...).ok()) return;
  j2k::ByteReader r(once);
  auto seg = j2k::syntax::read_segment(r);
  if (!seg.ok()) __builtin_trap();  // the writer made a segment the reader refuses
  auto second = read(seg->body, csiz...);
  if (!second.ok()) __builtin_trap();
  Out twice;
  if (!write(twice, *second, csiz...).ok() || twice != once) __builtin_trap();
}

void syntax_walk(Bytes data) {
  namespace syntax = j2k::syntax;
  namespace marker = syntax::marker;
  auto header = syntax::read_main_header(data);
  if (!header.ok()) return;
  if (header->length > data.size()) __builtin_trap();
  auto length = j2k::packetizer::main_header_length(data);  // the packetizer's walk agrees
  if (!length.ok() || *length != header->length) __builtin_trap();
  auto siz = syntax::read_siz(header->siz.body);
  if (!siz.ok()) return;
  round_trip(header->siz.body, syntax::read_siz, syntax::write_siz);
  const std::size_t csiz = siz->components.size();
  for (const auto& seg : header->segments) {
    switch (seg.marker) {
      case marker::COD: round_trip(seg.body, syntax::read_cod, syntax::write_cod); break;
      case marker::COC: round_trip(seg.body, syntax::read_coc, syntax::write_coc, csiz); break;
      case marker::QCD: round_trip(seg.body, syntax::read_qcd, syntax::write_qcd); break;
      case marker::QCC: round_trip(seg.body, syntax::read_qcc, syntax::write_qcc, csiz); break;
      case marker::RGN: round_trip(seg.body, syntax::read_rgn, syntax::write_rgn, csiz); break;
      case marker::POC: round_trip(seg.body, syntax::read_poc, syntax::write_poc, csiz); break;
      case marker::TLM: round_trip(seg.body, syntax::read_tlm, syntax::write_tlm); break;
      default: break;
    }
  }
  // Tile-part headers along the Psot chain.
  j2k::ByteReader r(data);
  r.seek(header->length);
  for (int parts = 0; parts < 64 && r.remaining() >= 2 && r.peek_u16() == marker::SOT; ++parts) {
    const std::size_t start = r.position();
    auto sot = syntax::read_sot(r);
    if (!sot.ok()) return;
    const std::size_t end = sot->length == 0 || start + sot->length > data.size() ? data.size() : start + sot->length;
    auto tile_part = syntax::read_tile_part_header(data, r.position(), end);
    if (!tile_part.ok()) return;
    if (tile_part->body > end) __builtin_trap();
    r.seek(end);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace j2k::depacketizer;
  if (size < 3) return 0;
  const j2k::Bytes rest(data + 3, size - 3);
  switch (data[0] % 5) {
    case 0: {
      auto mxf = j2k::packetizer::read_mxf(rest);
      if (mxf.ok() && mxf->packages.empty()) __builtin_trap();  // success means pictures were found
      break;
    }
    case 1: {
      auto parts = split_codestreams(rest);
      if (parts.ok()) {
        std::size_t total = 0;
        for (auto p : *parts) total += p.size();
        if (total > rest.size()) __builtin_trap();  // pieces are views into the input
      }
      break;
    }
    case 2: {
      const std::size_t cut = (static_cast<std::size_t>(data[1]) << 8 | data[2]) % (rest.size() + 1);
      auto merged = merge_luma_chroma(rest.first(cut), rest.subspan(cut));
      if (merged.ok() && !j2k::syntax::read_main_header(*merged).ok()) __builtin_trap();  // we write what we read
      break;
    }
    case 3: syntax_walk(rest); break;
    default: {
      auto located = j2k::syntax::locate_codestream(rest);
      if (located.ok() && (located->data() < rest.data() || located->data() + located->size() > rest.data() + rest.size()))
        __builtin_trap();  // the codestream is a view inside the file
      auto geometry = j2k::syntax::read_geometry(rest);
      (void)geometry;
      auto trimmed = trim_codestream(rest);
      (void)trimmed;
      break;
    }
  }
  return 0;
}
