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

}  // namespace

Tier1Work collect_tier1_jobs(std::vector<Tile>& tiles, CoefficientFrame& frame, std::vector<CodeBlockJob>& jobs) {
  Tier1Work work;
  std::uint64_t frame_base = 0;  // element offset of the tile-component in the frame (Tier1Batch layout)
  for (std::size_t t = 0; t < tiles.size(); ++t) {
    Tile& tile = tiles[t];
    for (std::size_t c = 0; c < tile.components.size(); ++c) {
      TileComponent& tc = tile.components[c];
      ComponentCoefficients& cc = frame.tiles[t].components[c];
      const std::size_t first_job = jobs.size();
      std::uint64_t passes = 0, damaged = 0;
      for (Resolution& res : tc.resolutions) {
        for (PrecinctBand& pb : res.precincts) {
          const std::size_t b = static_cast<std::size_t>(&pb - res.precincts.data()) % res.num_bands;
          const Band& band = res.bands[b];
          if (band.subband_index < 0) continue;
          const SubbandCoefficients& sb = cc.subbands[static_cast<std::size_t>(band.subband_index)];
          if (!pb.coded) {
            // No packet brought data to this precinct: its area of the band is zero.
            if (pb.rect.width() > 0 && pb.rect.height() > 0) jobs.push_back(zero_job(cc, sb, pb.rect));
            continue;
          }
          for (CodeBlock& cb : pb.coded->blocks) {
            CodeBlockJob job;
            job.block = &cb;
            job.orientation = band.orientation;
            job.magnitude_bits = band.magnitude_bits;
            job.roi_shift = band.roi_shift;
            job.cb_style = tc.cb_style;
            job.stride = sb.rect.width();
            job.out = cc.data.data() + sb.offset + static_cast<std::size_t>(cb.rect.y0 - sb.rect.y0) * job.stride +
                      (cb.rect.x0 - sb.rect.x0);
            const BlockPlan plan = plan_block(cb, band.magnitude_bits);
            damaged += plan.damaged;
            if (plan.passes > 0) {
              for (Bytes ch : cb.chunks) job.bytes += static_cast<std::uint32_t>(ch.size());
              passes += static_cast<std::uint64_t>(plan.passes);
              ++work.coded_blocks;
            }
            job.frame_data = cc.data.data();
            job.frame_base = frame_base;
            jobs.push_back(job);
          }
        }
      }
      cc.zero = passes == 0;
      work.coding_passes += passes;
      if (cc.zero) {
        // Nothing to decode: one job clears the whole buffer (damaged blocks included).
        jobs.resize(first_job);
        ++work.constant_components;
        work.dropped_damaged_blocks += damaged;
        if (!cc.data.empty()) {
          CodeBlockJob job;
          job.zero_rect = {0, 0, static_cast<int>(cc.data.size()), 1};
          job.stride = job.zero_rect.x1;
          job.out = cc.data.data();
          jobs.push_back(job);
        }
      }
      frame_base += cc.data.size();
    }
  }
  return work;
}

}  // namespace j2k::decoder::own
