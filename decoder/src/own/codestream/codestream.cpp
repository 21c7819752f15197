#include "codestream/codestream.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "syntax/markers.hpp"
#include "syntax/segments.hpp"

namespace j2k::decoder::own {

namespace {

namespace marker = syntax::marker;

Error corrupt(std::string what) { return make_error(ErrorKind::corrupt, std::move(what)); }

/// Progression changes one header (main, or a tile's tile-parts together) may hold.
constexpr std::size_t kMaxProgressionChanges = 256;

/// The SIZ values through the shared reader, then the decoder's own caps.
Status read_siz(const syntax::Segment& seg, Siz& siz, const DecodeLimits& limits) {
  auto read = syntax::read_siz(seg.body);
  if (!read) return read.error();
  siz = std::move(read).value();
  syntax::PictureLimits caps;
  caps.max_pixels = limits.max_pixels;
  caps.max_components = limits.max_components;
  if (Status st = syntax::check_limits(siz, caps); !st) return st;
  // Every tile-component gets its own structures: bound their number, not just the pixels.
  const long long tile_components = static_cast<long long>(siz.tiles_x) * siz.tiles_y * static_cast<long long>(siz.components.size());
  if (tile_components > (1LL << 20))
    return make_error(ErrorKind::limit, fmt::format("{} tiles of {} components exceed the limit",
                                                    static_cast<long long>(siz.tiles_x) * siz.tiles_y, siz.components.size()));
  return {};
}

/// Reads `seg` with `read` (given `csiz` when it takes the component count) and hands the
/// value to `use`.
template <typename Read, typename Use, typename... Csiz>
Status read_into(const syntax::Segment& seg, Read read, Use use, Csiz... csiz) {
  auto value = read(seg.body, csiz...);
  if (!value) return value.error();
  use(std::move(value).value());
  return {};
}

/// One parameter marker of a header (main or tile-part) into `p`; markers the decoder does not
/// need (TLM, PLM, PLT, CRG, COM and unknown ones with a length) are skipped.
Status read_param_marker(const syntax::Segment& seg, HeaderParams& p, std::size_t ncomp) {
  switch (seg.marker) {
    case marker::COD: return read_into(seg, syntax::read_cod, [&](CodingStyle cod) { p.cod = cod; });
    case marker::COC:
      return read_into(seg, syntax::read_coc, [&](syntax::ComponentCodingOf coc) { p.coc[coc.component] = coc.value; }, ncomp);
    case marker::QCD: return read_into(seg, syntax::read_qcd, [&](Quantization qcd) { p.qcd = std::move(qcd); });
    case marker::QCC:
      return read_into(seg, syntax::read_qcc, [&](syntax::QuantizationOf qcc) { p.qcc[qcc.component] = std::move(qcc.value); },
                       ncomp);
    case marker::RGN:
      return read_into(seg, syntax::read_rgn, [&](syntax::RoiShift rgn) { p.roi_shift[rgn.component] = rgn.shift; }, ncomp);
    case marker::POC: {
      // A.6.6: POC segments add to the progressions already given (several markers, and
      // the tile-parts of one tile, each continue the list). At most 256 a header (one
      // segment holds up to 9362; OpenJPEG refuses 32 or more): each costs a walk of the tile.
      auto poc = syntax::read_poc(seg.body, ncomp);
      if (!poc) return poc.error();
      if (p.poc.size() + poc->size() > kMaxProgressionChanges)
        return corrupt(fmt::format("POC: more than {} progression changes", kMaxProgressionChanges));
      p.poc.insert(p.poc.end(), poc->begin(), poc->end());
      return {};
    }
    default: return {};  // A.7 lengths, A.9 CRG/COM, unknown markers: not needed to decode
  }
}

/// A tile's coding and quantisation: given in its first tile-part only (A.4.2, Table A.2).
bool first_part_only(std::uint16_t m) {
  return m == marker::COD || m == marker::COC || m == marker::QCD || m == marker::QCC || m == marker::RGN;
}

/// A tile's parts (each TPsot once: a repeat is left out as it comes) into TPsot order (A.4.2:
/// its packets continue from one part to the next). Resilient mode leaves out every part
/// after a gap; a tile with parts missing, in a gap or short of its TNsot, is damaged (the
/// missing ones counted). `seen`: every TPsot the tile showed, left-out parts' too. Strict
/// mode has refused parts out of order as they came; here it refuses a tile with parts missing.
Status settle_tile_parts(TileHeader& tile, int index, std::vector<std::uint8_t>& seen, bool strict,
                         std::uint32_t& damaged) {
  std::vector<TilePart>& parts = tile.parts;
  std::sort(parts.begin(), parts.end(), [](const TilePart& a, const TilePart& b) { return a.index_in_tile < b.index_in_tile; });
  for (std::size_t k = 0; k < parts.size(); ++k)
    if (parts[k].index_in_tile != static_cast<int>(k)) {
      damaged += static_cast<std::uint32_t>(parts.size() - k);  // after a gap
      tile.truncated = true;
      parts.resize(k);
      break;
    }
  // Parts never seen: up to the last index shown or announced, less the distinct ones seen.
  std::sort(seen.begin(), seen.end());
  seen.erase(std::unique(seen.begin(), seen.end()), seen.end());
  const std::size_t upto = std::max<std::size_t>(static_cast<std::size_t>(tile.announced_parts), seen.empty() ? 0 : seen.back() + 1u);
  if (const std::size_t missing = upto - seen.size(); missing > 0) {
    if (strict) return corrupt(fmt::format("tile {}: {} of its {} tile-parts missing", index, missing, upto));
    damaged += static_cast<std::uint32_t>(missing);
    tile.truncated = true;
  }
  for (const TilePart& p : parts) tile.ppm_headers.insert(tile.ppm_headers.end(), p.ppm_headers.begin(), p.ppm_headers.end());
  return {};
}

/// PPT (A.7.5): a tile's packet headers are its PPT segments joined in (TPsot, Zppt) order,
/// which need not be the order they come in. Zppt numbers a tile-part header's segments from
/// 0; writers that number them on across the tile's parts (as OpenJPEG reads them: an index
/// once per tile) are read too. An index given twice or missing leaves what follows
/// unplaceable: strict refuses it, resilient keeps the segments before it and marks the tile
/// damaged. Segments of parts left out go with them.
Status settle_ppt(TileHeader& tile, bool strict) {
  auto& ppt = tile.ppt;
  if (ppt.empty()) return {};
  std::stable_sort(ppt.begin(), ppt.end(), [](auto& a, auto& b) { return a.first < b.first; });
  const int parts = static_cast<int>(tile.parts.size());
  for (std::size_t k = 0; k < ppt.size(); ++k) {
    const int part = ppt[k].first / 256, z = ppt[k].first % 256;
    if (part >= parts) {  // a part left out, and every later one
      ppt.resize(k);
      break;
    }
    const bool same_part = k > 0 && ppt[k - 1].first / 256 == part;
    const int due = same_part ? ppt[k - 1].first % 256 + 1 : 0;
    if (z == due || (!same_part && k > 0 && z == ppt[k - 1].first % 256 + 1)) continue;  // from 0, or numbered on
    if (strict)
      return corrupt(z < due ? fmt::format("PPT index {} given twice in tile-part {}'s header", z, part)
                             : fmt::format("PPT index {} missing in tile-part {}'s header", due, part));
    ppt.resize(k);
    tile.truncated = true;
    break;
  }
  return {};
}

/// The value `h` gives component `c`, if it names it.
template <class T>
const T* given(const PerComponent<T>& h, std::size_t c) {
  const auto it = h.find(static_cast<int>(c));
  return it == h.end() ? nullptr : &it->second;
}

}  // namespace

Result<Codestream> parse_codestream(Bytes data, const DecodeLimits& limits, bool strict) {
  // Main header (A.4.1): SOC, SIZ, then marker segments until the first SOT.
  auto header = syntax::read_main_header(data);
  if (!header) return header.error();
  Codestream cs;
  if (Status st = read_siz(header->siz, cs.siz, limits); !st) return st.error();
  const std::size_t ncomp = cs.siz.components.size();
  cs.tiles.resize(static_cast<std::size_t>(cs.siz.tiles_x) * cs.siz.tiles_y);
  std::vector<std::pair<int, Bytes>> ppm;  // (Zppm, data)
  for (const syntax::Segment& seg : header->segments) {
    if (seg.marker == marker::CAP) return make_error(ErrorKind::unsupported, "CAP marker: HTJ2K (15444-15) codestreams are not supported");
    if (seg.marker == marker::PPM) {
      ByteReader pr(seg.body);
      const int z = pr.u8();
      ppm.emplace_back(z, pr.rest());
      cs.has_ppm = true;
      continue;
    }
    if (Status st = read_param_marker(seg, cs.main, ncomp); !st) return st.error();
  }
  if (!cs.main.cod) return corrupt("main header has no COD marker");
  if (!cs.main.qcd) return corrupt("main header has no QCD marker");

  // Tile-parts (A.4.2), in codestream order; tiles may interleave.
  ByteReader r(data);
  r.seek(header->length);
  // For PPM: each tile-part in codestream order as (tile, its place in the tile's parts), or
  // (-1, -1) for one left out; and every TPsot each tile showed, left-out parts' too.
  std::vector<std::pair<int, int>> part_at;
  std::vector<std::vector<std::uint8_t>> indices_seen(cs.tiles.size());
  bool saw_eoc = false;
  while (r.remaining() >= 2) {
    const std::uint16_t code = r.peek_u16();
    if (code == marker::EOC) {
      saw_eoc = true;
      break;
    }
    if (code != marker::SOT) {
      if (strict) return corrupt(fmt::format("expected SOT or EOC, found {:04X}", code));
      cs.truncated = true;
      break;
    }
    const std::size_t sot_start = r.position();
    auto sot = syntax::read_sot(r);
    if (!sot) {
      // A cut or malformed SOT ends what can be found of the tile-parts: strict refuses,
      // resilient keeps what came before it.
      if (strict) return sot.error();
      cs.truncated = true;
      break;
    }
    const auto isot = static_cast<std::size_t>(sot->tile);
    if (isot >= cs.tiles.size() && strict) return corrupt(fmt::format("SOT: tile index {} out of range", isot));
    std::size_t end = sot->length == 0 ? data.size() : sot_start + sot->length;  // Psot = 0: up to EOC
    const bool cut = end > data.size();
    if (cut) {
      if (strict) return corrupt(fmt::format("tile-part of tile {} runs past the end of the data", isot));
      end = data.size();
      cs.truncated = true;
    }
    // Past a part not used; one with Psot = 0 runs up to the data's end, the EOC included.
    auto skip_part = [&]() {
      ++cs.damaged_tile_parts;
      part_at.emplace_back(-1, -1);  // its PPM packet headers are still there to skip
      r.seek(end);
      if (sot->length == 0 && end >= 2 && data[end - 2] == 0xFF && data[end - 1] == 0xD9) saw_eoc = true;
    };
    // Resilient mode leaves out a tile-part it cannot read and goes on at the next one (its
    // SOT's length is all that is needed): one damaged header costs a tile, not the frame.
    // The tile's later parts are left out with it (their packets continue the lost ones').
    auto leave_out = [&](TileHeader* tile) {
      if (tile) tile->closed = tile->truncated = true;
      skip_part();
    };
    if (isot >= cs.tiles.size() || cs.tiles[isot].closed) {
      if (isot < cs.tiles.size()) indices_seen[isot].push_back(sot->index);
      leave_out(isot < cs.tiles.size() ? &cs.tiles[isot] : nullptr);
      if (cut) break;
      continue;
    }
    TileHeader& tile = cs.tiles[isot];
    if (strict) {
      // A.4.2: a tile's parts come in TPsot order, from 0, each below TNsot where it is given.
      if (sot->index != tile.parts.size())
        return corrupt(fmt::format("tile {}: tile-part {} where tile-part {} was due", isot, sot->index, tile.parts.size()));
      if (sot->count != 0 && sot->index >= sot->count)
        return corrupt(fmt::format("tile {}: tile-part {} of {}", isot, sot->index, sot->count));
      if (tile.announced_parts != 0 && sot->count != 0 && sot->count != tile.announced_parts)
        return corrupt(fmt::format("tile {}: its tile-parts say {} and {} parts", isot, tile.announced_parts, sot->count));
    }
    tile.announced_parts = std::max<int>(tile.announced_parts, sot->count);
    std::vector<std::uint8_t>& seen = indices_seen[isot];
    if (std::find(seen.begin(), seen.end(), sot->index) != seen.end()) {
      // The same tile-part again (resilient: strict refused it above): the first one counts.
      skip_part();
      if (cut) break;
      continue;
    }
    seen.push_back(sot->index);
    tile.seen = true;
    if (cut) tile.truncated = true;
    // Tile-part header up to SOD.
    auto part_header = syntax::read_tile_part_header(data, r.position(), end);
    if (!part_header) {
      if (strict) {
        if (part_header.error().kind != ErrorKind::need_more_data) return part_header.error();
        return corrupt(fmt::format("tile-part of tile {} has no SOD", isot));
      }
      if (cut || part_header.error().kind == ErrorKind::need_more_data) {
        // Cut inside its header (a marker segment cut short reads as malformed): the data
        // ends here.
        tile.truncated = cs.truncated = true;
        break;
      }
      leave_out(&tile);
      continue;
    }
    // The header's parameters count only once all of them read (a part left out leaves the
    // tile's as they were). Copied only when the header gives any: most tile-parts' give
    // none, and a tile's may hold COC/QCC for thousands of components.
    const bool gives_params = std::any_of(part_header->segments.begin(), part_header->segments.end(), [](const syntax::Segment& s) {
      return first_part_only(s.marker) || s.marker == marker::POC;
    });
    HeaderParams params;
    if (gives_params) params = tile.params;
    std::vector<std::pair<int, std::vector<std::uint8_t>>> ppt;
    Status header_read;
    for (const syntax::Segment& seg : part_header->segments) {
      if (seg.marker == marker::PPT) {
        if (cs.has_ppm) {
          header_read = corrupt("PPT and PPM in the same codestream");
          break;
        }
        ByteReader pr(seg.body);
        // Zppt numbers the PPT segments of this tile-part's header (A.7.5): the tile's
        // headers are its tile-parts' in TPsot order, each part's in Zppt order.
        const int z = static_cast<int>(sot->index) * 256 + pr.u8();
        const Bytes rest = pr.rest();
        ppt.emplace_back(z, std::vector<std::uint8_t>(rest.begin(), rest.end()));
        continue;
      }
      // Resilient decoding takes a tile's coding in a later tile-part as it comes.
      if (strict && first_part_only(seg.marker) && !tile.parts.empty()) {
        header_read = corrupt(fmt::format("tile {}: marker {:04X} in tile-part {} (only the first may hold it)", isot,
                                          seg.marker, tile.parts.size()));
        break;
      }
      header_read = read_param_marker(seg, params, ncomp);
      if (!header_read) break;
    }
    if (!header_read) {
      if (strict) return header_read.error();
      leave_out(&tile);
      if (cut) break;
      continue;
    }
    if (gives_params) tile.params = std::move(params);
    tile.has_ppt = tile.has_ppt || !ppt.empty();
    for (auto& entry : ppt) tile.ppt.push_back(std::move(entry));
    const std::size_t body_start = part_header->body;
    std::size_t body_end = end;
    if (sot->length == 0 && body_end >= body_start + 2 && data[body_end - 2] == 0xFF && data[body_end - 1] == 0xD9) {
      body_end -= 2;  // the EOC after the last tile-part
      saw_eoc = true;
    }
    TilePart part;
    part.body = data.subspan(body_start, body_end - body_start);
    part.index_in_tile = sot->index;
    part_at.emplace_back(static_cast<int>(isot), static_cast<int>(tile.parts.size()));
    tile.parts.push_back(part);
    r.seek(end);
    if (cut) break;
  }
  if (!saw_eoc) {
    // A.3: the codestream ends with EOC. Resilient mode decodes what came; strict refuses.
    if (strict) return corrupt("codestream ends without EOC");
    cs.truncated = true;
  }

  // PPM (A.7.4): Nppm + headers for each tile-part, in codestream order, across markers
  // numbered by Zppm from 0. Where an index is missing or given twice, what follows cannot be
  // placed: strict refuses, resilient uses the headers before it (the tile-parts whose
  // headers run out are damaged).
  if (cs.has_ppm) {
    std::stable_sort(ppm.begin(), ppm.end(), [](auto& a, auto& b) { return a.first < b.first; });
    std::vector<std::uint8_t> all;
    for (std::size_t k = 0; k < ppm.size(); ++k) {
      if (ppm[k].first != static_cast<int>(k)) {
        if (strict)
          return corrupt(ppm[k].first < static_cast<int>(k) ? fmt::format("PPM index {} given twice", ppm[k].first)
                                                            : fmt::format("PPM index {} missing", k));
        break;
      }
      all.insert(all.end(), ppm[k].second.begin(), ppm[k].second.end());
    }
    ByteReader pr{Bytes(all)};
    for (auto [t, at] : part_at) {
      std::uint32_t n = pr.u32();
      if (pr.failed() || n > pr.remaining()) {
        if (strict) return corrupt("PPM: packet headers run out before the tile-parts do");
        if (t >= 0) cs.tiles[static_cast<std::size_t>(t)].truncated = true;
        break;
      }
      Bytes h = pr.bytes(n);
      if (t < 0) continue;
      cs.tiles[static_cast<std::size_t>(t)].parts[static_cast<std::size_t>(at)].ppm_headers.assign(h.begin(), h.end());
    }
  }

  for (std::size_t t = 0; t < cs.tiles.size(); ++t) {
    if (Status st = settle_tile_parts(cs.tiles[t], static_cast<int>(t), indices_seen[t], strict, cs.damaged_tile_parts); !st)
      return st.error();
    if (Status st = settle_ppt(cs.tiles[t], strict); !st) return st.error();
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
    if (const auto* v = t ? given(t->coc, c) : nullptr) out.coding = *v;
    else if (t && t->cod) out.coding = t->cod->component;
    else if (const auto* w = given(m.coc, c)) out.coding = *w;
    else out.coding = m.cod->component;
    const Quantization* q = nullptr;
    if (const auto* v = t ? given(t->qcc, c) : nullptr) q = v;
    else if (t && t->qcd) q = &*t->qcd;
    else if (const auto* w = given(m.qcc, c)) q = w;
    else q = &*m.qcd;
    if (const auto* v = t ? given(t->roi_shift, c) : nullptr) out.roi_shift = *v;
    else if (const auto* w = given(m.roi_shift, c)) out.roi_shift = *w;
    // E.1: style 0 and 2 need one entry per subband (1: the first only). Only those are
    // kept: a QCD may list up to 32k, which copied into each of 16384 components would be
    // gigabytes before the memory budget looked at them.
    const std::size_t bands = q->style == 1 ? 1 : 1 + 3 * static_cast<std::size_t>(out.coding.levels);
    if (q->steps.size() < bands)
      return corrupt(fmt::format("QCD/QCC: {} step sizes for {} subbands", q->steps.size(), bands));
    out.quant.style = q->style;
    out.quant.guard_bits = q->guard_bits;
    out.quant.steps.assign(q->steps.begin(), q->steps.begin() + static_cast<std::ptrdiff_t>(bands));
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
