#include "syntax/parameters.hpp"

#include <fmt/format.h>

#include "syntax/markers.hpp"

namespace j2k::syntax {

namespace {

Error corrupt(std::string what) { return make_error(ErrorKind::corrupt, std::move(what)); }

/// Component index fields are 8 bits, or 16 when Csiz >= 257 (A.6.2).
int read_component_index(ByteReader& r, std::size_t csiz) { return csiz >= 257 ? r.u16() : r.u8(); }

void write_component_index(ByteWriter<Out>& w, int component, std::size_t csiz) {
  if (csiz >= 257) w.u16(static_cast<std::uint16_t>(component));
  else w.u8(static_cast<std::uint8_t>(component));
}

Status check_component(int component, std::size_t csiz, const char* what) {
  if (component < 0 || static_cast<std::size_t>(component) >= csiz || component > 0xFFFF)
    return corrupt(fmt::format("{}: component {} does not exist", what, component));
  return {};
}

/// A segment about one component (COC, QCC, RGN): the component's index, then what `rest`
/// writes (it may refuse with an error).
template <typename Rest>
Status write_component_segment(Out& out, std::uint16_t marker, const char* what, int component, std::size_t csiz, Rest rest) {
  if (Status st = check_component(component, csiz, what); !st) return st;
  Out body;
  ByteWriter w(body);
  write_component_index(w, component, csiz);
  if (Status st = rest(w); !st) return st;
  return write_segment(out, marker, body);
}

/// SPcod / SPcoc (A.6.1 Table A.15), `precincts` from Scod/Scoc bit 0.
Status read_spcod(ByteReader& r, bool precincts, ComponentCoding& c) {
  c.levels = r.u8();
  c.cb_width_exp = r.u8() + 2;
  c.cb_height_exp = r.u8() + 2;
  c.cb_style = r.u8();
  const int transform = r.u8();
  if (r.failed()) return corrupt("COD/COC: truncated");
  if (c.levels > kMaxLevels) return corrupt("COD/COC: more than 32 decomposition levels");
  // A.6.1: xcb, ycb in 2..10 and xcb + ycb <= 12.
  if (c.cb_width_exp > 10 || c.cb_height_exp > 10 || c.cb_width_exp + c.cb_height_exp > 12)
    return corrupt("COD/COC: code-block size out of range");
  if (c.cb_style & 0x40) return make_error(ErrorKind::unsupported, "HT code-blocks (15444-15) are not supported");
  if (c.cb_style & 0x80) return corrupt("COD/COC: reserved code-block style bit");
  if (transform > 1) return make_error(ErrorKind::unsupported, "Part 2 wavelet transforms are not supported");
  c.reversible = transform == 1;
  c.explicit_precincts = precincts;
  c.precincts.fill(0xFF);
  for (int i = 0; i <= c.levels; ++i) {
    const std::uint8_t v = precincts ? r.u8() : 0xFF;
    // A.6.1: only the lowest resolution may have a 1x1 (PPx or PPy = 0) precinct.
    if (precincts && i > 0 && ((v & 0x0F) == 0 || (v >> 4) == 0)) return corrupt("COD/COC: PPx/PPy of 0 above resolution 0");
    c.precincts[static_cast<std::size_t>(i)] = v;
  }
  if (r.failed()) return corrupt("COD/COC: precinct sizes truncated");
  return {};
}

void write_spcod(ByteWriter<Out>& w, const ComponentCoding& c) {
  w.u8(static_cast<std::uint8_t>(c.levels));
  w.u8(static_cast<std::uint8_t>(c.cb_width_exp - 2));
  w.u8(static_cast<std::uint8_t>(c.cb_height_exp - 2));
  w.u8(c.cb_style);
  w.u8(c.reversible ? 1 : 0);
  if (c.explicit_precincts)
    for (int i = 0; i <= c.levels && i <= kMaxLevels; ++i) w.u8(c.precincts[static_cast<std::size_t>(i)]);
}

/// Sqcd/Sqcc and SPqcd/SPqcc over `length` bytes (A.6.4 Tables A.28-A.30).
Status read_quant(ByteReader& r, std::size_t length, Quantization& q) {
  if (length < 1) return corrupt("QCD/QCC: empty");
  const int sq = r.u8();
  q.style = sq & 0x1F;
  q.guard_bits = sq >> 5;
  const std::size_t n = length - 1;
  q.steps.clear();
  switch (q.style) {
    case 0:  // one byte per subband, the exponent in the top 5 bits
      for (std::size_t i = 0; i < n; ++i) q.steps.emplace_back(static_cast<std::uint8_t>(r.u8() >> 3), 0);
      break;
    case 1:
    case 2:
      if (n % 2 != 0 || n == 0) return corrupt("QCD/QCC: odd length of step sizes");
      for (std::size_t i = 0; i < n / 2; ++i) {
        const int v = r.u16();
        q.steps.emplace_back(static_cast<std::uint8_t>(v >> 11), static_cast<std::uint16_t>(v & 0x7FF));
      }
      if (q.style == 1 && q.steps.size() != 1) q.steps.resize(1);  // derived: only the LL value counts
      break;
    default: return corrupt("QCD/QCC: unknown quantisation style");
  }
  if (r.failed() || q.steps.empty()) return corrupt("QCD/QCC: truncated");
  return {};
}

Status write_quant(ByteWriter<Out>& w, const Quantization& q) {
  if (q.style < 0 || q.style > 2 || q.guard_bits < 0 || q.guard_bits > 7 || q.steps.empty())
    return corrupt("QCD/QCC: nothing valid to write");
  w.u8(static_cast<std::uint8_t>(q.guard_bits << 5 | q.style));
  for (const auto& [exponent, mantissa] : q.steps) {
    if (q.style == 0) w.u8(static_cast<std::uint8_t>(exponent << 3));
    else w.u16(static_cast<std::uint16_t>((exponent & 0x1F) << 11 | (mantissa & 0x7FF)));
    if (q.style == 1) break;
  }
  return {};
}

}  // namespace

// ---- SIZ ----

Result<Siz> read_siz(Bytes body) {
  ByteReader r(body);
  Siz siz;
  siz.rsiz = r.u16();  // capabilities; Part 2/15 features show in their own markers
  for (std::uint32_t* v : {&siz.x1, &siz.y1, &siz.x0, &siz.y0, &siz.tw, &siz.th, &siz.tx0, &siz.ty0}) *v = r.u32();
  const int csiz = r.u16();
  if (r.failed()) return corrupt("SIZ marker segment is truncated");
  // A.5.1 ranges, and a grid cap so that nothing derived from it can overflow an int.
  if (siz.x1 <= siz.x0 || siz.y1 <= siz.y0) return corrupt("SIZ: empty image area");
  if (siz.tw == 0 || siz.th == 0) return corrupt("SIZ: zero tile size");
  if (siz.tx0 > siz.x0 || siz.ty0 > siz.y0) return corrupt("SIZ: tile origin after image origin");
  if (std::uint64_t(siz.tx0) + siz.tw <= siz.x0 || std::uint64_t(siz.ty0) + siz.th <= siz.y0)
    return corrupt("SIZ: first tile does not cover the image origin");
  if (siz.x1 > (1u << 30) || siz.y1 > (1u << 30)) return make_error(ErrorKind::limit, "SIZ: image grid beyond 2^30");
  if (csiz < 1 || csiz > 16384) return corrupt("SIZ: component count outside 1..16384");
  siz.components.resize(static_cast<std::size_t>(csiz));
  for (auto& c : siz.components) {
    const int ssiz = r.u8();
    c.is_signed = (ssiz & 0x80) != 0;
    c.precision = (ssiz & 0x7F) + 1;
    c.dx = r.u8();
    c.dy = r.u8();
    if (r.failed()) return corrupt("SIZ: component list truncated");
    if (c.dx == 0 || c.dy == 0) return corrupt("SIZ: zero component subsampling");
    if (c.precision > 38) return corrupt(fmt::format("SIZ: {}-bit component (1..38 allowed)", c.precision));
  }
  const long long tiles_x = (static_cast<long long>(siz.x1) - siz.tx0 + siz.tw - 1) / siz.tw;
  const long long tiles_y = (static_cast<long long>(siz.y1) - siz.ty0 + siz.th - 1) / siz.th;
  if (tiles_x * tiles_y > 65535) return corrupt("SIZ: more than 65535 tiles");  // Isot is 16 bits
  siz.tiles_x = static_cast<int>(tiles_x);
  siz.tiles_y = static_cast<int>(tiles_y);
  return siz;
}

Status write_siz(Out& out, const Siz& siz) {
  if (siz.components.empty() || siz.components.size() > 16384) return corrupt("SIZ: component count outside 1..16384");
  Out body;
  ByteWriter w(body);
  w.u16(siz.rsiz);
  for (std::uint32_t v : {siz.x1, siz.y1, siz.x0, siz.y0, siz.tw, siz.th, siz.tx0, siz.ty0}) w.u32(v);
  w.u16(static_cast<std::uint16_t>(siz.components.size()));
  for (const ComponentSiz& c : siz.components) {
    if (c.precision < 1 || c.precision > 38 || c.dx < 1 || c.dx > 255 || c.dy < 1 || c.dy > 255)
      return corrupt("SIZ: component values out of range");
    w.u8(static_cast<std::uint8_t>((c.is_signed ? 0x80 : 0) | (c.precision - 1)));
    w.u8(static_cast<std::uint8_t>(c.dx));
    w.u8(static_cast<std::uint8_t>(c.dy));
  }
  return write_segment(out, marker::SIZ, body);
}

Status check_limits(const Siz& siz, const PictureLimits& limits) {
  const long long w = siz.x1 - siz.x0, h = siz.y1 - siz.y0;
  if (w * h > limits.max_pixels) return make_error(ErrorKind::limit, fmt::format("image {}x{} exceeds the size limit", w, h));
  if (static_cast<long long>(siz.components.size()) > limits.max_components)
    return make_error(ErrorKind::limit, fmt::format("{} components is outside the limit", siz.components.size()));
  for (const ComponentSiz& c : siz.components)
    if (c.precision > limits.max_precision)
      return make_error(ErrorKind::unsupported, fmt::format("{}-bit components are not supported", c.precision));
  return {};
}

// ---- COD, COC ----

Result<CodingStyle> read_cod(Bytes body) {
  ByteReader r(body);
  CodingStyle s;
  const int scod = r.u8();
  s.sop = (scod & 2) != 0;
  s.eph = (scod & 4) != 0;
  const int order = r.u8();
  s.layers = r.u16();
  const int mct = r.u8();
  if (r.failed()) return corrupt("COD: truncated");
  if (order > 4) return corrupt("COD: unknown progression order");
  s.progression = static_cast<ProgressionOrder>(order);
  if (s.layers == 0) return corrupt("COD: zero layers");
  if (mct > 1) return make_error(ErrorKind::unsupported, "Part 2 multiple component transforms are not supported");
  s.mct = mct == 1;
  if (Status st = read_spcod(r, (scod & 1) != 0, s.component); !st) return st.error();
  return s;
}

Status write_cod(Out& out, const CodingStyle& s) {
  if (s.layers < 1 || s.layers > 0xFFFF) return corrupt("COD: layers out of range");
  Out body;
  ByteWriter w(body);
  w.u8(static_cast<std::uint8_t>((s.component.explicit_precincts ? 1 : 0) | (s.sop ? 2 : 0) | (s.eph ? 4 : 0)));
  w.u8(static_cast<std::uint8_t>(s.progression));
  w.u16(static_cast<std::uint16_t>(s.layers));
  w.u8(s.mct ? 1 : 0);
  write_spcod(w, s.component);
  return write_segment(out, marker::COD, body);
}

Result<ComponentCodingOf> read_coc(Bytes body, std::size_t csiz) {
  ByteReader r(body);
  ComponentCodingOf c;
  c.component = read_component_index(r, csiz);
  const int scoc = r.u8();
  if (r.failed() || static_cast<std::size_t>(c.component) >= csiz) return corrupt("COC: bad component index");
  if (Status st = read_spcod(r, (scoc & 1) != 0, c.value); !st) return st.error();
  return c;
}

Status write_coc(Out& out, const ComponentCodingOf& coc, std::size_t csiz) {
  return write_component_segment(out, marker::COC, "COC", coc.component, csiz, [&](ByteWriter<Out>& w) {
    w.u8(coc.value.explicit_precincts ? 1 : 0);
    write_spcod(w, coc.value);
    return Status{};
  });
}

// ---- QCD, QCC ----

Result<Quantization> read_qcd(Bytes body) {
  ByteReader r(body);
  Quantization q;
  if (Status st = read_quant(r, body.size(), q); !st) return st.error();
  return q;
}

Status write_qcd(Out& out, const Quantization& q) {
  Out body;
  ByteWriter w(body);
  if (Status st = write_quant(w, q); !st) return st;
  return write_segment(out, marker::QCD, body);
}

Result<QuantizationOf> read_qcc(Bytes body, std::size_t csiz) {
  ByteReader r(body);
  QuantizationOf q;
  q.component = read_component_index(r, csiz);
  if (r.failed() || static_cast<std::size_t>(q.component) >= csiz) return corrupt("QCC: bad component index");
  if (Status st = read_quant(r, r.remaining(), q.value); !st) return st.error();
  return q;
}

Status write_qcc(Out& out, const QuantizationOf& qcc, std::size_t csiz) {
  return write_component_segment(out, marker::QCC, "QCC", qcc.component, csiz,
                                 [&](ByteWriter<Out>& w) { return write_quant(w, qcc.value); });
}

// ---- RGN ----

Result<RoiShift> read_rgn(Bytes body, std::size_t csiz) {
  ByteReader r(body);
  RoiShift roi;
  roi.component = read_component_index(r, csiz);
  const int style = r.u8();
  roi.shift = r.u8();
  if (r.failed() || static_cast<std::size_t>(roi.component) >= csiz) return corrupt("RGN: bad component index");
  if (style != 0) return make_error(ErrorKind::unsupported, "RGN: only the maxshift method (Part 1) is supported");
  if (roi.shift > 37) return corrupt("RGN: shift beyond 37 bit-planes");
  return roi;
}

Status write_rgn(Out& out, const RoiShift& roi, std::size_t csiz) {
  return write_component_segment(out, marker::RGN, "RGN", roi.component, csiz, [&](ByteWriter<Out>& w) -> Status {
    if (roi.shift < 0 || roi.shift > 37) return corrupt("RGN: shift beyond 37 bit-planes");
    w.u8(0);  // Srgn: maxshift
    w.u8(static_cast<std::uint8_t>(roi.shift));
    return {};
  });
}

// ---- POC ----

Result<std::vector<ProgressionChange>> read_poc(Bytes body, std::size_t csiz) {
  const std::size_t entry = csiz >= 257 ? 9 : 7;
  if (body.empty() || body.size() % entry != 0) return corrupt("POC: length is not a whole number of entries");
  ByteReader r(body);
  std::vector<ProgressionChange> out;
  while (!r.empty()) {
    ProgressionChange pc;
    pc.res_start = r.u8();
    pc.comp_start = read_component_index(r, csiz);
    pc.layer_end = r.u16();
    pc.res_end = r.u8();
    pc.comp_end = read_component_index(r, csiz);
    const int order = r.u8();
    if (pc.comp_end == 0) pc.comp_end = csiz >= 257 ? 65536 : 256;  // A.6.6: 0 means 256
    if (order > 4) return corrupt("POC: unknown progression order");
    pc.order = static_cast<ProgressionOrder>(order);
    out.push_back(pc);
  }
  return out;
}

Status write_poc(Out& out, const std::vector<ProgressionChange>& changes, std::size_t csiz) {
  const int wide = csiz >= 257 ? 65536 : 256;
  Out body;
  ByteWriter w(body);
  for (const ProgressionChange& pc : changes) {
    if (pc.res_start < 0 || pc.res_start > 32 || pc.res_end < 0 || pc.res_end > 33 || pc.layer_end < 0 ||
        pc.layer_end > 0xFFFF || pc.comp_start < 0 || pc.comp_start >= wide || pc.comp_end < 1 || pc.comp_end > wide)
      return corrupt("POC: entry out of range");
    w.u8(static_cast<std::uint8_t>(pc.res_start));
    write_component_index(w, pc.comp_start, csiz);
    w.u16(static_cast<std::uint16_t>(pc.layer_end));
    w.u8(static_cast<std::uint8_t>(pc.res_end));
    write_component_index(w, pc.comp_end == wide ? 0 : pc.comp_end, csiz);  // 256 (65536) is coded 0
    w.u8(static_cast<std::uint8_t>(pc.order));
  }
  if (changes.empty()) return corrupt("POC: no entries");
  return write_segment(out, marker::POC, body);
}

// ---- TLM ----

Result<TileLengths> read_tlm(Bytes body) {
  ByteReader r(body);
  TileLengths t;
  t.index = r.u8();
  const int stlm = r.u8();
  if (r.failed()) return corrupt("TLM: truncated");
  // A.7.1 Table A.33: ST (bits 4-5) 0, 1 or 2 bytes of Ttlm; SP (bit 6) 16- or 32-bit Ptlm.
  const int st = (stlm >> 4) & 0x03;
  if (st == 3 || (stlm & 0x8F) != 0) return corrupt("TLM: reserved Stlm value");
  t.tile_bytes = st;
  t.length_bytes = (stlm & 0x40) ? 4 : 2;
  const std::size_t entry = static_cast<std::size_t>(t.tile_bytes + t.length_bytes);
  if (r.remaining() % entry != 0) return corrupt("TLM: length is not a whole number of entries");
  for (std::uint16_t i = 0; !r.empty(); ++i) {
    TileLengths::Part p;
    p.tile = t.tile_bytes == 0 ? i : t.tile_bytes == 1 ? r.u8() : r.u16();
    p.length = t.length_bytes == 2 ? r.u16() : r.u32();
    t.parts.push_back(p);
  }
  return t;
}

Status write_tlm(Out& out, const TileLengths& t) {
  if (t.tile_bytes < 0 || t.tile_bytes > 2 || (t.length_bytes != 2 && t.length_bytes != 4))
    return corrupt("TLM: field sizes out of range");
  Out body;
  ByteWriter w(body);
  w.u8(t.index);
  w.u8(static_cast<std::uint8_t>(t.tile_bytes << 4 | (t.length_bytes == 4 ? 0x40 : 0)));
  for (const TileLengths::Part& p : t.parts) {
    if ((t.tile_bytes == 1 && p.tile > 0xFF) || (t.length_bytes == 2 && p.length > 0xFFFF))
      return corrupt("TLM: value does not fit its field");
    if (t.tile_bytes == 1) w.u8(static_cast<std::uint8_t>(p.tile));
    else if (t.tile_bytes == 2) w.u16(p.tile);
    if (t.length_bytes == 2) w.u16(static_cast<std::uint16_t>(p.length));
    else w.u32(p.length);
  }
  return write_segment(out, marker::TLM, body);
}

}  // namespace j2k::syntax
