// The own backend: codestream → tier-2 → tier-1 (on the pool) → CoefficientFrame →
// reconstruction.
#include "decoder/own_decoder.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <new>
#include <optional>
#include <span>
#include <stdexcept>

#include "codestream/codestream.hpp"
#include "dsp.hpp"
#include "decoder/tier1_batch.hpp"
#include "reconstruct_internal.hpp"
#include "syntax/locate.hpp"
#include "thread_pool.hpp"
#include "tier1/code_block_decoder.hpp"
#include "tier1/tier1_jobs.hpp"
#include "tier2/packet_decoder.hpp"
#include "tier2/tile_structure.hpp"

namespace j2k::decoder {

namespace own {
namespace {

constexpr int kMaxLevels = 32;  ///< NL of COD/COC (A.6.1)

int ceil_shift(long long a, int s) { return static_cast<int>((a + (1LL << s) - 1) >> s); }
int ceil_div(long long a, long long b) { return static_cast<int>((a + b - 1) / b); }

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

/// Bytes per output sample that a decode allocates whatever the data: the coefficient
/// buffer (int32), the inverse transform's two level buffers (reconstruct_internal.hpp: the
/// last level's output, int32, and the level before it, a quarter of that; 2 bytes a
/// sample leave room for odd sizes' rounding) and the output plane (int32).
constexpr long long kBytesPerSample = 4 + 4 + 2 + 4;

/// The frame's limits over all components (SIZ declares the picture in a few bytes: its
/// cost is checked here, before anything is allocated): the samples of all components,
/// and the frame buffers charged to the memory budget.
Status charge_frame(const Siz& siz, int reduce, const DecodeLimits& limits, MemoryBudget& budget) {
  long long samples = 0, kept = 0;
  for (const ComponentSiz& c : siz.components) {
    const long long w = ceil_div(siz.x1, c.dx) - ceil_div(siz.x0, c.dx);
    const long long h = ceil_div(siz.y1, c.dy) - ceil_div(siz.y0, c.dy);
    samples += w * h;
    kept += static_cast<long long>(ceil_shift(ceil_div(siz.x1, c.dx), reduce) - ceil_shift(ceil_div(siz.x0, c.dx), reduce)) *
            (ceil_shift(ceil_div(siz.y1, c.dy), reduce) - ceil_shift(ceil_div(siz.y0, c.dy), reduce));
  }
  if (samples > limits.max_samples)
    return make_error(ErrorKind::limit, fmt::format("{} components of {}x{} ({} samples) exceed the limit of {} samples",
                                                    siz.components.size(), siz.x1 - siz.x0, siz.y1 - siz.y0, samples,
                                                    limits.max_samples));
  const long long bytes = kept * kBytesPerSample;
  if (!budget.charge(bytes))
    return make_error(ErrorKind::limit, fmt::format("decoding {} components of {}x{} needs {} MiB, more than the memory "
                                                    "limit of {} MiB",
                                                    siz.components.size(), siz.x1 - siz.x0, siz.y1 - siz.y0, bytes >> 20,
                                                    limits.max_memory >> 20));
  return {};
}

/// Runs `f` and turns a failed allocation into an error: no exception leaves the decoder
/// (the budget above should refuse first; this is the backstop for what it does not see).
template <typename F>
auto no_throw(F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const std::bad_alloc&) {
    return make_error(ErrorKind::limit, "out of memory while decoding");
  } catch (const std::length_error&) {
    return make_error(ErrorKind::limit, "out of memory while decoding (size beyond the allocator's limit)");
  }
}

/// Decoder state that lives across frames: the pool (its own, or the one shared through
/// DecodeOptions::pool) and each slot's tier-1 scratch.
struct Engine {
  /// The kernel tables (dsp.hpp): all this CPU has, or a test's mask.
  explicit Engine(unsigned cpu_mask = kCpuAll) : t1(make_t1_dsp(cpu_mask)), idwt(make_idwt_dsp(cpu_mask)) {}
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  T1Dsp t1;
  IdwtKernels idwt;
  std::unique_ptr<ThreadPool> own_pool;  ///< made once, when no shared pool is given
  ThreadPool* pool = nullptr;            ///< the pool the current decode runs its loops on
  std::vector<CodeBlockDecoder> scratch;  ///< one per slot of `pool`
  /// The same for decode_tier1_rows beside another loop of this engine (EarlyTier1: the
  /// CPU's share of an early start on a side thread while the decoding thread decodes more).
  std::vector<CodeBlockDecoder> side_scratch;
  ReconstructScratch reconstruct;
  std::vector<TileCoefficients> spare_tiles;  ///< the last frame's buffers, reused
  /// The last frame's job list, emptied, for its capacity: a 2160 frame has ~4 000 jobs
  /// (~0.3 MB), and a fresh vector each frame cost its pages' faults every frame (~20 % of
  /// a GPU tier-1 frame's host part).
  std::vector<CodeBlockJob> spare_jobs;
  /// A tile's parts joined, where tier-2 reads them in one sequence (one thread): kept for
  /// the capacity, like spare_jobs (a fresh megabyte a frame cost its page faults each time).
  std::vector<std::vector<std::uint8_t>> joined;
  /// False where the frames never leave the decoder (OwnDecoder: its reconstruction honours
  /// ComponentCoefficients::zero), so tiles without data get no coefficient buffers.
  bool complete_frames = true;

  /// The shared pool when the options name one, else the decoder's own of `threads`.
  /// Writes nothing when nothing changes: decode_tier1_rows may call it beside a decode
  /// (EarlyTier1) that made the same choice.
  void ensure(const DecodeOptions& options) {
    ThreadPool* want = options.pool;
    if (!want) {
      const int threads = std::clamp(options.threads, 1, 256);
      if (!own_pool || own_pool->size() != threads) own_pool = std::make_unique<ThreadPool>(threads);
      want = own_pool.get();
    }
    if (pool != want) pool = want;
    if (scratch.size() < static_cast<std::size_t>(pool->size()))
      scratch.resize(static_cast<std::size_t>(pool->size()), CodeBlockDecoder(t1));
    if (side_scratch.size() < static_cast<std::size_t>(pool->size()))
      side_scratch.resize(static_cast<std::size_t>(pool->size()), CodeBlockDecoder(t1));
  }
};

/// Appends the coded blocks of `jobs` to `batch` (tier-1 elsewhere), in the jobs' order:
/// the GPU orders its launch by cost itself (gpu/tier1_split.hpp). The bytes are gathered as
/// CodeBlockDecoder gathers them: a segment whose declared length runs past the block's
/// bytes is cut where they end.
///
/// `bodies`, when given, are the views tier-2 read the tiles' packet data through (a tile's
/// parts, or its parts joined), every byte of which the frame uses (no resolution or layer
/// left out), and `body_at` where each lies in `batch.bytes`, copied there whole already (in
/// one copy per tile-part, several times faster than a copy per code-block): a block whose
/// bytes lie in one piece of a body (one contributing packet: a frame of one quality layer)
/// points into that copy; the others' bytes are gathered after it. The rows are appended
/// to what `batch` holds (an early start's rows, EarlyTier1).
Status defer_tier1(const std::vector<CodeBlockJob>& jobs, const CoefficientFrame& frame, Tier1Batch& batch,
                   std::span<const Bytes> bodies, std::span<const std::uint64_t> body_at) {
  std::uint64_t base = 0;
  std::vector<std::uint64_t> bases;
  for (const TileCoefficients& tile : frame.tiles)
    for (const ComponentCoefficients& cc : tile.components) {
      bases.push_back(base);
      base += cc.data.size();
    }
  batch.component_base = bases;
  batch.coefficient_count = base;
  std::uint64_t gathered = 0;  // one allocation at most (pinned memory is slow to get)
  for (const CodeBlockJob& job : jobs)
    if (job.block && (bodies.empty() || job.block->chunks.size() > 1)) gathered += job.bytes;
  if (batch.bytes.size() + gathered > 0xFFFF0000u) return make_error(ErrorKind::limit, "frame too large for the tier-1 table");
  batch.bytes.reserve(batch.bytes.size() + gathered);
  // The body copy that holds `chunk` whole, as its offset in batch.bytes. The jobs come tile
  // by tile, as the bodies do, so the search only moves forward: O(tiles + blocks) even for
  // a codestream of thousands of tiles.
  std::size_t body_hint = 0;
  auto in_body = [&](Bytes chunk) -> std::optional<std::uint64_t> {
    for (std::size_t t = body_hint; t < bodies.size(); ++t) {
      const std::uint8_t* const b = bodies[t].data();
      if (chunk.data() >= b && chunk.data() + chunk.size() <= b + bodies[t].size()) {
        body_hint = t;
        return body_at[t] + static_cast<std::uint64_t>(chunk.data() - b);
      }
    }
    return std::nullopt;  // gathered instead
  };
  for (const CodeBlockJob& job : jobs) {
    if (!job.block) continue;  // a precinct no packet reached: stays zero like an empty block
    const CodeBlock& cb = *job.block;
    const int w = cb.rect.width(), h = cb.rect.height();
    const BlockPlan& plan = job.plan;  // as CodeBlockDecoder decodes it
    batch.rejected_blocks += plan.zeroed == kDamaged;
    if (plan.passes == 0) continue;  // stays zero
    if (plan.segments > 0xFFFF || batch.bytes.size() > 0xFFFF0000u)
      return make_error(ErrorKind::limit, "frame too large for the tier-1 table");
    Tier1Block& b = batch.blocks.emplace_back();  // filled in place (see collect_tier1_jobs)
    b.out = static_cast<std::uint64_t>(job.out - job.frame_data) + job.frame_base;
    b.stride = static_cast<std::uint32_t>(job.stride);
    b.byte_offset = static_cast<std::uint32_t>(batch.bytes.size());
    b.seg_first = static_cast<std::uint32_t>(batch.segments.size());
    b.seg_count = static_cast<std::uint16_t>(plan.segments);
    b.passes = static_cast<std::uint16_t>(plan.passes);
    b.width = static_cast<std::uint16_t>(w);
    b.height = static_cast<std::uint16_t>(h);
    b.numbps = static_cast<std::uint8_t>(plan.numbps);
    b.band = job.orientation == BandOrientation::HH ? 2 : job.orientation == BandOrientation::HL ? 1 : 0;
    b.style = static_cast<std::uint8_t>(job.cb_style & 0x3F);
    // H.1 scales back magnitudes of at least 2^s; those of a block are below 2^30 (numbps
    // <= 30), so a shift of 30 or more (A.6.3 allows 37) scales nothing: the table says 0.
    b.roi_shift = static_cast<std::uint8_t>(job.roi_shift < 30 ? job.roi_shift : 0);
    // The segments follow each other through the block's chunks; one whose declared length
    // runs past them is cut where they end. The block's bytes are then the chunks' first
    // `taken`: in a tile's copy already when they are one chunk, else gathered here.
    std::uint64_t held = 0, taken = 0;
    for (const Bytes ch : cb.chunks) held += ch.size();
    for (int s = 0; s < plan.segments; ++s) {
      const Segment& seg = cb.segments[static_cast<std::size_t>(s)];
      const std::uint64_t got = std::min<std::uint64_t>(seg.length, held - taken);
      taken += got;
      batch.segments.push_back({static_cast<std::uint32_t>(got), seg.passes});
    }
    if (cb.chunks.size() == 1)
      if (const auto at = in_body(cb.chunks[0])) {
        b.byte_offset = static_cast<std::uint32_t>(*at);
        continue;
      }
    for (const Bytes ch : cb.chunks) {
      const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(taken, ch.size()));
      if (n == 0) break;
      batch.bytes.insert(batch.bytes.end(), ch.begin(), ch.begin() + static_cast<std::ptrdiff_t>(n));
      taken -= n;
    }
  }
  return {};
}

Result<CoefficientFrame> run_to_coefficients(Engine& engine, Bytes input, const DecodeOptions& options,
                                             const DecodeLimits& limits, DecodeStats& stats,
                                             Tier1Batch* defer = nullptr, EarlyTier1* early = nullptr) {
  if (early) {
    early->rows = 0;
    early->kept = false;
  }
  auto t0 = std::chrono::steady_clock::now();
  auto located = syntax::locate_codestream(input);
  if (!located) return located.error();
  auto parsed = parse_codestream(*located, limits, options.strict);
  if (!parsed) return parsed.error();
  Codestream& cs = *parsed;
  if (options.strict && cs.truncated) return make_error(ErrorKind::corrupt, "codestream is truncated");

  CoefficientFrame frame;
  if (const auto stated = syntax::jp2_colour(input)) {
    frame.stated_colour = stated->coding;
    frame.stated_full_range = stated->full_range;
  }
  const Siz& siz = cs.siz;
  const int reduce = std::max(0, options.reduce);
  // 15444-1 allows 32 decomposition levels; more to discard is past every component's
  // (said before the sizes below shift by it).
  if (reduce > kMaxLevels)
    return make_error(ErrorKind::unsupported,
                      fmt::format("reduce {} is more than the {} decomposition levels a codestream can have", reduce,
                                  kMaxLevels));
  MemoryBudget budget(limits.max_memory);
  if (Status st = charge_frame(siz, reduce, limits, budget); !st) return st.error();
  frame.image = {static_cast<int>(siz.x0), static_cast<int>(siz.y0), static_cast<int>(siz.x1), static_cast<int>(siz.y1)};
  frame.reduce = reduce;
  for (const ComponentSiz& c : siz.components) {
    ComponentInfo ci;
    ci.precision = c.precision;
    ci.is_signed = c.is_signed;
    ci.dx = c.dx;
    ci.dy = c.dy;
    ci.rect = {ceil_shift(ceil_div(siz.x0, c.dx), reduce), ceil_shift(ceil_div(siz.y0, c.dy), reduce),
               ceil_shift(ceil_div(siz.x1, c.dx), reduce), ceil_shift(ceil_div(siz.y1, c.dy), reduce)};
    frame.components.push_back(ci);
    // A reduction can leave a small image (with an odd offset) no samples at all: said here,
    // not as a picture nobody can write out.
    if (reduce > 0 && (ci.rect.x1 <= ci.rect.x0 || ci.rect.y1 <= ci.rect.y0))
      return make_error(ErrorKind::unsupported,
                        fmt::format("reduce {} leaves component {} of this {}x{} image no samples: ask for less",
                                    reduce, frame.components.size() - 1, siz.x1 - siz.x0, siz.y1 - siz.y0));
  }

  const std::size_t ntiles = cs.tiles.size();
  std::vector<Tile> tiles(ntiles);
  frame.tiles = std::move(engine.spare_tiles);
  frame.tiles.resize(ntiles);
  std::vector<std::vector<std::uint8_t>>& joined = engine.joined;  // tiles split over several tile-parts
  if (joined.size() < ntiles) joined.resize(ntiles);
  std::vector<CodeBlockJob> jobs = std::move(engine.spare_jobs);
  jobs.clear();
  struct KeepJobs {  // back to the engine however this returns (its entries name this frame's tiles: cleared)
    Engine& engine;
    std::vector<CodeBlockJob>& jobs;
    ~KeepJobs() {
      jobs.clear();
      engine.spare_jobs = std::move(jobs);
    }
  } keep_jobs{engine, jobs};
  // Tier-1 elsewhere (the GPU) with every byte of the tiles' data used (no resolution or
  // layer left out): the tile-parts are copied whole into the table's bytes, in order, on a
  // second thread while tier-2 reads them; defer_tier1 points the code-blocks into the copy.
  const bool whole = defer && reduce == 0 && options.max_layers <= 0;
  // Tier-1 may start before tier-2 ends (EarlyTier1) in a frame of one tile read part by part.
  const bool try_early = whole && early && early->start && ntiles == 1;
  std::vector<std::uint64_t> tile_at(ntiles, 0);  // where each tile's parts start in the copy
  if (defer) defer->clear();
  if (whole) {
    std::uint64_t total = 0;
    for (std::size_t t = 0; t < ntiles; ++t) {
      tile_at[t] = total;
      for (const TilePart& p : cs.tiles[t].parts) total += p.body.size();
    }
    if (total > 0xFFFF0000u) return make_error(ErrorKind::limit, "frame too large for the tier-1 table");
    // Started early, the bytes must not move until the frame is done: room for the copy and
    // for what two readings of the tile (the second after a failed guess) can gather, each at
    // most the tile's bytes again (a code-block's chunks are disjoint pieces of them).
    defer->bytes.reserve(try_early ? 3 * total : total);
  }
  // The copy of the tile-parts (whole): on a second thread beside tier-2, or by whichever of
  // that thread and an early start gets to it first (the pool may run both on one thread).
  std::atomic<int> copy_state{0};  // 0: not started, 1: copying, 2: done
  auto copy_parts = [&] {
    int expected = 0;
    if (!copy_state.compare_exchange_strong(expected, 1)) return;
    for (const TileHeader& th : cs.tiles)
      for (const TilePart& p : th.parts) defer->bytes.insert(defer->bytes.end(), p.body.begin(), p.body.end());
    copy_state.store(2, std::memory_order_release);
    copy_state.notify_all();
  };
  auto copied = [&] {
    copy_parts();
    for (int s = copy_state.load(std::memory_order_acquire); s != 2; s = copy_state.load(std::memory_order_acquire))
      copy_state.wait(s);
  };
  Status early_error;
  bool early_tabled = false;  // the early resolutions' rows are in the table (EarlyTier1)
  std::vector<CodeBlockJob> early_jobs;
  std::uint64_t early_too_deep = 0;  // the early rows' code-blocks past 30 bit-planes
  CollectCarry carry;  // what the early collection found, for the last resolutions' to add
  std::vector<Bytes> bodies;          // the views tier-2 read the tiles' data through,
  std::vector<std::uint64_t> body_at;  // and where each starts in the copy
  Tier2Counters counters;
  Tier2Options t2opt{options.max_layers, options.strict};
  // One work budget for the packet walks of all tiles, from the codestream's bytes.
  Tier2Budget steps = Tier2Budget::for_bytes(located->size());
  engine.ensure(options);
  std::uint64_t parallel_tiles = 0;
  auto read_tiles = [&]() -> Status {
    for (std::size_t t = 0; t < ntiles; ++t) {
      TileHeader& th = cs.tiles[t];
      if (options.strict && th.parts.empty()) return make_error(ErrorKind::corrupt, fmt::format("tile {} is missing", t));
      auto params = resolve_tile_params(cs, static_cast<int>(t));
      if (!params) return params.error();
      const TileData data = !th.parts.empty()        ? TileData::coded
                            : engine.complete_frames ? TileData::empty
                                                     : TileData::empty_no_buffers;
      if (Status st = build_tile(cs, static_cast<int>(t), std::move(*params), reduce, tiles[t], frame.tiles[t], budget, data);
          !st)
        return st;
      if (th.parts.empty()) continue;
      bool packed = cs.has_ppm || th.has_ppt;
      if (th.parts.size() > 1 && !packed && !th.truncated && engine.pool->size() > 1) {
        // Tile-parts that hold whole components are read at once, one per thread.
        std::vector<Bytes> parts;
        for (const TilePart& p : th.parts) parts.push_back(p.body);
        // Tier-1 of every resolution but the last starts while the last ones are read.
        std::function<void()> between;
        if (try_early)
          between = [&] {
            copied();
            std::vector<std::uint64_t> at(parts.size(), tile_at[t]);
            for (std::size_t k = 1; k < parts.size(); ++k) at[k] = at[k - 1] + parts[k - 1].size();
            early_too_deep = collect_tier1_jobs(tiles, frame, early_jobs, CollectPart::early_resolutions, &carry).too_deep_blocks;
            early_error = defer_tier1(early_jobs, frame, *defer, parts, at);
            if (!early_error.ok()) return;
            early_tabled = true;
            if (defer->blocks.empty()) return;  // nothing to start on (rows = 0: not called)
            early->rows = defer->blocks.size();
            early->start(*defer);
          };
        if (decode_tile_parts_parallel(tiles[t], parts, t2opt, counters, budget, steps, *engine.pool, between)) {
          std::uint64_t at = tile_at[t];
          for (const Bytes part : parts) {
            bodies.push_back(part);
            body_at.push_back(at);
            at += part.size();
          }
          ++parallel_tiles;
          continue;
        }
      }
      Bytes body = th.parts[0].body;
      if (th.parts.size() > 1) {
        joined[t].clear();
        for (const TilePart& p : th.parts) joined[t].insert(joined[t].end(), p.body.begin(), p.body.end());
        body = joined[t];
      }
      bodies.push_back(body);  // the parts joined: as they lie in the copy
      body_at.push_back(tile_at[t]);
      std::vector<std::uint8_t> headers;
      if (cs.has_ppm) headers = th.ppm_headers;
      else
        for (auto& [z, bytes] : th.ppt) headers.insert(headers.end(), bytes.begin(), bytes.end());
      if (Status st = decode_tile_packets(tiles[t], body, headers, packed, t2opt, counters, budget, steps); !st)
        return st;
      if (th.truncated) ++counters.damaged_packets;
    }
    return {};
  };
  Status read;
  engine.pool->parallel_for(whole ? 2 : 1, [&](std::size_t i, int) {
    if (i == 0) read = read_tiles();
    else copy_parts();
  });
  if (!read) return read.error();
  if (!early_error.ok()) return early_error.error();
  if (early_tabled) {
    early->kept = early->rows > 0 && parallel_tiles == 1;
    if (!early->kept) {
      // Nothing was started, or the tile was read again in one sequence (fresh code-blocks):
      // a fresh table, collected whole. The bytes gathered for the early rows stay where they
      // are (they may still be read from there).
      defer->blocks.clear();
      defer->segments.clear();
      defer->rejected_blocks = 0;
    }
  }
  // Collect the tier-1 work: code-blocks of the resolutions we keep (after an early start
  // that the table kept, those of the last resolutions; the others are in it already).
  const bool early_kept = early_tabled && early->kept;
  const Tier1Work work =
      collect_tier1_jobs(tiles, frame, jobs, early_kept ? CollectPart::last_resolutions : CollectPart::all, &carry);
  stats.tier2_ms = ms_since(t0);
  stats.damaged_packets = counters.damaged_packets;
  stats.truncated = cs.truncated;
  stats.tiles = cs.tiles.size();
  stats.tiles_missing = static_cast<std::uint64_t>(
      std::count_if(cs.tiles.begin(), cs.tiles.end(), [](const TileHeader& th) { return th.parts.empty(); }));
  stats.damaged_tile_parts = cs.damaged_tile_parts;
  stats.bytes_after_packets = counters.bytes_after_packets;
  stats.tier2_steps = static_cast<std::uint64_t>(steps.used());
  stats.memory_bytes = static_cast<std::uint64_t>(budget.used());
  stats.codeblocks = work.coded_blocks;
  stats.too_deep_codeblocks = work.too_deep_blocks + (early_kept ? early_too_deep : 0);
  if (options.strict && stats.too_deep_codeblocks > 0)
    return make_error(ErrorKind::unsupported,
                      fmt::format("{} code-blocks have more than 30 magnitude bit-planes (a large ROI shift): not supported",
                                  stats.too_deep_codeblocks));
  stats.coding_passes = work.coding_passes;
  stats.constant_components = work.constant_components;
  stats.zero_fills = work.zero_fills;
  stats.parallel_tiles = parallel_tiles;

  if (defer) {  // tier-1 runs elsewhere (the GPU): hand over the tables, leave the data unwritten
    if (Status st = whole ? defer_tier1(jobs, frame, *defer, bodies, body_at) : defer_tier1(jobs, frame, *defer, {}, {});
        !st)
      return st.error();
    frame.damaged_codeblocks = defer->rejected_blocks + work.dropped_damaged_blocks;
    stats.damaged_codeblocks = frame.damaged_codeblocks;
    if (options.strict && frame.damaged_codeblocks > 0)
      return make_error(ErrorKind::corrupt, fmt::format("{} damaged code-blocks", frame.damaged_codeblocks));
    return frame;
  }

  // Tier-1, biggest code-blocks first so no thread is left with a large one at the end.
  t0 = std::chrono::steady_clock::now();
  std::stable_sort(jobs.begin(), jobs.end(), [](const CodeBlockJob& a, const CodeBlockJob& b) { return a.bytes > b.bytes; });
  engine.ensure(options);
  std::atomic<std::uint64_t> damaged{work.dropped_damaged_blocks};
  // The coefficient buffers are recycled without clearing (build_tile), so every job
  // writes its area: tier-1 writes a code-block whole (zeros where nothing is decoded), a
  // zeroing job covers what no packet reached.
  engine.pool->parallel_for(jobs.size(), [&](std::size_t i, int slot) {
    const CodeBlockJob& job = jobs[i];
    if (job.block) {
      if (!engine.scratch[static_cast<std::size_t>(slot)].decode(job)) damaged.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    const int w = job.zero_rect.width(), h = job.zero_rect.height();
    for (int y = 0; y < h && w > 0; ++y)
      std::memset(job.out + static_cast<std::ptrdiff_t>(y) * job.stride, 0, sizeof(std::int32_t) * static_cast<std::size_t>(w));
  });
  stats.tier1_ms = ms_since(t0);
  frame.damaged_codeblocks = damaged.load();
  stats.damaged_codeblocks = frame.damaged_codeblocks;
  if (options.strict && frame.damaged_codeblocks > 0)
    return make_error(ErrorKind::corrupt, fmt::format("{} damaged code-blocks", frame.damaged_codeblocks));
  return frame;
}

class OwnDecoder final : public Decoder {
 public:
  explicit OwnDecoder(const DecodeLimits& limits, unsigned cpu_mask = kCpuAll) : limits_(limits), engine_(cpu_mask) {
    engine_.complete_frames = false;
  }
  Backend backend() const noexcept override { return Backend::own; }

  Result<PlanarImage> decode(Bytes codestream, const DecodeOptions& options) override {
    PlanarImage image;
    if (Status st = decode_into(codestream, options, image); !st) return st.error();
    return image;
  }
  Status decode_into(Bytes codestream, const DecodeOptions& options, PlanarImage& out) override {
    stats_ = {};
    return no_throw([&]() -> Status {
      auto frame = run_to_coefficients(engine_, codestream, options, limits_, stats_);
      if (!frame) return frame.error();
      ReconstructTimes times;
      engine_.ensure(options);
      Status st = reconstruct_into(*frame, engine_.pool, &times, &engine_.reconstruct, out, &engine_.idwt);
      engine_.spare_tiles = std::move(frame->tiles);
      stats_.idwt_ms = times.idwt_ms;
      stats_.colour_ms = times.colour_ms;
      stats_.idwt_samples = times.idwt_samples;
      stats_.transform_skipped_tiles = times.transform_skipped_tiles;
      return st;
    });
  }
  DecodeStats last_stats() const override { return stats_; }

 private:
  DecodeLimits limits_;
  Engine engine_;
  DecodeStats stats_;
};

}  // namespace
}  // namespace own

Result<CoefficientFrame> decode_coefficients(Bytes codestream, const DecodeOptions& options, const DecodeLimits& limits,
                                             DecodeStats* stats) {
  // The pool and the tier-1 scratch are kept per calling thread, so a caller decoding frame
  // after frame does not start and stop its threads each time (CoefficientDecoder also keeps
  // the frames' buffers).
  thread_local own::Engine engine;
  DecodeStats local;
  return own::no_throw([&] { return own::run_to_coefficients(engine, codestream, options, limits, stats ? *stats : local); });
}

struct CoefficientDecoder::Impl {
  DecodeLimits limits;
  own::Engine engine;
  int threads = 1;
  WorkPool* pool = nullptr;  ///< the last decode's shared pool, for reconstruct()
};

CoefficientDecoder::CoefficientDecoder(const DecodeLimits& limits) : impl_(std::make_unique<Impl>()) {
  impl_->limits = limits;
}
CoefficientDecoder::~CoefficientDecoder() = default;
CoefficientDecoder::CoefficientDecoder(CoefficientDecoder&&) noexcept = default;
CoefficientDecoder& CoefficientDecoder::operator=(CoefficientDecoder&&) noexcept = default;

Result<CoefficientFrame> CoefficientDecoder::decode(Bytes codestream, const DecodeOptions& options, DecodeStats* stats) {
  DecodeStats local;
  impl_->threads = std::clamp(options.threads, 1, 256);
  impl_->pool = options.pool;
  return own::no_throw(
      [&] { return own::run_to_coefficients(impl_->engine, codestream, options, impl_->limits, stats ? *stats : local); });
}

void CoefficientDecoder::recycle(CoefficientFrame&& frame) {
  if (frame.tiles.size() >= impl_->engine.spare_tiles.size()) impl_->engine.spare_tiles = std::move(frame.tiles);
  frame = {};
}

Status CoefficientDecoder::reconstruct(const CoefficientFrame& frame, PlanarImage& out, ReconstructTimes* times) {
  return own::no_throw([&]() -> Status {
    DecodeOptions options;
    options.threads = impl_->threads;
    options.pool = impl_->pool;
    impl_->engine.ensure(options);
    return own::reconstruct_into(frame, impl_->engine.pool, times, &impl_->engine.reconstruct, out,
                                 &impl_->engine.idwt);
  });
}

Result<CoefficientFrame> CoefficientDecoder::decode_deferred(Bytes codestream, const DecodeOptions& options,
                                                            Tier1Batch& batch, DecodeStats* stats, EarlyTier1* early) {
  DecodeStats local;
  impl_->threads = std::clamp(options.threads, 1, 256);
  impl_->pool = options.pool;
  return own::no_throw([&] {
    return own::run_to_coefficients(impl_->engine, codestream, options, impl_->limits, stats ? *stats : local, &batch,
                                    early);
  });
}

Result<std::uint64_t> CoefficientDecoder::decode_tier1_rows(const Tier1Batch& batch, std::span<const std::uint32_t> rows,
                                                            std::int32_t* packed, bool beside) {
  return own::no_throw([&]() -> Result<std::uint64_t> {
    DecodeOptions options;
    options.threads = impl_->threads;
    options.pool = impl_->pool;
    own::Engine& engine = impl_->engine;
    engine.ensure(options);
    std::vector<std::uint64_t> offsets;
    tier1_packed_offsets(batch, rows, offsets);
    std::vector<own::CodeBlock> scratch(static_cast<std::size_t>(engine.pool->size()));
    std::vector<own::CodeBlockDecoder>& decoders = beside ? engine.side_scratch : engine.scratch;
    std::atomic<std::uint64_t> damaged{0};
    engine.pool->parallel_for(rows.size(), [&](std::size_t j, int slot) {
      const Tier1Block& b = batch.blocks[rows[j]];
      const auto k = static_cast<std::size_t>(slot);
      if (!own::decode_tier1_row(decoders[k], scratch[k], batch, b, packed + offsets[j], b.width))
        damaged.fetch_add(1, std::memory_order_relaxed);
    });
    return damaged.load();
  });
}

int CoefficientDecoder::threads() const noexcept { return impl_->threads; }

std::unique_ptr<Decoder> make_own_decoder(const DecodeLimits& limits) {
  return std::make_unique<own::OwnDecoder>(limits);
}

std::unique_ptr<Decoder> own::make_own_decoder_for_cpu(unsigned mask, const DecodeLimits& limits) {
  return std::make_unique<own::OwnDecoder>(limits, mask);
}

}  // namespace j2k::decoder
