// CPU reconstruction after tier-1: dequantisation (E.1), inverse DWT (F), inverse
// component transform (G.2, G.3), DC level shift (G.1.2) and clamping.
//
// Dequantisation is fused into the first use of each coefficient (the row pass of its
// level reads the subband in place), the DC shift / clamp / store into the last level's
// output (components without a component transform), and the component transform into
// one pass that writes the picture. Each level runs row by row through a small ring of
// rows (both lifting passes while the rows are in cache). Work is spread over the thread
// pool either by tile-component (each one all its levels in one go, when that balances) or,
// per level, by bands of rows.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>
#include <memory>

#include "decoder/coefficients.hpp"
#include "reconstruct_internal.hpp"
#include "dsp.hpp"
#include "thread_pool.hpp"
#include "transform/idwt.hpp"

namespace j2k::decoder {

namespace own {

namespace {

int ceil_shift(long long a, int s) { return static_cast<int>((a + (1LL << s) - 1) >> s); }
Rect shift_rect(const Rect& r, int s) { return {ceil_shift(r.x0, s), ceil_shift(r.y0, s), ceil_shift(r.x1, s), ceil_shift(r.y1, s)}; }

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

constexpr int kMaxLevels = 32;  // COD/COC allow 0..32 decomposition levels

/// One tile-component's reconstruction.
struct Job {
  const ComponentCoefficients* cc = nullptr;
  int dl = 0;
  bool is_float = false;
  Rect out_rect;         // the last level's output (res[dl])
  std::vector<Rect> res;  // per level, 0..dl (left empty for a zero job, which needs out_rect only)
  const SubbandCoefficients* ll = nullptr;
  std::vector<std::array<const SubbandCoefficients*, 3>> bands;  // HL, LH, HH per level
  void* a = nullptr;  // last level's output
  void* b = nullptr;  // the level before's
  bool emit = false;  // the last level goes straight into the picture
  bool zero = false;  // every coefficient is zero: the output is zero (ComponentCoefficients::zero)
  IdwtEmit em;

  void* out(int r) const { return ((dl - r) & 1) ? b : a; }
  std::size_t cost() const { return static_cast<std::size_t>(out_rect.width()) * out_rect.height(); }
  /// Samples the levels produce (the LL band's copy when there are none).
  std::uint64_t samples() const {
    if (zero) return 0;
    std::uint64_t n = dl == 0 ? static_cast<std::uint64_t>(res[0].width()) * res[0].height() : 0;
    for (int r = 1; r <= dl; ++r) n += static_cast<std::uint64_t>(res[r].width()) * res[r].height();
    return n;
  }

  IdwtSource quantised(const SubbandCoefficients& sb) const {
    return {cc->data.data() + sb.offset, sb.rect.width(), sb.step * 0.5f, true};
  }
  IdwtLevel level(int r) const {
    IdwtLevel lv;
    lv.ll = r == 1 ? quantised(*ll) : IdwtSource{out(r - 1), res[r - 1].width(), 1.0f, false};
    lv.hl = quantised(*bands[r][0]);
    lv.lh = quantised(*bands[r][1]);
    lv.hh = quantised(*bands[r][2]);
    lv.w = res[r].width();
    lv.h = res[r].height();
    lv.sx = res[r].x0 & 1;
    lv.sy = res[r].y0 & 1;
    return lv;
  }
};

/// Per-thread row scratch of the level kernels (2 * (w + 8) samples and a ring of 8 rows).
void* row_scratch(int w) {
  thread_local RawBuffer buf;
  const std::size_t n = static_cast<std::size_t>(std::max(w, 0));
  return buf.get((2 * (n + 8) + 8 * (n + 16)) * 4);
}

Status plan_job(const ComponentCoefficients& cc, Job& job) {
  job.cc = &cc;
  job.dl = cc.decoded_levels;
  if (job.dl < 0 || job.dl > kMaxLevels || cc.levels < job.dl)
    return make_error(ErrorKind::corrupt, "bad number of decomposition levels");
  job.is_float = cc.wavelet == Wavelet::irreversible_9_7;
  job.zero = cc.zero;
  job.out_rect = shift_rect(cc.rect, cc.levels - job.dl);
  if (job.zero) return {};  // no coefficient is read
  job.res.resize(static_cast<std::size_t>(job.dl) + 1);
  for (int r = 0; r <= job.dl; ++r) job.res[r] = shift_rect(cc.rect, cc.levels - r);
  job.ll = nullptr;
  job.bands.assign(static_cast<std::size_t>(job.dl) + 1, {});
  for (const SubbandCoefficients& sb : cc.subbands) {
    if (sb.resolution == 0 && sb.orientation == BandOrientation::LL) job.ll = &sb;
    else if (sb.resolution >= 1 && sb.resolution <= job.dl && sb.orientation != BandOrientation::LL)
      job.bands[sb.resolution][static_cast<int>(sb.orientation) - 1] = &sb;
  }
  // The bands must tile each level exactly as 2D_SR expects (they do when built by tier-2).
  auto fits = [&](const SubbandCoefficients* sb, int w, int h) {
    return sb && sb->rect.width() == w && sb->rect.height() == h &&
           sb->offset + static_cast<std::size_t>(std::max(w, 0)) * std::max(h, 0) <= cc.data.size();
  };
  if (!fits(job.ll, job.res[0].width(), job.res[0].height()))
    return make_error(ErrorKind::corrupt, "subbands do not match the tile-component");
  for (int r = 1; r <= job.dl; ++r) {
    const int wl = job.res[r - 1].width(), hl = job.res[r - 1].height();
    const int wh = job.res[r].width() - wl, hh = job.res[r].height() - hl;
    if (!fits(job.bands[r][0], wh, hl) || !fits(job.bands[r][1], wl, hh) || !fits(job.bands[r][2], wh, hh))
      return make_error(ErrorKind::corrupt, "subbands do not match the tile-component");
  }
  return {};
}

enum TaskKind : std::uint8_t { kCopyRows, kBand, kWholeJob, kConstant };  // kConstant: write_constant()

constexpr int kRowsPerTask = 16;             // rows per task of the copy and colour passes
constexpr std::size_t kSmallLevel = 32768;  // samples: below this a level is one task

/// The output of a tile-component whose coefficients are all zero: every level of the
/// inverse transform (5/3 or 9/7) maps zeros to zeros, so it is zero, and the picture gets
/// the DC level shift, clamped as the store kernels clamp (G.1.2). When the component
/// transform still needs the component (another of the three has data), its last level's
/// buffer is cleared instead (RCT/ICT read it like any other).
void write_constant(const Job& job) {
  if (job.emit) {
    const IdwtEmit& e = job.em;
    const std::int32_t v = std::clamp(e.shift, e.lo, e.hi);
    for (int y = e.y_lo; y < e.y_hi && e.x1 > e.x0; ++y) {
      std::int32_t* row = e.dst + static_cast<std::ptrdiff_t>(y + e.dy) * e.dst_stride + e.dx;
      std::fill(row + e.x0, row + e.x1, v);
    }
    return;
  }
  std::memset(job.a, 0, job.cost() * 4);  // int32 0 and float +0.0 are both all-zero bits
}

void run_task(const IdwtKernels& k, const Job& job, const ReconstructScratch::Task& t) {
  const IdwtEmit* emit = job.emit ? &job.em : nullptr;
  switch (t.kind) {
    case kCopyRows: {
      const Rect& r0 = job.res[0];
      const IdwtSource src = job.quantised(*job.ll);
      if (job.is_float) k.copy97(src, r0.width(), t.i0, t.i1, static_cast<float*>(job.a), r0.width(), emit);
      else k.copy53(src, r0.width(), t.i0, t.i1, static_cast<std::int32_t*>(job.a), r0.width(), emit);
      break;
    }
    case kBand: {
      const IdwtLevel lv = job.level(t.level);
      const IdwtEmit* e = t.level == job.dl ? emit : nullptr;
      void* sc = row_scratch(lv.w);
      // The last level's output is not kept when it goes straight into the picture.
      void* out = e ? nullptr : job.out(t.level);
      if (job.is_float) k.band97(lv, static_cast<float*>(out), lv.w, t.i0, t.i1, static_cast<float*>(sc), e);
      else k.band53(lv, static_cast<std::int32_t*>(out), lv.w, t.i0, t.i1, static_cast<std::int32_t*>(sc), e);
      break;
    }
    case kWholeJob: {
      if (job.dl == 0) {
        run_task(k, job, {t.job, kCopyRows, 0, 0, job.res[0].height()});
        break;
      }
      for (int r = 1; r <= job.dl; ++r) run_task(k, job, {t.job, kBand, r, 0, job.res[r].height()});
      break;
    }
    default:
      break;
  }
}

/// Whether whole tile-components, largest first, keep `threads` threads about equally busy.
bool whole_jobs_balance(const std::vector<Job>& jobs, int threads) {
  if (threads <= 1) return true;
  std::vector<std::size_t> costs;
  std::size_t total = 0;
  for (const Job& j : jobs) {
    if (j.zero) continue;  // written before the transform
    costs.push_back(j.cost());
    total += j.cost();
  }
  std::sort(costs.begin(), costs.end(), std::greater<>());
  std::vector<std::size_t> bins(static_cast<std::size_t>(threads), 0);
  for (std::size_t c : costs) *std::min_element(bins.begin(), bins.end()) += c;
  const double makespan = static_cast<double>(*std::max_element(bins.begin(), bins.end()));
  return makespan <= 1.2 * static_cast<double>(total) / threads;
}

template <typename Fn>
void for_each(ThreadPool* pool, std::size_t n, Fn&& fn) {
  if (pool && n > 1) pool->parallel_for(n, [&](std::size_t i, int) { fn(i); });
  else
    for (std::size_t i = 0; i < n; ++i) fn(i);
}

}  // namespace

Status reconstruct_into(const CoefficientFrame& frame, ThreadPool* pool, ReconstructTimes* times,
                        ReconstructScratch* scratch, PlanarImage& img, const IdwtKernels* kernels) {
  auto t0 = std::chrono::steady_clock::now();
  const std::size_t ncomp = frame.components.size();
  for (const TileCoefficients& tile : frame.tiles)
    if (tile.components.size() != ncomp) return make_error(ErrorKind::corrupt, "tile without all its components");
  ReconstructScratch local;
  ReconstructScratch& sc = scratch ? *scratch : local;

  // The picture: planes reused when their size matches.
  img.width = ceil_shift(frame.image.x1, frame.reduce) - ceil_shift(frame.image.x0, frame.reduce);
  img.height = ceil_shift(frame.image.y1, frame.reduce) - ceil_shift(frame.image.y0, frame.reduce);
  img.colour = ncomp == 1 ? ColourCoding::grey : frame.stated_colour;
  img.full_range = frame.stated_full_range;
  img.planes.resize(ncomp);
  std::vector<long long> covered(ncomp, 0);
  for (std::size_t c = 0; c < ncomp; ++c) {
    const ComponentInfo& ci = frame.components[c];
    Plane& p = img.planes[c];
    p.width = std::max(ci.rect.width(), 0);
    p.height = std::max(ci.rect.height(), 0);
    p.dx = ci.dx;
    p.dy = ci.dy;
    p.precision = ci.precision;
    p.is_signed = ci.is_signed;
    p.samples.resize(static_cast<std::size_t>(p.width) * p.height);
  }

  // One job per tile-component.
  std::vector<Job> jobs(frame.tiles.size() * ncomp);
  sc.buffers.resize(std::max(sc.buffers.size(), jobs.size()));
  std::uint64_t transform_skipped = 0;  // tiles whose component transform cannot apply
  for (std::size_t t = 0; t < frame.tiles.size(); ++t) {
    const TileCoefficients& tile = frame.tiles[t];
    for (std::size_t c = 0; c < ncomp; ++c) {
      Job& job = jobs[t * ncomp + c];
      if (Status st = plan_job(tile.components[c], job); !st) return st;
      const Rect& out = job.out_rect;
      const std::size_t n = static_cast<std::size_t>(std::max(out.width(), 0)) * std::max(out.height(), 0);
      if (!job.zero) job.a = sc.buffers[t * ncomp + c].a.get(n * 4);
      if (job.dl >= 1 && !job.zero) {
        const Rect& prev = job.res[job.dl - 1];
        job.b = sc.buffers[t * ncomp + c].b.get(static_cast<std::size_t>(prev.width()) * prev.height() * 4);
      }
      // Where the last level lands in the plane, clipped (G.1.2 shift and range).
      const ComponentInfo& ci = frame.components[c];
      Plane& p = img.planes[c];
      IdwtEmit& e = job.em;
      e.dst = p.samples.data();
      e.dst_stride = p.width;
      e.dx = out.x0 - ci.rect.x0;
      e.dy = out.y0 - ci.rect.y0;
      e.x0 = std::max(0, -e.dx);
      e.x1 = std::min(out.width(), p.width - e.dx);
      e.y_lo = std::max(0, -e.dy);
      e.y_hi = std::min(out.height(), p.height - e.dy);
      e.shift = ci.is_signed ? 0 : 1 << (ci.precision - 1);
      e.lo = ci.is_signed ? -(1 << (ci.precision - 1)) : 0;
      e.hi = ci.is_signed ? (1 << (ci.precision - 1)) - 1 : (1 << ci.precision) - 1;
      if (e.x1 > e.x0 && e.y_hi > e.y_lo)
        covered[c] += static_cast<long long>(e.x1 - e.x0) * (e.y_hi - e.y_lo);
      job.emit = true;
    }
    // G.2/G.3: the component transform needs the first three components side by side.
    bool mct = component_transform_applies(tile);
    if (tile.mct && ncomp >= 3 && !mct) ++transform_skipped;
    if (mct) {
      // RCT and ICT map (0, 0, 0) to (0, 0, 0): three components without data are three
      // constants, with no transform at all.
      const Job* j = &jobs[t * ncomp];
      if (j[0].zero && j[1].zero && j[2].zero) mct = false;
    }
    if (mct) {
      img.colour = ColourCoding::rgb;
      for (std::size_t c = 0; c < 3; ++c) {
        Job& j = jobs[t * ncomp + c];
        j.emit = false;
        if (j.zero) j.a = sc.buffers[t * ncomp + c].a.get(j.cost() * 4);  // cleared for the transform
      }
    }
  }
  // Tiles partition the picture, so every sample is written; if not (a malformed frame),
  // start from zero.
  for (std::size_t c = 0; c < ncomp; ++c) {
    Plane& p = img.planes[c];
    if (covered[c] != static_cast<long long>(p.width) * p.height) std::fill(p.samples.begin(), p.samples.end(), 0);
  }
  double colour_ms = ms_since(t0);

  // Synthesis.
  t0 = std::chrono::steady_clock::now();
  const IdwtKernels& k = kernels ? *kernels : idwt_dsp();
  const int threads = pool ? pool->size() : 1;
  auto& tasks = sc.tasks;
  // Tile-components without data first: a fill each, in batches (a hostile header may
  // declare a million empty tiles; a pool task each would cost more than the fills).
  tasks.clear();
  for (std::size_t j = 0; j < jobs.size(); ++j)
    if (jobs[j].zero) tasks.push_back({static_cast<std::uint32_t>(j), kConstant, 0, 0, 0});
  constexpr std::size_t kConstantsPerTask = 64;
  for_each(pool, (tasks.size() + kConstantsPerTask - 1) / kConstantsPerTask, [&](std::size_t i) {
    for (std::size_t t = i * kConstantsPerTask; t < std::min(tasks.size(), (i + 1) * kConstantsPerTask); ++t)
      write_constant(jobs[tasks[t].job]);
  });
  if (whole_jobs_balance(jobs, threads)) {
    tasks.clear();
    for (std::size_t j = 0; j < jobs.size(); ++j)
      if (!jobs[j].zero) tasks.push_back({static_cast<std::uint32_t>(j), kWholeJob, 0, 0, 0});
    std::stable_sort(tasks.begin(), tasks.end(),
                     [&](const auto& x, const auto& y) { return jobs[x.job].cost() > jobs[y.job].cost(); });
    for_each(pool, tasks.size(), [&](std::size_t i) { run_task(k, jobs[tasks[i].job], tasks[i]); });
  } else {
    // Level by level, each level in bands of rows (a band recomputes the few rows of
    // lifting support above and below it: 4 for 9/7, 2 for 5/3).
    int max_dl = 0;
    for (const Job& j : jobs) max_dl = std::max(max_dl, j.dl);
    for (int r = 0; r <= max_dl; ++r) {
      tasks.clear();
      long long rows = 0;
      for (const Job& j : jobs)
        if (!j.zero && ((r == 0 && j.dl == 0) || (r > 0 && j.dl >= r))) rows += j.res[r].height();
      const int band = static_cast<int>(std::clamp<long long>(rows / (4LL * threads), 32, 256));
      for (std::size_t ji = 0; ji < jobs.size(); ++ji) {
        const Job& j = jobs[ji];
        const auto id = static_cast<std::uint32_t>(ji);
        if (j.zero) continue;
        if (r == 0) {
          if (j.dl != 0) continue;
          for (int y = 0; y < j.res[0].height(); y += kRowsPerTask)
            tasks.push_back({id, kCopyRows, 0, y, std::min(j.res[0].height(), y + kRowsPerTask)});
          continue;
        }
        if (j.dl < r) continue;
        const int w = j.res[r].width(), h = j.res[r].height();
        if (w <= 0 || h <= 0) continue;
        if (static_cast<std::size_t>(w) * h <= kSmallLevel) {
          tasks.push_back({id, kBand, r, 0, h});
          continue;
        }
        for (int y = 0; y < h; y += band) tasks.push_back({id, kBand, r, y, std::min(h, y + band)});
      }
      for_each(pool, tasks.size(), [&](std::size_t i) { run_task(k, jobs[tasks[i].job], tasks[i]); });
    }
  }
  const double idwt_ms = ms_since(t0);
  std::uint64_t idwt_samples = 0;
  for (const Job& j : jobs) idwt_samples += j.samples();

  // Component transform + DC shift + clamp + store, rows of the tiles that have one.
  t0 = std::chrono::steady_clock::now();
  tasks.clear();
  for (std::size_t t = 0; t < frame.tiles.size(); ++t) {
    const Job& j = jobs[t * ncomp];
    if (j.emit || ncomp < 3) continue;
    for (int y = 0; y < j.out_rect.height(); y += kRowsPerTask)
      tasks.push_back({static_cast<std::uint32_t>(t * ncomp), 0, 0, y, std::min(j.out_rect.height(), y + kRowsPerTask)});
  }
  for_each(pool, tasks.size(), [&](std::size_t i) {
    const ReconstructScratch::Task& task = tasks[i];
    const Job* j = &jobs[task.job];
    const int ww = j[0].out_rect.width();
    const bool same_clip = j[1].em.dx == j[0].em.dx && j[1].em.dy == j[0].em.dy && j[2].em.dx == j[0].em.dx &&
                           j[2].em.dy == j[0].em.dy && j[1].em.x1 == j[0].em.x1 && j[2].em.x1 == j[0].em.x1 &&
                           j[1].em.y_hi == j[0].em.y_hi && j[2].em.y_hi == j[0].em.y_hi;
    thread_local std::vector<std::int32_t> tmp;
    for (int y = task.i0; y < task.i1; ++y) {
      ColourRow row;
      for (int c = 0; c < 3; ++c) {
        const IdwtEmit& e = j[c].em;
        row.in[c] = static_cast<const std::byte*>(j[c].a) + (static_cast<std::size_t>(y) * ww + (same_clip ? e.x0 : 0)) * 4;
        row.shift[c] = e.shift;
        row.lo[c] = e.lo;
        row.hi[c] = e.hi;
      }
      if (same_clip) {
        const IdwtEmit& e = j[0].em;
        if (y < e.y_lo || y >= e.y_hi || e.x1 <= e.x0) continue;
        for (int c = 0; c < 3; ++c)
          row.out[c] = j[c].em.dst + static_cast<std::ptrdiff_t>(y + e.dy) * j[c].em.dst_stride + e.x0 + e.dx;
        if (j[0].is_float) k.ict_store(row, e.x1 - e.x0);
        else k.rct_store(row, e.x1 - e.x0);
      } else {  // components placed differently in their planes: whole row, then clip each
        tmp.resize(3 * static_cast<std::size_t>(ww));
        for (int c = 0; c < 3; ++c) row.out[c] = tmp.data() + static_cast<std::size_t>(c) * ww;
        if (j[0].is_float) k.ict_store(row, ww);
        else k.rct_store(row, ww);
        for (int c = 0; c < 3; ++c) {
          const IdwtEmit& e = j[c].em;
          if (y < e.y_lo || y >= e.y_hi || e.x1 <= e.x0) continue;
          std::memcpy(e.dst + static_cast<std::ptrdiff_t>(y + e.dy) * e.dst_stride + e.x0 + e.dx,
                      row.out[c] + e.x0, sizeof(std::int32_t) * static_cast<std::size_t>(e.x1 - e.x0));
        }
      }
    }
  });
  colour_ms += ms_since(t0);
  if (times) {
    times->idwt_ms = idwt_ms;
    times->colour_ms = colour_ms;
    times->idwt_samples = idwt_samples;
    times->transform_skipped_tiles = transform_skipped;
  }
  return {};
}

Result<PlanarImage> reconstruct_frame(const CoefficientFrame& frame, ThreadPool* pool, ReconstructTimes* times,
                                      ReconstructScratch* scratch) {
  PlanarImage img;
  if (Status st = reconstruct_into(frame, pool, times, scratch, img); !st) return st.error();
  return img;
}

}  // namespace own

bool component_transform_applies(const TileCoefficients& tile) {
  if (!tile.mct || tile.components.size() < 3) return false;
  auto size_at_decoded = [](const ComponentCoefficients& cc) {
    const Rect r = own::shift_rect(cc.rect, cc.levels - cc.decoded_levels);
    return std::pair(r.width(), r.height());
  };
  const auto& c0 = tile.components[0];
  for (std::size_t c = 1; c < 3; ++c)
    if (size_at_decoded(tile.components[c]) != size_at_decoded(c0) || tile.components[c].wavelet != c0.wavelet) return false;
  return true;
}

std::uint64_t transform_skipped_tiles(const CoefficientFrame& frame) {
  return static_cast<std::uint64_t>(std::count_if(frame.tiles.begin(), frame.tiles.end(), [](const TileCoefficients& t) {
    return t.mct && t.components.size() >= 3 && !component_transform_applies(t);
  }));
}

Result<PlanarImage> reconstruct(const CoefficientFrame& frame, int threads, ReconstructTimes* times) {
  // The pool is kept per calling thread between calls (CoefficientDecoder::reconstruct
  // also keeps the work buffers and reuses the output).
  thread_local std::unique_ptr<own::ThreadPool> pool;
  threads = std::clamp(threads, 1, 256);
  if (threads > 1 && (!pool || pool->size() != threads)) pool = std::make_unique<own::ThreadPool>(threads);
  return own::reconstruct_frame(frame, threads > 1 ? pool.get() : nullptr, times);
}

}  // namespace j2k::decoder
