// The player's deinterlacing, on the CPU reference (ui/deinterlace.hpp): a camera panning over
// a real photograph, filmed interlaced, must come back closer to what the camera saw at each
// field's instant than the woven frame is; a still picture must come back whole.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "rgba_psnr.hpp"
#include "test_images.hpp"
#include "ui/deinterlace.hpp"

namespace j2k::ui {
namespace {

/// What the camera saw at field instant `t`: a detailed window of flower.png (leaves and
/// stems) panning 5 pixels to the right and 2 down per field.
gpu::RgbaImage camera(int t, int w = 320, int h = 240) {
  static const PlanarImage flower = [] {
    auto img = media::load_rgb(test::media_path("flower.png"));
    if (!img.ok()) throw std::runtime_error(img.error().message);
    return std::move(img).value();
  }();
  const PlanarImage crop = media::crop(flower, 600 + 5 * t, 1150 + 2 * t, w, h);
  gpu::RgbaImage out;
  out.width = w;
  out.height = h;
  out.pixels.resize(static_cast<std::size_t>(w) * h * 4);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      for (int c = 0; c < 4; ++c)
        out.pixels[(static_cast<std::size_t>(y) * w + x) * 4 + c] =
            static_cast<std::uint8_t>(c < 3 ? crop.planes[c].at(x, y) : 255);
  return out;
}

/// An interlaced camera's frame: the first field (instant `first`) on the lines of parity
/// `first_parity`, the second (instant `second`) on the others.
gpu::RgbaImage weave(const gpu::RgbaImage& first, const gpu::RgbaImage& second, int first_parity) {
  gpu::RgbaImage out = first;
  const std::size_t row = static_cast<std::size_t>(first.width) * 4;
  for (int y = 0; y < first.height; ++y)
    if ((y & 1) != first_parity)
      std::copy_n(second.pixels.begin() + static_cast<std::ptrdiff_t>(y * row), row,
                  out.pixels.begin() + static_cast<std::ptrdiff_t>(y * row));
  return out;
}

using test::psnr_rgb;

bool lines_equal(const gpu::RgbaImage& a, const gpu::RgbaImage& b, int parity) {
  const std::size_t row = static_cast<std::size_t>(a.width) * 4;
  for (int y = parity; y < a.height; y += 2)
    if (!std::equal(a.pixels.begin() + static_cast<std::ptrdiff_t>(y * row),
                    a.pixels.begin() + static_cast<std::ptrdiff_t>((y + 1) * row),
                    b.pixels.begin() + static_cast<std::ptrdiff_t>(y * row)))
      return false;
  return true;
}

TEST(Deinterlace, APanningCameraComesBackCloserToEachFieldsInstantThanTheWeave) {
  for (const int first_parity : {0, 1}) {
    // Frames 0 and 1: fields at instants 0, 1 and 2, 3.
    const gpu::RgbaImage f0 = weave(camera(0), camera(1), first_parity);
    const gpu::RgbaImage f1 = weave(camera(2), camera(3), first_parity);
    for (const int which : {0, 1}) {
      const int parity = which == 0 ? first_parity : 1 - first_parity;
      const gpu::RgbaImage truth = camera(2 + which);
      gpu::RgbaImage bob, adaptive;
      deinterlace_field(f1, &f0, parity, Deinterlace::bob, bob);
      deinterlace_field(f1, &f0, parity, Deinterlace::adaptive, adaptive);
      // The field's own lines are kept as they came.
      EXPECT_TRUE(lines_equal(bob, truth, parity));
      EXPECT_TRUE(lines_equal(adaptive, truth, parity));
      const double p_weave = psnr_rgb(f1, truth), p_bob = psnr_rgb(bob, truth), p_adaptive = psnr_rgb(adaptive, truth);
      std::printf("[ measured ] first field %s, field %d: PSNR against the camera: weave %.2f dB, bob %.2f dB, "
                  "adaptive %.2f dB\n",
                  first_parity == 0 ? "top" : "bottom", which, p_weave, p_bob, p_adaptive);
      // Everything moves: the weave is combed everywhere, the interpolations are not.
      EXPECT_GT(p_bob, p_weave + 3.0);
      EXPECT_GT(p_adaptive, p_weave + 3.0);
      EXPECT_GT(p_adaptive, p_bob - 0.5);
    }
  }
}

TEST(Deinterlace, AStillPictureComesBackWholeWhereBobLosesDetail) {
  const gpu::RgbaImage still = camera(7);  // both fields of both frames from one instant
  for (const int parity : {0, 1}) {
    gpu::RgbaImage bob, adaptive;
    deinterlace_field(still, &still, parity, Deinterlace::adaptive, adaptive);
    deinterlace_field(still, &still, parity, Deinterlace::bob, bob);
    EXPECT_EQ(adaptive.pixels, still.pixels) << "a still picture keeps its full vertical resolution";
    std::printf("[ measured ] a still picture, field %d: PSNR against it: bob %.2f dB, adaptive %.2f dB\n", parity,
                psnr_rgb(bob, still), psnr_rgb(adaptive, still));
    EXPECT_LT(psnr_rgb(bob, still), 40.0) << "a photograph has detail that one field alone cannot give";
    EXPECT_TRUE(lines_equal(bob, still, parity));
  }
}

TEST(Deinterlace, PartMovingPartStillIsDecidedPerPixel) {
  // The left half stands still, the right half pans: the left comes back whole, the right
  // interpolated (never the other field's combed lines).
  gpu::RgbaImage a = camera(0), b = camera(1), c = camera(2), d = camera(3);
  const int w = a.width, h = a.height;
  for (gpu::RgbaImage* img : {&b, &c, &d})
    for (int y = 0; y < h; ++y)
      std::copy_n(a.pixels.begin() + static_cast<std::ptrdiff_t>(y * w * 4), w * 2,
                  img->pixels.begin() + static_cast<std::ptrdiff_t>(y * w * 4));
  const gpu::RgbaImage f0 = weave(a, b, 0), f1 = weave(c, d, 0);
  gpu::RgbaImage out, bob;
  deinterlace_field(f1, &f0, 0, Deinterlace::adaptive, out);
  deinterlace_field(f1, &f0, 0, Deinterlace::bob, bob);
  std::size_t left_equal = 0, left = 0, combed = 0, right_moving = 0;
  auto largest = [](const std::uint8_t* p, const std::uint8_t* q) {
    return std::max({std::abs(p[0] - q[0]), std::abs(p[1] - q[1]), std::abs(p[2] - q[2])});
  };
  for (int y = 1; y < h; y += 2)
    for (int x = 0; x < w; ++x) {
      const std::size_t i = (static_cast<std::size_t>(y) * w + x) * 4;
      if (x < w / 2 - 1) {
        ++left;
        left_equal += largest(&out.pixels[i], &c.pixels[i]) == 0;
      } else if (largest(&d.pixels[i], &bob.pixels[i]) > 48) {
        // Where the other field's line is far from what the field itself says, showing it would comb.
        ++right_moving;
        combed += largest(&out.pixels[i], &d.pixels[i]) == 0;
      }
    }
  EXPECT_EQ(left_equal, left);
  EXPECT_GT(right_moving, static_cast<std::size_t>(w * h / 40)) << "the test's motion is visible";
  EXPECT_EQ(combed, 0u);
}

TEST(Deinterlace, OffKeepsTheWovenFrameAndAnyPreviousOfAnotherSizeIsNone) {
  const gpu::RgbaImage f = weave(camera(0), camera(1), 0);
  gpu::RgbaImage out, bob;
  deinterlace_field(f, nullptr, 1, Deinterlace::off, out);
  EXPECT_EQ(out.pixels, f.pixels);
  const gpu::RgbaImage small = camera(0, 64, 48);
  deinterlace_field(f, &small, 1, Deinterlace::adaptive, out);
  deinterlace_field(f, nullptr, 1, Deinterlace::bob, bob);
  EXPECT_EQ(out.pixels, bob.pixels);
}

TEST(Deinterlace, TinyPicturesAreSafe) {
  for (const auto& [w, h] : {std::pair{1, 1}, std::pair{1, 2}, std::pair{2, 1}, std::pair{1, 3}, std::pair{3, 2}}) {
    const gpu::RgbaImage f = camera(0, w, h), g = camera(1, w, h);
    for (const auto mode : {Deinterlace::off, Deinterlace::bob, Deinterlace::adaptive})
      for (const int parity : {0, 1}) {
        gpu::RgbaImage out;
        deinterlace_field(f, &g, parity, mode, out);
        EXPECT_EQ(out.width, w);
        EXPECT_EQ(out.height, h);
        EXPECT_EQ(out.pixels.size(), static_cast<std::size_t>(w) * h * 4);
      }
  }
}

TEST(Deinterlace, ModeNames) {
  EXPECT_EQ(parse_deinterlace("auto"), Deinterlace::adaptive);
  EXPECT_EQ(parse_deinterlace("adaptive"), Deinterlace::adaptive);
  EXPECT_EQ(parse_deinterlace("bob"), Deinterlace::bob);
  EXPECT_EQ(parse_deinterlace("off"), Deinterlace::off);
  EXPECT_EQ(parse_deinterlace("weave"), Deinterlace::off);
  EXPECT_FALSE(parse_deinterlace("yadif").has_value());
  EXPECT_STREQ(deinterlace_name(Deinterlace::adaptive), "motion-adaptive");
}

}  // namespace
}  // namespace j2k::ui
