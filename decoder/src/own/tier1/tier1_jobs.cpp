#include "tier1/tier1_jobs.hpp"

#include <algorithm>

namespace j2k::decoder::own {

namespace {

/// A job that zeroes `rect` of subband `sb` (band coordinates).
CodeBlockJob zero_job(ComponentCoefficients& cc, const SubbandCoefficients& sb, const Rect& rect) {
  CodeBlockJob job;
  job.zero_rect = rect;
  job.stride = sb.rect.width();
  job.out = cc.data.data() + sb.offset + static_cast<std::size_t>(rect.y0 - sb.rect.y0) * job.stride + (rect.x0 - sb.rect.x0);
  return job;
}

/// Merges the precincts without data of one band, visited in raster order, into few
/// rectangles: runs along a row of precincts, and runs of rows that span the same columns
/// (a band no packet reached is one rectangle). A hostile header may declare millions of
/// 1x1 precincts; a zeroing job each would cost more than the zeroing.
class ZeroRects {
 public:
  ZeroRects(ComponentCoefficients& cc, const SubbandCoefficients& sb, std::vector<CodeBlockJob>& jobs)
      : cc_(cc), sb_(sb), jobs_(jobs) {}
  ZeroRects(const ZeroRects&) = delete;
  ZeroRects& operator=(const ZeroRects&) = delete;

  void add(const Rect& r) {
    if (!empty(run_) && r.y0 == run_.y0 && r.y1 == run_.y1 && r.x0 == run_.x1) {
      run_.x1 = r.x1;
      return;
    }
    end_run();
    run_ = r;
  }
  /// A precinct with data (or the end of a row) interrupts the run.
  void end_run() {
    if (empty(run_)) return;
    if (!empty(above_) && above_.x0 == run_.x0 && above_.x1 == run_.x1 && above_.y1 == run_.y0) {
      above_.y1 = run_.y1;
    } else {
      if (!empty(above_)) jobs_.push_back(zero_job(cc_, sb_, above_));
      above_ = run_;
    }
    run_ = {};
  }
  /// The last rectangle, after the band's last precinct.
  void finish() {
    end_run();
    if (!empty(above_)) jobs_.push_back(zero_job(cc_, sb_, above_));
    above_ = {};
  }

 private:
  static bool empty(const Rect& r) { return r.width() <= 0 || r.height() <= 0; }
  ComponentCoefficients& cc_;
  const SubbandCoefficients& sb_;
  std::vector<CodeBlockJob>& jobs_;
  Rect run_, above_;
};

}  // namespace

Tier1Work collect_tier1_jobs(std::vector<Tile>& tiles, CoefficientFrame& frame, std::vector<CodeBlockJob>& jobs,
                             CollectPart part, CollectCarry* carry) {
  const bool early = part == CollectPart::early_resolutions;
  const bool last = part == CollectPart::last_resolutions;
  if (early) carry->components.clear();
  Tier1Work work;
  std::uint64_t frame_base = 0;  // element offset of the tile-component in the frame (Tier1Batch layout)
  std::size_t k = 0;             // the tile-component's index (carry)
  std::uint64_t carried_zero_fills = 0;
  for (std::size_t t = 0; t < tiles.size(); ++t) {
    Tile& tile = tiles[t];
    for (std::size_t c = 0; c < tile.components.size(); ++c, ++k) {
      TileComponent& tc = tile.components[c];
      ComponentCoefficients& cc = frame.tiles[t].components[c];
      const std::size_t first_job = jobs.size();
      const std::uint64_t coded_before = work.coded_blocks;
      std::uint64_t passes = 0, damaged = 0;
      const std::size_t nres = tc.resolutions.size();
      for (std::size_t ri = last && nres > 0 ? nres - 1 : 0; ri < nres; ++ri) {
        if (early && ri + 1 == nres) break;
        Resolution& res = tc.resolutions[ri];
        for (int b = 0; b < res.num_bands; ++b) {
          const Band& band = res.bands[b];
          if (band.subband_index < 0) continue;
          const SubbandCoefficients& sb = cc.subbands[static_cast<std::size_t>(band.subband_index)];
          ZeroRects zeros(cc, sb, jobs);
          for (int py = 0; py < res.prec_rows && !res.precincts.empty(); ++py) {
            const auto row = res.precincts.begin() + static_cast<std::ptrdiff_t>(py) * res.prec_cols;
            if (std::none_of(row, row + res.prec_cols, [](const auto& p) { return p != nullptr; })) {
              // No packet brought data to this row of precincts: its area of the band is zero.
              if (const Rect r = precinct_row(res, py, b); r.width() > 0) zeros.add(r);
              zeros.end_run();
              continue;
            }
            for (int px = 0; px < res.prec_cols; ++px) {
              const int p = py * res.prec_cols + px;
              if (!res.precincts[static_cast<std::size_t>(p)]) {
                if (const PrecinctBand g = precinct_band(res, p, b); g.rect.width() > 0) zeros.add(g.rect);
                continue;
              }
              PrecinctBand& pb = res.precincts[static_cast<std::size_t>(p)]->bands[b];
              if (pb.rect.width() <= 0 || pb.rect.height() <= 0) continue;
              if (!pb.coded) {
                zeros.add(pb.rect);  // the packets of this precinct had nothing for this band
                continue;
              }
              zeros.end_run();
              for (CodeBlock& cb : pb.coded->blocks) {
                // Filled in place: a job built on the stack and copied in was a store-to-load
                // forwarding stall per block (narrow stores read back wide), ~10 % of the
                // GPU tier-1 frame's host part.
                CodeBlockJob& job = jobs.emplace_back();
                job.block = &cb;
                job.orientation = band.orientation;
                job.magnitude_bits = band.magnitude_bits;
                job.roi_shift = band.roi_shift;
                job.cb_style = tc.cb_style;
                job.stride = sb.rect.width();
                job.out = cc.data.data() + sb.offset + static_cast<std::size_t>(cb.rect.y0 - sb.rect.y0) * job.stride +
                          (cb.rect.x0 - sb.rect.x0);
                const BlockPlan plan = plan_block(cb, band.magnitude_bits);
                job.plan = plan;
                damaged += plan.zeroed == kDamaged;
                work.too_deep_blocks += plan.zeroed == kTooDeep;
                if (plan.passes > 0) {
                  for (Bytes ch : cb.chunks) job.bytes += static_cast<std::uint32_t>(ch.size());
                  passes += static_cast<std::uint64_t>(plan.passes);
                  ++work.coded_blocks;
                }
                job.frame_data = cc.data.data();
                job.frame_base = frame_base;
              }
            }
            zeros.end_run();
          }
          zeros.finish();
        }
      }
      if (early) {  // the code-blocks' jobs only (the table's rows); the rest waits for the last resolutions
        const auto zeros = std::remove_if(jobs.begin() + static_cast<std::ptrdiff_t>(first_job), jobs.end(),
                                          [](const CodeBlockJob& j) { return j.block == nullptr; });
        carry->components.push_back({passes, static_cast<std::uint64_t>(jobs.end() - zeros), work.coded_blocks - coded_before});
        jobs.erase(zeros, jobs.end());
        frame_base += cc.data.size();
        continue;
      }
      std::uint64_t early_zero_fills = 0;
      if (last && k < carry->components.size()) {
        const CollectCarry::Component& e = carry->components[k];
        passes += e.passes;  // (their damaged blocks: counted by the early rows' table, EarlyTier1)
        work.coded_blocks += e.coded_blocks;
        early_zero_fills = e.zero_fills;
      }
      cc.zero = passes == 0;
      work.coding_passes += passes;
      if (cc.zero) {
        // Nothing to decode: one job per subband clears the buffer (damaged blocks included).
        jobs.resize(first_job);
        ++work.constant_components;
        work.dropped_damaged_blocks += damaged;
        if (!cc.data.empty())
          for (const SubbandCoefficients& sb : cc.subbands)
            if (sb.rect.width() > 0 && sb.rect.height() > 0) jobs.push_back(zero_job(cc, sb, sb.rect));
      } else {
        carried_zero_fills += early_zero_fills;
      }
      frame_base += cc.data.size();
    }
  }
  work.zero_fills = carried_zero_fills + static_cast<std::uint64_t>(std::count_if(
                                             jobs.begin(), jobs.end(), [](const CodeBlockJob& j) { return j.block == nullptr; }));
  return work;
}

}  // namespace j2k::decoder::own
