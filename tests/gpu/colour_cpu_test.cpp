// The CPU colour stage: matrices, ranges, chroma upsampling, on real photograph content.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "gpu/colour.hpp"
#include "rgba_psnr.hpp"
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

namespace {

/// A 4:4:4 RGB window of flower.png (as loaded: 8-bit).
PlanarImage photo_rgb(int w, int h, int x, int y) {
  auto img = media::load_rgb(test::media_path("flower.png"));
  if (!img.ok()) throw std::runtime_error(img.error().message);
  return media::crop(*img, x, y, w, h);
}

using test::psnr_rgb;

/// hdr_to_sdr of one grey signal value, as a display code 0-255.
double grey_out(TransferFunction t, float signal) {
  float v[3] = {signal, signal, signal};
  gpu::hdr_to_sdr(t, v);
  return v[0] * 255.0;
}

}  // namespace

TEST(HdrDisplay, APhotographGradedIntoPqOrHlgComesBackAsItWasBelowTheKnee) {
  // The SDR photograph as the player shows it, against the same photograph graded into HDR
  // (white at 203 cd/m², highlights to 1000) and shown through the HDR → SDR mapping; and what
  // the HDR picture looks like when its transfer is not known (shown as SDR).
  const PlanarImage rgb = photo_rgb(480, 270, 900, 500);
  gpu::RgbaImage sdr;
  ASSERT_TRUE(gpu::to_rgba8(media::rgb_to_ycbcr709(rgb, 10, 2), {}, sdr));
  for (const TransferFunction t : {TransferFunction::pq, TransferFunction::hlg}) {
    const PlanarImage hdr = media::rgb_to_ycbcr_hdr(rgb, 10, 2, t);
    EXPECT_EQ(hdr.colour, ColourCoding::ycbcr_bt2020);
    gpu::RgbaImage mapped, unmapped;
    ASSERT_TRUE(gpu::to_rgba8(hdr, {ColourCoding::ycbcr_bt2020, false, t}, mapped));
    ASSERT_TRUE(gpu::to_rgba8(hdr, {ColourCoding::ycbcr_bt2020, false, TransferFunction::sdr}, unmapped));
    const double p_mapped = psnr_rgb(mapped, sdr), p_unmapped = psnr_rgb(unmapped, sdr);
    std::printf("[ measured ] %s: the SDR photograph against its HDR grade shown mapped %.2f dB, shown as SDR %.2f dB\n",
                to_string(t), p_mapped, p_unmapped);
    EXPECT_GT(p_mapped, 30.0);
    EXPECT_LT(p_unmapped, p_mapped - 8.0);
  }
}

TEST(HdrDisplay, ReferenceWhitePeaksAndBlackLandWhereTheyShould) {
  // PQ: 0 → black; 203 cd/m² (signal 0.5806) → reference white, 0.908 in light (sRGB code 244);
  // 1000 cd/m² (0.7518) → all but full white; the 10 000 cd/m² top → white.
  EXPECT_NEAR(grey_out(TransferFunction::pq, 0.0f), 0.0, 0.01);
  EXPECT_NEAR(grey_out(TransferFunction::pq, 0.5806f), 244.0, 1.0);
  EXPECT_GT(grey_out(TransferFunction::pq, 0.7518f), 254.0);
  EXPECT_NEAR(grey_out(TransferFunction::pq, 1.0f), 255.0, 0.01);
  // HLG: 75 % is reference white on a 1000 cd/m² display; 0 is black.
  EXPECT_NEAR(grey_out(TransferFunction::hlg, 0.75f), 244.0, 1.0);
  EXPECT_NEAR(grey_out(TransferFunction::hlg, 0.0f), 0.0, 0.01);
  // Both monotonic over the whole signal range; SDR untouched.
  for (const TransferFunction t : {TransferFunction::pq, TransferFunction::hlg}) {
    double last = -1;
    for (int i = 0; i <= 1023; ++i) {
      const double v = grey_out(t, static_cast<float>(i) / 1023.0f);
      EXPECT_GE(v, last) << to_string(t) << " at " << i;
      last = v;
    }
  }
  EXPECT_FLOAT_EQ(static_cast<float>(grey_out(TransferFunction::sdr, 0.4f)), 0.4f * 255.0f);
}

TEST(DciDisplay, ADigitalCinemaFrameOfAPhotographShowsAsThePhotograph) {
  // The photograph as X'Y'Z' 12-bit (SMPTE 428-1), shown as digital cinema: the photograph back
  // (to the rounding of the two encodings); shown as if its components were RGB: a washed-out,
  // green-tinted picture.
  const PlanarImage rgb = photo_rgb(480, 270, 900, 500);
  const PlanarImage xyz = media::rgb_to_dci_xyz(rgb, 12);
  EXPECT_EQ(xyz.colour, ColourCoding::xyz);
  gpu::RgbaImage original, shown, as_rgb;
  PlanarImage rgb12 = rgb;  // the original, shown as the player shows RGB
  ASSERT_TRUE(gpu::to_rgba8(rgb12, {ColourCoding::rgb, true}, original));
  ASSERT_TRUE(gpu::to_rgba8(xyz, {ColourCoding::xyz, true}, shown));
  ASSERT_TRUE(gpu::to_rgba8(xyz, {ColourCoding::rgb, true}, as_rgb));
  const double p_shown = psnr_rgb(shown, original), p_as_rgb = psnr_rgb(as_rgb, original);
  std::printf("[ measured ] X'Y'Z' photograph: shown as digital cinema %.2f dB from the photograph, as RGB %.2f dB\n",
              p_shown, p_as_rgb);
  EXPECT_GT(p_shown, 40.0);
  EXPECT_LT(p_as_rgb, 25.0);
}

TEST(DciDisplay, WhiteAndBlackLandWhereTheyShould) {
  // White: X'Y'Z' of D65 white at 48 cd/m² (code 3960, 4096 for Y; Y' = (48/52.37)^(1/2.6)).
  const float y = std::pow(48.0f / 52.37f, 1.0f / 2.6f);
  float white[3] = {std::pow(0.9505f * 48.0f / 52.37f, 1.0f / 2.6f), y, std::pow(1.089f * 48.0f / 52.37f, 1.0f / 2.6f)};
  gpu::dci_xyz_to_display(white);
  for (float v : white) EXPECT_NEAR(v, 1.0f, 0.01f);
  float black[3] = {0, 0, 0};
  gpu::dci_xyz_to_display(black);
  for (float v : black) EXPECT_EQ(v, 0.0f);
}
