#include "tier2/packet_decoder.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <numeric>
#include <optional>

#include "tier2/packet_bit_reader.hpp"

namespace j2k::decoder::own {

namespace {

constexpr std::uint16_t kUnlimitedPasses = 0xFFFF;
/// Missing most significant bit-planes above this mark a damaged header (Mb <= 74 with ROI).
constexpr int kMaxZeroBitplanes = 80;

/// Most passes a segment starting at pass `first` may hold (B.10.7, D.6 / Table D.9).
std::uint16_t segment_capacity(int cb_style, int first) {
  if (cb_style & kTermAll) return 1;
  if (cb_style & kBypass) {
    if (first < 10) return static_cast<std::uint16_t>(10 - first);  // MQ passes down to the 4th bit-plane
    return (first - 10) % 3 == 0 ? 2 : 1;  // raw SPP+MRP, then MQ cleanup
  }
  return kUnlimitedPasses;
}

int floor_log2(unsigned v) {
  int n = -1;
  while (v) {
    v >>= 1;
    ++n;
  }
  return n;
}

/// Number of coding passes codeword (Table B.4).
int read_pass_count(PacketBitReader& br) {
  if (!br.bit()) return 1;
  if (!br.bit()) return 2;
  std::uint32_t v = br.bits(2);
  if (v != 3) return 3 + static_cast<int>(v);
  v = br.bits(5);
  if (v != 31) return 6 + static_cast<int>(v);
  return 37 + static_cast<int>(br.bits(7));
}

struct Contribution {
  CodeBlock* block;
  std::uint32_t first_length;  ///< into lengths_
  std::uint16_t num_lengths;
  std::uint16_t passes;
  std::uint32_t bytes;
};

class PacketReader {
 public:
  PacketReader(Tile& tile, Bytes body, Bytes headers, bool packed, const Tier2Options& opt, Tier2Counters& counters,
               MemoryBudget& budget, Tier2Budget& steps)
      : tile_(tile),
        body_(body),
        headers_(packed ? headers : body),
        packed_(packed),
        opt_(opt),
        counters_(counters),
        budget_(budget),
        steps_(steps) {}

  /// Where the next packet starts in the body.
  std::size_t body_position() const noexcept { return body_pos_; }
  /// Bytes of the body, and of packed headers, after the last packet read.
  std::uint64_t bytes_left() const noexcept {
    const std::size_t body_left = body_.size() - std::min(body_pos_, body_.size());
    return packed_ ? body_left + (headers_.size() - std::min(header_pos_, headers_.size())) : body_left;
  }
  /// Whether a read stopped the walk (damage or the end of the data, already counted).
  bool stopped() const noexcept { return stopped_; }

  /// Reads one packet. Returns false when the tile's data is used up or damaged.
  Status read(int c, int r, int prec, int layer, bool& stop) {
    TileComponent& tc = tile_.components[c];
    Resolution& res = tc.resolutions[r];
    const bool keep = opt_.max_layers <= 0 || layer < opt_.max_layers;
    std::size_t& hpos = packed_ ? header_pos_ : body_pos_;
    if (hpos >= headers_.size()) {
      // No more data: the remaining packets are missing (truncated tile).
      stop = stopped_ = true;
      if (opt_.strict) return make_error(ErrorKind::corrupt, fmt::format("tile {}: packet data ends early", tile_.index));
      ++counters_.damaged_packets;
      return {};
    }
    ++counters_.packets;
    // B.10.8 / A.8.1: optional SOP marker segment in front of the packet (in the body).
    if (tile_.params.style.sop && body_pos_ + 6 <= body_.size() && body_[body_pos_] == 0xFF &&
        body_[body_pos_ + 1] == 0x91)
      body_pos_ += 6;
    PacketBitReader br(headers_, hpos);
    contributions_.clear();
    lengths_.clear();
    if (br.bit()) {  // non-empty packet
      if (!res.precincts[static_cast<std::size_t>(prec)])
        if (Status st = materialize_precinct(res, prec, budget_); !st) return st;
      for (int b = 0; b < res.num_bands; ++b) {
        PrecinctBand& pb = res.precincts[static_cast<std::size_t>(prec)]->bands[b];
        if (pb.cb_cols <= 0 || pb.cb_rows <= 0) continue;
        // The header goes through every code-block of the precinct-band, and those not yet
        // included under a tag-tree node already past this layer cost it no bit.
        if (!steps_.charge(static_cast<long long>(pb.cb_cols) * pb.cb_rows))
          return make_error(ErrorKind::limit,
                            fmt::format("tile {}: the packet headers go through far more code-blocks than the data has bytes",
                                        tile_.index));
        if (!pb.coded)
          if (Status st = materialize_code_blocks(pb, res.xcb, res.ycb, budget_); !st) return st;
        PrecinctCodeBlocks& pcb = *pb.coded;
        for (int j = 0; j < pb.cb_rows; ++j) {
          for (int i = 0; i < pb.cb_cols; ++i) {
            CodeBlock& cb = pcb.blocks[static_cast<std::size_t>(j) * pb.cb_cols + i];
            bool included;
            bool first_time = !cb.included;
            if (first_time) included = pcb.inclusion.decode(br, i, j, layer + 1);  // B.10.4
            else included = br.bit() != 0;
            if (br.failed()) return damaged(stop, "packet header");
            if (!included) continue;
            if (first_time) {
              // B.10.5: missing most significant bit-planes, decoded to its exact value. One
              // walk with an open threshold reads the same bits in the same order as raising
              // the threshold one by one would (each raise only goes on at the first node of
              // the path not yet known), without walking the path again for every plane.
              if (!pcb.zero_bitplanes.decode(br, i, j, kMaxZeroBitplanes))
                return damaged(stop, "zero bit-plane tag tree");
              cb.zero_bitplanes = pcb.zero_bitplanes.value(i, j);
              cb.included = true;
            }
            int passes = read_pass_count(br);
            while (br.bit()) ++cb.lblock;  // B.10.7.1
            if (br.failed() || cb.lblock > 32) return damaged(stop, "pass count");
            // B.10.7.2: one length per codeword segment this packet contributes to. Filled in
            // place: built on the stack and pushed, its narrow stores were read back wide (a
            // store-forwarding stall per code-block, ~10 % of reading a packet).
            Contribution& con = contributions_.emplace_back();
            con.block = &cb;
            con.first_length = static_cast<std::uint32_t>(lengths_.size());
            con.num_lengths = 0;
            con.passes = static_cast<std::uint16_t>(passes);
            con.bytes = 0;
            std::uint64_t bytes = 0;  // summed wide: two 32-bit lengths must not wrap past the body check
            int done = cb.header_passes;
            int left = passes;
            int in_last = cb.header_in_last;
            int cap = cb.header_cap;
            while (left > 0) {
              if (in_last >= cap) {  // start a new segment
                cap = segment_capacity(tc.cb_style, done);
                in_last = 0;
              }
              int take = std::min(left, cap - in_last);
              int nbits = cb.lblock + floor_log2(static_cast<unsigned>(take));
              if (nbits > 32) return damaged(stop, "segment length");
              std::uint32_t len = br.bits(nbits);
              lengths_.push_back(len);
              bytes += len;
              ++con.num_lengths;
              in_last += take;
              done += take;
              left -= take;
            }
            if (br.failed()) return damaged(stop, "segment lengths");
            if (bytes > std::numeric_limits<std::uint32_t>::max()) return damaged(stop, "segment lengths");
            con.bytes = static_cast<std::uint32_t>(bytes);
            if (done > 255) return damaged(stop, "too many coding passes");  // D.1: at most 3*Mb-2 passes, Mb <= 74 with ROI
            cb.header_passes = done;
            cb.header_in_last = static_cast<std::uint16_t>(in_last);
            cb.header_cap = static_cast<std::uint16_t>(cap);
          }
        }
      }
    }
    br.align();
    if (br.failed()) return damaged(stop, "packet header");
    hpos = br.position();
    // A.8.2: with EPH in COD, an EPH marker ends every packet header. One that is not there
    // says the header was not read as it was written: strict refuses it; resilient reads on
    // (as OpenJPEG does) and counts the packet damaged (once: below, unless its body is).
    bool no_eph = false;
    if (tile_.params.style.eph) {
      if (hpos + 2 <= headers_.size() && headers_[hpos] == 0xFF && headers_[hpos + 1] == 0x92) {
        hpos += 2;
      } else {
        if (opt_.strict)
          return make_error(ErrorKind::corrupt, fmt::format("tile {}: a packet header without its EPH marker", tile_.index));
        no_eph = true;
      }
    }
    // Packet body: each code-block's bytes, in header order.
    for (const Contribution& con : contributions_) {
      if (con.bytes > body_.size() - std::min(body_pos_, body_.size())) {
        // Cut short (truncation): this packet's contributions are dropped; what earlier
        // layers gave the code-blocks is complete and still decodes.
        body_pos_ = body_.size();
        return damaged(stop, "packet body");
      }
      Bytes data = body_.subspan(body_pos_, con.bytes);
      body_pos_ += con.bytes;
      if (keep) commit(tc.cb_style, con, data);
    }
    if (no_eph) ++counters_.damaged_packets;
    res.next_layer[prec] = layer + 1;
    return {};
  }

 private:
  void commit(int cb_style, const Contribution& con, Bytes data) {
    CodeBlock& cb = *con.block;
    int left = con.passes;
    std::size_t li = con.first_length;
    while (left > 0) {
      if (cb.segments.empty() || cb.segments.back().passes >= cb.segments.back().max_passes)
        cb.segments.push_back({0, 0, segment_capacity(cb_style, cb.passes)});
      Segment& s = cb.segments.back();
      int take = std::min<int>(left, s.max_passes - s.passes);
      s.passes = static_cast<std::uint16_t>(s.passes + take);
      s.length += lengths_[li++];
      cb.passes += take;
      left -= take;
    }
    if (!data.empty()) cb.chunks.push_back(data);
  }

  Status damaged(bool& stop, const char* what) {
    stop = stopped_ = true;
    ++counters_.damaged_packets;
    if (opt_.strict) return make_error(ErrorKind::corrupt, fmt::format("tile {}: damaged {}", tile_.index, what));
    return {};
  }

  Tile& tile_;
  Bytes body_;
  Bytes headers_;
  bool packed_;
  const Tier2Options& opt_;
  Tier2Counters& counters_;
  MemoryBudget& budget_;
  Tier2Budget& steps_;
  std::size_t body_pos_ = 0;
  std::size_t header_pos_ = 0;
  bool stopped_ = false;
  std::vector<Contribution> contributions_;
  std::vector<std::uint32_t> lengths_;
};

long long checked_shift(long long v, int s) { return s >= 40 ? (1LL << 40) : v << s; }

/// Per resolution, the components that have precincts there, in order. Made once per tile,
/// so that a POC entry costs the (resolution, component) pairs it covers that can hold
/// packets, not its resolutions x components (a header may declare 16384 components of 33
/// resolutions, and 512 entries).
using ComponentsByResolution = std::vector<std::vector<int>>;

ComponentsByResolution components_with_precincts(const Tile& tile) {
  std::size_t max_res = 0;
  for (const TileComponent& tc : tile.components) max_res = std::max(max_res, tc.resolutions.size());
  ComponentsByResolution out(max_res);
  for (std::size_t c = 0; c < tile.components.size(); ++c) {
    const std::vector<Resolution>& rr = tile.components[c].resolutions;
    for (std::size_t r = 0; r < rr.size(); ++r)
      if (rr[r].prec_cols > 0 && rr[r].prec_rows > 0) out[r].push_back(static_cast<int>(c));
  }
  return out;
}

/// Walks one progression (B.12.1) calling `visit(c, r, precinct, layer)` for each packet
/// not read yet. Position-driven orders follow B.12.1.3–B.12.1.5 literally, over the
/// (resolution, component) pairs that have precincts (the others yield no packet).
/// `steps` is the codestream's work budget (Tier2Budget): the entry, the pairs it covers,
/// positions, the components and resolutions probed at each, and precinct visits; a header
/// whose progression would visit far more than the data has packets is refused.
template <typename Visit>
Status walk(Tile& tile, const ProgressionChange& pc, const ComponentsByResolution& with_precincts, Tier2Budget& steps,
            Visit&& visit) {
  auto over_budget = [&]() -> Status {
    return make_error(ErrorKind::limit,
                      fmt::format("tile {}: the progression visits far more precinct positions than the data has packets",
                                  tile.index));
  };
  if (!steps.charge(1)) return over_budget();
  const int ncomp = static_cast<int>(tile.components.size());
  const int cs = std::clamp(pc.comp_start, 0, ncomp), ce = std::clamp(pc.comp_end, 0, ncomp);
  const int max_res = static_cast<int>(with_precincts.size());
  const int rs = std::max(0, pc.res_start), re = std::min(pc.res_end, max_res);
  const int le = pc.layer_end;
  // Table A.32 has no entry without packets (LYEpoc >= 1, REpoc > RSpoc, CEpoc > CSpoc);
  // one that covers none reads nothing and costs its step (a header holds at most 256).
  if (le <= 0 || rs >= re || cs >= ce) return {};
  bool stop = false;

  auto packet_layers = [&](int c, int r, int prec, int l0, int l1) -> Status {
    if (!steps.charge(1)) return over_budget();
    Resolution& res = tile.components[c].resolutions[r];
    // Layers of one precinct come in order; start at the first one not read yet.
    for (int l = std::max(l0, res.next_layer[prec]); l < l1 && !stop; ++l) {
      if (res.next_layer[prec] != l) break;
      if (Status st = visit(c, r, prec, l, stop); !st) return st;
    }
    return {};
  };
  auto all_precincts = [&](int c, int r, int l) -> Status {
    Resolution& res = tile.components[c].resolutions[r];
    int n = res.prec_cols * res.prec_rows;
    for (int p = 0; p < n && !stop; ++p)
      if (Status st = packet_layers(c, r, p, l, l + 1); !st) return st;
    return {};
  };

  // Only (component, resolution) pairs that have precincts: a hostile header with 65535
  // layers and thousands of empty components must not cost layers x components steps.
  using Pair = std::pair<int, int>;  // (r, c)
  std::vector<Pair> used;            // in R-then-C order
  for (int r = rs; r < re; ++r) {
    const std::vector<int>& comps = with_precincts[static_cast<std::size_t>(r)];
    for (auto it = std::lower_bound(comps.begin(), comps.end(), cs); it != comps.end() && *it < ce; ++it)
      used.emplace_back(r, *it);
  }
  if (!steps.charge(static_cast<long long>(used.size()) + (re - rs))) return over_budget();
  if (used.empty()) return {};
  switch (pc.order) {
    case ProgressionOrder::LRCP:
      for (int l = 0; l < le && !stop; ++l)
        for (auto [r, c] : used)
          if (Status st = all_precincts(c, r, l); !st || stop) return st;
      return {};
    case ProgressionOrder::RLCP:
      for (std::size_t i = 0; i < used.size() && !stop;) {
        const int r = used[i].first;
        std::size_t j = i;
        while (j < used.size() && used[j].first == r) ++j;
        for (int l = 0; l < le && !stop; ++l)
          for (std::size_t k = i; k < j; ++k)
            if (Status st = all_precincts(used[k].second, r, l); !st || stop) return st;
        i = j;
      }
      return {};
    default: break;
  }

  // Position-driven orders: step over the reference grid by the greatest common divisor of
  // the precinct sizes of the components and resolutions the loop at hand visits
  // (B.12.1.3-B.12.1.5: only positions that start a precinct of one of them yield packets).
  // The smallest size is not enough when one is not a multiple of another (subsampling 2 and
  // 3: precincts of 32 and 48 samples, those at 48 and 144 skipped). Stepping by the whole
  // tile's instead would, in RPCL, walk the finest grid for every resolution.
  long long xstep = 0, ystep = 0;
  auto set_steps = [&](std::span<const Pair> pairs) {
    xstep = ystep = 0;
    for (auto [r, c] : pairs) {
      const TileComponent& tc = tile.components[c];
      const int nl = static_cast<int>(tc.resolutions.size()) - 1;
      const Resolution& res = tc.resolutions[r];
      long long sx = checked_shift(tc.dx, res.ppx + nl - r);
      long long sy = checked_shift(tc.dy, res.ppy + nl - r);
      xstep = std::gcd(xstep, sx);
      ystep = std::gcd(ystep, sy);
    }
    return xstep > 0 && ystep > 0;
  };
  const Rect tr = tile.rect;
  auto precinct_at = [&](int c, int r, long long x, long long y) -> int {
    TileComponent& tc = tile.components[c];
    const int nl = static_cast<int>(tc.resolutions.size()) - 1;
    const Resolution& res = tc.resolutions[r];
    const int level = nl - r;
    const long long dx = tile.components[c].dx, dy = tile.components[c].dy;
    const long long rpx = checked_shift(1, res.ppx + level), rpy = checked_shift(1, res.ppy + level);
    // B.12.1.3: the position starts a precinct of this resolution, or is the tile's first
    // row/column and the precinct was cut by the tile edge.
    bool ok_y = (y % (dy * rpy) == 0) || (y == tr.y0 && (checked_shift(res.rect.y0, level) % rpy) != 0);
    bool ok_x = (x % (dx * rpx) == 0) || (x == tr.x0 && (checked_shift(res.rect.x0, level) % rpx) != 0);
    if (!ok_x || !ok_y) return -1;
    long long cx = (x + (dx << level) - 1) / (dx << level);
    long long cy = (y + (dy << level) - 1) / (dy << level);
    long long pi = (cx >> res.ppx) - res.prec_x0;
    long long pj = (cy >> res.ppy) - res.prec_y0;
    if (pi < 0 || pj < 0 || pi >= res.prec_cols || pj >= res.prec_rows) return -1;
    return static_cast<int>(pj * res.prec_cols + pi);
  };
  auto for_positions = [&](auto&& body) -> Status {
    for (long long y = tr.y0; y < tr.y1 && !stop; y += ystep - (y % ystep))
      for (long long x = tr.x0; x < tr.x1 && !stop; x += xstep - (x % xstep)) {
        if (!steps.charge(1)) return over_budget();
        if (Status st = body(x, y); !st) return st;
      }
    return {};
  };
  // The layers of the precinct of the pair (r, c) at reference-grid position (x, y), if any:
  // a step for each pair probed (a position may probe thousands of components).
  auto packets_at = [&](std::span<const Pair> pairs, long long x, long long y) -> Status {
    for (std::size_t k = 0; k < pairs.size() && !stop; ++k) {
      if (!steps.charge(1)) return over_budget();
      const auto [r, c] = pairs[k];
      if (const int p = precinct_at(c, r, x, y); p >= 0)
        if (Status st = packet_layers(c, r, p, 0, le); !st) return st;
    }
    return {};
  };
  // Runs of `pairs` with the same key (resolution for RPCL, component for CPRL).
  auto for_runs = [&](const std::vector<Pair>& pairs, auto key, auto&& body) -> Status {
    for (std::size_t i = 0; i < pairs.size() && !stop;) {
      std::size_t j = i;
      while (j < pairs.size() && key(pairs[j]) == key(pairs[i])) ++j;
      const std::span<const Pair> run(pairs.data() + i, j - i);
      i = j;
      if (!set_steps(run)) continue;
      if (Status st = body(run); !st) return st;
    }
    return {};
  };
  if (pc.order == ProgressionOrder::RPCL)
    return for_runs(used, [](const Pair& p) { return p.first; }, [&](std::span<const Pair> run) {
      return for_positions([&](long long x, long long y) { return packets_at(run, x, y); });
    });
  // PCRL and CPRL go through the components first.
  std::vector<Pair> by_c = used;
  std::sort(by_c.begin(), by_c.end(),
            [](const Pair& a, const Pair& b) { return a.second != b.second ? a.second < b.second : a.first < b.first; });
  switch (pc.order) {
    case ProgressionOrder::PCRL:
      if (!set_steps(by_c)) return {};
      return for_positions([&](long long x, long long y) { return packets_at(by_c, x, y); });
    case ProgressionOrder::CPRL:
      // B.12.1.5: the steps come from each component alone.
      return for_runs(by_c, [](const Pair& p) { return p.second; }, [&](std::span<const Pair> run) {
        return for_positions([&](long long x, long long y) { return packets_at(run, x, y); });
      });
    default: return {};
  }
}

/// The tile's progressions (B.12): its POC entries, or one over everything.
std::vector<ProgressionChange> progression_changes(const Tile& tile) {
  if (!tile.params.poc.empty()) return tile.params.poc;
  int max_res = 0;
  for (auto& tc : tile.components) max_res = std::max(max_res, static_cast<int>(tc.resolutions.size()));
  ProgressionChange all;
  all.res_start = 0;
  all.comp_start = 0;
  all.layer_end = tile.params.style.layers;
  all.res_end = max_res;
  all.comp_end = static_cast<int>(tile.components.size());
  all.order = tile.params.style.progression;
  return {all};
}

/// Walks the tile's progressions in order, each up to the tile's layer count, until `visit`
/// stops the walk (its `stop` argument) or fails.
template <typename Visit>
Status walk_tile(Tile& tile, Tier2Budget& steps, Visit&& visit) {
  bool stop = false;
  auto visit_and_see = [&](int c, int r, int p, int l, bool& s) -> Status {
    Status st = visit(c, r, p, l, s);
    stop = s;
    return st;
  };
  const ComponentsByResolution with_precincts = components_with_precincts(tile);
  for (ProgressionChange pc : progression_changes(tile)) {
    pc.layer_end = std::min(pc.layer_end, tile.params.style.layers);
    if (Status st = walk(tile, pc, with_precincts, steps, visit_and_see); !st) return st;
    if (stop) break;
  }
  return {};
}

/// Packets of the tile that no progression came to (B.12: every packet of a tile is in its
/// sequence once; POC entries may leave some out, and their bytes are then never read).
std::uint64_t unread_packets(const Tile& tile) {
  const int layers = tile.params.style.layers;
  std::uint64_t n = 0;
  for (const TileComponent& tc : tile.components)
    for (const Resolution& res : tc.resolutions)
      for (const int next : res.next_layer) n += static_cast<std::uint64_t>(std::max(0, layers - next));
  return n;
}

/// Packets a tile may have for the parallel reading (its sequence is listed first; real
/// frames have hundreds).
constexpr std::size_t kMaxParallelPackets = std::size_t{1} << 20;

struct PacketId {
  std::uint32_t precinct;
  std::uint16_t component, layer;
  std::uint8_t resolution;
};

/// Forgets what packets brought (precincts, their code-blocks, the layer bookkeeping).
void reset_packet_state(Tile& tile) {
  for (TileComponent& tc : tile.components)
    for (Resolution& res : tc.resolutions) {
      for (auto& p : res.precincts) p.reset();
      std::fill(res.next_layer.begin(), res.next_layer.end(), 0);
    }
}

}  // namespace

Status decode_tile_packets(Tile& tile, Bytes body, Bytes packed_headers, bool headers_packed,
                           const Tier2Options& options, Tier2Counters& counters, MemoryBudget& budget,
                           Tier2Budget& steps) {
  PacketReader reader(tile, body, packed_headers, headers_packed, options, counters, budget, steps);
  if (Status st = walk_tile(tile, steps, [&](int c, int r, int p, int l, bool& s) { return reader.read(c, r, p, l, s); });
      !st)
    return st;
  if (reader.stopped()) return {};  // damage, counted where it was found
  // The progression came to its end with packets it never read: damage like data that ends
  // early (one damaged packet in resilient mode), whatever bytes are left unread.
  if (const std::uint64_t unread = unread_packets(tile); unread > 0) {
    if (options.strict)
      return make_error(ErrorKind::corrupt,
                        fmt::format("tile {}: the progression order changes leave {} packets unread", tile.index, unread));
    ++counters.damaged_packets;
    return {};
  }
  // Every packet read and bytes left over: not damage to the picture, but the headers and
  // the data disagree (or the writer padded the tile-part): strict refuses it, resilient
  // counts the bytes.
  if (const std::uint64_t left = reader.bytes_left(); left > 0) {
    if (options.strict)
      return make_error(ErrorKind::corrupt, fmt::format("tile {}: {} bytes after its last packet", tile.index, left));
    counters.bytes_after_packets += left;
  }
  return {};
}

bool decode_tile_parts_parallel(Tile& tile, std::span<const Bytes> parts, const Tier2Options& options,
                                Tier2Counters& counters, MemoryBudget& budget, Tier2Budget& steps, WorkPool& pool,
                                const std::function<void()>& between) {
  const std::size_t n_parts = parts.size();
  if (n_parts < 2 || tile.components.size() < 2) return false;
  std::size_t bytes = 0;
  for (const Bytes part : parts) bytes += part.size();

  // The packet sequence, walked without reading: every packet costs at least one byte, so a
  // sequence longer than the data cannot all be there (the sequential reader sorts that out).
  // walk() takes a precinct's next layer from the bookkeeping that read() keeps, so the walk
  // keeps it too, and it is cleared after.
  std::vector<PacketId> seq;
  bool cut = false;
  auto record = [&](int c, int r, int p, int l, bool& s) -> Status {
    if (seq.size() >= std::min<std::size_t>(bytes, kMaxParallelPackets)) {
      cut = s = true;
      return {};
    }
    seq.push_back({static_cast<std::uint32_t>(p), static_cast<std::uint16_t>(c), static_cast<std::uint16_t>(l),
                   static_cast<std::uint8_t>(r)});
    tile.components[static_cast<std::size_t>(c)].resolutions[static_cast<std::size_t>(r)].next_layer[static_cast<std::size_t>(p)] = l + 1;
    return {};
  };
  // Its steps are the codestream's whether the guess holds or not. A progression that leaves
  // packets unread is left to the sequential reader to report.
  if (!walk_tile(tile, steps, record) || (!cut && unread_packets(tile) > 0)) cut = true;
  reset_packet_state(tile);
  if (cut || seq.empty()) return false;

  // Where each tile-part would start: at a change of component (CPRL, or luma and chroma
  // merged: one tile-part per component, or luma then chroma). Each component's packets must
  // then fall in one tile-part, so that no precinct is read by two threads.
  std::vector<std::size_t> start{0};
  for (std::size_t i = 1; i < seq.size() && start.size() < n_parts; ++i)
    if (seq[i].component != seq[i - 1].component) start.push_back(i);
  if (start.size() != n_parts) return false;
  start.push_back(seq.size());
  std::vector<int> part_of(tile.components.size(), -1);
  for (std::size_t k = 0; k < n_parts; ++k) {
    if (start[k + 1] - start[k] > parts[k].size()) return false;  // more packets than bytes
    for (std::size_t i = start[k]; i < start[k + 1]; ++i) {
      int& owner = part_of[seq[i].component];
      if (owner >= 0 && owner != static_cast<int>(k)) return false;
      owner = static_cast<int>(k);
    }
  }

  // Where `between` may come: in each tile-part, the first packet of a run at its end that
  // holds only the last resolution of its component (none: the part's end).
  std::vector<std::size_t> stage2(n_parts);
  bool any_cut = false;
  for (std::size_t k = 0; k < n_parts; ++k) {
    auto last_resolution = [&](const PacketId& id) {
      return id.resolution + 1u == tile.components[id.component].resolutions.size();
    };
    std::size_t i = start[k + 1];
    while (i > start[k] && last_resolution(seq[i - 1])) --i;
    stage2[k] = i;
    any_cut = any_cut || (i > start[k] && i < start[k + 1]);
  }
  if (!between || !any_cut)
    for (std::size_t k = 0; k < n_parts; ++k) stage2[k] = start[k + 1];

  // Each tile-part on its own thread, with its own counters and a share of the memory left;
  // in two stages where `between` comes between them.
  struct Run {
    Tier2Counters counters;
    MemoryBudget budget{0};
    Tier2Budget steps{0};
    std::optional<PacketReader> reader;
    bool failed = false;
    bool ok = false;
  };
  std::vector<Run> runs(n_parts);
  const long long share = (budget.limit() - budget.used()) / static_cast<long long>(n_parts);
  const long long steps_share = steps.left() / static_cast<long long>(n_parts);
  for (std::size_t k = 0; k < n_parts; ++k) {
    Run& r = runs[k];
    r.budget = MemoryBudget(share);
    r.steps = Tier2Budget(steps_share);
    r.reader.emplace(tile, parts[k], Bytes{}, false, options, r.counters, r.budget, r.steps);
  }
  auto read_packets = [&](std::size_t k, std::size_t from, std::size_t to) {
    Run& run = runs[k];
    bool s = false;
    for (std::size_t i = from; i < to && !run.failed; ++i) {
      const PacketId& id = seq[i];
      if (Status st = run.reader->read(id.component, id.resolution, static_cast<int>(id.precinct), id.layer, s); !st || s)
        run.failed = true;
    }
  };
  // `between` runs beside the second stage (it reads only the code-blocks that stage does
  // not touch: those of the other resolutions), so the last resolutions' packets are read
  // while tier-1 starts on the rest.
  bool call_between = false;
  if (any_cut && between) {
    pool.parallel_for(n_parts, [&](std::size_t k, int) { read_packets(k, start[k], stage2[k]); });
    call_between =
        std::none_of(runs.begin(), runs.end(), [](const Run& r) { return r.failed || r.counters.damaged_packets > 0; });
  }
  // `between` first: it is short, and tier-1 waits for it (with fewer threads than tile-parts
  // it would otherwise come after the reading it is meant to overlap).
  const std::size_t first = call_between ? 1 : 0;
  pool.parallel_for(n_parts + first, [&](std::size_t i, int) {
    if (i < first) {
      between();
      return;
    }
    const std::size_t k = i - first;
    Run& run = runs[k];
    read_packets(k, any_cut && between ? stage2[k] : start[k], start[k + 1]);
    // The guess holds when the tile-part's packets fill it exactly.
    run.ok = !run.failed && run.reader->body_position() == parts[k].size() && run.counters.damaged_packets == 0;
  });
  long long used = 0, used_steps = 0;
  bool ok = true;
  for (const Run& r : runs) {
    ok = ok && r.ok;
    used += r.budget.used();
    used_steps += r.steps.used();
  }
  steps.charge(used_steps);  // within the shares: always fits (charged whether the guess holds or not)
  if (!ok || !budget.charge(used)) {
    reset_packet_state(tile);  // read again in one sequence, which reports what went wrong
    return false;
  }
  for (const Run& r : runs) counters.packets += r.counters.packets;
  return true;
}

}  // namespace j2k::decoder::own
