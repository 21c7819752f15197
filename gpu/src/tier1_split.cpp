// Hybrid tier-1's split and its cost model (see gpu/tier1_split.hpp).
#include "gpu/tier1_split.hpp"

#include <algorithm>
#include <functional>
#include <utility>

namespace j2k::gpu {

std::uint64_t tier1_block_cost(const decoder::Tier1Batch& batch, const decoder::Tier1Block& b) {
  std::uint64_t bytes = 0;
  for (std::uint32_t s = 0; s < b.seg_count; ++s) bytes += batch.segments[b.seg_first + s].length;
  return 4 * bytes + std::uint64_t{b.passes} * b.width * b.height / 64;
}

namespace {

/// Sorts `rows` (and `key` with them) by ascending key, stable: least significant digit
/// first, 11 bits a pass, a pass skipped where every key has the same digit. Thousands of
/// rows sort in a few microseconds, against ~100 for a comparison sort.
void radix_sort(std::vector<std::uint32_t>& key, std::vector<std::uint32_t>& rows, Tier1Split::Scratch& s) {
  const std::size_t n = key.size();
  s.key_tmp.resize(n);
  s.row_tmp.resize(n);
  constexpr int kBits = 11;
  constexpr std::uint32_t kMask = (1u << kBits) - 1;
  for (int shift = 0; shift < 32; shift += kBits) {
    std::uint32_t count[kMask + 1] = {};
    for (std::size_t i = 0; i < n; ++i) ++count[(key[i] >> shift) & kMask];
    if (n == 0 || count[(key[0] >> shift) & kMask] == n) continue;
    std::uint32_t at = 0;
    for (std::uint32_t& c : count) at += std::exchange(c, at);
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint32_t to = count[(key[i] >> shift) & kMask]++;
      s.key_tmp[to] = key[i];
      s.row_tmp[to] = rows[i];
    }
    key.swap(s.key_tmp);
    rows.swap(s.row_tmp);
  }
}

}  // namespace

void split_tier1(const decoder::Tier1Batch& batch, const Tier1CostModel& m, Tier1Split& split, long forced,
                 double gpu_budget_us) {
  split_tier1_rows(batch, nullptr, m, split, forced, gpu_budget_us);
}

void split_tier1_rows(const decoder::Tier1Batch& batch, const std::vector<std::uint32_t>* rows, const Tier1CostModel& m,
                      Tier1Split& split, long forced, double gpu_budget_us) {
  const std::size_t n = rows ? rows->size() : batch.blocks.size();
  // Heaviest first, ties in table order: a stable ascending sort of the costs' complements.
  std::vector<std::uint32_t>& key = split.scratch.key;
  key.resize(n);
  split.order.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t row = rows ? (*rows)[i] : static_cast<std::uint32_t>(i);
    key[i] = ~static_cast<std::uint32_t>(std::min<std::uint64_t>(tier1_block_cost(batch, batch.blocks[row]), 0xFFFFFFFFu));
    split.order[i] = row;
  }
  radix_sort(key, split.order, split.scratch);
  auto cost = [&key](std::size_t r) { return static_cast<double>(~key[r]); };
  double total = 0;
  for (std::size_t r = 0; r < n; ++r) total += cost(r);
  const double chains = std::max(1, m.gpu_chains), threads = std::max(1, m.cpu_threads);
  auto gpu_units = [&](std::size_t k, double rest) { return k < n ? std::max(cost(k), rest / chains) : 0.0; };
  auto cpu_units = [&](std::size_t k, double done) { return k > 0 ? std::max(cost(0), done / threads) : 0.0; };
  auto gpu_us = [&](double units) { return units > 0 ? m.gpu_fixed_us + m.gpu_us_per_unit * units : 0.0; };
  auto cpu_us = [&](double units) { return units > 0 ? m.cpu_fixed_us + m.cpu_us_per_unit * units : 0.0; };
  std::size_t best = 0;
  if (forced >= 0) {
    best = std::min<std::size_t>(static_cast<std::size_t>(forced), n);
  } else {
    double done = 0, best_us = gpu_us(gpu_units(0, total));
    for (std::size_t k = 1; k <= n; ++k) {
      done += cost(k - 1);
      const double us = std::max(gpu_us(gpu_units(k, total - done)), cpu_us(cpu_units(k, done)));
      if (us < best_us) {
        best_us = us;
        best = k;
      }
      if (cpu_us(cpu_units(k, done)) > best_us) break;  // the CPU side only grows from here
    }
  }
  if (forced < 0 && gpu_budget_us > 0) {
    // The kernel may take until the budget: the CPU gets only the blocks it must (fewer
    // cores busy beside whatever else runs then), never more than the balanced split.
    double before = 0;
    for (std::size_t k = 0; k < best; before += cost(k), ++k)
      if (gpu_us(gpu_units(k, total - before)) <= gpu_budget_us) {
        best = k;
        break;
      }
  }
  double done = 0;
  for (std::size_t r = 0; r < best; ++r) done += cost(r);
  split.host_count = best;
  split.gpu_units = gpu_units(best, total - done);
  split.cpu_units = cpu_units(best, done);
  split.gpu_us = gpu_us(split.gpu_units);
  split.cpu_us = cpu_us(split.cpu_units);
}

void calibrate_tier1(Tier1CostModel& m, const Tier1Split& split, double gpu_ms, double cpu_ms) {
  constexpr double kWeight = 0.25;  // of the new frame's figure
  constexpr double kDrift = 0.1;    // towards the prior, per frame without blocks
  auto update = [](double& per_unit, double prior, double units, double fixed_us, double ms) {
    if (units < 1) {
      per_unit += kDrift * (prior - per_unit);
      return;
    }
    if (!(ms > 0)) return;
    const double measured = std::clamp((ms * 1000.0 - fixed_us) / units, 0.5 * per_unit, 2.0 * per_unit);
    per_unit = std::clamp(per_unit + kWeight * (measured - per_unit), 1e-4, 10.0);
  };
  update(m.gpu_us_per_unit, m.gpu_prior_us_per_unit, split.gpu_units, m.gpu_fixed_us, gpu_ms);
  update(m.cpu_us_per_unit, m.cpu_prior_us_per_unit, split.cpu_units, m.cpu_fixed_us, cpu_ms);
}

}  // namespace j2k::gpu
