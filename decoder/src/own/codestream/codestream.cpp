#include "codestream/codestream.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace j2k::decoder::own {

namespace {

// Marker codes (15444-1 Table A.2).
constexpr std::uint16_t kSOC = 0xFF4F, kCAP = 0xFF50, kSIZ = 0xFF51, kCOD = 0xFF52, kCOC = 0xFF53,
                        kTLM = 0xFF55, kPLM = 0xFF57, kPLT = 0xFF58, kQCD = 0xFF5C, kQCC = 0xFF5D,
                        kRGN = 0xFF5E, kPOC = 0xFF5F, kPPM = 0xFF60, kPPT = 0xFF61, kCRG = 0xFF63,
                        kCOM = 0xFF64, kSOT = 0xFF90, kSOD = 0xFF93, kEOC = 0xFFD9;

Error corrupt(std::string what) { return make_error(ErrorKind::corrupt, std::move(what)); }

/// Component index fields are 8 bits, or 16 when Csiz >= 257 (A.6.2).
int read_component_index(ByteReader& r, std::size_t num_components) {
  return num_components >= 257 ? r.u16() : r.u8();
}

Status parse_siz(ByteReader& r, Siz& siz, const DecodeLimits& limits) {
  r.u16();  // Rsiz: capabilities; Part 2/15 bits are checked through their own markers
  siz.x1 = r.u32();
  siz.y1 = r.u32();
  siz.x0 = r.u32();
  siz.y0 = r.u32();
  siz.tw = r.u32();
  siz.th = r.u32();
  siz.tx0 = r.u32();
  siz.ty0 = r.u32();
  int csiz = r.u16();
  if (r.failed()) return corrupt("SIZ marker segment is truncated");
  // A.5.1 ranges, and our own size caps so that nothing below can overflow an int.
  if (siz.x1 <= siz.x0 || siz.y1 <= siz.y0) return corrupt("SIZ: empty image area");
  if (siz.tw == 0 || siz.th == 0) return corrupt("SIZ: zero tile size");
  if (siz.tx0 > siz.x0 || siz.ty0 > siz.y0) return corrupt("SIZ: tile origin after image origin");
  if (std::uint64_t(siz.tx0) + siz.tw <= siz.x0 || std::uint64_t(siz.ty0) + siz.th <= siz.y0)
    return corrupt("SIZ: first tile does not cover the image origin");
  if (siz.x1 > (1u << 30) || siz.y1 > (1u << 30)) return make_error(ErrorKind::limit, "SIZ: image grid beyond 2^30");
  long long w = siz.x1 - siz.x0, h = siz.y1 - siz.y0;
  if (w * h > limits.max_pixels)
    return make_error(ErrorKind::limit, fmt::format("image {}x{} exceeds the size limit", w, h));
  if (csiz < 1 || csiz > 16384) return corrupt("SIZ: component count outside 1..16384");
  if (csiz > limits.max_components)
    return make_error(ErrorKind::limit, fmt::format("{} components is outside the limit", csiz));
  siz.components.resize(csiz);
  for (auto& c : siz.components) {
    int ssiz = r.u8();
    c.is_signed = (ssiz & 0x80) != 0;
    c.precision = (ssiz & 0x7F) + 1;
    c.dx = r.u8();
    c.dy = r.u8();
    if (r.failed()) return corrupt("SIZ: component list truncated");
    if (c.dx == 0 || c.dy == 0) return corrupt("SIZ: zero component subsampling");
    if (c.precision > 16)  // 15444-1 allows 38; our integer pipeline stops at 16
      return make_error(ErrorKind::unsupported, fmt::format("{}-bit components are not supported", c.precision));
  }
  long long tiles_x = (static_cast<long long>(siz.x1) - siz.tx0 + siz.tw - 1) / siz.tw;
  long long tiles_y = (static_cast<long long>(siz.y1) - siz.ty0 + siz.th - 1) / siz.th;
  if (tiles_x * tiles_y > 65535) return corrupt("SIZ: more than 65535 tiles");  // Isot is 16 bits
  // Every tile-component gets its own structures: bound their number, not just the pixels.
  if (tiles_x * tiles_y * csiz > (1LL << 20))
    return make_error(ErrorKind::limit, fmt::format("{} tiles of {} components exceed the limit", tiles_x * tiles_y, csiz));
  siz.tiles_x = static_cast<int>(tiles_x);
  siz.tiles_y = static_cast<int>(tiles_y);
  return {};
}

Status parse_spcod(ByteReader& r, bool precincts, ComponentCoding& c) {
  c.levels = r.u8();
  c.cb_width_exp = r.u8() + 2;
  c.cb_height_exp = r.u8() + 2;
  c.cb_style = r.u8();
  int transform = r.u8();
  if (r.failed()) return corrupt("COD/COC: truncated");
  if (c.levels > kMaxLevels) return corrupt("COD/COC: more than 32 decomposition levels");
  // A.6.1: xcb, ycb in 2..10 and xcb + ycb <= 12.
  if (c.cb_width_exp > 10 || c.cb_height_exp > 10 || c.cb_width_exp + c.cb_height_exp > 12)
    return corrupt("COD/COC: code-block size out of range");
  if (c.cb_style & 0x40) return make_error(ErrorKind::unsupported, "HT code-blocks (15444-15) are not supported");
  if (c.cb_style & 0x80) return corrupt("COD/COC: reserved code-block style bit");
  if (transform > 1)
    return make_error(ErrorKind::unsupported, "Part 2 wavelet transforms are not supported");
  c.reversible = transform == 1;
  for (int i = 0; i <= c.levels; ++i) {
    std::uint8_t v = precincts ? r.u8() : 0xFF;
    // A.6.1: only the lowest resolution may have a 1x1 (PPx or PPy = 0) precinct.
    if (precincts && i > 0 && ((v & 0x0F) == 0 || (v >> 4) == 0)) return corrupt("COD/COC: PPx/PPy of 0 above resolution 0");
    c.precincts[i] = v;
  }
  if (r.failed()) return corrupt("COD/COC: precinct sizes truncated");
  return {};
}

Status parse_cod(ByteReader& r, CodingStyle& s) {
  int scod = r.u8();
  s.sop = (scod & 2) != 0;
  s.eph = (scod & 4) != 0;
  int order = r.u8();
  s.layers = r.u16();
  int mct = r.u8();
  if (r.failed()) return corrupt("COD: truncated");
  if (order > 4) return corrupt("COD: unknown progression order");
  s.progression = static_cast<ProgressionOrder>(order);
  if (s.layers == 0) return corrupt("COD: zero layers");
  if (mct > 1) return make_error(ErrorKind::unsupported, "Part 2 multiple component transforms are not supported");
  s.mct = mct == 1;
  return parse_spcod(r, (scod & 1) != 0, s.component);
}

Status parse_quant(ByteReader& r, std::size_t length, Quantization& q) {
  int sq = r.u8();
  q.style = sq & 0x1F;
  q.guard_bits = sq >> 5;
  if (length < 1) return corrupt("QCD/QCC: empty");
  std::size_t n = length - 1;
  q.steps.clear();
  switch (q.style) {
    case 0:  // A.6.4: one byte per subband, exponent in the top 5 bits
      for (std::size_t i = 0; i < n; ++i) q.steps.emplace_back(static_cast<std::uint8_t>(r.u8() >> 3), 0);
      break;
    case 1:
    case 2:
      if (n % 2 != 0 || n == 0) return corrupt("QCD/QCC: odd length of step sizes");
      for (std::size_t i = 0; i < n / 2; ++i) {
        int v = r.u16();
        q.steps.emplace_back(static_cast<std::uint8_t>(v >> 11), static_cast<std::uint16_t>(v & 0x7FF));
      }
      if (q.style == 1 && q.steps.size() != 1) q.steps.resize(1);  // derived: only the LL value counts
      break;
    default: return corrupt("QCD/QCC: unknown quantisation style");
  }
  if (r.failed() || q.steps.empty()) return corrupt("QCD/QCC: truncated");
  return {};
}

/// One header (main or tile-part) marker; returns false in `handled` for markers the caller owns.
Status parse_param_marker(std::uint16_t marker, ByteReader& seg, HeaderParams& p, std::size_t ncomp) {
  switch (marker) {
    case kCOD: {
      CodingStyle s;
      if (Status st = parse_cod(seg, s); !st) return st;
      p.cod = s;
      return {};
    }
    case kCOC: {
      int c = read_component_index(seg, ncomp);
      int scoc = seg.u8();
      if (seg.failed() || c >= static_cast<int>(ncomp)) return corrupt("COC: bad component index");
      ComponentCoding cc;
      if (Status st = parse_spcod(seg, (scoc & 1) != 0, cc); !st) return st;
      p.coc[c] = cc;
      return {};
    }
    case kQCD: {
      Quantization q;
      if (Status st = parse_quant(seg, seg.remaining(), q); !st) return st;
      p.qcd = q;
      return {};
    }
    case kQCC: {
      std::size_t before = seg.remaining();
      int c = read_component_index(seg, ncomp);
      if (seg.failed() || c >= static_cast<int>(ncomp)) return corrupt("QCC: bad component index");
      Quantization q;
      if (Status st = parse_quant(seg, before - (ncomp >= 257 ? 2 : 1), q); !st) return st;
      p.qcc[c] = q;
      return {};
    }
    case kRGN: {
      int c = read_component_index(seg, ncomp);
      int style = seg.u8();
      int shift = seg.u8();
      if (seg.failed() || c >= static_cast<int>(ncomp)) return corrupt("RGN: bad component index");
      if (style != 0) return make_error(ErrorKind::unsupported, "RGN: only the maxshift method (Part 1) is supported");
      if (shift > 37) return corrupt("RGN: shift beyond 37 bit-planes");
      p.roi_shift[c] = shift;
      return {};
    }
    case kPOC: {
      std::size_t entry = ncomp >= 257 ? 9 : 7;
      if (seg.remaining() == 0 || seg.remaining() % entry != 0) return corrupt("POC: length is not a whole number of entries");
      // A.6.6: POC segments add to the progressions already given (several markers, and
      // the tile-parts of one tile, each continue the list).
      if (p.poc.size() > 256) return corrupt("POC: more than 256 progression changes");
      while (!seg.empty()) {
        ProgressionChange pc;
        pc.res_start = seg.u8();
        pc.comp_start = read_component_index(seg, ncomp);
        pc.layer_end = seg.u16();
        pc.res_end = seg.u8();
        pc.comp_end = read_component_index(seg, ncomp);
        int order = seg.u8();
        if (pc.comp_end == 0) pc.comp_end = ncomp >= 257 ? 65536 : 256;  // A.6.6: 0 means 256
        if (order > 4) return corrupt("POC: unknown progression order");
        pc.order = static_cast<ProgressionOrder>(order);
        p.poc.push_back(pc);
      }
      return {};
    }
    case kTLM:  // A.7.1 tile-part lengths, A.7.2/A.7.3 packet lengths: we find our way
    case kPLM:  // through SOT/Psot and the packet headers themselves
    case kPLT:
    case kCRG:  // A.9.1 component registration: display only
    case kCOM:  // A.9.2 comment
    default: return {};  // unknown markers with a length are skipped too
  }
}

void init_params(HeaderParams& p, std::size_t n) {
  p.coc.resize(n);
  p.qcc.resize(n);
  p.roi_shift.resize(n);
}

/// The SIZ marker segment that must follow SOC (A.4.1), `r` positioned after SOC.
Status parse_siz_segment(ByteReader& r, Siz& siz, const DecodeLimits& limits) {
  if (r.u16() != kSIZ) return corrupt("SIZ must follow SOC");
  std::size_t len = r.u16();
  if (len < 2 || !r.has(len - 2)) return corrupt("SIZ marker segment is truncated");
  ByteReader seg(r.bytes(len - 2));
  return parse_siz(seg, siz, limits);
}

}  // namespace

Result<Siz> parse_main_siz(Bytes data, const DecodeLimits& limits) {
  ByteReader r(data);
  if (r.u16() != kSOC) return corrupt("no SOC marker at the start of the codestream");
  Siz siz;
  if (Status st = parse_siz_segment(r, siz, limits); !st) return st.error();
  return siz;
}

Result<Codestream> parse_codestream(Bytes data, const DecodeLimits& limits, bool strict) {
  ByteReader r(data);
  if (r.u16() != kSOC) return corrupt("no SOC marker at the start of the codestream");
  Codestream cs;
  std::vector<std::pair<int, Bytes>> ppm;  // (Zppm, data)
  // Main header (A.4.1): SIZ first, then any markers until the first SOT.
  if (Status st = parse_siz_segment(r, cs.siz, limits); !st) return st.error();
  const std::size_t ncomp = cs.siz.components.size();
  init_params(cs.main, ncomp);
  cs.tiles.resize(static_cast<std::size_t>(cs.siz.tiles_x) * cs.siz.tiles_y);
  for (;;) {
    if (r.remaining() < 4) return corrupt("main header ends before the first tile-part (no SOT)");
    std::uint16_t marker = r.u16();
    if (marker == kSOT) {
      r.seek(r.position() - 2);
      break;
    }
    if (marker == kCAP) return make_error(ErrorKind::unsupported, "CAP marker: HTJ2K (15444-15) codestreams are not supported");
    if ((marker >> 8) != 0xFF || marker < 0xFF30) return corrupt(fmt::format("expected a marker, found {:04X}", marker));
    std::size_t len = r.u16();
    if (len < 2 || !r.has(len - 2)) return corrupt(fmt::format("marker {:04X} runs past the end of the data", marker));
    ByteReader seg(r.bytes(len - 2));
    if (marker == kPPM) {
      int z = seg.u8();
      ppm.emplace_back(z, seg.rest());
      cs.has_ppm = true;
      continue;
    }
    if (marker == kPPT || marker == kSOD || marker == kSIZ)
      return corrupt(fmt::format("marker {:04X} is not allowed in the main header", marker));
    if (Status st = parse_param_marker(marker, seg, cs.main, ncomp); !st) return st.error();
  }
  if (!cs.main.cod) return corrupt("main header has no COD marker");
  if (!cs.main.qcd) return corrupt("main header has no QCD marker");

  // Tile-parts (A.4.2), in codestream order; tiles may interleave.
  std::vector<int> tile_of_part;  // for PPM: the tile of each tile-part in order
  bool saw_eoc = false;
  while (r.remaining() >= 2) {
    std::uint16_t marker = r.u16();
    if (marker == kEOC) {
      saw_eoc = true;
      break;
    }
    if (marker != kSOT) {
      if (strict) return corrupt(fmt::format("expected SOT or EOC, found {:04X}", marker));
      cs.truncated = true;
      break;
    }
    std::size_t sot_start = r.position() - 2;
    int lsot = r.u16();
    int isot = r.u16();
    std::uint32_t psot = r.u32();
    int tpsot = r.u8();
    r.u8();  // TNsot: number of tile-parts, informational
    if (r.failed() || lsot != 10) {
      if (strict) return corrupt("SOT marker segment is truncated or malformed");
      cs.truncated = true;
      break;
    }
    if (isot >= static_cast<int>(cs.tiles.size())) return corrupt(fmt::format("SOT: tile index {} out of range", isot));
    TileHeader& tile = cs.tiles[isot];
    if (!tile.seen) {
      init_params(tile.params, ncomp);
      tile.seen = true;
    }
    std::size_t end = psot == 0 ? data.size() : sot_start + psot;  // Psot = 0: up to EOC
    if (psot != 0 && psot < 14) return corrupt("SOT: Psot smaller than the SOT segment");
    bool cut = end > data.size();
    if (cut) {
      if (strict) return corrupt(fmt::format("tile-part of tile {} runs past the end of the data", isot));
      end = data.size();
      tile.truncated = cs.truncated = true;
    }
    // Tile-part header up to SOD.
    bool got_sod = false;
    while (r.position() + 4 <= end) {
      std::uint16_t m = r.u16();
      if (m == kSOD) {
        got_sod = true;
        break;
      }
      std::size_t len = r.u16();
      if (len < 2 || r.position() + len - 2 > end) return corrupt(fmt::format("marker {:04X} runs past its tile-part", m));
      ByteReader seg(r.bytes(len - 2));
      if (m == kPPT) {
        if (cs.has_ppm) return corrupt("PPT and PPM in the same codestream");
        int z = seg.u8();
        Bytes rest = seg.rest();
        tile.ppt.emplace_back(z, std::vector<std::uint8_t>(rest.begin(), rest.end()));
        continue;
      }
      if ((m >> 8) != 0xFF) return corrupt(fmt::format("expected a marker in tile-part header, found {:04X}", m));
      if (Status st = parse_param_marker(m, seg, tile.params, ncomp); !st) return st.error();
    }
    if (!got_sod && r.position() + 2 <= end && r.u16() == kSOD) got_sod = true;
    if (!got_sod) {
      if (strict) return corrupt(fmt::format("tile-part of tile {} has no SOD", isot));
      tile.truncated = cs.truncated = true;
      break;
    }
    std::size_t body_start = r.position();
    std::size_t body_end = end;
    if (psot == 0 && body_end >= body_start + 2 && data[body_end - 2] == 0xFF && data[body_end - 1] == 0xD9) {
      body_end -= 2;  // the EOC after the last tile-part
      saw_eoc = true;
    }
    TilePart part;
    part.body = data.subspan(body_start, body_end - body_start);
    part.index_in_tile = tpsot;
    tile.parts.push_back(part);
    tile_of_part.push_back(isot);
    r.seek(end);
    if (cut) break;
  }
  if (!saw_eoc) {
    // A.3: the codestream ends with EOC. Resilient mode decodes what came; strict refuses.
    if (strict) return corrupt("codestream ends without EOC");
    cs.truncated = true;
  }

  // PPM (A.7.4): Nppm + headers for each tile-part, in codestream order, across markers.
  if (cs.has_ppm) {
    std::stable_sort(ppm.begin(), ppm.end(), [](auto& a, auto& b) { return a.first < b.first; });
    std::vector<std::uint8_t> all;
    for (auto& [z, bytes] : ppm) all.insert(all.end(), bytes.begin(), bytes.end());
    ByteReader pr{Bytes(all)};
    for (int t : tile_of_part) {
      std::uint32_t n = pr.u32();
      if (pr.failed() || n > pr.remaining()) {
        if (strict) return corrupt("PPM: packet headers run out before the tile-parts do");
        cs.tiles[t].truncated = true;
        break;
      }
      Bytes h = pr.bytes(n);
      cs.tiles[t].ppm_headers.insert(cs.tiles[t].ppm_headers.end(), h.begin(), h.end());
    }
  }
  return cs;
}

Result<TileParams> resolve_tile_params(const Codestream& cs, int tile) {
  const HeaderParams& m = cs.main;
  const TileHeader& th = cs.tiles[tile];
  const HeaderParams* t = th.seen ? &th.params : nullptr;
  TileParams tp;
  tp.style = (t && t->cod) ? *t->cod : *m.cod;
  std::size_t n = cs.siz.components.size();
  tp.components.resize(n);
  for (std::size_t c = 0; c < n; ++c) {
    auto& out = tp.components[c];
    if (t && t->coc[c]) out.coding = *t->coc[c];
    else if (t && t->cod) out.coding = t->cod->component;
    else if (m.coc[c]) out.coding = *m.coc[c];
    else out.coding = m.cod->component;
    if (t && t->qcc[c]) out.quant = *t->qcc[c];
    else if (t && t->qcd) out.quant = *t->qcd;
    else if (m.qcc[c]) out.quant = *m.qcc[c];
    else out.quant = *m.qcd;
    if (t && t->roi_shift[c]) out.roi_shift = *t->roi_shift[c];
    else if (m.roi_shift[c]) out.roi_shift = *m.roi_shift[c];
    // E.1: style 0 and 2 need one entry per subband.
    std::size_t bands = 1 + 3 * static_cast<std::size_t>(out.coding.levels);
    if (out.quant.style != 1 && out.quant.steps.size() < bands)
      return corrupt(fmt::format("QCD/QCC: {} step sizes for {} subbands", out.quant.steps.size(), bands));
  }
  // Main-header progressions first, then the tile's own. This is how OpenJPEG reads POC
  // (it appends tile-part POCs to the main ones), and Grok writes streams that depend on
  // it (main and tile POC both present, only the main one matching the packet order).
  // Each packet is read once, so entries that repeat packets already read cost nothing.
  tp.poc = m.poc;
  if (t) tp.poc.insert(tp.poc.end(), t->poc.begin(), t->poc.end());
  return tp;
}

}  // namespace j2k::decoder::own
