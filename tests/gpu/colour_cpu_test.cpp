// The CPU colour stage: matrices, ranges, chroma upsampling, on real photograph content.
#include <gtest/gtest.h>

#include "gpu/colour.hpp"
#include "test_images.hpp"

using namespace j2k;

namespace {

PlanarImage solid_ycbcr(int w, int h, int bits, int dx, int y, int cb, int cr) {
  PlanarImage img;
  img.width = w;
  img.height = h;
  img.colour = ColourCoding::ycbcr_bt709;
  for (int c = 0; c < 3; ++c) {
    Plane p;
    p.width = c ? (w + dx - 1) / dx : w;
    p.height = h;
    p.dx = c ? dx : 1;
    p.precision = bits;
    p.samples.assign(static_cast<std::size_t>(p.width) * h, c == 0 ? y : c == 1 ? cb : cr);
    img.planes.push_back(std::move(p));
  }
  return img;
}

}  // namespace

TEST(ColourCpu, NarrowRangeBlackWhiteAndPrimaries) {
  gpu::RgbaImage out;
  ASSERT_TRUE(gpu::to_rgba8(solid_ycbcr(4, 2, 8, 2, 16, 128, 128), {}, out));
  EXPECT_EQ(out.pixels[0], 0);
  EXPECT_EQ(out.pixels[3], 255);
  ASSERT_TRUE(gpu::to_rgba8(solid_ycbcr(4, 2, 10, 2, 940, 512, 512), {}, out));
  EXPECT_EQ(out.pixels[0], 255);
  EXPECT_EQ(out.pixels[1], 255);
  EXPECT_EQ(out.pixels[2], 255);
  // BT.709 pure red in 8-bit narrow range: Y 63, Cb 102, Cr 240.
  ASSERT_TRUE(gpu::to_rgba8(solid_ycbcr(4, 2, 8, 1, 63, 102, 240), {ColourCoding::ycbcr_bt709, false}, out));
  EXPECT_NEAR(out.pixels[0], 255, 2);
  EXPECT_NEAR(out.pixels[1], 0, 2);
  EXPECT_NEAR(out.pixels[2], 0, 2);
  // The same codes read as BT.601 give a visibly different colour: the matrix matters.
  ASSERT_TRUE(gpu::to_rgba8(solid_ycbcr(4, 2, 8, 1, 63, 102, 240), {ColourCoding::ycbcr_bt601, false}, out));
  EXPECT_LT(out.pixels[0], 240);  // BT.601 red gain 1.402 vs BT.709 1.5748
}

TEST(ColourCpu, RoundTripOfAPhotographThrough422) {
  auto rgb = media::load_rgb(test::media_path("flower.png"));
  ASSERT_TRUE(rgb.ok());
  PlanarImage window = media::crop(*rgb, 900, 600, 257, 129);  // odd sizes on purpose
  for (int dx : {1, 2}) {
    PlanarImage ycc = media::rgb_to_ycbcr709(window, 10, dx);
    gpu::RgbaImage out;
    ASSERT_TRUE(gpu::to_rgba8(ycc, {}, out));
    ASSERT_EQ(out.width, 257);
    double err = 0;
    int worst = 0;
    for (int i = 0; i < 257 * 129; ++i)
      for (int c = 0; c < 3; ++c) {
        const int d = std::abs(out.pixels[4 * i + c] - window.planes[c].samples[i]);
        err += d;
        worst = std::max(worst, d);
      }
    err /= 257.0 * 129 * 3;
    if (dx == 1) {
      EXPECT_LT(err, 0.6);  // 4:4:4 is only quantisation
      EXPECT_LE(worst, 2);
    } else {
      EXPECT_LT(err, 3.0);  // 4:2:2 loses horizontal chroma detail
    }
  }
}

TEST(ColourCpu, UpsamplesCositedChromaBetweenSamples) {
  // Cr ramps 100, 200 over two chroma samples: luma column 1 sits halfway between them.
  PlanarImage img = solid_ycbcr(4, 1, 8, 2, 126, 128, 0);
  img.planes[2].samples = {128, 228};
  gpu::RgbaImage out;
  ASSERT_TRUE(gpu::to_rgba8(img, {}, out));
  const int r0 = out.pixels[0], r1 = out.pixels[4], r2 = out.pixels[8], r3 = out.pixels[12];
  EXPECT_LT(r0, r1);
  EXPECT_LT(r1, r2);
  EXPECT_EQ(r2, r3);  // beyond the last sample: held
}

TEST(ColourCpu, RejectsGeometryThatDoesNotCover) {
  PlanarImage img = solid_ycbcr(8, 2, 8, 2, 16, 128, 128);
  img.planes[1].width = 1;
  img.planes[1].samples.resize(2);
  gpu::RgbaImage out;
  EXPECT_FALSE(gpu::to_rgba8(img, {}, out));
}
