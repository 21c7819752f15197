#pragma once
// Hybrid tier-1: a frame's code-blocks split between the GPU kernel and the CPU threads.
//
// The GPU runs a code-block's MQ chain on one lane, about 10x slower per symbol than a CPU
// core, and runs thousands of them at once (tier1_gpu_chains); so the GPU's time for a
// frame is about its heaviest block's chain (or, with more blocks than it runs at once, their total over that count).
// The heaviest blocks go to the CPU instead (decoded on the decoder's pool while the kernel
// runs the rest), as many as make the two sides' predicted times meet. The model: a block's
// cost in units (tier1_block_cost: its bytes and passes, the weight that also orders the
// kernel's table), and per side a time per unit, a fixed cost and a parallelism:
//   gpu(k) = gpu_fixed + gpu_per_unit * max(c[k], sum(c[k..n)) / gpu_chains)
//   cpu(k) = cpu_fixed + cpu_per_unit * max(c[0], sum(c[0..k)) / cpu_threads)
// with c sorted heaviest first and the first k blocks on the CPU; k minimises the larger.
// The per-unit times are calibrated from each frame's measured times (calibrate_tier1).
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "decoder/tier1_batch.hpp"

namespace j2k::gpu {

/// A code-block's tier-1 cost in units: 4 per byte of its segments plus its passes times
/// its samples / 64 (its MQ decodes and its passes' scans over the block).
std::uint64_t tier1_block_cost(const decoder::Tier1Batch& batch, const decoder::Tier1Block& block);

struct Tier1CostModel {
  double gpu_us_per_unit = 0.3;   ///< one GPU lane's chain (H100, measured: calibrated per frame)
  double cpu_us_per_unit = 0.04;  ///< one CPU thread
  double gpu_fixed_us = 20;       ///< a launch
  double cpu_fixed_us = 60;       ///< waking the pool, the copy of its results and their scatter
  int gpu_chains = 1024;          ///< code-blocks the GPU decodes at once (tier1_gpu_chains)
  int cpu_threads = 1;            ///< the pool's threads
  /// Where a side's time per unit drifts back to while the split gives it nothing (a tenth
  /// of the way per frame): so that one slow frame (a preempted thread) cannot keep that side
  /// out for good; it gets blocks again and is measured again.
  double gpu_prior_us_per_unit = 0.3, cpu_prior_us_per_unit = 0.04;
};

struct Tier1Split {
  std::vector<std::uint32_t> order;  ///< every row, heaviest first
  std::size_t host_count = 0;        ///< order[0, host_count) go to the CPU, the rest to the GPU
  double gpu_us = 0, cpu_us = 0;     ///< the model's predictions for this split
  double gpu_units = 0, cpu_units = 0;  ///< the bound terms (max(...) above) of each side
  std::span<const std::uint32_t> host_rows() const { return {order.data(), host_count}; }
  std::span<const std::uint32_t> gpu_rows() const { return {order.data() + host_count, order.size() - host_count}; }
  /// split_tier1's working arrays, kept for their capacity (a frame has thousands of rows).
  struct Scratch {
    std::vector<std::uint32_t> key, key_tmp, row_tmp;
  } scratch;
};

/// Orders the batch's rows heaviest first and picks how many go to the CPU: `forced` >= 0
/// fixes that count (clamped to the rows; 0: all on the GPU), otherwise the model decides.
/// `gpu_budget_us` > 0 (with the model): the kernel may take that long, so the CPU gets the
/// fewest heaviest blocks that keep it within (at most the balanced split's): a kernel
/// started early has until the frame's other kernel ends, and the cores it leaves free
/// read the rest of the frame meanwhile.
void split_tier1(const decoder::Tier1Batch& batch, const Tier1CostModel& model, Tier1Split& split, long forced = -1,
                 double gpu_budget_us = 0);
/// The same over `rows` of the batch only (null: every row).
void split_tier1_rows(const decoder::Tier1Batch& batch, const std::vector<std::uint32_t>* rows,
                      const Tier1CostModel& model, Tier1Split& split, long forced = -1, double gpu_budget_us = 0);

/// Moves the per-unit times towards what this frame measured (the kernel's time, the CPU
/// share's wall time), a quarter of the way, a frame's figure taken within half and twice
/// the current value (one outlier moves it by a quarter at most); a side that had no blocks
/// drifts towards its prior instead.
void calibrate_tier1(Tier1CostModel& model, const Tier1Split& split, double gpu_ms, double cpu_ms);

}  // namespace j2k::gpu
