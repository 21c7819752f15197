#include "depacketizer/codestream_tools.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "syntax/locate.hpp"
#include "syntax/markers.hpp"
#include "syntax/parameters.hpp"
#include "syntax/segments.hpp"

namespace j2k::depacketizer {

namespace {

namespace marker = syntax::marker;
using syntax::ComponentCoding;
using syntax::Out;
using syntax::Segment;

Error corrupt(const std::string& why) { return make_error(ErrorKind::corrupt, "codestream: " + why); }
Error unsupported(const std::string& why) { return make_error(ErrorKind::unsupported, "cannot merge: " + why); }
/// An error of the shared syntax unit, said to be about a codestream.
Error in_codestream(const Error& e) { return make_error(e.kind, "codestream: " + e.message); }

struct TilePart {
  std::uint16_t tile = 0;
  std::vector<Segment> header;  ///< tile-part header segments between SOT and SOD
  Bytes data;                   ///< after SOD
};

/// A walked codestream: main header and tile-parts, with its end.
struct Parsed {
  syntax::MainHeader main;
  std::vector<TilePart> parts;
  std::size_t end = 0;  ///< offset just after EOC (or the data's end if EOC is missing)
};

/// Walks one codestream from SOC through the shared syntax unit: main header, then each
/// tile-part by its SOT/Psot (a Psot of 0 runs to an EOC followed by the next SOC+SIZ, or to the
/// data's end).
Result<Parsed> parse(Bytes cs) {
  auto main = syntax::read_main_header(cs);
  if (!main) return in_codestream(main.error());
  Parsed p;
  p.main = std::move(main).value();
  ByteReader r(cs);
  r.seek(p.main.length);
  while (r.remaining() >= 2 && r.peek_u16() == marker::SOT) {
    const std::size_t start = r.position();
    auto sot = syntax::read_sot(r);
    if (!sot) return in_codestream(sot.error());
    if (sot->length != 0 && start + sot->length > cs.size()) return corrupt("Psot runs past the end");
    const std::size_t end = sot->length == 0 ? cs.size() : start + sot->length;
    auto header = syntax::read_tile_part_header(cs, r.position(), end);
    if (!header) return in_codestream(header.error());
    TilePart tp;
    tp.tile = sot->tile;
    tp.header = std::move(header->segments);
    std::size_t data_end = end;
    if (sot->length == 0) {
      // Runs to EOC: the end of this codestream is an EOC followed by the next SOC+SIZ, or the data's end.
      static constexpr std::uint8_t kNext[6] = {0xFF, 0xD9, 0xFF, 0x4F, 0xFF, 0x51};
      const Bytes rest = cs.subspan(header->body);
      auto it = std::search(rest.begin(), rest.end(), std::begin(kNext), std::end(kNext));
      if (it != rest.end()) {
        data_end = header->body + static_cast<std::size_t>(it - rest.begin());
      } else {
        std::size_t n = cs.size();
        while (n > header->body && cs[n - 1] == 0) --n;  // zero padding after EOC
        if (n < header->body + 2 || cs[n - 2] != 0xFF || cs[n - 1] != 0xD9) return corrupt("Psot 0 but no EOC at the end");
        data_end = n - 2;
      }
    }
    tp.data = cs.subspan(header->body, data_end - header->body);
    r.seek(data_end);
    p.parts.push_back(std::move(tp));
  }
  if (r.remaining() >= 2 && r.peek_u16() == marker::EOC) r.skip(2);
  p.end = r.position();
  return p;
}

std::uint32_t ceil_div(std::uint32_t a, std::uint32_t b) { return static_cast<std::uint32_t>((std::uint64_t{a} + b - 1) / b); }

/// Number of SOP markers in a tile-part body (FF 91 cannot occur inside coded data).
std::size_t count_sop(Bytes data) {
  std::size_t n = 0;
  for (std::size_t i = 0; i + 1 < data.size(); ++i)
    if (data[i] == 0xFF && data[i + 1] == 0x91) ++n;
  return n;
}

/// Appends `data`, adding `offset` to every SOP's Nsop (packet numbers continue across the merge).
void append_renumbered(Out& out, Bytes data, std::size_t offset) {
  std::size_t i = 0;
  while (i < data.size()) {
    if (offset && i + 5 < data.size() && data[i] == 0xFF && data[i + 1] == 0x91 && data[i + 2] == 0 && data[i + 3] == 4) {
      const std::uint16_t nsop = static_cast<std::uint16_t>((data[i + 4] << 8 | data[i + 5]) + offset);
      out.insert(out.end(), {0xFF, 0x91, 0x00, 0x04, static_cast<std::uint8_t>(nsop >> 8), static_cast<std::uint8_t>(nsop)});
      i += 6;
      continue;
    }
    out.push_back(data[i++]);
  }
}

// ---- Padding a source that has fewer quality layers (15444-1 B.5, B.6, B.9, B.10, B.12) ----

/// Per-component coding of a source's main header: COD, overridden by COC (15444-1 A.6.1, A.6.2).
Result<std::vector<ComponentCoding>> main_styles(const syntax::MainHeader& main, const syntax::CodingStyle& cod, int csiz) {
  std::vector<ComponentCoding> styles(static_cast<std::size_t>(csiz), cod.component);
  for (const auto& seg : main.segments) {
    if (seg.marker != marker::COC) continue;
    auto coc = syntax::read_coc(seg.body, static_cast<std::size_t>(csiz));
    if (!coc) return in_codestream(coc.error());
    styles[static_cast<std::size_t>(coc->component)] = coc->value;
  }
  return styles;
}

/// Per-component coding in one tile: the main header's, overridden by the tile's COC segments.
Result<std::vector<ComponentCoding>> tile_styles(std::vector<ComponentCoding> styles, const std::vector<const TilePart*>& parts) {
  for (const TilePart* tp : parts)
    for (const auto& seg : tp->header) {
      if (seg.marker != marker::COC) continue;
      auto coc = syntax::read_coc(seg.body, styles.size());
      if (!coc) return in_codestream(coc.error());
      styles[static_cast<std::size_t>(coc->component)] = coc->value;
    }
  return styles;
}

std::uint64_t ceil_div64(std::uint64_t a, std::uint64_t b) { return (a + b - 1) / b; }

/// Number of precincts, summed over resolutions, of one tile-component (15444-1 B.5, B.6).
/// `tc*` are the tile-component bounds on the component's grid. A resolution whose extent is
/// empty in either direction has no precincts and thus no packets.
std::uint64_t precinct_count(std::uint64_t tcx0, std::uint64_t tcx1, std::uint64_t tcy0, std::uint64_t tcy1,
                             const ComponentCoding& style) {
  std::uint64_t total = 0;
  const unsigned levels = static_cast<unsigned>(style.levels);
  for (unsigned r = 0; r <= levels; ++r) {
    const std::uint64_t scale = std::uint64_t{1} << (levels - r);  // 2^(NL − r), B-14
    const std::uint64_t trx0 = ceil_div64(tcx0, scale), trx1 = ceil_div64(tcx1, scale);
    const std::uint64_t try0 = ceil_div64(tcy0, scale), try1 = ceil_div64(tcy1, scale);
    if (trx0 == trx1 || try0 == try1) continue;
    // PPx = PPy = 15 when the coding style defines no precincts (A.6.1, Table A.13): the reader
    // fills those resolutions with 0xFF.
    const unsigned ppx = style.precincts[r] & 0x0F;
    const unsigned ppy = style.precincts[r] >> 4;
    const std::uint64_t wide = ceil_div64(trx1, std::uint64_t{1} << ppx) - (trx0 >> ppx);  // B-16
    const std::uint64_t high = ceil_div64(try1, std::uint64_t{1} << ppy) - (try0 >> ppy);
    total += std::min<std::uint64_t>(wide, 1u << 24) * std::min<std::uint64_t>(high, 1u << 24);  // no overflow
  }
  return total;
}

/// `count` empty packets (15444-1 B.10.3: a header whose first bit is 0, padded to a byte → 0x00),
/// each behind an SOP marker segment when `sop` (Nsop from `first_nsop`, modulo 2^16, A.8.1)
/// and followed by EPH when `eph` (A.8.2).
Out empty_packets(std::uint64_t count, bool sop, bool eph, std::uint64_t first_nsop) {
  Out out;
  out.reserve(static_cast<std::size_t>(count) * (1 + (sop ? 6 : 0) + (eph ? 2 : 0)));
  for (std::uint64_t i = 0; i < count; ++i) {
    if (sop) {
      const auto nsop = static_cast<std::uint16_t>(first_nsop + i);
      out.insert(out.end(), {0xFF, 0x91, 0x00, 0x04, static_cast<std::uint8_t>(nsop >> 8), static_cast<std::uint8_t>(nsop)});
    }
    out.push_back(0x00);
    if (eph) out.insert(out.end(), {0xFF, 0x92});
  }
  return out;
}


/// Writes a COC, QCC or RGN segment of a source with `csiz` components again, for component
/// `offset` + its own in the merged codestream (Csiz 3), read and written by the shared syntax.
Status put_component_segment(Out& out, const Segment& s, std::size_t csiz, int offset) {
  constexpr std::size_t kMerged = 3;
  auto moved = [&](auto read, auto write) -> Status {
    auto v = read(s.body, csiz);
    if (!v) return in_codestream(v.error());
    v->component += offset;
    return write(out, *v, kMerged);
  };
  switch (s.marker) {
    case marker::COC: return moved(syntax::read_coc, syntax::write_coc);
    case marker::QCC: return moved(syntax::read_qcc, syntax::write_qcc);
    case marker::RGN: return moved(syntax::read_rgn, syntax::write_rgn);
    default: return corrupt(fmt::format("marker {:04X} is not a component segment", s.marker));
  }
}

bool is_component_segment(std::uint16_t m) { return m == marker::COC || m == marker::QCC || m == marker::RGN; }

}  // namespace

Result<Bytes> trim_codestream(Bytes data) {
  // A JP2 file (FFmpeg's default for JPEG 2000 in MXF) holds the codestream in its jp2c box.
  if (syntax::is_jp2(data)) {
    auto located = syntax::locate_codestream(data);
    if (!located) return in_codestream(located.error());
    data = *located;
  }
  static constexpr std::uint8_t kStart[4] = {0xFF, 0x4F, 0xFF, 0x51};
  const std::size_t window = std::min<std::size_t>(data.size(), 64 + 4);
  auto it = std::search(data.begin(), data.begin() + static_cast<std::ptrdiff_t>(window), std::begin(kStart), std::end(kStart));
  if (it == data.begin() + static_cast<std::ptrdiff_t>(window)) return corrupt("no SOC+SIZ in the first 64 bytes");
  Bytes cs = data.subspan(static_cast<std::size_t>(it - data.begin()));
  std::size_t n = cs.size();
  while (n > 2 && cs[n - 1] == 0) --n;
  return cs.first(n);
}

Result<std::vector<Bytes>> split_codestreams(Bytes data) {
  std::vector<Bytes> out;
  auto first = trim_codestream(data);
  if (!first) return first.error();
  Bytes rest = *first;
  while (!rest.empty()) {
    auto parsed = parse(rest);
    if (!parsed) return parsed.error();
    out.push_back(rest.first(parsed->end));
    rest = rest.subspan(parsed->end);
    std::size_t skip = 0;
    while (skip < rest.size() && rest[skip] == 0) ++skip;  // padding between codestreams
    rest = rest.subspan(skip);
    if (out.size() > 16) return corrupt("more than 16 codestreams in one unit");
  }
  return out;
}

Result<int> component_count(Bytes cs) {
  // SOC, then the SIZ segment read and checked as every other user of the syntax unit does.
  ByteReader r(cs);
  if (r.u16() != marker::SOC || r.peek_u16() != marker::SIZ) return corrupt("no SOC+SIZ");
  auto seg = syntax::read_segment(r);
  if (!seg) return in_codestream(seg.error());
  auto siz = syntax::read_siz(seg->body);
  if (!siz) return in_codestream(siz.error());
  return static_cast<int>(siz->components.size());
}

Result<std::vector<std::uint8_t>> merge_luma_chroma(Bytes luma, Bytes chroma) {
  auto py = parse(luma);
  if (!py) return py.error();
  auto pc = parse(chroma);
  if (!pc) return pc.error();
  auto sy = syntax::read_siz(py->main.siz.body);
  if (!sy) return in_codestream(sy.error());
  auto sc = syntax::read_siz(pc->main.siz.body);
  if (!sc) return in_codestream(sc.error());
  if (sy->components.size() != 1 || sc->components.size() != 2)
    return unsupported(fmt::format("need Csiz 1 and 2, got {} and {}", sy->components.size(), sc->components.size()));
  for (const auto& seg : py->main.segments)
    if (seg.marker == marker::PPM || seg.marker == marker::POC || seg.marker == marker::CAP)
      return unsupported(fmt::format("luma has marker {:04X}", seg.marker));
  for (const auto& seg : pc->main.segments)
    if (seg.marker == marker::PPM || seg.marker == marker::POC || seg.marker == marker::CAP)
      return unsupported(fmt::format("chroma has marker {:04X}", seg.marker));
  if (sy->x0 || sy->y0 || sc->x0 || sc->y0 || sy->tx0 || sy->ty0 || sc->tx0 || sc->ty0)
    return unsupported("image or tile offsets are not zero");
  const auto& cy = sy->components[0];
  const auto& cb = sc->components[0];
  const auto& cr = sc->components[1];
  if (cy.dx != 1 || cy.dy != 1 || cb.dx != 1 || cb.dy != 1 || cr.dx != 1 || cr.dy != 1)
    return unsupported("a source is itself subsampled");
  // Chroma subsampling factors from the sizes: 1, 2 (or 4) per direction.
  const std::uint32_t xr = static_cast<std::uint32_t>(std::lround(static_cast<double>(sy->x1) / sc->x1));
  const std::uint32_t yr = static_cast<std::uint32_t>(std::lround(static_cast<double>(sy->y1) / sc->y1));
  if (xr < 1 || yr < 1 || xr > 4 || yr > 4 || ceil_div(sy->x1, xr) != sc->x1 || ceil_div(sy->y1, yr) != sc->y1)
    return unsupported(fmt::format("chroma {}x{} is not a subsampling of luma {}x{}", sc->x1, sc->y1, sy->x1, sy->y1));
  // Tiles must line up: the same grid, the chroma one scaled by the subsampling.
  const std::uint32_t tiles_x = ceil_div(sy->x1, sy->tw), tiles_y = ceil_div(sy->y1, sy->th);
  if (ceil_div(sc->x1, sc->tw) != tiles_x || ceil_div(sc->y1, sc->th) != tiles_y ||
      (tiles_x > 1 && std::uint64_t{sc->tw} * xr != sy->tw) || (tiles_y > 1 && std::uint64_t{sc->th} * yr != sy->th))
    return unsupported("luma and chroma tile grids do not line up");

  const Segment* cod_y_seg = py->main.find(marker::COD);
  const Segment* cod_c_seg = pc->main.find(marker::COD);
  const Segment* qcd_y_seg = py->main.find(marker::QCD);
  const Segment* qcd_c_seg = pc->main.find(marker::QCD);
  if (!cod_y_seg || !cod_c_seg || !qcd_y_seg || !qcd_c_seg) return corrupt("main header lacks COD or QCD");
  auto cod_y = syntax::read_cod(cod_y_seg->body);
  if (!cod_y) return in_codestream(cod_y.error());
  auto cod_c = syntax::read_cod(cod_c_seg->body);
  if (!cod_c) return in_codestream(cod_c.error());
  auto qcd_y = syntax::read_qcd(qcd_y_seg->body);
  if (!qcd_y) return in_codestream(qcd_y.error());
  auto qcd_c = syntax::read_qcd(qcd_c_seg->body);
  if (!qcd_c) return in_codestream(qcd_c.error());
  if (cod_y->sop != cod_c->sop || cod_y->eph != cod_c->eph) return unsupported("SOP/EPH use differs between luma and chroma");
  // Unequal layer counts: the merged codestream has the larger count, and the source with fewer
  // layers gets empty packets for the missing ones (see the tile loop below).
  const int layers = std::max(cod_y->layers, cod_c->layers);
  const bool pad_luma = cod_y->layers < layers, pad_chroma = cod_c->layers < layers;
  const bool use_sop = cod_y->sop, use_eph = cod_y->eph;
  auto styles_y = main_styles(py->main, *cod_y, 1);
  if (!styles_y) return styles_y.error();
  auto styles_c = main_styles(pc->main, *cod_c, 2);
  if (!styles_c) return styles_c.error();

  Out out;
  ByteWriter w(out);
  w.u16(marker::SOC);
  // Each write below returns a Status; the first failure ends the merge.
  Status written;
  auto put = [&written](Status st) {
    if (written && !st) written = st;
  };
  {  // SIZ: luma's, with three components; the chroma ones subsampled by (xr, yr).
    syntax::Siz siz = *sy;
    siz.components = {cy, cb, cr};
    for (std::size_t c = 1; c < 3; ++c) {
      siz.components[c].dx = static_cast<int>(xr);
      siz.components[c].dy = static_cast<int>(yr);
    }
    put(syntax::write_siz(out, siz));
  }
  {  // COD: luma's, MCT off (the components are YCbCr already).
    syntax::CodingStyle cod = *cod_y;
    cod.layers = layers;
    cod.mct = false;
    put(syntax::write_cod(out, cod));
  }
  // Chroma components: their own COC (last one wins, A.6.2) or the chroma COD's coding.
  for (int c = 0; c < 2; ++c) put(syntax::write_coc(out, {c + 1, (*styles_c)[static_cast<std::size_t>(c)]}, 3));
  put(syntax::write_qcd(out, *qcd_y));
  for (int c = 0; c < 2; ++c) {
    syntax::Quantization q = *qcd_c;
    for (const auto& s : pc->main.segments)
      if (s.marker == marker::QCC) {
        auto qcc = syntax::read_qcc(s.body, 2);
        if (!qcc) return in_codestream(qcc.error());
        if (qcc->component == c) q = qcc->value;
      }
    put(syntax::write_qcc(out, {c + 1, q}, 3));
  }
  // Luma's per-component segments keep component 0; chroma's RGN moves up by one.
  for (const auto& s : py->main.segments)
    if (is_component_segment(s.marker)) put(put_component_segment(out, s, 1, 0));
  for (const auto& s : pc->main.segments)
    if (s.marker == marker::RGN) put(put_component_segment(out, s, 2, 1));
  // Packet order: all luma packets, then all chroma packets, each in its own progression.
  // Component-first (CPRL) already gives that when the layer counts agree; otherwise a POC replays
  // each source's order (15444-1 A.6.6, B.12). A source with fewer layers L_s gets LYE = L_s in
  // its entry, followed by an LRCP entry over its components up to LYE = L: the packets of layers
  // below L_s were sequenced by the earlier entry and are not sequenced again, so that entry
  // covers exactly layers L_s..L−1, all of them empty packets placed after that source's data.
  using syntax::ProgressionOrder;
  if (!(cod_y->progression == ProgressionOrder::CPRL && cod_c->progression == ProgressionOrder::CPRL) || pad_luma || pad_chroma) {
    // REpoc: one past the highest resolution any of the source's tile-components has.
    auto resolutions = [](const std::vector<ComponentCoding>& main, const Parsed& p, std::size_t csiz) -> Result<int> {
      int levels = 0;
      for (const auto& st : main) levels = std::max(levels, st.levels);
      for (const auto& tp : p.parts)
        for (const auto& seg : tp.header)
          if (seg.marker == marker::COC) {
            auto coc = syntax::read_coc(seg.body, csiz);
            if (!coc) return in_codestream(coc.error());
            levels = std::max(levels, coc->value.levels);
          }
      return levels + 1;
    };
    auto res_y = resolutions(*styles_y, *py, 1);
    if (!res_y) return res_y.error();
    auto res_c = resolutions(*styles_c, *pc, 2);
    if (!res_c) return res_c.error();
    std::vector<syntax::ProgressionChange> poc;
    auto entry = [&poc](int cs, int lye, int re, int ce, ProgressionOrder order) {
      poc.push_back({0, cs, lye, re, ce, order});
    };
    entry(0, cod_y->layers, *res_y, 1, cod_y->progression);
    if (pad_luma) entry(0, layers, *res_y, 1, ProgressionOrder::LRCP);
    entry(1, cod_c->layers, *res_c, 3, cod_c->progression);
    if (pad_chroma) entry(1, layers, *res_c, 3, ProgressionOrder::LRCP);
    put(syntax::write_poc(out, poc, 3));
  }
  for (const auto& s : py->main.segments)
    if (s.marker == marker::COM) put(syntax::write_segment(out, s.marker, s.body));
  // TLM, PLM and CRG describe the sources' layout or are optional: dropped.
  if (!written) return written.error();

  // Tile-parts: per tile, luma's then chroma's, renumbered. A source with fewer layers gets one
  // more tile-part after its own, holding the empty packets of its missing layers.
  std::map<std::uint16_t, std::vector<const TilePart*>> luma_parts, chroma_parts;
  for (const auto& tp : py->parts) luma_parts[tp.tile].push_back(&tp);
  for (const auto& tp : pc->parts) chroma_parts[tp.tile].push_back(&tp);
  if (luma_parts.size() != chroma_parts.size()) return unsupported("luma and chroma carry different tiles");
  // Empty packets for layers [L_s, L) of one source in one tile: (L − L_s) × Σ components and
  // resolutions of the precinct count, on the merged codestream's grid (B.3: tile bounds; B-12:
  // tile-component bounds under XRsiz/YRsiz; B-15, B-16: resolution bounds and precincts).
  constexpr std::uint64_t kMaxPadding = std::uint64_t{1} << 22;  // empty packets in all, ≤ 37 MiB
  auto padding_packets = [&](std::uint16_t tile, const std::vector<ComponentCoding>& main, const std::vector<const TilePart*>& parts,
                             std::uint32_t dx, std::uint32_t dy, int source_layers) -> Result<std::uint64_t> {
    auto styles = tile_styles(main, parts);
    if (!styles) return styles.error();
    const std::uint64_t p = tile % tiles_x, q = tile / tiles_x;
    const std::uint64_t tx0 = std::max<std::uint64_t>(sy->tx0 + p * sy->tw, sy->x0);
    const std::uint64_t tx1 = std::min<std::uint64_t>(sy->tx0 + (p + 1) * sy->tw, sy->x1);
    const std::uint64_t ty0 = std::max<std::uint64_t>(sy->ty0 + q * sy->th, sy->y0);
    const std::uint64_t ty1 = std::min<std::uint64_t>(sy->ty0 + (q + 1) * sy->th, sy->y1);
    std::uint64_t precincts = 0;
    for (const auto& style : *styles)
      precincts += precinct_count(ceil_div64(tx0, dx), ceil_div64(tx1, dx), ceil_div64(ty0, dy), ceil_div64(ty1, dy), style);
    precincts = std::min(precincts, kMaxPadding + 1);  // keeps the product below 2^64
    return precincts * static_cast<std::uint64_t>(layers - source_layers);
  };
  std::uint64_t padding_total = 0;
  for (const auto& [tile, yparts] : luma_parts) {
    auto cit = chroma_parts.find(tile);
    if (cit == chroma_parts.end()) return unsupported(fmt::format("tile {} missing in chroma", tile));
    if (tile >= static_cast<std::uint64_t>(tiles_x) * tiles_y) return corrupt(fmt::format("tile index {} outside the tile grid", tile));
    const auto& cparts = cit->second;
    std::uint64_t pad_y = 0, pad_c = 0;
    if (pad_luma) {
      auto n = padding_packets(tile, *styles_y, yparts, 1, 1, cod_y->layers);
      if (!n) return n.error();
      pad_y = *n;
    }
    if (pad_chroma) {
      auto n = padding_packets(tile, *styles_c, cparts, xr, yr, cod_c->layers);
      if (!n) return n.error();
      pad_c = *n;
    }
    padding_total += pad_y + pad_c;
    if (pad_y > kMaxPadding || pad_c > kMaxPadding || padding_total > kMaxPadding)
      return make_error(ErrorKind::limit, fmt::format("cannot merge: layer padding would need more than {} empty packets", kMaxPadding));
    const std::size_t total = yparts.size() + cparts.size() + (pad_y ? 1 : 0) + (pad_c ? 1 : 0);
    if (total > 255) return unsupported("more than 255 tile-parts in a tile");
    // Packet sequence numbers (Nsop) count all packets of the tile: luma, luma padding, chroma, chroma padding.
    std::uint64_t luma_packets = 0, chroma_packets = 0;
    for (const TilePart* tp : yparts) luma_packets += count_sop(tp->data);
    for (const TilePart* tp : cparts) chroma_packets += count_sop(tp->data);
    const Out padding_y = empty_packets(pad_y, use_sop, use_eph, luma_packets);
    const Out padding_c = empty_packets(pad_c, use_sop, use_eph, luma_packets + pad_y + chroma_packets);
    // Tile-level COC/QCC/RGN may only be in a tile's first tile-part (A.4.2): the chroma's move
    // there, remapped to components 1 and 2.
    Out chroma_tile_segments;
    for (const TilePart* tp : cparts)
      for (const auto& s : tp->header)
        if (is_component_segment(s.marker))
          if (Status st = put_component_segment(chroma_tile_segments, s, 2, 1); !st) return st.error();
    std::size_t index = 0;
    const std::uint16_t tile_index = tile;  // clang refuses to capture a structured binding
    auto write_part = [&](const Out& header, Bytes body, std::uint64_t sop_offset) -> Status {
      const std::size_t psot = 12 + header.size() + 2 + body.size();
      if (psot > 0xFFFFFFFFu) return unsupported("tile-part too large");
      syntax::write_sot(out, {tile_index, static_cast<std::uint32_t>(psot), static_cast<std::uint8_t>(index++), static_cast<std::uint8_t>(total)});
      w.bytes(header);
      w.u16(marker::SOD);
      const std::size_t before = out.size();
      append_renumbered(out, body, static_cast<std::size_t>(sop_offset));
      if (out.size() - before != body.size()) return corrupt("SOP renumbering changed the size");
      return {};
    };
    for (int source = 0; source < 2; ++source) {
      for (const TilePart* tp : source == 0 ? yparts : cparts) {
        Out header;
        for (const auto& s : tp->header) {
          switch (s.marker) {
            case marker::PPT:
              // Packed headers stand for every packet header of the tile (A.7.5): the other
              // source's packets (and any padding) would be read from them, and Zppt would repeat.
              return unsupported(fmt::format("{} has packed packet headers (PPT)", source == 0 ? "luma" : "chroma"));
            case marker::PLT: case marker::COM:  // describe this tile-part only
              if (Status st = syntax::write_segment(header, s.marker, s.body); !st) return st.error();
              break;
            case marker::COC: case marker::QCC: case marker::RGN:
              if (source == 0)
                if (Status st = put_component_segment(header, s, 1, 0); !st) return st.error();
              break;  // the chroma's went into the first tile-part
            default:
              return unsupported(fmt::format("tile-part header marker {:04X} in {}", s.marker, source == 0 ? "luma" : "chroma"));
          }
        }
        if (index == 0) header.insert(header.end(), chroma_tile_segments.begin(), chroma_tile_segments.end());
        if (Status st = write_part(header, tp->data, source == 1 ? luma_packets + pad_y : 0); !st) return st.error();
      }
      const Out& padding = source == 0 ? padding_y : padding_c;
      if (!padding.empty())
        if (Status st = write_part({}, padding, 0); !st) return st.error();
    }
  }
  w.u16(marker::EOC);
  return out;
}

}  // namespace j2k::depacketizer
