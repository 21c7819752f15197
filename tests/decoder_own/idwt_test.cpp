// The fast inverse DWT (halves lifted separately, column strips) against the plain
// one-line reference twins, on odd sizes and odd origins (15444-1 F.3.7 edge cases).
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <utility>
#include <vector>

#include "dsp.hpp"
#include "transform/idwt.hpp"

using namespace j2k::decoder;

namespace {

/// Reference: F.3.2 2D_SR as HOR_SR on rows then VER_SR on columns, through the line twins.
template <typename T, typename Line>
std::vector<T> reference(std::vector<T> buf, int w, int h, const Rect& r, Line line) {
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

struct Geometry {
  int x0, y0, w, h;
};
const Geometry kGeometries[] = {{0, 0, 64, 64}, {1, 0, 1, 1}, {0, 1, 2, 1}, {3, 5, 17, 9},  {2, 7, 131, 3},
                                {5, 2, 1, 33},  {0, 0, 2, 2}, {7, 7, 65, 67}, {1, 1, 200, 150}};

// Both schedules (one row at a time; rows then column strips of several widths) must give
// the reference's results: exactly for 5/3, and for 9/7 the same floats bit for bit (the
// kernels perform each sample's operations in the reference's order).
TEST(Idwt, FiveThreeMatchesLineReferenceExactly) {
  std::mt19937 rng(7);
  for (const Geometry& g : kGeometries) {
    Rect r{g.x0, g.y0, g.x0 + g.w, g.y0 + g.h};
    std::vector<std::int32_t> buf(static_cast<std::size_t>(g.w) * g.h);
    for (auto& v : buf) v = static_cast<std::int32_t>(rng() % 2001) - 1000;
    auto want = reference(buf, g.w, g.h, r, own::idwt53_line_reference);
    for (auto [schedule, strip] : {std::pair{own::IdwtSchedule::fused, 0}, std::pair{own::IdwtSchedule::split, 64},
                                   std::pair{own::IdwtSchedule::split, 8}, std::pair{own::IdwtSchedule::split, 3},
                                   std::pair{own::IdwtSchedule::split, 1}}) {
      auto got = buf;
      own::idwt53_level(got.data(), g.w, r, schedule, strip);
      EXPECT_EQ(got, want) << g.x0 << "," << g.y0 << " " << g.w << "x" << g.h << " strip " << strip;
    }
  }
}

TEST(Idwt, NineSevenMatchesLineReference) {
  std::mt19937 rng(9);
  for (const Geometry& g : kGeometries) {
    Rect r{g.x0, g.y0, g.x0 + g.w, g.y0 + g.h};
    std::vector<float> buf(static_cast<std::size_t>(g.w) * g.h);
    for (auto& v : buf) v = static_cast<float>(static_cast<int>(rng() % 2001) - 1000) * 0.37f;
    auto want = reference(buf, g.w, g.h, r, own::idwt97_line_reference);
    for (auto [schedule, strip] : {std::pair{own::IdwtSchedule::fused, 0}, std::pair{own::IdwtSchedule::split, 64},
                                   std::pair{own::IdwtSchedule::split, 8}, std::pair{own::IdwtSchedule::split, 3},
                                   std::pair{own::IdwtSchedule::split, 1}}) {
      auto got = buf;
      own::idwt97_level(got.data(), g.w, r, schedule, strip);
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
    Rect r{g.x0, g.y0, g.x0 + g.w, g.y0 + g.h};
    std::vector<float> buf(static_cast<std::size_t>(g.w) * g.h);
    for (auto& v : buf) v = static_cast<float>(static_cast<int>(rng() % 2001) - 1000) * 0.37f;
    auto want = reference(buf, g.w, g.h, r, own::idwt97_line_reference);
    std::vector<std::int32_t> ibuf(buf.size());
    for (auto& v : ibuf) v = static_cast<std::int32_t>(rng() % 2001) - 1000;
    auto iwant = reference(ibuf, g.w, g.h, r, own::idwt53_line_reference);
    for (auto schedule : {own::IdwtSchedule::fused, own::IdwtSchedule::split}) {
      std::vector<std::int32_t> got(buf.size(), 12345), igot(buf.size(), 12345);
      auto copy = buf;
      own::idwt97_level(copy.data(), g.w, r, schedule, 16, got.data());
      auto icopy = ibuf;
      own::idwt53_level(icopy.data(), g.w, r, schedule, 16, igot.data());
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
    Rect r{g.x0, g.y0, g.x0 + g.w, g.y0 + g.h};
    std::vector<float> buf(static_cast<std::size_t>(g.w) * g.h);
    for (auto& v : buf) v = static_cast<float>(static_cast<int>(rng() % 20001) - 10000) * 0.173f;
    for (auto schedule : {own::IdwtSchedule::fused, own::IdwtSchedule::split}) {
      auto base = buf, v3 = buf;
      own::idwt97_level(base.data(), g.w, r, schedule, 16, nullptr, &portable);
      own::idwt97_level(v3.data(), g.w, r, schedule, 16, nullptr, &simd);
      EXPECT_EQ(base, v3) << g.w << "x" << g.h;
    }
  }
}

}  // namespace
