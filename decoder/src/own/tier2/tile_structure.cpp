#include "tier2/tile_structure.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string_view>

namespace j2k::decoder::own {

namespace {

int ceil_div(long long a, long long b) { return static_cast<int>((a + b - 1) / b); }
int ceil_shift(long long a, int s) { return static_cast<int>((a + (1LL << s) - 1) >> s); }
int floor_shift(long long a, int s) { return static_cast<int>(a >> s); }

// A cap on the precincts one tile may declare (each costs its bookkeeping even without
// data; the memory budget bounds the bytes, this bounds the work of the progression walk).
constexpr long long kMaxPrecinctsPerTile = 1LL << 22;

// The allocator's bookkeeping per allocation (glibc: a 16-byte header, 32-byte minimum).
constexpr long long kPerAllocation = 32;

Error over_budget(std::string_view what, const MemoryBudget& budget) {
  return make_error(ErrorKind::limit, fmt::format("{} would exceed the memory limit of {} MiB", what,
                                                  budget.limit() >> 20));
}

}  // namespace

Status materialize_code_blocks(PrecinctBand& pb, int xcb, int ycb, MemoryBudget& budget) {
  const long long n = static_cast<long long>(pb.cb_cols) * pb.cb_rows;
  // What is allocated: the structure, the blocks and both tag trees' nodes, each allocation
  // with the allocator's own bookkeeping. Exact rather than a rough bound: an 8K frame with
  // small precincts makes hundreds of thousands of these.
  const long long nodes = static_cast<long long>(TagTreeDecoder::nodes(pb.cb_cols, pb.cb_rows));
  const long long bytes = static_cast<long long>(sizeof(PrecinctCodeBlocks)) + n * static_cast<long long>(sizeof(CodeBlock)) +
                          2 * nodes * static_cast<long long>(TagTreeDecoder::kNodeBytes) + 4 * kPerAllocation;
  if (!budget.charge(bytes)) return over_budget("the code-blocks of a precinct", budget);
  auto coded = std::make_unique<PrecinctCodeBlocks>();
  coded->blocks.reserve(static_cast<std::size_t>(n));
  const Rect& pr = pb.rect;
  for (int j = 0; j < pb.cb_rows; ++j) {
    for (int i = 0; i < pb.cb_cols; ++i) {
      CodeBlock& cb = coded->blocks.emplace_back();  // raster order; made and set in one pass
      cb.rect = {std::max(pr.x0, (pb.cb_x0 + i) << xcb), std::max(pr.y0, (pb.cb_y0 + j) << ycb),
                 std::min(pr.x1, (pb.cb_x0 + i + 1) << xcb), std::min(pr.y1, (pb.cb_y0 + j + 1) << ycb)};
    }
  }
  coded->inclusion.reset(pb.cb_cols, pb.cb_rows);
  coded->zero_bitplanes.reset(pb.cb_cols, pb.cb_rows);
  pb.coded = std::move(coded);
  return {};
}

PrecinctBand precinct_band(const Resolution& res, int p, int b) {
  const Band& band = res.bands[b];
  const int px = p % res.prec_cols, py = p / res.prec_cols;
  const long long x0 = static_cast<long long>(res.prec_x0 + px) << res.band_ppx;
  const long long y0 = static_cast<long long>(res.prec_y0 + py) << res.band_ppy;
  PrecinctBand pb;
  const Rect pr{static_cast<int>(std::max<long long>(x0, band.rect.x0)), static_cast<int>(std::max<long long>(y0, band.rect.y0)),
                static_cast<int>(std::min<long long>(x0 + (1LL << res.band_ppx), band.rect.x1)),
                static_cast<int>(std::min<long long>(y0 + (1LL << res.band_ppy), band.rect.y1))};
  if (pr.x1 <= pr.x0 || pr.y1 <= pr.y0) return pb;
  pb.rect = pr;
  pb.cb_x0 = floor_shift(pr.x0, res.xcb);
  pb.cb_y0 = floor_shift(pr.y0, res.ycb);
  pb.cb_cols = ceil_shift(pr.x1, res.xcb) - pb.cb_x0;
  pb.cb_rows = ceil_shift(pr.y1, res.ycb) - pb.cb_y0;
  return pb;
}

Rect precinct_row(const Resolution& res, int py, int b) {
  const Band& band = res.bands[b];
  const long long x0 = static_cast<long long>(res.prec_x0) << res.band_ppx;
  const long long x1 = static_cast<long long>(res.prec_x0 + res.prec_cols) << res.band_ppx;
  const long long y0 = static_cast<long long>(res.prec_y0 + py) << res.band_ppy;
  const Rect r{static_cast<int>(std::max<long long>(x0, band.rect.x0)), static_cast<int>(std::max<long long>(y0, band.rect.y0)),
               static_cast<int>(std::min<long long>(x1, band.rect.x1)),
               static_cast<int>(std::min<long long>(y0 + (1LL << res.band_ppy), band.rect.y1))};
  return r.x1 > r.x0 && r.y1 > r.y0 ? r : Rect{};
}

Status materialize_precinct(Resolution& res, int p, MemoryBudget& budget) {
  if (!budget.charge(static_cast<long long>(sizeof(Precinct)) + kPerAllocation)) return over_budget("the precincts of a tile", budget);
  auto precinct = std::make_unique<Precinct>();
  for (int b = 0; b < res.num_bands; ++b) precinct->bands[b] = precinct_band(res, p, b);
  res.precincts[static_cast<std::size_t>(p)] = std::move(precinct);
  return {};
}

Status build_tile(const Codestream& cs, int t, TileParams params, int reduce, Tile& tile, TileCoefficients& out,
                  MemoryBudget& budget, TileData data) {
  const bool with_precincts = data == TileData::coded;
  const Siz& siz = cs.siz;
  int p = t % siz.tiles_x, q = t / siz.tiles_x;
  // B-7: tile rectangle on the reference grid.
  tile.index = t;
  tile.rect.x0 = static_cast<int>(std::max<long long>(siz.tx0 + static_cast<long long>(p) * siz.tw, siz.x0));
  tile.rect.y0 = static_cast<int>(std::max<long long>(siz.ty0 + static_cast<long long>(q) * siz.th, siz.y0));
  tile.rect.x1 = static_cast<int>(std::min<long long>(siz.tx0 + static_cast<long long>(p + 1) * siz.tw, siz.x1));
  tile.rect.y1 = static_cast<int>(std::min<long long>(siz.ty0 + static_cast<long long>(q + 1) * siz.th, siz.y1));
  tile.params = std::move(params);
  out.index = t;
  out.mct = tile.params.style.mct && siz.components.size() >= 3;
  const std::size_t ncomp = siz.components.size();
  // The per-component parameters and structures, before they are allocated.
  long long fixed = 0;
  for (const TileComponentParams& tcp : tile.params.components)
    fixed += static_cast<long long>(sizeof(TileComponentParams) + sizeof(TileComponent) + sizeof(ComponentCoefficients)) +
             static_cast<long long>(tcp.quant.steps.size()) * 4 +
             static_cast<long long>(tcp.coding.levels + 1) * static_cast<long long>(sizeof(Resolution) + 3 * sizeof(SubbandCoefficients));
  if (!budget.charge(fixed)) return over_budget(fmt::format("tile {}'s {} components", t, ncomp), budget);
  tile.components.clear();
  tile.components.resize(ncomp);
  out.components.resize(ncomp);  // keeps the coefficient buffers of a recycled frame
  long long total_precincts = 0;

  for (std::size_t c = 0; c < ncomp; ++c) {
    const ComponentSiz& cz = siz.components[c];
    const TileComponentParams& tcp = tile.params.components[c];
    const ComponentCoding& cod = tcp.coding;
    TileComponent& tc = tile.components[c];
    ComponentCoefficients& cc = out.components[c];
    cc.subbands.clear();
    cc.subbands.reserve(1 + 3 * static_cast<std::size_t>(cod.levels));
    // B-12: tile-component rectangle.
    tc.rect = {ceil_div(tile.rect.x0, cz.dx), ceil_div(tile.rect.y0, cz.dy), ceil_div(tile.rect.x1, cz.dx),
               ceil_div(tile.rect.y1, cz.dy)};
    tc.cb_style = cod.cb_style;
    tc.reversible = cod.reversible;
    tc.dx = cz.dx;
    tc.dy = cz.dy;
    const int nl = cod.levels;
    if (reduce > nl)
      return make_error(ErrorKind::unsupported,
                        fmt::format("reduce {} is more than the {} decomposition levels of component {}", reduce, nl, c));
    cc.rect = tc.rect;
    cc.levels = nl;
    cc.decoded_levels = nl - reduce;
    cc.wavelet = cod.reversible ? Wavelet::reversible_5_3 : Wavelet::irreversible_9_7;
    // Without precincts nothing reads the resolutions after this loop: one is enough.
    tc.resolutions.resize(with_precincts ? nl + 1 : 0);
    Resolution scratch;
    std::size_t data_size = 0;
    for (int r = 0; r <= nl; ++r) {
      Resolution& res = with_precincts ? tc.resolutions[r] : scratch;
      const int shift = nl - r;
      // B-14: resolution rectangle.
      res.rect = {ceil_shift(tc.rect.x0, shift), ceil_shift(tc.rect.y0, shift), ceil_shift(tc.rect.x1, shift),
                  ceil_shift(tc.rect.y1, shift)};
      res.ppx = cod.precincts[r] & 0x0F;
      res.ppy = cod.precincts[r] >> 4;
      // B-16: number of precincts (none when the resolution is empty).
      res.prec_x0 = floor_shift(res.rect.x0, res.ppx);
      res.prec_y0 = floor_shift(res.rect.y0, res.ppy);
      res.prec_cols = res.rect.x1 > res.rect.x0 ? ceil_shift(res.rect.x1, res.ppx) - res.prec_x0 : 0;
      res.prec_rows = res.rect.y1 > res.rect.y0 ? ceil_shift(res.rect.y1, res.ppy) - res.prec_y0 : 0;
      res.num_bands = r == 0 ? 1 : 3;
      const long long nprec = with_precincts ? static_cast<long long>(res.prec_cols) * res.prec_rows : 0;
      total_precincts += nprec;
      if (total_precincts > kMaxPrecinctsPerTile) return make_error(ErrorKind::limit, "too many precincts in one tile");
      if (!budget.charge(nprec * static_cast<long long>(sizeof(std::unique_ptr<Precinct>) + sizeof(int))))
        return over_budget("the precincts of a tile", budget);
      // Code-block size inside this resolution's precincts (B-17 / B-18).
      const int band_ppx = r == 0 ? res.ppx : res.ppx - 1;
      const int band_ppy = r == 0 ? res.ppy : res.ppy - 1;
      const int xcb = std::min(cod.cb_width_exp, band_ppx);
      const int ycb = std::min(cod.cb_height_exp, band_ppy);
      res.xcb = xcb;
      res.ycb = ycb;
      res.band_ppx = band_ppx;
      res.band_ppy = band_ppy;
      for (int b = 0; b < res.num_bands; ++b) {
        Band& band = res.bands[b];
        band.orientation = r == 0 ? BandOrientation::LL : static_cast<BandOrientation>(b + 1);
        const int nb = r == 0 ? nl : nl - r + 1;  // decomposition level of the band
        const int xob = band.orientation == BandOrientation::HL || band.orientation == BandOrientation::HH;
        const int yob = band.orientation == BandOrientation::LH || band.orientation == BandOrientation::HH;
        // B-15: band rectangle.
        const long long ox = nb > 0 ? (static_cast<long long>(xob) << (nb - 1)) : 0;
        const long long oy = nb > 0 ? (static_cast<long long>(yob) << (nb - 1)) : 0;
        band.rect = {ceil_shift(tc.rect.x0 - ox, nb), ceil_shift(tc.rect.y0 - oy, nb),
                     ceil_shift(tc.rect.x1 - ox, nb), ceil_shift(tc.rect.y1 - oy, nb)};
        // E.1: step size and number of magnitude bit-planes.
        const Quantization& qz = tcp.quant;
        const int band_no = r == 0 ? 0 : 1 + 3 * (r - 1) + b;
        int expn, mant;
        if (qz.style == 1) {  // E-5: derived from the LL values
          expn = std::max(0, qz.steps[0].first - (nl - nb));
          mant = qz.steps[0].second;
        } else {
          expn = qz.steps[band_no].first;
          mant = qz.steps[band_no].second;
        }
        band.magnitude_bits = qz.guard_bits + expn - 1 + tcp.roi_shift;
        band.roi_shift = tcp.roi_shift;
        const int gain = band.orientation == BandOrientation::LL ? 0 : band.orientation == BandOrientation::HH ? 2 : 1;
        band.step = cod.reversible ? 1.0f
                                   : static_cast<float>(std::ldexp(1.0 + mant / 2048.0, cz.precision + gain - expn));
        if (r <= nl - reduce) {
          band.subband_index = static_cast<int>(cc.subbands.size());
          SubbandCoefficients sb;
          sb.orientation = band.orientation;
          sb.resolution = r;
          sb.rect = band.rect;
          sb.step = band.step;
          sb.offset = data_size;
          data_size += static_cast<std::size_t>(band.rect.width()) * band.rect.height();
          cc.subbands.push_back(sb);
        } else {
          band.subband_index = -1;
        }
      }
      // Precincts (B.6): made when a packet brings them data (materialize_precinct).
      res.precincts.clear();
      res.precincts.resize(static_cast<std::size_t>(nprec));
      res.next_layer.assign(static_cast<std::size_t>(nprec), 0);
    }
    // Not cleared (a DefaultInitAllocator vector): tier-1 writes or zeroes every code-block
    // (run_to_coefficients), so the buffer is neither filled twice nor, when recycled,
    // faulted in again.
    if (data == TileData::empty_no_buffers) cc.data.clear();
    else cc.data.resize(data_size);
  }
  return {};
}

}  // namespace j2k::decoder::own
