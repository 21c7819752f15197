// Every SIMD kernel beside its portable twin, on the same random inputs, results compared
// exactly (after dav1d's checkasm). For each CPU-feature flag this CPU has, the tables of
// dsp.hpp are built with that flag and with none; each entry that differs is called on
// both. Inputs are random but deterministic (one seed per kernel), including shapes at
// the edges (1-sample rows and columns, odd origins, cut stripes) and garbage code-block
// bytes, which both tier-1 kernels must decode to the same (garbage) coefficients.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "dsp.hpp"
#include "tier1/code_block_decoder.hpp"
#include "tier2/tile_structure.hpp"

namespace j2k::decoder::own {
namespace {

/// The flags to check: each one this CPU has (the portable table is the reference).
std::vector<CpuFlagName> flags_to_check() {
  std::vector<CpuFlagName> out;
  for (const CpuFlagName& f : kCpuFlagNames)
    if (cpu_flags() & f.flag) out.push_back(f);
  return out;
}

template <typename T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

// ---- tier-1 ---------------------------------------------------------------------------

/// Passes per codeword segment for a code-block style (D.6, Table D.9), as tier-2 makes them.
std::vector<Segment> segments_for(int style, int passes, std::uint32_t bytes, std::mt19937& rng) {
  std::vector<Segment> segs;
  for (int done = 0; done < passes;) {
    int cap = passes;
    if (style & kTermAll) cap = 1;
    else if (style & kBypass) cap = done < 10 ? 10 - done : ((done - 10) % 3 == 0 ? 2 : 1);
    const int take = std::min(cap, passes - done);
    segs.push_back({0, static_cast<std::uint16_t>(take), static_cast<std::uint16_t>(cap)});
    done += take;
  }
  // Split the bytes over the segments at random points.
  std::uint32_t left = bytes;
  for (std::size_t i = 0; i < segs.size(); ++i) {
    const std::uint32_t len = i + 1 == segs.size() ? left : (left ? static_cast<std::uint32_t>(rng() % (left + 1)) : 0);
    segs[i].length = len;
    left -= len;
  }
  return segs;
}

TEST(DspCheck, Tier1RunPassesMatchesPortable) {
  const auto flags = flags_to_check();
  if (flags.empty()) GTEST_SKIP() << "no SIMD kernel set on this CPU/build";
  const T1Dsp portable = make_t1_dsp(0);
  const int styles[] = {0, kBypass, kReset, kTermAll, kVerticalCausal, kSegmentation,
                        kBypass | kReset | kTermAll | kVerticalCausal | kSegmentation};
  const int sizes[][2] = {{64, 64}, {1, 1}, {1, 37}, {37, 1}, {5, 7}, {32, 32}, {17, 63}, {1024, 4}, {4, 1024}, {61, 3}};
  for (const CpuFlagName& f : flags) {
    const T1Dsp simd = make_t1_dsp(f.flag);
    ASSERT_NE(simd.run_passes, portable.run_passes) << f.name << ": no SIMD tier-1 kernel";
    CodeBlockDecoder a(portable), b(simd);
    std::mt19937 rng(7);
    int compared = 0;
    for (int iter = 0; iter < 600; ++iter) {
      const auto& sz = sizes[iter % std::size(sizes)];
      const int w = sz[0], h = sz[1];
      const int style = styles[rng() % std::size(styles)];
      const int numbps = 1 + static_cast<int>(rng() % 16);
      const int passes = 1 + static_cast<int>(rng() % (3 * numbps - 2));
      std::vector<std::uint8_t> bytes(rng() % 600);
      for (auto& v : bytes) v = static_cast<std::uint8_t>(rng() % 8 ? rng() : 0xFF);  // some 0xFF runs
      CodeBlock cb;
      cb.rect = {0, 0, w, h};
      cb.passes = passes;
      const std::vector<Segment> segments = segments_for(style, passes, static_cast<std::uint32_t>(bytes.size()), rng);
      cb.segments.assign(segments.begin(), segments.end());
      if (!bytes.empty()) cb.chunks.push_back(Bytes(bytes.data(), bytes.size()));
      CodeBlockJob job;
      job.block = &cb;
      job.orientation = static_cast<BandOrientation>(rng() % 4);
      job.magnitude_bits = numbps;
      job.roi_shift = rng() % 5 == 0 ? static_cast<int>(rng() % 4) : 0;
      job.magnitude_bits += job.roi_shift;
      job.cb_style = style;
      job.stride = w + 3;
      std::vector<std::int32_t> out_a(static_cast<std::size_t>(job.stride) * h, 0x5A5A5A5A), out_b = out_a;
      job.out = out_a.data();
      const bool ok_a = a.decode(job);
      job.out = out_b.data();
      const bool ok_b = b.decode(job);
      ASSERT_EQ(ok_a, ok_b) << f.name << " iteration " << iter;
      ASSERT_TRUE(same_bits(out_a, out_b)) << f.name << " iteration " << iter << ": " << w << "x" << h << " style "
                                           << style << " numbps " << numbps << " passes " << passes;
      ++compared;
    }
    EXPECT_EQ(compared, 600);
  }
}

// ---- reconstruction --------------------------------------------------------------------

struct Bands {
  int w, h, sx, sy, nlx, nly;
  std::vector<std::int32_t> ll, hl, lh, hh;
  IdwtLevel level(float scale) const {
    const int nhx = w - nlx;
    auto src = [&](const std::vector<std::int32_t>& v, int stride) {
      return IdwtSource{v.data(), stride, scale, true};
    };
    return IdwtLevel{src(ll, nlx), src(hl, nhx), src(lh, nlx), src(hh, nhx), w, h, sx, sy};
  }
};

Bands random_bands(std::mt19937& rng, int max_side, int range) {
  Bands b;
  b.w = 1 + static_cast<int>(rng() % max_side);
  b.h = 1 + static_cast<int>(rng() % max_side);
  b.sx = static_cast<int>(rng() & 1);
  b.sy = static_cast<int>(rng() & 1);
  b.nlx = (b.w + 1 - b.sx) / 2;
  b.nly = (b.h + 1 - b.sy) / 2;
  const int nhx = b.w - b.nlx, nhy = b.h - b.nly;
  auto fill = [&](std::vector<std::int32_t>& v, std::size_t n) {
    v.resize(std::max<std::size_t>(n, 1));
    for (auto& x : v) x = static_cast<std::int32_t>(rng() % (2 * range + 1)) - range;
  };
  fill(b.ll, static_cast<std::size_t>(b.nlx) * b.nly);
  fill(b.hl, static_cast<std::size_t>(nhx) * b.nly);
  fill(b.lh, static_cast<std::size_t>(b.nlx) * nhy);
  fill(b.hh, static_cast<std::size_t>(nhx) * nhy);
  return b;
}

IdwtEmit emit_into(std::vector<std::int32_t>& dst, int w, int h) {
  dst.assign(static_cast<std::size_t>(w) * h, 0x1234);
  IdwtEmit e;
  e.dst = dst.data();
  e.dst_stride = w;
  e.x0 = 0;
  e.x1 = w;
  e.y_lo = 0;
  e.y_hi = h;
  e.shift = 128;
  e.lo = 0;
  e.hi = 255;
  return e;
}

/// One synthesis level through `k`: rows [y0, y1) into out (w x h) and the emitted picture.
template <typename T, typename Fn>
void run_level(Fn fn, const Bands& b, float scale, int y0, int y1, bool emit, std::vector<T>& out,
               std::vector<std::int32_t>& emitted) {
  out.assign(static_cast<std::size_t>(b.w) * b.h, T{});
  std::vector<T> scratch(2 * (static_cast<std::size_t>(b.w) + 8) + 8 * (static_cast<std::size_t>(b.w) + 16));
  IdwtEmit e = emit_into(emitted, b.w, b.h);
  fn(b.level(scale), emit ? nullptr : out.data(), b.w, y0, y1, scratch.data(), emit ? &e : nullptr);
}

TEST(DspCheck, ReconstructionKernelsMatchPortable) {
  const auto flags = flags_to_check();
  if (flags.empty()) GTEST_SKIP() << "no SIMD kernel set on this CPU/build";
  const IdwtKernels p = make_idwt_dsp(0);
  for (const CpuFlagName& f : flags) {
    const IdwtKernels s = make_idwt_dsp(f.flag);
    std::mt19937 rng(11);
    for (int iter = 0; iter < 300; ++iter) {
      const Bands b = random_bands(rng, iter < 100 ? 9 : 150, 4000);
      const float scale = 0.01f + static_cast<float>(rng() % 1000) / 997.0f;
      const int y0 = static_cast<int>(rng() % b.h), y1 = y0 + 1 + static_cast<int>(rng() % (b.h - y0));
      const std::string where = std::string(f.name) + " iteration " + std::to_string(iter) + " " +
                                std::to_string(b.w) + "x" + std::to_string(b.h) + " rows " + std::to_string(y0) + ".." +
                                std::to_string(y1);
      for (bool emit : {false, true}) {
        std::vector<float> fa, fb;
        std::vector<std::int32_t> ea, eb, ia, ib;
        run_level(p.band97, b, scale, y0, y1, emit, fa, ea);
        run_level(s.band97, b, scale, y0, y1, emit, fb, eb);
        ASSERT_TRUE(same_bits(fa, fb) && same_bits(ea, eb)) << "band97 " << where << (emit ? " emit" : "");
        run_level(p.band53, b, 1.0f, y0, y1, emit, ia, ea);
        run_level(s.band53, b, 1.0f, y0, y1, emit, ib, eb);
        ASSERT_TRUE(same_bits(ia, ib) && same_bits(ea, eb)) << "band53 " << where << (emit ? " emit" : "");

        // No synthesis: dequantise (and emit) the rows of one band.
        const IdwtSource src{b.ll.data(), b.nlx, scale, true};
        std::vector<float> ca(b.ll.size()), cb(b.ll.size());
        std::vector<std::int32_t> da(b.ll.size()), db(b.ll.size());
        IdwtEmit e1 = emit_into(ea, b.nlx, b.nly), e2 = emit_into(eb, b.nlx, b.nly);
        const int r1 = std::min(y1, b.nly);
        p.copy97(src, b.nlx, 0, r1, ca.data(), b.nlx, emit ? &e1 : nullptr);
        s.copy97(src, b.nlx, 0, r1, cb.data(), b.nlx, emit ? &e2 : nullptr);
        ASSERT_TRUE(same_bits(ca, cb) && same_bits(ea, eb)) << "copy97 " << where;
        e1 = emit_into(ea, b.nlx, b.nly);
        e2 = emit_into(eb, b.nlx, b.nly);
        p.copy53(src, b.nlx, 0, r1, da.data(), b.nlx, emit ? &e1 : nullptr);
        s.copy53(src, b.nlx, 0, r1, db.data(), b.nlx, emit ? &e2 : nullptr);
        ASSERT_TRUE(same_bits(da, db) && same_bits(ea, eb)) << "copy53 " << where;
      }
    }
    // Inverse ICT / RCT + DC shift + clamp + store, rows of any length.
    for (int iter = 0; iter < 200; ++iter) {
      const int n = 1 + static_cast<int>(rng() % 300);
      std::vector<float> fin[3];
      std::vector<std::int32_t> iin[3], oa[3], ob[3];
      for (int c = 0; c < 3; ++c) {
        fin[c].resize(static_cast<std::size_t>(n));
        iin[c].resize(static_cast<std::size_t>(n));
        for (int i = 0; i < n; ++i) {
          fin[c][static_cast<std::size_t>(i)] = static_cast<float>(static_cast<int>(rng() % 4001) - 2000) * 0.37f;
          iin[c][static_cast<std::size_t>(i)] = static_cast<std::int32_t>(rng() % 4001) - 2000;
        }
      }
      for (bool ict : {true, false}) {
        ColourRow ra, rb;
        for (int c = 0; c < 3; ++c) {
          oa[c].assign(static_cast<std::size_t>(n), 7);
          ob[c].assign(static_cast<std::size_t>(n), 7);
          ra.in[c] = rb.in[c] = ict ? static_cast<const void*>(fin[c].data()) : static_cast<const void*>(iin[c].data());
          ra.out[c] = oa[c].data();
          rb.out[c] = ob[c].data();
          ra.shift[c] = rb.shift[c] = c == 0 ? 512 : 0;
          ra.lo[c] = rb.lo[c] = c == 0 ? 0 : -512;
          ra.hi[c] = rb.hi[c] = c == 0 ? 1023 : 511;
        }
        (ict ? p.ict_store : p.rct_store)(ra, n);
        (ict ? s.ict_store : s.rct_store)(rb, n);
        for (int c = 0; c < 3; ++c)
          ASSERT_TRUE(same_bits(oa[c], ob[c])) << f.name << (ict ? " ict_store" : " rct_store") << " n " << n;
      }
    }
  }
}

}  // namespace
}  // namespace j2k::decoder::own
