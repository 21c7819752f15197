// The CUDA stage against its CPU twins. Tolerances: the planar picture (dequantisation,
// inverse DWT, inverse MCT, DC shift, clamp) must equal decoder::reconstruct exactly for
// 5/3 and integer paths and within 1 for 9/7 (the kernels are written to be exact there
// too; the test reports the largest difference seen); the display picture must be
// within 1 code of gpu::to_rgba8 / to_rgb10a2 / weave_fields. Every GPU test skips
// visibly without a device; the fallback tests run everywhere.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "decoder/coefficients.hpp"
#include "packetizer/openjpeg_encoder.hpp"
#include "decoder/own_decoder.hpp"
#include "gpu/colour.hpp"
#include "gpu/cuda.hpp"
#include "gpu/cuda_decoder.hpp"
#include "gpu/cuda_reconstructor.hpp"
#include "gpu/cuda_gl.hpp"
#include "gpu/device_picture.hpp"
#include "gpu_test_util.hpp"
#include "synthetic_frame.hpp"
#include "../common/test_images.hpp"

using namespace j2k;
using decoder::Wavelet;

namespace {


using test::corpus_dir;
using test::read_file;

/// Largest absolute difference between two planar pictures; -1 if the geometry differs.
long long max_diff(const PlanarImage& a, const PlanarImage& b, std::string* where = nullptr) {
  if (a.width != b.width || a.height != b.height || a.planes.size() != b.planes.size() || a.colour != b.colour) return -1;
  long long worst = 0;
  for (std::size_t c = 0; c < a.planes.size(); ++c) {
    const Plane &p = a.planes[c], &q = b.planes[c];
    if (p.width != q.width || p.height != q.height || p.samples.size() != q.samples.size()) return -1;
    for (std::size_t i = 0; i < p.samples.size(); ++i) {
      const long long d = std::llabs(static_cast<long long>(p.samples[i]) - q.samples[i]);
      if (d > worst) {
        worst = d;
        if (where)
          *where = "component " + std::to_string(c) + " at (" + std::to_string(i % static_cast<std::size_t>(p.width)) + "," +
                   std::to_string(i / static_cast<std::size_t>(p.width)) + ")";
      }
    }
  }
  return worst;
}

/// GPU planar reconstruction vs decoder::reconstruct.
void expect_planar_match(gpu::CudaReconstructor& rec, const decoder::CoefficientFrame& frame, Wavelet w,
                         const std::string& label) {
  auto cpu = decoder::reconstruct(frame, 1);
  ASSERT_TRUE(cpu.ok()) << label << ": " << cpu.error().message;
  gpu::ReconstructRequest req;
  auto gpu_img = rec.reconstruct(frame, req);
  ASSERT_TRUE(gpu_img.ok()) << label << ": " << gpu_img.error().message;
  std::string where;
  const long long d = max_diff(*cpu, *gpu_img, &where);
  ASSERT_GE(d, 0) << label << ": geometry differs";
  if (w == Wavelet::reversible_5_3) EXPECT_EQ(d, 0) << label << " worst at " << where;
  else EXPECT_LE(d, 1) << label << " worst at " << where;
  if (d != 0) std::printf("[ info ] %s: max |gpu-cpu| = %lld at %s\n", label.c_str(), d, where.c_str());
}

}  // namespace

TEST(CudaProbe, AnswersWithoutCrashing) {
  const bool ok = gpu::cuda_available();
  std::printf("[ info ] cuda_available() = %s: %s\n", ok ? "true" : "false", gpu::cuda_describe().c_str());
  EXPECT_EQ(ok, gpu::cuda_available());  // cached, stable
  EXPECT_EQ(gpu::parse_gpu_mode("auto"), gpu::GpuMode::automatic);
  EXPECT_EQ(gpu::parse_gpu_mode("on"), gpu::GpuMode::on);
  EXPECT_EQ(gpu::parse_gpu_mode("off"), gpu::GpuMode::off);
  EXPECT_FALSE(gpu::parse_gpu_mode("yes").has_value());
}

// ---- CPU fallback (runs everywhere) ------------------------------------------------------

TEST(CudaFallback, FactoryHonoursGpuMode) {
  auto off = gpu::make_cuda_decoder({gpu::GpuMode::off});
  ASSERT_TRUE(off.ok());
  auto autom = gpu::make_cuda_decoder({gpu::GpuMode::automatic});
  ASSERT_TRUE(autom.ok()) << autom.error().message;
  auto on = gpu::make_cuda_decoder({gpu::GpuMode::on});
  EXPECT_EQ(on.ok(), gpu::cuda_available());
  if (!gpu::cuda_available()) {
    EXPECT_EQ(on.error().kind, ErrorKind::unsupported);
    EXPECT_FALSE(gpu::CudaReconstructor::create().ok());
    EXPECT_FALSE(gpu::make_cuda_decoder_typed({}).ok());
  }
}

TEST(CudaFallback, AutoDecoderMatchesTheOwnDecoder) {
  // A textured picture (not a flat gradient) through OpenJPEG, lossless and lossy.
  PlanarImage img = test::textured_ycbcr(203, 117, 10, 2, 7);
  for (bool lossless : {true, false}) {
    packetizer::EncodeParams ep;
    ep.lossless = lossless;
    ep.resolutions = 5;
    auto cs = packetizer::encode_openjpeg(img, ep);
    ASSERT_TRUE(cs.ok()) << cs.error().message;
    decoder::DecodeOptions opt;
    opt.threads = 2;
    auto own = decoder::make_own_decoder()->decode(*cs, opt);
    ASSERT_TRUE(own.ok());
    auto dec = gpu::make_cuda_decoder({gpu::GpuMode::automatic});
    ASSERT_TRUE(dec.ok());
    auto out = (*dec)->decode(*cs, opt);
    ASSERT_TRUE(out.ok()) << out.error().message;
    // 5/3 is integer and exact; 9/7 is float: within 1 after rounding (issue 5's tolerance;
    // the CPU twin's vectorised lifting and the GPU's may round a half differently).
    EXPECT_LE(max_diff(*own, *out), lossless ? 0 : 1) << (lossless ? "5/3" : "9/7");
  }
}

// ---- The synthetic frames themselves (CPU only): bands tile each resolution exactly -------

TEST(SyntheticFrame, BandsTileTheirResolutionAndTheCpuTwinRuns) {
  test::SynthSpec s;
  s.image = {5, 3, 5 + 211, 3 + 143};
  s.tile_x0 = 1;
  s.tile_y0 = 2;
  s.tile_w = 64;
  s.tile_h = 48;
  s.dx = {1, 2, 2};
  s.dy = {1, 1, 2};
  for (int levels : {0, 1, 4, 8})
    for (int reduce : {0, 1}) {
      s.levels = levels;
      s.reduce = std::min(reduce, levels);
      const auto f = test::make_synthetic_frame(s);
      for (const auto& tile : f.tiles)
        for (const auto& cc : tile.components)
          for (const auto& sb : cc.subbands) {
            if (sb.resolution == 0) continue;
            const int nb = cc.levels - sb.resolution + 1;
            const decoder::Rect res = test::band_rect(cc.rect, nb - 1, decoder::BandOrientation::LL);
            const decoder::Rect lower = test::band_rect(cc.rect, nb, decoder::BandOrientation::LL);
            // 2D_SR: the high bands fill what the lower resolution leaves (F.3.2).
            if (sb.orientation == decoder::BandOrientation::HL || sb.orientation == decoder::BandOrientation::HH) {
              EXPECT_EQ(sb.rect.width() + lower.width(), res.width());
            }
            if (sb.orientation == decoder::BandOrientation::LH || sb.orientation == decoder::BandOrientation::HH) {
              EXPECT_EQ(sb.rect.height() + lower.height(), res.height());
            }
          }
      auto img = decoder::reconstruct(f, 1);
      ASSERT_TRUE(img.ok());
      EXPECT_EQ(img->planes.size(), 3u);
    }
}

// ---- Planar reconstruction vs decoder::reconstruct, synthetic coefficients ----------------

struct GeometryCase {
  const char* name;
  decoder::Rect image;
  int levels;
};

class CudaPlanar : public ::testing::Test {
 protected:
  void SetUp() override {
    J2K_REQUIRE_CUDA();
    auto r = gpu::CudaReconstructor::create();
    ASSERT_TRUE(r.ok()) << r.error().message;
    rec_ = std::move(*r);
  }
  std::unique_ptr<gpu::CudaReconstructor> rec_;
};

TEST_F(CudaPlanar, OddSizesOffsetsAndLevelsBothWavelets) {
  const GeometryCase cases[] = {
      {"1xN", {0, 0, 1, 77}, 3},         {"Nx1", {0, 0, 77, 1}, 3},         {"1xN odd origin", {5, 3, 6, 90}, 4},
      {"Nx1 odd origin", {7, 9, 100, 10}, 4}, {"41x39", {0, 0, 41, 39}, 5}, {"41x39 at (3,5)", {3, 5, 44, 44}, 5},
      {"2x2", {1, 1, 3, 3}, 2},          {"1x1 odd", {3, 3, 4, 4}, 2},      {"64x64 at (127,33)", {127, 33, 191, 97}, 8},
      {"1919x1081", {0, 0, 1919, 1081}, 6}, {"1919x1081 at (1,1)", {1, 1, 1920, 1082}, 5},
  };
  int seed = 1;
  for (const GeometryCase& g : cases)
    for (Wavelet w : {Wavelet::reversible_5_3, Wavelet::irreversible_9_7}) {
      test::SynthSpec s;
      s.image = g.image;
      s.tile_x0 = 0;
      s.tile_y0 = 0;
      s.levels = g.levels;
      s.wavelet = w;
      s.seed = static_cast<std::uint32_t>(seed++);
      expect_planar_match(*rec_, test::make_synthetic_frame(s), w,
                          std::string(g.name) + (w == Wavelet::reversible_5_3 ? " 5/3" : " 9/7"));
    }
}

TEST_F(CudaPlanar, EveryLevelCountFrom0To8) {
  for (int levels = 0; levels <= 8; ++levels)
    for (Wavelet w : {Wavelet::reversible_5_3, Wavelet::irreversible_9_7}) {
      test::SynthSpec s;
      s.image = {13, 7, 13 + 301, 7 + 203};
      s.levels = levels;
      s.wavelet = w;
      s.seed = static_cast<std::uint32_t>(100 + levels);
      expect_planar_match(*rec_, test::make_synthetic_frame(s), w, "levels " + std::to_string(levels));
    }
}

TEST_F(CudaPlanar, NarrowAndWideCoefficientBands) {
  // Bands travel as int8, int16 or int32, whichever holds their values: all three mixed.
  for (Wavelet w : {Wavelet::reversible_5_3, Wavelet::irreversible_9_7})
    for (int amplitude : {100, 1 << 15, 1 << 20}) {
      test::SynthSpec s;
      s.image = {3, 1, 3 + 157, 1 + 91};
      s.levels = 5;
      s.wavelet = w;
      s.amplitude = amplitude;
      s.seed = static_cast<std::uint32_t>(amplitude + static_cast<int>(w));
      expect_planar_match(*rec_, test::make_synthetic_frame(s), w, "amplitude " + std::to_string(amplitude));
    }
}

TEST_F(CudaPlanar, HostileFiveThreeBandsAreClampedLikeTheCpu) {
  // A checkerboard of the largest stored values in every band: unclamped, the lower levels'
  // samples grow past 2^26 and the lifting sums past 2^31 within 8 levels. Both sides clamp
  // every level's inputs to +-2^26 (idwt_kernels.inl, kernels.cu), so they agree exactly; the
  // component transform and the store see bounded samples too.
  for (bool mct : {false, true}) {
    test::SynthSpec s;
    s.image = {0, 0, 256, 256};
    s.levels = 8;
    s.precision = 16;
    s.checkerboard = true;
    s.amplitude = 1 << 28;
    s.mct = mct;
    if (mct) s.dx = s.dy = {1, 1, 1};
    expect_planar_match(*rec_, test::make_synthetic_frame(s), Wavelet::reversible_5_3, mct ? "RCT" : "one component");
  }
}

TEST_F(CudaPlanar, SubsamplingMctSignedReduceAndTiles) {
  struct Case {
    const char* name;
    std::vector<int> dx, dy;
    bool mct, is_signed;
    int reduce, precision, tile_w, tile_h;
  };
  const Case cases[] = {
      {"4:2:2 10-bit", {1, 2, 2}, {1, 1, 1}, false, false, 0, 10, 0, 0},
      {"4:2:0 8-bit", {1, 2, 2}, {1, 2, 2}, false, false, 0, 8, 0, 0},
      {"RGB + MCT 12-bit", {1, 1, 1}, {1, 1, 1}, true, false, 0, 12, 0, 0},
      {"signed 4 components", {1, 1, 1, 1}, {1, 1, 1, 1}, false, true, 0, 10, 0, 0},
      {"reduce 2", {1, 2, 2}, {1, 1, 1}, false, false, 2, 10, 0, 0},
      {"MCT + reduce 1", {1, 1, 1}, {1, 1, 1}, true, false, 1, 8, 0, 0},
      {"tiles 64x48 odd origin", {1, 2, 2}, {1, 1, 1}, false, false, 0, 10, 64, 48},
      {"tiles + MCT + reduce", {1, 1, 1}, {1, 1, 1}, true, false, 1, 10, 70, 50},
  };
  std::uint32_t seed = 500;
  for (const Case& c : cases)
    for (Wavelet w : {Wavelet::reversible_5_3, Wavelet::irreversible_9_7}) {
      const test::SynthSpec s{.image = {5, 3, 5 + 211, 3 + 143},
                              .tile_x0 = c.tile_w ? 1 : 0,
                              .tile_y0 = c.tile_h ? 2 : 0,
                              .tile_w = c.tile_w,
                              .tile_h = c.tile_h,
                              .dx = c.dx,
                              .dy = c.dy,
                              .precision = c.precision,
                              .is_signed = c.is_signed,
                              .levels = 4,
                              .reduce = c.reduce,
                              .wavelet = w,
                              .mct = c.mct,
                              .seed = seed++};
      expect_planar_match(*rec_, test::make_synthetic_frame(s), w,
                          std::string(c.name) + (w == Wavelet::reversible_5_3 ? " 5/3" : " 9/7"));
    }
}

TEST_F(CudaPlanar, SlotsPipelineAndRefuseAFullPipeline) {
  test::SynthSpec s;
  s.image = {0, 0, 333, 222};
  s.dx = {1, 2, 2};
  s.dy = {1, 1, 1};
  std::vector<decoder::CoefficientFrame> frames;
  for (std::uint32_t i = 0; i < 3; ++i) {
    s.seed = 900 + i;
    frames.push_back(test::make_synthetic_frame(s));
  }
  gpu::ReconstructRequest req;
  auto t0 = rec_->submit(frames[0], req);
  auto t1 = rec_->submit(frames[1], req);  // uploads while frame 0's kernels run
  ASSERT_TRUE(t0.ok() && t1.ok());
  auto t2 = rec_->submit(frames[2], req);
  ASSERT_FALSE(t2.ok());
  EXPECT_EQ(t2.error().kind, ErrorKind::limit);
  for (int k = 0; k < 2; ++k) {
    auto img = rec_->collect(k == 0 ? *t0 : *t1);
    ASSERT_TRUE(img.ok()) << img.error().message;
    EXPECT_EQ(max_diff(*decoder::reconstruct(frames[static_cast<std::size_t>(k)]), *img), 0);
  }
  // Same geometry again: no new allocation.
  const std::size_t bytes = rec_->device_bytes();
  ASSERT_TRUE(rec_->reconstruct(frames[2], req).ok());
  EXPECT_EQ(rec_->device_bytes(), bytes);
}

// ---- Display conversion vs gpu::to_rgba8 / to_rgb10a2 ---------------------------------------

namespace {

PlanarImage random_planes(int w, int h, int bits, int dx, int dy, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> v(0, (1 << bits) - 1);
  PlanarImage img;
  img.width = w;
  img.height = h;
  for (int c = 0; c < 3; ++c) {
    Plane p;
    p.dx = c ? dx : 1;
    p.dy = c ? dy : 1;
    p.width = (w + p.dx - 1) / p.dx;
    p.height = (h + p.dy - 1) / p.dy;
    p.precision = bits;
    p.samples.resize(static_cast<std::size_t>(p.width) * p.height);
    for (auto& s : p.samples) s = v(rng);
    img.planes.push_back(std::move(p));
  }
  return img;
}

int compare_rgba(const std::vector<std::uint32_t>& gpu_px, const gpu::RgbaImage& cpu) {
  int worst = 0;
  for (std::size_t i = 0; i < gpu_px.size(); ++i)
    for (int k = 0; k < 4; ++k)
      worst = std::max(worst, std::abs(static_cast<int>((gpu_px[i] >> (8 * k)) & 255) - cpu.pixels[4 * i + static_cast<std::size_t>(k)]));
  return worst;
}

int compare_rgb10(const std::vector<std::uint32_t>& gpu_px, const gpu::Rgb10A2Image& cpu) {
  int worst = 0;
  for (std::size_t i = 0; i < gpu_px.size(); ++i)
    for (int k = 0; k < 3; ++k)
      worst = std::max(worst, std::abs(static_cast<int>((gpu_px[i] >> (10 * k)) & 1023) -
                                       static_cast<int>((cpu.pixels[i] >> (10 * k)) & 1023)));
  return worst;
}

}  // namespace

TEST(CudaColour, MatricesRangesDepthsAndSubsamplingWithinOne) {
  J2K_REQUIRE_CUDA();
  test::DeviceImage out;
  int n = 0;
  for (int bits : {8, 10, 12})
    for (auto [dx, dy] : {std::pair{1, 1}, std::pair{2, 1}, std::pair{2, 2}})
      for (auto [w, h] : {std::pair{41, 39}, std::pair{1, 17}, std::pair{17, 1}, std::pair{1919, 1081}})
        for (ColourCoding coding : {ColourCoding::ycbcr_bt601, ColourCoding::ycbcr_bt709, ColourCoding::ycbcr_bt2020, ColourCoding::rgb})
          for (bool full : {false, true}) {
            if (w * h > 100000 && (coding != ColourCoding::ycbcr_bt709 || full)) continue;  // big size: one combination
            PlanarImage img = random_planes(w, h, bits, dx, dy, static_cast<std::uint32_t>(++n));
            const gpu::ColourInterpretation ci{coding, full};
            for (gpu::OutputFormat f : {gpu::OutputFormat::rgba8, gpu::OutputFormat::rgb10a2}) {
              ASSERT_TRUE(out.allocate(w, h, f));
              ASSERT_TRUE(gpu::upload_and_convert(img, ci, out.target, nullptr));
              auto px = out.download();
              const std::string label = std::to_string(w) + "x" + std::to_string(h) + " " + std::to_string(bits) +
                                        "-bit /" + std::to_string(dx) + "x" + std::to_string(dy) + " " + to_string(coding) +
                                        (full ? " full" : " narrow");
              if (f == gpu::OutputFormat::rgba8) {
                gpu::RgbaImage cpu;
                ASSERT_TRUE(gpu::to_rgba8(img, ci, cpu));
                EXPECT_LE(compare_rgba(px, cpu), 1) << label << " RGBA8";
              } else {
                gpu::Rgb10A2Image cpu;
                ASSERT_TRUE(gpu::to_rgb10a2(img, ci, cpu));
                EXPECT_LE(compare_rgb10(px, cpu), 1) << label << " RGB10_A2";
              }
            }
          }
}

TEST(CudaColour, HdrPqAndHlgMappedForTheSdrDisplayWithinOne) {
  // hdr_to_sdr on the device (kernels.cu) against the CPU's: random codes (every signal level,
  // colours far outside BT.709) and a photograph graded into HDR, at both output depths.
  J2K_REQUIRE_CUDA();
  test::DeviceImage out;
  std::vector<PlanarImage> pictures;
  for (int bits : {10, 12}) pictures.push_back(random_planes(257, 63, bits, 2, 1, static_cast<std::uint32_t>(bits)));
  pictures.push_back(random_planes(64, 32, 10, 1, 1, 5));  // 4:4:4 too
  auto rgb = media::load_rgb(test::media_path("flower.png"));
  ASSERT_TRUE(rgb.ok());
  for (const TransferFunction t : {TransferFunction::pq, TransferFunction::hlg})
    pictures.push_back(media::rgb_to_ycbcr_hdr(media::crop(*rgb, 900, 500, 320, 180), 10, 2, t));
  for (const TransferFunction t : {TransferFunction::pq, TransferFunction::hlg})
    for (ColourCoding coding : {ColourCoding::ycbcr_bt2020, ColourCoding::rgb})
      for (std::size_t i = 0; i < pictures.size(); ++i) {
        const PlanarImage& img = pictures[i];
        if (coding == ColourCoding::rgb && img.planes[1].dx != 1) continue;
        const gpu::ColourInterpretation ci{coding, false, t};
        const std::string label = std::string(to_string(t)) + " " + to_string(coding) + " picture " + std::to_string(i);
        ASSERT_TRUE(out.allocate(img.width, img.height, gpu::OutputFormat::rgba8));
        ASSERT_TRUE(gpu::upload_and_convert(img, ci, out.target, nullptr));
        gpu::RgbaImage cpu8;
        ASSERT_TRUE(gpu::to_rgba8(img, ci, cpu8));
        EXPECT_LE(compare_rgba(out.download(), cpu8), 1) << label << " RGBA8";
        ASSERT_TRUE(out.allocate(img.width, img.height, gpu::OutputFormat::rgb10a2));
        ASSERT_TRUE(gpu::upload_and_convert(img, ci, out.target, nullptr));
        gpu::Rgb10A2Image cpu10;
        ASSERT_TRUE(gpu::to_rgb10a2(img, ci, cpu10));
        EXPECT_LE(compare_rgb10(out.download(), cpu10), 1) << label << " RGB10_A2";
      }
}

TEST(CudaColour, DigitalCinemaXyzWithinOne) {
  // dci_xyz_to_display on the device against the CPU's: random 12-bit codes and a photograph.
  J2K_REQUIRE_CUDA();
  test::DeviceImage out;
  auto rgb = media::load_rgb(test::media_path("flower.png"));
  ASSERT_TRUE(rgb.ok());
  const std::vector<PlanarImage> pictures = {random_planes(129, 65, 12, 1, 1, 17),
                                             media::rgb_to_dci_xyz(media::crop(*rgb, 700, 400, 256, 144), 12)};
  for (std::size_t i = 0; i < pictures.size(); ++i) {
    const gpu::ColourInterpretation ci{ColourCoding::xyz, true};
    ASSERT_TRUE(out.allocate(pictures[i].width, pictures[i].height, gpu::OutputFormat::rgba8));
    ASSERT_TRUE(gpu::upload_and_convert(pictures[i], ci, out.target, nullptr));
    gpu::RgbaImage cpu8;
    ASSERT_TRUE(gpu::to_rgba8(pictures[i], ci, cpu8));
    EXPECT_LE(compare_rgba(out.download(), cpu8), 1) << "picture " << i << " RGBA8";
    ASSERT_TRUE(out.allocate(pictures[i].width, pictures[i].height, gpu::OutputFormat::rgb10a2));
    ASSERT_TRUE(gpu::upload_and_convert(pictures[i], ci, out.target, nullptr));
    gpu::Rgb10A2Image cpu10;
    ASSERT_TRUE(gpu::to_rgb10a2(pictures[i], ci, cpu10));
    EXPECT_LE(compare_rgb10(out.download(), cpu10), 1) << "picture " << i << " RGB10_A2";
  }
}

TEST(CudaColour, GreyPicture) {
  J2K_REQUIRE_CUDA();
  PlanarImage img = random_planes(37, 29, 12, 1, 1, 77);
  img.planes.resize(1);
  test::DeviceImage out;
  ASSERT_TRUE(out.allocate(37, 29, gpu::OutputFormat::rgba8));
  ASSERT_TRUE(gpu::upload_and_convert(img, {}, out.target, nullptr));
  gpu::RgbaImage cpu;
  ASSERT_TRUE(gpu::to_rgba8(img, {}, cpu));
  EXPECT_LE(compare_rgba(out.download(), cpu), 1);
}

TEST(CudaColour, FieldWeaveMatchesTheCpuWeave) {
  J2K_REQUIRE_CUDA();
  for (bool top_first : {true, false}) {
    PlanarImage a = random_planes(45, 21, 10, 2, 2, 5), b = random_planes(45, 20, 10, 2, 2, 6);
    test::DeviceImage out;
    ASSERT_TRUE(out.allocate(45, 41, gpu::OutputFormat::rgba8));
    gpu::DeviceTarget ta = out.target, tb = out.target;
    ta.row0 = top_first ? 0 : 1;
    tb.row0 = top_first ? 1 : 0;
    ta.row_step = tb.row_step = 2;
    ASSERT_TRUE(gpu::upload_and_convert(a, {}, ta, nullptr));
    ASSERT_TRUE(gpu::upload_and_convert(b, {}, tb, nullptr));
    gpu::RgbaImage ca, cb;
    ASSERT_TRUE(gpu::to_rgba8(a, {}, ca));
    ASSERT_TRUE(gpu::to_rgba8(b, {}, cb));
    auto woven = gpu::weave_fields(ca, cb, top_first);
    ASSERT_TRUE(woven.ok());
    if (!top_first) continue;  // first field 21 rows as bottom field: frame row 40 stays undefined
    EXPECT_LE(compare_rgba(out.download(), *woven), 1) << (top_first ? "top first" : "bottom first");
  }
}

// ---- Display straight from coefficients (fused and planar paths) vs CPU twins ------------

TEST(CudaDisplay, FusedAndPlanarPathsMatchTheCpu) {
  J2K_REQUIRE_CUDA();
  for (bool zero_copy : {false, true}) {
    gpu::CudaReconstructor::Options ro;
    ro.zero_copy = zero_copy;
    auto rec = gpu::CudaReconstructor::create(ro);
    ASSERT_TRUE(rec.ok());
    struct Case {
      const char* name;
      std::vector<int> dx, dy;
      bool mct;
      int tile_w;
    };
    const Case cases[] = {{"4:2:2", {1, 2, 2}, {1, 1, 1}, false, 0},
                          {"4:2:0", {1, 2, 2}, {1, 2, 2}, false, 0},
                          {"RGB MCT", {1, 1, 1}, {1, 1, 1}, true, 0},
                          {"4:2:2 tiles", {1, 2, 2}, {1, 1, 1}, false, 50},
                          {"grey", {1}, {1}, false, 0}};
    std::uint32_t seed = 1234;
    for (const Case& c : cases)
      for (Wavelet w : {Wavelet::reversible_5_3, Wavelet::irreversible_9_7})
        for (bool planar : {false, true}) {
          // Odd origins where every component is full size; even ones where chroma is
          // subsampled (to_rgba8 needs the chroma planes to cover the picture). Amplitude 300:
          // displayable values, not only clipped ones.
          const bool subsampled = c.dx.size() > 1 && c.dx[1] > 1;
          const test::SynthSpec s{.image = subsampled ? decoder::Rect{4, 6, 4 + 181, 6 + 97} : decoder::Rect{3, 5, 3 + 181, 5 + 97},
                                  .tile_w = c.tile_w,
                                  .tile_h = c.tile_w,
                                  .dx = c.dx,
                                  .dy = c.dy,
                                  .levels = 4,
                                  .wavelet = w,
                                  .mct = c.mct,
                                  .amplitude = 300,
                                  .seed = seed++};
          const auto frame = test::make_synthetic_frame(s);
          auto cpu = decoder::reconstruct(frame);
          ASSERT_TRUE(cpu.ok());
          gpu::RgbaImage want;
          ASSERT_TRUE(gpu::to_rgba8(*cpu, {}, want));
          test::DeviceImage out;
          ASSERT_TRUE(out.allocate(cpu->width, cpu->height, gpu::OutputFormat::rgba8));
          gpu::ReconstructRequest req;
          req.planar = planar;
          req.target = &out.target;
          auto img = (*rec)->reconstruct(frame, req);
          ASSERT_TRUE(img.ok()) << img.error().message;
          const std::string label = std::string(c.name) + (w == Wavelet::reversible_5_3 ? " 5/3" : " 9/7") +
                                    (planar ? " planar" : " fused") + (zero_copy ? " zero-copy" : "");
          EXPECT_LE(compare_rgba(out.download(), want), 1) << label;
          if (planar) {
            EXPECT_LE(max_diff(*cpu, *img), w == Wavelet::reversible_5_3 ? 0 : 1) << label;
          }
        }
  }
}

// ---- Real photographs: codestreams from flower.png crops (made by gpu_corpus_maker) ---------

TEST(CudaPhoto, PlanarAndDisplayMatchTheCpuOnEveryCorpusCodestream) {
  J2K_REQUIRE_CUDA();
  const std::filesystem::path dir = corpus_dir();
  if (!std::filesystem::exists(dir)) GTEST_SKIP() << "SKIPPED: no corpus at " << dir << " (run gpu_corpus_maker)";
  auto rec = gpu::CudaReconstructor::create();
  ASSERT_TRUE(rec.ok());
  int files = 0;
  std::vector<std::filesystem::path> paths;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().extension() == ".j2k") paths.push_back(e.path());
  std::sort(paths.begin(), paths.end());
  for (const auto& p : paths) {
    const auto bytes = read_file(p);
    for (int reduce : {0, 1, 3}) {
      decoder::DecodeOptions opt;
      opt.threads = 4;
      opt.reduce = reduce;
      auto frame = decoder::decode_coefficients(bytes, opt);
      if (!frame.ok()) {
        EXPECT_GT(reduce, 0) << p << ": " << frame.error().message;
        continue;
      }
      const Wavelet w = frame->tiles.at(0).components.at(0).wavelet;
      const std::string label = p.filename().string() + " reduce " + std::to_string(reduce);
      expect_planar_match(**rec, *frame, w, label);
      // Display: GPU straight from coefficients vs CPU reconstruct + to_rgba8.
      auto cpu = decoder::reconstruct(*frame);
      ASSERT_TRUE(cpu.ok());
      test::DeviceImage out;
      ASSERT_TRUE(out.allocate(cpu->width, cpu->height, gpu::OutputFormat::rgba8));
      gpu::ReconstructRequest req;
      req.planar = false;
      req.target = &out.target;
      ASSERT_TRUE((*rec)->reconstruct(*frame, req).ok()) << label;
      gpu::RgbaImage cpu_rgba;
      ASSERT_TRUE(gpu::to_rgba8(*cpu, {}, cpu_rgba));
      EXPECT_LE(compare_rgba(out.download(), cpu_rgba), 1) << label;
    }
    ++files;
  }
  std::printf("[ info ] %d corpus codestreams compared\n", files);
  EXPECT_GT(files, 0);
}

TEST(CudaPhoto, CudaDecoderBackendMatchesTheOwnDecoder) {
  J2K_REQUIRE_CUDA();
  const std::filesystem::path dir = corpus_dir();
  if (!std::filesystem::exists(dir)) GTEST_SKIP() << "SKIPPED: no corpus at " << dir;
  auto dec = gpu::make_cuda_decoder_typed({gpu::GpuMode::on});
  ASSERT_TRUE(dec.ok()) << dec.error().message;
  auto own = decoder::make_own_decoder();
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.path().extension() != ".j2k") continue;
    const auto bytes = read_file(e.path());
    decoder::DecodeOptions opt;
    opt.threads = 4;
    auto a = own->decode(bytes, opt);
    auto b = (*dec)->decode(bytes, opt);
    ASSERT_TRUE(a.ok() && b.ok()) << e.path();
    const bool reversible = e.path().string().find("_53") != std::string::npos;
    EXPECT_LE(max_diff(*a, *b), reversible ? 0 : 1) << e.path();  // 9/7: within 1 after rounding
    EXPECT_TRUE((*dec)->gpu_active());
  }
}

// Review 2026-11-29: a codestream asking for the component transform over components of
// different sizes (4:2:2 with MCT) is decoded untransformed and its tiles counted; the GPU's
// reconstruction decoded it the same way but did not count them.
TEST(CudaPhoto, AComponentTransformThatCannotApplyIsCountedOnTheGpuToo) {
  J2K_REQUIRE_CUDA();
  auto bytes = test::read_corpus({"1919x1081_422_10_97.j2k"});
  if (bytes.empty()) GTEST_SKIP() << "SKIPPED: no corpus file 1919x1081_422_10_97.j2k";
  // COD's SGcod: progression order, layers (2 bytes), then the multiple component transform.
  std::size_t cod = 2;
  while (cod + 4 <= bytes.size() && !(bytes[cod] == 0xFF && bytes[cod + 1] == 0x52)) cod += 2 + (bytes[cod + 2] << 8 | bytes[cod + 3]);
  ASSERT_LT(cod + 9, bytes.size());
  ASSERT_EQ(bytes[cod + 8], 0) << "the corpus frame has no transform";
  bytes[cod + 8] = 1;
  decoder::DecodeOptions opt;
  opt.threads = 4;
  auto own = decoder::make_own_decoder();
  auto a = own->decode(bytes, opt);
  ASSERT_TRUE(a.ok()) << a.error().message;
  ASSERT_GE(own->last_stats().transform_skipped_tiles, 1u);
  for (gpu::Tier1Mode tier1 : {gpu::Tier1Mode::cpu, gpu::Tier1Mode::gpu}) {
    gpu::CudaDecoderOptions o;
    o.mode = gpu::GpuMode::on;
    o.tier1 = tier1;
    auto dec = gpu::make_cuda_decoder_typed(o);
    ASSERT_TRUE(dec.ok()) << dec.error().message;
    auto b = (*dec)->decode(bytes, opt);
    ASSERT_TRUE(b.ok()) << b.error().message;
    EXPECT_LE(max_diff(*a, *b), 1);
    EXPECT_EQ((*dec)->last_stats().transform_skipped_tiles, own->last_stats().transform_skipped_tiles)
        << (tier1 == gpu::Tier1Mode::gpu ? "GPU tier-1" : "CPU tier-1");
  }
}

/// The display-path tests' picture (the corpus's 1919x1081 4:2:2 10-bit 9/7 codestream), what
/// the CPU path makes of it, and a CUDA decoder (GPU on).
struct DisplayCase {
  std::vector<std::uint8_t> bytes;
  decoder::DecodeOptions opt{.threads = 4};
  test::CpuPicture cpu;
  std::unique_ptr<gpu::CudaDecoder> dec;
};

/// Skips the test without a CUDA device or the corpus file; fatal when the reference or the
/// decoder cannot be made. Call it inside ASSERT_NO_FATAL_FAILURE, then return if IsSkipped().
void display_case(DisplayCase& c) {
  J2K_REQUIRE_CUDA();
  c.bytes = test::read_corpus({"1919x1081_422_10_97.j2k"});
  if (c.bytes.empty()) GTEST_SKIP() << "SKIPPED: no corpus file 1919x1081_422_10_97.j2k";
  ASSERT_NO_FATAL_FAILURE(test::cpu_picture(c.bytes, c.opt, c.cpu));
  auto dec = gpu::make_cuda_decoder_typed({gpu::GpuMode::on});
  ASSERT_TRUE(dec.ok()) << dec.error().message;
  c.dec = std::move(dec).value();
}

TEST(CudaPhoto, DecoderDisplayPathWeavesTwoFieldPictures) {
  DisplayCase c;
  ASSERT_NO_FATAL_FAILURE(display_case(c));
  if (IsSkipped()) return;
  const auto& [bytes, opt, reference, dec] = c;
  const PlanarImage& cpu = reference.planar;
  const gpu::RgbaImage& field = reference.rgba;
  // The same picture as both fields of a frame of twice its height, bottom field first.
  test::DeviceImage out;
  ASSERT_TRUE(out.allocate(cpu.width, 2 * cpu.height, gpu::OutputFormat::rgba8));
  for (int f = 0; f < 2; ++f) {
    gpu::DeviceTarget t = out.target;
    t.row0 = f == 0 ? 1 : 0;  // first field decoded is the bottom one
    t.row_step = 2;
    auto r = dec->decode_to_device(bytes, opt, t, {}, f == 1);
    ASSERT_TRUE(r.ok()) << r.error().message;
    if (f == 1) {
      EXPECT_LE(max_diff(cpu, *r), 1);  // planar output on request, same picture (9/7: within 1)
    }
  }
  auto woven = gpu::weave_fields(field, field, false);
  ASSERT_TRUE(woven.ok());
  EXPECT_LE(compare_rgba(out.download(), *woven), 1);
  EXPECT_TRUE(dec->gpu_active());
  EXPECT_GT(dec->last_gpu_times().total_ms, 0.0);
}

// The player's device display pictures: a bounded pool. Holding every picture makes the
// next acquire fail (counted) instead of allocating; released pictures are reused; device
// memory stays at capacity x picture size however many frames go through.
TEST(DevicePool, BoundedCountedAndFlat) {
  DisplayCase c;
  ASSERT_NO_FATAL_FAILURE(display_case(c));
  if (IsSkipped()) return;
  const auto& [bytes, opt, reference, dec] = c;
  constexpr int kCapacity = 3;
  auto pool = gpu::DevicePicturePool::create(kCapacity);
  ASSERT_TRUE(pool.ok()) << pool.error().message;
  const PlanarImage& cpu = reference.planar;
  const gpu::RgbaImage& want = reference.rgba;
  const int w = cpu.width, h = cpu.height;
  const std::size_t bytes_per = static_cast<std::size_t>(w) * h * 4;

  // Frames held (by a slow display, say): the pool hands out `capacity` and then refuses.
  std::vector<std::shared_ptr<gpu::DevicePicture>> held;
  for (int i = 0; i < kCapacity; ++i) {
    auto pic = (*pool)->acquire(w, h);
    ASSERT_TRUE(pic.ok()) << pic.error().message;
    ASSERT_TRUE(dec->decode_to_device(bytes, opt, (*pic)->target(), {}).ok());
    held.push_back(std::move(pic).value());
  }
  for (int i = 0; i < 5; ++i) {
    auto refused = (*pool)->acquire(w, h);
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.error().kind, ErrorKind::limit) << refused.error().message;
  }
  auto st = (*pool)->stats();
  EXPECT_EQ(st.capacity, kCapacity);
  EXPECT_EQ(st.in_use, kCapacity);
  EXPECT_EQ(st.allocated, kCapacity);
  EXPECT_EQ(st.exhausted, 5u);
  EXPECT_EQ(st.device_bytes, kCapacity * bytes_per);
  for (const auto& pic : held) {
    gpu::RgbaImage got;
    ASSERT_TRUE(gpu::download(*pic, got));
    int worst = 0;
    for (std::size_t i = 0; i < got.pixels.size(); ++i)
      worst = std::max(worst, std::abs(int(got.pixels[i]) - int(want.pixels[i])));
    EXPECT_LE(worst, 1);
  }

  // Released pictures come back; many frames later the memory is what it was.
  std::size_t free_before = 0, free_after = 0, total = 0;
  (void)total;
#if J2K_HAVE_CUDA
  ASSERT_EQ(cudaMemGetInfo(&free_before, &total), cudaSuccess);
#endif
  held.clear();
  for (int i = 0; i < 200; ++i) {
    auto a = (*pool)->acquire(w, h);
    auto b = (*pool)->acquire(w, h);
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_NE((*a)->target().data, (*b)->target().data);
    if (i % 50 == 0) {
      ASSERT_TRUE(dec->decode_to_device(bytes, opt, (*a)->target(), {}).ok());
    }
  }
#if J2K_HAVE_CUDA
  ASSERT_EQ(cudaMemGetInfo(&free_after, &total), cudaSuccess);
#endif
  st = (*pool)->stats();
  EXPECT_EQ(st.in_use, 0);
  EXPECT_LE(st.allocated, kCapacity);
  EXPECT_EQ(st.device_bytes, static_cast<std::size_t>(st.allocated) * bytes_per);
  EXPECT_EQ(free_after, free_before) << "the pool grew";
  // Another size: a free buffer is reallocated, the count stays bounded.
  {
    auto small = (*pool)->acquire(64, 32);
    ASSERT_TRUE(small.ok());
    EXPECT_LE((*pool)->stats().allocated, kCapacity);
  }
  std::printf("[ info ] pool of %d: %llu acquired, %llu refused while all were held, %zu device bytes\n", kCapacity,
              static_cast<unsigned long long>((*pool)->stats().acquired),
              static_cast<unsigned long long>((*pool)->stats().exhausted), (*pool)->stats().device_bytes);
}

// Without CUDA (CI, the stub build) every new entry point reports "unavailable".
TEST(DevicePool, UnavailableWithoutCuda) {
  if (gpu::cuda_available()) GTEST_SKIP() << "SKIPPED: a CUDA device is present (the GPU tests cover it)";
  auto pool = gpu::DevicePicturePool::create(4);
  ASSERT_FALSE(pool.ok());
  EXPECT_EQ(pool.error().kind, ErrorKind::unsupported);
  auto presenter = gpu::CudaGlPresenter::create();
  ASSERT_FALSE(presenter.ok());
  EXPECT_EQ(presenter.error().kind, ErrorKind::unsupported);
}
