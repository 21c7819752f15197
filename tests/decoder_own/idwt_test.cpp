// The fast inverse DWT (halves lifted separately, column strips) against the plain
// one-line reference twins, on odd sizes and odd origins (15444-1 F.3.7 edge cases).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <utility>
#include <vector>

#include "dsp.hpp"
#include "transform/idwt.hpp"

using namespace j2k::decoder;

namespace {

struct Geometry {
  int x0, y0, w, h;
  Rect rect() const { return {x0, y0, x0 + w, y0 + h}; }
  /// Random coefficients for the region: integers in ±`range`, times `scale` (1 for 5/3).
  template <typename T>
  std::vector<T> random(std::mt19937& rng, int range = 1000, float scale = 1.0f) const {
    std::vector<T> buf(static_cast<std::size_t>(w) * h);
    for (auto& v : buf) v = static_cast<T>(static_cast<float>(static_cast<int>(rng() % (2 * range + 1)) - range) * scale);
    return buf;
  }
};
const Geometry kGeometries[] = {{0, 0, 64, 64}, {1, 0, 1, 1}, {0, 1, 2, 1}, {3, 5, 17, 9},  {2, 7, 131, 3},
                                {5, 2, 1, 33},  {0, 0, 2, 2}, {7, 7, 65, 67}, {1, 1, 200, 150}};

/// One row at a time, and rows then column strips of several widths.
const std::pair<own::IdwtSchedule, int> kSchedules[] = {{own::IdwtSchedule::fused, 0}, {own::IdwtSchedule::split, 64},
                                                        {own::IdwtSchedule::split, 8}, {own::IdwtSchedule::split, 3},
                                                        {own::IdwtSchedule::split, 1}};

/// Reference: F.3.2 2D_SR as HOR_SR on rows then VER_SR on columns, through the line twins.
template <typename T, typename Line>
std::vector<T> reference(std::vector<T> buf, const Geometry& g, Line line) {
  const int w = g.w, h = g.h;
  const Rect r = g.rect();
  const int low_w = (r.x1 + 1) / 2 - (r.x0 + 1) / 2, low_h = (r.y1 + 1) / 2 - (r.y0 + 1) / 2;
  const int sx = r.x0 & 1, sy = r.y0 & 1;
  std::vector<T> x(static_cast<std::size_t>(std::max(w, h)));
  for (int y = 0; y < h; ++y) {
    for (int k = 0; k < w; ++k) {  // interleave: low-pass at even absolute coordinates
      bool low = ((k & 1) == sx);
      int src = low ? (k - sx) / 2 : low_w + (k - (1 - sx)) / 2;
      x[k] = buf[static_cast<std::size_t>(y) * w + src];
    }
    line(x.data(), w, r.x0);
    for (int k = 0; k < w; ++k) buf[static_cast<std::size_t>(y) * w + k] = x[k];
  }
  for (int c = 0; c < w; ++c) {
    for (int k = 0; k < h; ++k) {
      bool low = ((k & 1) == sy);
      int src = low ? (k - sy) / 2 : low_h + (k - (1 - sy)) / 2;
      x[k] = buf[static_cast<std::size_t>(src) * w + c];
    }
    line(x.data(), h, r.y0);
    for (int k = 0; k < h; ++k) buf[static_cast<std::size_t>(k) * w + c] = x[k];
  }
  return buf;
}

// Both schedules (one row at a time; rows then column strips of several widths) must give
// the reference's results: exactly for 5/3, and for 9/7 the same floats bit for bit (the
// kernels perform each sample's operations in the reference's order).
TEST(Idwt, FiveThreeMatchesLineReferenceExactly) {
  std::mt19937 rng(7);
  for (const Geometry& g : kGeometries) {
    const auto buf = g.random<std::int32_t>(rng);
    auto want = reference(buf, g, own::idwt53_line_reference);
    for (auto [schedule, strip] : kSchedules) {
      auto got = buf;
      own::idwt53_level(got.data(), g.w, g.rect(), schedule, strip);
      EXPECT_EQ(got, want) << g.x0 << "," << g.y0 << " " << g.w << "x" << g.h << " strip " << strip;
    }
  }
}

TEST(Idwt, NineSevenMatchesLineReference) {
  std::mt19937 rng(9);
  for (const Geometry& g : kGeometries) {
    const auto buf = g.random<float>(rng, 1000, 0.37f);
    auto want = reference(buf, g, own::idwt97_line_reference);
    for (auto [schedule, strip] : kSchedules) {
      auto got = buf;
      own::idwt97_level(got.data(), g.w, g.rect(), schedule, strip);
      for (std::size_t i = 0; i < got.size(); ++i)
        ASSERT_EQ(got[i], want[i]) << g.w << "x" << g.h << " at " << i << " strip " << strip;
    }
  }
}

// The last level of a picture: rows go straight to the int32 output (through a ring of rows
// with the fused schedule, from the strips with the split one), rounded to nearest even.
TEST(Idwt, EmittedRowsMatchRoundedReference) {
  std::mt19937 rng(13);
  for (const Geometry& g : kGeometries) {
    const auto buf = g.random<float>(rng, 1000, 0.37f);
    auto want = reference(buf, g, own::idwt97_line_reference);
    const auto ibuf = g.random<std::int32_t>(rng);
    auto iwant = reference(ibuf, g, own::idwt53_line_reference);
    for (auto schedule : {own::IdwtSchedule::fused, own::IdwtSchedule::split}) {
      std::vector<std::int32_t> got(buf.size(), 12345), igot(buf.size(), 12345);
      auto copy = buf;
      own::idwt97_level(copy.data(), g.w, g.rect(), schedule, 16, got.data());
      auto icopy = ibuf;
      own::idwt53_level(icopy.data(), g.w, g.rect(), schedule, 16, igot.data());
      for (std::size_t i = 0; i < got.size(); ++i) {
        ASSERT_EQ(got[i], static_cast<std::int32_t>(std::nearbyint(want[i]))) << g.w << "x" << g.h << " at " << i;
        ASSERT_EQ(igot[i], iwant[i]) << g.w << "x" << g.h << " at " << i;
      }
    }
  }
}

// Each CPU-feature kernel table agrees with the portable one bit for bit (both schedules).
TEST(Idwt, KernelVariantsAgree) {
  if (own::cpu_flags() == 0) GTEST_SKIP() << "no SIMD kernel set on this CPU/build";
  const own::IdwtKernels portable = own::make_idwt_dsp(0), simd = own::make_idwt_dsp(own::kCpuAll);
  std::mt19937 rng(11);
  for (const Geometry& g : kGeometries) {
    const auto buf = g.random<float>(rng, 10000, 0.173f);
    for (auto schedule : {own::IdwtSchedule::fused, own::IdwtSchedule::split}) {
      auto base = buf, v3 = buf;
      own::idwt97_level(base.data(), g.w, g.rect(), schedule, 16, nullptr, &portable);
      own::idwt97_level(v3.data(), g.w, g.rect(), schedule, 16, nullptr, &simd);
      EXPECT_EQ(base, v3) << g.w << "x" << g.h;
    }
  }
}

// Hostile coefficients: a checkerboard of large values in every band grows 5/3 levels
// fastest; through 8 levels from +-2^26 the plain lifting sums pass 2^31. Every input of a
// level (bands and the lower level's samples) is clamped to +-2^26, so nothing overflows
// and every kernel table and schedule gives the same, defined samples: those of an exact
// (64-bit) reference with the same clamps.
TEST(Idwt, FiveThreeLevelInputsAreClampedSoHostileBandsCannotOverflow) {
  constexpr int kLevels = 8, kSize = 1 << kLevels;
  constexpr std::int64_t kClamp = 1 << 26;
  std::vector<std::int32_t> start(static_cast<std::size_t>(kSize) * kSize);
  for (int y = 0; y < kSize; ++y)
    for (int x = 0; x < kSize; ++x) start[static_cast<std::size_t>(y) * kSize + x] = ((x + y) & 1) ? (1 << 27) : -(1 << 27);

  // The reference: 64-bit samples, the region's inputs clamped before each level.
  std::vector<std::int64_t> want(start.begin(), start.end());
  std::int64_t largest_input = 0, largest = 0;
  auto line64 = [&](std::int64_t* x, int n, int i0) {
    ASSERT_EQ(i0 % 2, 0);
    ASSERT_GE(n, 2);
    auto at = [&](int t) { return x[t < 0 ? -t : t >= n ? 2 * (n - 1) - t : t]; };
    for (int t = 0; t < n; t += 2) x[t] -= (at(t - 1) + at(t + 1) + 2) >> 2;
    for (int t = 1; t < n; t += 2) x[t] += (at(t - 1) + at(t + 1)) >> 1;
    for (int t = 0; t < n; ++t) largest = std::max(largest, x[t] < 0 ? -x[t] : x[t]);
  };
  for (int level = kLevels; level >= 1; --level) {
    const int size = kSize >> (level - 1);
    const Geometry g{0, 0, size, size};
    std::vector<std::int64_t> region(static_cast<std::size_t>(size) * size);
    for (int y = 0; y < size; ++y)
      for (int x = 0; x < size; ++x) {
        const std::int64_t v = want[static_cast<std::size_t>(y) * kSize + x];
        largest_input = std::max(largest_input, v < 0 ? -v : v);
        region[static_cast<std::size_t>(y) * size + x] = std::clamp(v, -kClamp, kClamp);
      }
    region = reference(region, g, line64);
    for (int y = 0; y < size; ++y)
      for (int x = 0; x < size; ++x)
        want[static_cast<std::size_t>(y) * kSize + x] = region[static_cast<std::size_t>(y) * size + x];
  }
  // The case does what it is for: lower levels' samples beyond the clamp, all within int32.
  EXPECT_GT(largest_input, kClamp << 1);
  EXPECT_LT(largest, std::int64_t{1} << 30);

  std::vector<const own::IdwtKernels*> tables{nullptr};
  const own::IdwtKernels portable = own::make_idwt_dsp(0), simd = own::make_idwt_dsp(own::kCpuAll);
  tables.push_back(&portable);
  if (own::cpu_flags() != 0) tables.push_back(&simd);
  for (const own::IdwtKernels* table : tables)
    for (auto [schedule, strip] : kSchedules) {
      std::vector<std::int32_t> got = start;
      for (int level = kLevels; level >= 1; --level) {
        const int size = kSize >> (level - 1);
        own::idwt53_level(got.data(), kSize, {0, 0, size, size}, schedule, strip, nullptr, table);
      }
      for (std::size_t i = 0; i < got.size(); ++i)
        ASSERT_EQ(got[i], want[i]) << "sample " << i << ", strip " << strip << ", table " << table;
    }
}

}  // namespace
