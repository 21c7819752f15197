// The fast inverse DWT (halves lifted separately, column strips) against the plain
// one-line reference twins, on odd sizes and odd origins (15444-1 F.3.7 edge cases).
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "thread_pool.hpp"
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

TEST(Idwt, FiveThreeMatchesLineReferenceExactly) {
  std::mt19937 rng(7);
  own::ThreadPool pool(2);
  for (const Geometry& g : kGeometries) {
    Rect r{g.x0, g.y0, g.x0 + g.w, g.y0 + g.h};
    std::vector<std::int32_t> buf(static_cast<std::size_t>(g.w) * g.h);
    for (auto& v : buf) v = static_cast<std::int32_t>(rng() % 2001) - 1000;
    auto want = reference(buf, g.w, g.h, r, own::idwt53_line_reference);
    for (own::ThreadPool* p : {static_cast<own::ThreadPool*>(nullptr), &pool}) {
      auto got = buf;
      own::idwt53_level(got.data(), g.w, r, p);
      EXPECT_EQ(got, want) << g.x0 << "," << g.y0 << " " << g.w << "x" << g.h;
    }
  }
}

TEST(Idwt, NineSevenMatchesLineReferenceWithinTolerance) {
  std::mt19937 rng(9);
  for (const Geometry& g : kGeometries) {
    Rect r{g.x0, g.y0, g.x0 + g.w, g.y0 + g.h};
    std::vector<float> buf(static_cast<std::size_t>(g.w) * g.h);
    for (auto& v : buf) v = static_cast<float>(static_cast<int>(rng() % 2001) - 1000) * 0.37f;
    auto want = reference(buf, g.w, g.h, r, own::idwt97_line_reference);
    auto got = buf;
    own::idwt97_level(got.data(), g.w, r, nullptr);
    for (std::size_t i = 0; i < got.size(); ++i)
      ASSERT_NEAR(got[i], want[i], 1e-3f * (1.0f + std::abs(want[i]))) << g.w << "x" << g.h << " at " << i;
  }
}

}  // namespace
