#include "depacketizer/codestream_tools.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>

namespace j2k::depacketizer {

namespace {

constexpr std::uint16_t SOC = 0xFF4F, SIZ = 0xFF51, COD = 0xFF52, COC = 0xFF53, TLM = 0xFF55, PLM = 0xFF57,
                        QCD = 0xFF5C, QCC = 0xFF5D, RGN = 0xFF5E, POC = 0xFF5F, PPM = 0xFF60, CRG = 0xFF63,
                        CAP = 0xFF50, SOT = 0xFF90, SOD = 0xFF93, EOC = 0xFFD9;

Error corrupt(const std::string& why) { return make_error(ErrorKind::corrupt, "codestream: " + why); }
Error unsupported(const std::string& why) { return make_error(ErrorKind::unsupported, "cannot merge: " + why); }

struct Segment {
  std::uint16_t marker = 0;
  Bytes body;  ///< after the length field
};

struct TilePart {
  std::uint16_t tile = 0;
  std::vector<Segment> header;  ///< tile-part header segments between SOT and SOD
  Bytes data;                   ///< after SOD
};

/// A parsed codestream: main header segments and tile-parts, with its end.
struct Parsed {
  std::vector<Segment> main;
  std::vector<TilePart> parts;
  std::size_t end = 0;  ///< offset just after EOC (or the data's end if EOC is missing)
};

/// Reads one marker segment (marker, Lmar, body) at the reader's position.
Result<Segment> read_segment(ByteReader& r) {
  Segment s;
  s.marker = r.u16();
  const std::uint16_t length = r.u16();
  // Lmar counts itself (2 bytes) but not the marker (15444-1 A.1.4).
  if (r.failed() || length < 2 || !r.has(length - 2u)) return corrupt(fmt::format("segment {:04X} runs past the end", s.marker));
  s.body = r.bytes(length - 2u);
  return s;
}

/// Walks one codestream from SOC; `resolve_to_eoc` tells how to find the end of a Psot=0 tile-part.
Result<Parsed> parse(Bytes cs) {
  ByteReader r(cs);
  if (r.u16() != SOC) return corrupt("does not start with SOC");
  Parsed p;
  while (true) {
    if (r.remaining() < 4) return corrupt("main header ends without SOT");
    const std::uint16_t marker = r.peek_u16();
    if (marker == SOT) break;
    if ((marker & 0xFF00) != 0xFF00) return corrupt("main header: expected a marker");
    auto seg = read_segment(r);
    if (!seg) return seg.error();
    p.main.push_back(*seg);
  }
  if (p.main.empty() || p.main.front().marker != SIZ) return corrupt("SIZ must follow SOC");
  while (r.remaining() >= 2 && r.peek_u16() == SOT) {
    const std::size_t start = r.position();
    auto sot = read_segment(r);
    if (!sot) return sot.error();
    ByteReader b(sot->body);
    TilePart tp;
    tp.tile = b.u16();
    const std::uint32_t psot = b.u32();
    if (b.failed()) return corrupt("SOT segment too short");
    while (r.remaining() >= 2 && r.peek_u16() != SOD) {
      auto seg = read_segment(r);
      if (!seg) return seg.error();
      tp.header.push_back(*seg);
    }
    if (r.u16() != SOD) return corrupt("tile-part header without SOD");
    std::size_t data_end = 0;
    if (psot == 0) {
      // Runs to EOC: the end of this codestream is an EOC followed by the next SOC+SIZ, or the data's end.
      static constexpr std::uint8_t kNext[6] = {0xFF, 0xD9, 0xFF, 0x4F, 0xFF, 0x51};
      Bytes rest = r.rest();
      auto it = std::search(rest.begin(), rest.end(), std::begin(kNext), std::end(kNext));
      std::size_t eoc = 0;
      if (it != rest.end()) {
        eoc = r.position() + static_cast<std::size_t>(it - rest.begin());
      } else {
        std::size_t n = cs.size();
        while (n > r.position() && cs[n - 1] == 0) --n;  // zero padding after EOC
        if (n < r.position() + 2 || cs[n - 2] != 0xFF || cs[n - 1] != 0xD9) return corrupt("Psot 0 but no EOC at the end");
        eoc = n - 2;
      }
      data_end = eoc;
    } else {
      if (psot < r.position() - start || start + psot > cs.size()) return corrupt("Psot runs past the end");
      data_end = start + psot;
    }
    tp.data = cs.subspan(r.position(), data_end - r.position());
    r.seek(data_end);
    p.parts.push_back(std::move(tp));
  }
  if (r.remaining() >= 2 && r.peek_u16() == EOC) r.skip(2);
  p.end = r.position();
  return p;
}

const Segment* find(const std::vector<Segment>& segs, std::uint16_t marker) {
  for (const auto& s : segs)
    if (s.marker == marker) return &s;
  return nullptr;
}

struct Siz {
  std::uint16_t rsiz = 0;
  std::uint32_t x = 0, y = 0, xo = 0, yo = 0, xt = 0, yt = 0, xto = 0, yto = 0;
  struct Comp { std::uint8_t ssiz, xr, yr; };
  std::vector<Comp> comps;
};

Result<Siz> read_siz(const Segment& s) {
  ByteReader r(s.body);
  Siz z;
  z.rsiz = r.u16();
  z.x = r.u32(); z.y = r.u32(); z.xo = r.u32(); z.yo = r.u32();
  z.xt = r.u32(); z.yt = r.u32(); z.xto = r.u32(); z.yto = r.u32();
  const std::uint16_t n = r.u16();
  if (r.failed() || n == 0 || !r.has(3u * n)) return corrupt("SIZ too short");
  for (int i = 0; i < n; ++i) z.comps.push_back({r.u8(), r.u8(), r.u8()});
  if (z.xt == 0 || z.yt == 0 || z.x <= z.xo || z.y <= z.yo) return corrupt("SIZ sizes invalid");
  return z;
}

std::uint32_t ceil_div(std::uint32_t a, std::uint32_t b) { return (a + b - 1) / b; }

using Out = std::vector<std::uint8_t>;

void put_segment(Out& out, std::uint16_t marker, const Out& body) {
  ByteWriter w(out);
  w.u16(marker);
  w.u16(static_cast<std::uint16_t>(body.size() + 2));
  w.bytes(body);
}

/// COD body → SPcod part (after Scod and SGcod), and the flags.
struct Cod {
  std::uint8_t scod = 0;
  std::uint8_t progression = 0;
  std::uint16_t layers = 0;
  std::uint8_t mct = 0;
  Bytes spcod;  ///< levels, code-block sizes, style, transform, precincts
};

Result<Cod> read_cod(const Segment& s) {
  ByteReader r(s.body);
  Cod c;
  c.scod = r.u8();
  c.progression = r.u8();
  c.layers = r.u16();
  c.mct = r.u8();
  c.spcod = r.rest();
  if (r.failed() || c.spcod.size() < 5) return corrupt("COD too short");
  return c;
}

/// Component index in COC/QCC/RGN: one byte when Csiz < 257 (15444-1 A.6.2).
std::uint16_t read_component(ByteReader& r, int csiz) { return csiz < 257 ? r.u8() : r.u16(); }

/// Rewrites a COC/QCC/RGN segment body for component `to` (from a source with `csiz` components).
Out remap_component(const Segment& s, int csiz, std::uint8_t to) {
  ByteReader r(s.body);
  (void)read_component(r, csiz);
  Out body{to};
  ByteWriter w(body);
  w.bytes(r.rest());
  return body;
}

std::optional<std::uint16_t> component_of(const Segment& s, int csiz) {
  ByteReader r(s.body);
  const std::uint16_t c = read_component(r, csiz);
  if (r.failed()) return std::nullopt;
  return c;
}

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

/// What decides a tile-component's packets: decomposition levels and precinct sizes.
struct CodingStyle {
  std::uint8_t levels = 0;
  bool precincts = false;          ///< Scod/Scoc bit 0: PPx/PPy given per resolution
  std::vector<std::uint8_t> pp;    ///< one byte per resolution r = 0..levels: PPy << 4 | PPx
};

/// Reads SPcod/SPcoc (levels, xcb, ycb, style, transform, [precinct sizes]) under Scod/Scoc `flags`.
Result<CodingStyle> read_style(std::uint8_t flags, Bytes sp) {
  if (sp.size() < 5) return corrupt("SPcod/SPcoc too short");
  CodingStyle s;
  s.levels = sp[0];
  if (s.levels > 32) return corrupt(fmt::format("{} decomposition levels", s.levels));
  s.precincts = (flags & 0x01) != 0;
  if (s.precincts) {
    if (sp.size() < 5u + s.levels + 1u) return corrupt("precinct sizes missing from SPcod/SPcoc");
    s.pp.assign(sp.begin() + 5, sp.begin() + 5 + s.levels + 1);
  }
  return s;
}

/// Coding style of a COC segment from a codestream with `csiz` components: (component, style).
Result<std::pair<std::uint16_t, CodingStyle>> read_coc(const Segment& seg, int csiz) {
  ByteReader r(seg.body);
  const std::uint16_t comp = read_component(r, csiz);
  const std::uint8_t scoc = r.u8();
  if (r.failed()) return corrupt("COC too short");
  auto style = read_style(scoc, r.rest());
  if (!style) return style.error();
  return std::pair{comp, std::move(*style)};
}

/// Per-component styles of a source's main header: COD, overridden by COC (15444-1 A.6.1, A.6.2).
Result<std::vector<CodingStyle>> main_styles(const std::vector<Segment>& main, const Cod& cod, int csiz) {
  auto deflt = read_style(cod.scod, cod.spcod);
  if (!deflt) return deflt.error();
  std::vector<CodingStyle> styles(static_cast<std::size_t>(csiz), *deflt);
  for (const auto& seg : main) {
    if (seg.marker != COC) continue;
    auto coc = read_coc(seg, csiz);
    if (!coc) return coc.error();
    if (coc->first >= csiz) return corrupt("COC for a component that does not exist");
    styles[coc->first] = std::move(coc->second);
  }
  return styles;
}

/// Per-component styles in one tile: the main header's, overridden by the tile's COC segments.
Result<std::vector<CodingStyle>> tile_styles(std::vector<CodingStyle> styles, const std::vector<const TilePart*>& parts) {
  const int csiz = static_cast<int>(styles.size());
  for (const TilePart* tp : parts)
    for (const auto& seg : tp->header) {
      if (seg.marker != COC) continue;
      auto coc = read_coc(seg, csiz);
      if (!coc) return coc.error();
      if (coc->first >= csiz) return corrupt("tile COC for a component that does not exist");
      styles[coc->first] = std::move(coc->second);
    }
  return styles;
}

std::uint64_t ceil_div64(std::uint64_t a, std::uint64_t b) { return (a + b - 1) / b; }

/// Number of precincts, summed over resolutions, of one tile-component (15444-1 B.5, B.6).
/// `tc*` are the tile-component bounds on the component's grid. A resolution whose extent is
/// empty in either direction has no precincts and thus no packets.
std::uint64_t precinct_count(std::uint64_t tcx0, std::uint64_t tcx1, std::uint64_t tcy0, std::uint64_t tcy1,
                             const CodingStyle& style) {
  std::uint64_t total = 0;
  for (unsigned r = 0; r <= style.levels; ++r) {
    const std::uint64_t scale = std::uint64_t{1} << (style.levels - r);  // 2^(NL − r), B-14
    const std::uint64_t trx0 = ceil_div64(tcx0, scale), trx1 = ceil_div64(tcx1, scale);
    const std::uint64_t try0 = ceil_div64(tcy0, scale), try1 = ceil_div64(tcy1, scale);
    if (trx0 == trx1 || try0 == try1) continue;
    // PPx = PPy = 15 when the coding style defines no precincts (A.6.1, Table A.13).
    const unsigned ppx = style.precincts ? (style.pp[r] & 0x0F) : 15u;
    const unsigned ppy = style.precincts ? (style.pp[r] >> 4) : 15u;
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

}  // namespace

Result<Bytes> trim_codestream(Bytes data) {
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
  ByteReader r(cs);
  if (r.u16() != SOC || r.u16() != SIZ) return corrupt("no SOC+SIZ");
  r.skip(2 + 2 + 32);
  const std::uint16_t n = r.u16();
  if (r.failed()) return corrupt("SIZ too short");
  return static_cast<int>(n);
}

Result<std::vector<std::uint8_t>> merge_luma_chroma(Bytes luma, Bytes chroma) {
  auto py = parse(luma);
  if (!py) return py.error();
  auto pc = parse(chroma);
  if (!pc) return pc.error();
  auto sy = read_siz(py->main.front());
  if (!sy) return sy.error();
  auto sc = read_siz(pc->main.front());
  if (!sc) return sc.error();
  if (sy->comps.size() != 1 || sc->comps.size() != 2)
    return unsupported(fmt::format("need Csiz 1 and 2, got {} and {}", sy->comps.size(), sc->comps.size()));
  for (const auto& seg : py->main)
    if (seg.marker == PPM || seg.marker == POC || seg.marker == CAP) return unsupported(fmt::format("luma has marker {:04X}", seg.marker));
  for (const auto& seg : pc->main)
    if (seg.marker == PPM || seg.marker == POC || seg.marker == CAP) return unsupported(fmt::format("chroma has marker {:04X}", seg.marker));
  if (sy->xo || sy->yo || sc->xo || sc->yo || sy->xto || sy->yto || sc->xto || sc->yto)
    return unsupported("image or tile offsets are not zero");
  if (sy->comps[0].xr != 1 || sy->comps[0].yr != 1 || sc->comps[0].xr != 1 || sc->comps[0].yr != 1 ||
      sc->comps[1].xr != 1 || sc->comps[1].yr != 1)
    return unsupported("a source is itself subsampled");
  // Chroma subsampling factors from the sizes: 1, 2 (or 4) per direction.
  const std::uint32_t xr = static_cast<std::uint32_t>(std::lround(static_cast<double>(sy->x) / sc->x));
  const std::uint32_t yr = static_cast<std::uint32_t>(std::lround(static_cast<double>(sy->y) / sc->y));
  if (xr < 1 || yr < 1 || xr > 4 || yr > 4 || ceil_div(sy->x, xr) != sc->x || ceil_div(sy->y, yr) != sc->y)
    return unsupported(fmt::format("chroma {}x{} is not a subsampling of luma {}x{}", sc->x, sc->y, sy->x, sy->y));
  // Tiles must line up: the same grid, the chroma one scaled by the subsampling.
  const std::uint32_t tiles_x = ceil_div(sy->x, sy->xt), tiles_y = ceil_div(sy->y, sy->yt);
  if (ceil_div(sc->x, sc->xt) != tiles_x || ceil_div(sc->y, sc->yt) != tiles_y ||
      (tiles_x > 1 && sc->xt * xr != sy->xt) || (tiles_y > 1 && sc->yt * yr != sy->yt))
    return unsupported("luma and chroma tile grids do not line up");

  const Segment* cod_y_seg = find(py->main, COD);
  const Segment* cod_c_seg = find(pc->main, COD);
  const Segment* qcd_y_seg = find(py->main, QCD);
  const Segment* qcd_c_seg = find(pc->main, QCD);
  if (!cod_y_seg || !cod_c_seg || !qcd_y_seg || !qcd_c_seg) return corrupt("main header lacks COD or QCD");
  auto cod_y = read_cod(*cod_y_seg);
  if (!cod_y) return cod_y.error();
  auto cod_c = read_cod(*cod_c_seg);
  if (!cod_c) return cod_c.error();
  if (cod_y->layers == 0 || cod_c->layers == 0) return corrupt("COD with zero layers");
  if ((cod_y->scod & 0x06) != (cod_c->scod & 0x06)) return unsupported("SOP/EPH use differs between luma and chroma");
  // Unequal layer counts: the merged codestream has the larger count, and the source with fewer
  // layers gets empty packets for the missing ones (see the tile loop below).
  const std::uint16_t layers = std::max(cod_y->layers, cod_c->layers);
  const bool pad_luma = cod_y->layers < layers, pad_chroma = cod_c->layers < layers;
  const bool use_sop = (cod_y->scod & 0x02) != 0, use_eph = (cod_y->scod & 0x04) != 0;
  auto styles_y = main_styles(py->main, *cod_y, 1);
  if (!styles_y) return styles_y.error();
  auto styles_c = main_styles(pc->main, *cod_c, 2);
  if (!styles_c) return styles_c.error();

  Out out;
  ByteWriter w(out);
  w.u16(SOC);
  {  // SIZ: luma's, with three components.
    Out b;
    ByteWriter bw(b);
    bw.u16(sy->rsiz);
    for (std::uint32_t v : {sy->x, sy->y, sy->xo, sy->yo, sy->xt, sy->yt, sy->xto, sy->yto}) bw.u32(v);
    bw.u16(3);
    bw.u8(sy->comps[0].ssiz); bw.u8(1); bw.u8(1);
    for (int c = 0; c < 2; ++c) {
      bw.u8(sc->comps[static_cast<std::size_t>(c)].ssiz);
      bw.u8(static_cast<std::uint8_t>(xr));
      bw.u8(static_cast<std::uint8_t>(yr));
    }
    put_segment(out, SIZ, b);
  }
  {  // COD: luma's, MCT off (the components are YCbCr already).
    Out b(cod_y_seg->body.begin(), cod_y_seg->body.end());
    b[2] = static_cast<std::uint8_t>(layers >> 8);
    b[3] = static_cast<std::uint8_t>(layers);
    b[4] = 0;
    put_segment(out, COD, b);
  }
  // Chroma components: their own COC/QCC if the chroma header had one, else from its COD/QCD.
  for (std::uint8_t c = 0; c < 2; ++c) {
    const Segment* own = nullptr;
    for (const auto& s : pc->main)
      if (s.marker == COC && component_of(s, 2) == c) own = &s;
    if (own) {
      put_segment(out, COC, remap_component(*own, 2, static_cast<std::uint8_t>(c + 1)));
    } else {
      Out b{static_cast<std::uint8_t>(c + 1), static_cast<std::uint8_t>(cod_c->scod & 0x01)};
      b.insert(b.end(), cod_c->spcod.begin(), cod_c->spcod.end());
      put_segment(out, COC, b);
    }
  }
  put_segment(out, QCD, Out(qcd_y_seg->body.begin(), qcd_y_seg->body.end()));
  for (std::uint8_t c = 0; c < 2; ++c) {
    const Segment* own = nullptr;
    for (const auto& s : pc->main)
      if (s.marker == QCC && component_of(s, 2) == c) own = &s;
    if (own) {
      put_segment(out, QCC, remap_component(*own, 2, static_cast<std::uint8_t>(c + 1)));
    } else {
      Out b{static_cast<std::uint8_t>(c + 1)};
      b.insert(b.end(), qcd_c_seg->body.begin(), qcd_c_seg->body.end());
      put_segment(out, QCC, b);
    }
  }
  // Luma's per-component segments keep component 0; chroma's RGN moves up by one.
  for (const auto& s : py->main)
    if (s.marker == COC || s.marker == QCC || s.marker == RGN) put_segment(out, s.marker, Out(s.body.begin(), s.body.end()));
  for (const auto& s : pc->main)
    if (s.marker == RGN) {
      const auto comp = component_of(s, 2);
      if (comp) put_segment(out, RGN, remap_component(s, 2, static_cast<std::uint8_t>(*comp + 1)));
    }
  // Packet order: all luma packets, then all chroma packets, each in its own progression.
  // Component-first (CPRL) already gives that when the layer counts agree; otherwise a POC replays
  // each source's order (15444-1 A.6.6, B.12). A source with fewer layers L_s gets LYE = L_s in
  // its entry, followed by an LRCP entry over its components up to LYE = L: the packets of layers
  // below L_s were sequenced by the earlier entry and are not sequenced again, so that entry
  // covers exactly layers L_s..L−1, all of them empty packets placed after that source's data.
  constexpr std::uint8_t kCprl = 4, kLrcp = 0;
  if (!(cod_y->progression == kCprl && cod_c->progression == kCprl) || pad_luma || pad_chroma) {
    // REpoc: one past the highest resolution any of the source's tile-components has.
    auto resolutions = [](const std::vector<CodingStyle>& main, const Parsed& p, int csiz) -> Result<std::uint8_t> {
      unsigned levels = 0;
      for (const auto& st : main) levels = std::max<unsigned>(levels, st.levels);
      for (const auto& tp : p.parts)
        for (const auto& seg : tp.header)
          if (seg.marker == COC) {
            auto coc = read_coc(seg, csiz);
            if (!coc) return coc.error();
            levels = std::max<unsigned>(levels, coc->second.levels);
          }
      return static_cast<std::uint8_t>(levels + 1);
    };
    auto res_y = resolutions(*styles_y, *py, 1);
    if (!res_y) return res_y.error();
    auto res_c = resolutions(*styles_c, *pc, 2);
    if (!res_c) return res_c.error();
    Out b;
    ByteWriter bw(b);
    auto entry = [&bw](std::uint8_t rs, std::uint8_t cs, std::uint16_t lye, std::uint8_t re, std::uint8_t ce, std::uint8_t prog) {
      bw.u8(rs); bw.u8(cs); bw.u16(lye); bw.u8(re); bw.u8(ce); bw.u8(prog);
    };
    entry(0, 0, cod_y->layers, *res_y, 1, cod_y->progression);
    if (pad_luma) entry(0, 0, layers, *res_y, 1, kLrcp);
    entry(0, 1, cod_c->layers, *res_c, 3, cod_c->progression);
    if (pad_chroma) entry(0, 1, layers, *res_c, 3, kLrcp);
    put_segment(out, POC, b);
  }
  for (const auto& s : py->main)
    if (s.marker == 0xFF64) put_segment(out, s.marker, Out(s.body.begin(), s.body.end()));  // COM
  // TLM, PLM and CRG describe the sources' layout or are optional: dropped.
  (void)TLM; (void)PLM; (void)CRG;

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
  auto padding_packets = [&](std::uint16_t tile, const std::vector<CodingStyle>& main, const std::vector<const TilePart*>& parts,
                             std::uint32_t dx, std::uint32_t dy, std::uint16_t source_layers) -> Result<std::uint64_t> {
    auto styles = tile_styles(main, parts);
    if (!styles) return styles.error();
    const std::uint64_t p = tile % tiles_x, q = tile / tiles_x;
    const std::uint64_t tx0 = std::max<std::uint64_t>(sy->xto + p * sy->xt, sy->xo);
    const std::uint64_t tx1 = std::min<std::uint64_t>(sy->xto + (p + 1) * sy->xt, sy->x);
    const std::uint64_t ty0 = std::max<std::uint64_t>(sy->yto + q * sy->yt, sy->yo);
    const std::uint64_t ty1 = std::min<std::uint64_t>(sy->yto + (q + 1) * sy->yt, sy->y);
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
        if (s.marker == COC || s.marker == QCC || s.marker == RGN) {
          auto comp = component_of(s, 2);
          if (!comp || *comp >= 2) return corrupt(fmt::format("chroma tile-part segment {:04X} for a component that does not exist", s.marker));
          put_segment(chroma_tile_segments, s.marker, remap_component(s, 2, static_cast<std::uint8_t>(*comp + 1)));
        }
    std::size_t index = 0;
    const auto tile_number = tile;  // clang 14 cannot capture a structured binding (C++20 P1091)
    auto write_part = [&](const Out& header, Bytes body, std::uint64_t sop_offset) -> Status {
      const std::size_t psot = 12 + header.size() + 2 + body.size();
      if (psot > 0xFFFFFFFFu) return unsupported("tile-part too large");
      w.u16(SOT);
      w.u16(10);
      w.u16(tile_number);
      w.u32(static_cast<std::uint32_t>(psot));
      w.u8(static_cast<std::uint8_t>(index++));
      w.u8(static_cast<std::uint8_t>(total));
      w.bytes(header);
      w.u16(SOD);
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
            case 0xFF61:
              // Packed headers stand for every packet header of the tile (A.7.5): the other
              // source's packets (and any padding) would be read from them, and Zppt would repeat.
              return unsupported(fmt::format("{} has packed packet headers (PPT)", source == 0 ? "luma" : "chroma"));
            case 0xFF58: case 0xFF64:  // PLT, COM describe this tile-part only
              put_segment(header, s.marker, Out(s.body.begin(), s.body.end()));
              break;
            case COC: case QCC: case RGN:
              if (source == 0) put_segment(header, s.marker, Out(s.body.begin(), s.body.end()));
              break;  // the chroma's went into the first tile-part
            default:
              return unsupported(fmt::format("tile-part header marker {:04X} in {}", s.marker, source == 0 ? "luma" : "chroma"));
          }
        }
        if (index == 0) header.insert(header.end(), chroma_tile_segments.begin(), chroma_tile_segments.end());
        auto written = write_part(header, tp->data, source == 1 ? luma_packets + pad_y : 0);
        if (!written) return written.error();
      }
      const Out& padding = source == 0 ? padding_y : padding_c;
      if (!padding.empty()) {
        auto written = write_part({}, padding, 0);
        if (!written) return written.error();
      }
    }
  }
  w.u16(EOC);
  return out;
}

}  // namespace j2k::depacketizer
