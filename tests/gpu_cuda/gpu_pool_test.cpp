// The CUDA reconstructor's slots after errors, and the GPU memory shared by decoders
// (issue 9 item 13), plus the backend's --tier1 gpu against --tier1 cpu.
#include <gtest/gtest.h>

#include <chrono>
#include <numeric>
#include <random>
#include <thread>
#include <vector>

#include "packetizer/openjpeg_encoder.hpp"
#include "core/work_pool.hpp"
#include "decoder/own_decoder.hpp"
#include "decoder/tier1_batch.hpp"
#include "gpu/cuda.hpp"
#include "gpu/cuda_decoder.hpp"
#include "gpu/cuda_reconstructor.hpp"
#include "gpu_test_util.hpp"

using namespace j2k;

namespace {

#define REQUIRE_CUDA()                                                                                        \
  do {                                                                                                        \
    if (!gpu::cuda_available()) GTEST_SKIP() << "SKIPPED: no CUDA device (" << gpu::cuda_describe() << ")"; \
  } while (0)

std::vector<std::uint8_t> textured_codestream(bool lossless, int w = 203, int h = 117) {
  PlanarImage img = test::textured_ycbcr(w, h, 10, 2, 7);
  packetizer::EncodeParams ep;
  ep.lossless = lossless;
  ep.layers = lossless ? 1 : 3;
  auto cs = packetizer::encode_openjpeg(img, ep);
  return cs.ok() ? *cs : std::vector<std::uint8_t>{};
}

bool same(const PlanarImage& a, const PlanarImage& b) {
  if (a.width != b.width || a.height != b.height || a.planes.size() != b.planes.size()) return false;
  for (std::size_t c = 0; c < a.planes.size(); ++c)
    if (a.planes[c].samples != b.planes[c].samples) return false;
  return true;
}

TEST(GpuSlots, AFailedCollectFreesItsSlot) {
  REQUIRE_CUDA();
  const auto cs = textured_codestream(true);
  ASSERT_FALSE(cs.empty());
  auto frame = decoder::decode_coefficients(cs, {});
  ASSERT_TRUE(frame.ok());
  gpu::CudaReconstructor::Options ro;
  ro.slots = 2;
  auto rec = gpu::CudaReconstructor::create(ro);
  ASSERT_TRUE(rec.ok()) << rec.error().message;
  gpu::ReconstructRequest req;
  auto t0 = (*rec)->submit(*frame, req);
  auto t1 = (*rec)->submit(*frame, req);
  ASSERT_TRUE(t0.ok() && t1.ok());
  // The device cannot be selected when the frames are collected: both collects fail ...
  gpu::CudaReconstructorTestAccess::set_device(**rec, 9999);
  EXPECT_FALSE((*rec)->collect(*t0).ok());
  EXPECT_FALSE((*rec)->collect(*t1).ok());
  gpu::CudaReconstructorTestAccess::set_device(**rec, 0);
  // ... and leave no slot taken: the tickets are gone and new frames go through.
  auto again = (*rec)->collect(*t0);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().kind, ErrorKind::corrupt) << again.error().message;  // "no frame in flight"
  for (int i = 0; i < 3; ++i) {
    auto img = (*rec)->reconstruct(*frame, req);
    ASSERT_TRUE(img.ok()) << "frame " << i << ": " << img.error().message;
  }
}

TEST(GpuSlots, TheReconstructorLimitFollowsTheDeviceMemory) {
  constexpr std::size_t kGiB = std::size_t{1} << 30;
  EXPECT_EQ(gpu::reconstructor_limit_for_memory(0), 0);                 // no device
  EXPECT_EQ(gpu::reconstructor_limit_for_memory(2 * kGiB), 2);          // a small laptop GPU
  EXPECT_EQ(gpu::reconstructor_limit_for_memory(8 * kGiB), 2);
  EXPECT_EQ(gpu::reconstructor_limit_for_memory(16 * kGiB), 4);
  EXPECT_EQ(gpu::reconstructor_limit_for_memory(24 * kGiB), 6);         // RTX 4090
  EXPECT_EQ(gpu::reconstructor_limit_for_memory(79 * kGiB), 16);        // H100 80 GB (as reported)
  EXPECT_EQ(gpu::reconstructor_limit_for_memory(141 * kGiB), gpu::kMaxReconstructorsPerDevice);  // H200
}

TEST(GpuSlots, DecodersShareABoundedSetOfReconstructors) {
  REQUIRE_CUDA();
  const auto cs = textured_codestream(false);
  ASSERT_FALSE(cs.empty());
  auto want = decoder::make_own_decoder()->decode(cs, {});
  ASSERT_TRUE(want.ok());
  // More decoders than the device may have reconstructors: they share them.
  const int kWorkers = gpu::cuda_reconstructor_limit(0) + 2;
  std::vector<std::unique_ptr<gpu::CudaDecoder>> decoders;
  for (int i = 0; i < kWorkers; ++i) {
    auto d = gpu::make_cuda_decoder_typed({gpu::GpuMode::on});
    ASSERT_TRUE(d.ok()) << d.error().message;
    decoders.push_back(std::move(*d));
  }
  std::vector<int> ok(kWorkers, 0);
  std::vector<std::thread> threads;
  for (int i = 0; i < kWorkers; ++i)
    threads.emplace_back([&, i] {
      for (int f = 0; f < 5; ++f) {
        auto img = decoders[static_cast<std::size_t>(i)]->decode(cs, {});
        if (img.ok() && gpu::cuda_available()) ok[static_cast<std::size_t>(i)] += 1;
      }
    });
  for (std::thread& t : threads) t.join();
  for (int i = 0; i < kWorkers; ++i) EXPECT_EQ(ok[static_cast<std::size_t>(i)], 5) << "worker " << i;
  // More decoders than the limit, at most the device's limit of reconstructors (and their buffers).
  EXPECT_LE(gpu::cuda_reconstructors_alive(0), gpu::cuda_reconstructor_limit(0));
  EXPECT_LE(gpu::cuda_reconstructor_limit(0), gpu::kMaxReconstructorsPerDevice);
  EXPECT_GE(gpu::cuda_reconstructors_alive(0), 1);
  decoders.clear();
  EXPECT_EQ(gpu::cuda_reconstructors_alive(0), 0) << "the pool goes with the last decoder";
}

TEST(GpuTier1Backend, Tier1GpuEqualsTier1Cpu) {
  REQUIRE_CUDA();
  for (bool lossless : {true, false}) {
    const auto cs = textured_codestream(lossless, 1920, 1080);
    ASSERT_FALSE(cs.empty());
    decoder::DecodeOptions opt;
    opt.threads = 4;
    auto cpu = gpu::make_cuda_decoder_typed({gpu::GpuMode::on, 0, {}, gpu::Tier1Mode::cpu});
    auto gpu1 = gpu::make_cuda_decoder_typed({gpu::GpuMode::on, 0, {}, gpu::Tier1Mode::gpu});
    ASSERT_TRUE(cpu.ok() && gpu1.ok());
    auto a = (*cpu)->decode(cs, opt);
    auto b = (*gpu1)->decode(cs, opt);
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_FALSE((*cpu)->last_tier1_on_gpu());
    EXPECT_TRUE((*gpu1)->last_tier1_on_gpu());
    EXPECT_TRUE(same(*a, *b)) << (lossless ? "5/3" : "9/7");
    EXPECT_GT((*gpu1)->last_gpu_times().tier1_blocks, 0u);
    // The code-block bytes went to the GPU from where tier-2 gathered them (page-locked),
    // not through the staging copy (the backend's table must keep its memory resource).
    EXPECT_TRUE((*gpu1)->last_gpu_times().tier1_bytes_direct);
    // The display picture too.
    test::DeviceImage da, db;
    ASSERT_TRUE(da.allocate(a->width, a->height, gpu::OutputFormat::rgba8));
    ASSERT_TRUE(db.allocate(a->width, a->height, gpu::OutputFormat::rgba8));
    ASSERT_TRUE((*cpu)->decode_to_device(cs, opt, da.target, {}).ok());
    ASSERT_TRUE((*gpu1)->decode_to_device(cs, opt, db.target, {}).ok());
    EXPECT_EQ(da.download(), db.download());
  }
}

/// What the CPU tier-1 makes of `cs`: the planar picture and the display picture (RGBA8).
struct CpuReference {
  bool ok = false;
  PlanarImage planar;
  std::vector<std::uint32_t> display;
};
CpuReference cpu_reference(const std::vector<std::uint8_t>& cs, const decoder::DecodeOptions& opt) {
  CpuReference r;
  auto cpu = gpu::make_cuda_decoder_typed({gpu::GpuMode::on, 0, {}, gpu::Tier1Mode::cpu});
  if (!cpu.ok()) return r;
  auto img = (*cpu)->decode(cs, opt);
  test::DeviceImage d;
  if (!img.ok() || !d.allocate(img->width, img->height, gpu::OutputFormat::rgba8) ||
      !(*cpu)->decode_to_device(cs, opt, d.target, {}).ok())
    return r;
  r.display = d.download();
  r.planar = std::move(*img);
  r.ok = true;
  return r;
}

TEST(GpuTier1Backend, HybridSplitsEqualTier1Cpu) {
  // The heaviest K code-blocks on the CPU, the rest on the GPU: the same pictures for
  // K = 0, a few, all, and the cost model's choice; the counts as asked.
  REQUIRE_CUDA();
  const auto cs = textured_codestream(false, 1920, 1080);
  ASSERT_FALSE(cs.empty());
  decoder::DecodeOptions opt;
  opt.threads = 4;
  const CpuReference cpu_ref = cpu_reference(cs, opt);
  ASSERT_TRUE(cpu_ref.ok);
  const PlanarImage* ref = &cpu_ref.planar;
  const auto& ref_display = cpu_ref.display;
  std::size_t all = 0;
  for (long k : {0L, 7L, 1L << 30, -1L}) {
    auto hybrid = gpu::make_cuda_decoder_typed({gpu::GpuMode::on, 0, {}, gpu::Tier1Mode::gpu, k});
    ASSERT_TRUE(hybrid.ok());
    for (int frame = 0; frame < 3; ++frame) {  // the model calibrates between frames
      auto img = (*hybrid)->decode(cs, opt);
      ASSERT_TRUE(img.ok()) << "k " << k;
      EXPECT_TRUE((*hybrid)->last_tier1_on_gpu());
      EXPECT_TRUE(same(*ref, *img)) << "k " << k << " frame " << frame;
      const gpu::GpuTimes t = (*hybrid)->last_gpu_times();
      const std::size_t blocks = t.tier1_blocks + t.tier1_host_blocks;
      if (k == 0) all = blocks;
      EXPECT_EQ(blocks, all) << "every block decoded once";
      if (k >= 0) {
        EXPECT_EQ(t.tier1_host_blocks, std::min<std::size_t>(static_cast<std::size_t>(k), all));
      }
      if (k > 0) {
        EXPECT_GT(t.tier1_host_ms, 0.0);
      }
    }
    test::DeviceImage d;
    ASSERT_TRUE(d.allocate(ref->width, ref->height, gpu::OutputFormat::rgba8));
    ASSERT_TRUE((*hybrid)->decode_to_device(cs, opt, d.target, {}).ok());
    EXPECT_EQ(d.download(), ref_display) << "k " << k;
  }
  EXPECT_GT(all, 7u);
}

/// A frame as broadcast encoders write it: 32 x 32 code-blocks, CPRL, a tile-part per
/// component (tier-1 can start before tier-2 ends: CudaDecoderOptions::early_tier1).
std::vector<std::uint8_t> broadcast_codestream(bool lossless, int layers, int w = 1920, int h = 1080) {
  PlanarImage img = test::textured_ycbcr(w, h, 10, 2, 7);
  packetizer::EncodeParams ep;
  ep.lossless = lossless;
  ep.layers = layers;
  ep.codeblock = 32;
  ep.tile_part_per_component = true;
  auto cs = packetizer::encode_openjpeg(img, ep);
  return cs.ok() ? *cs : std::vector<std::uint8_t>{};
}

TEST(GpuTier1Backend, EarlyStartEqualsTier1Cpu) {
  // Tier-1 started on every resolution but the last while tier-2 reads the last ones: the
  // same pictures as the CPU's tier-1, whatever the split, frame after frame; and off.
  REQUIRE_CUDA();
  for (const auto& [lossless, layers] : {std::pair{false, 1}, std::pair{true, 1}, std::pair{false, 3}}) {
    const auto cs = broadcast_codestream(lossless, layers);
    ASSERT_FALSE(cs.empty());
    decoder::DecodeOptions opt;
    opt.threads = 4;
    const CpuReference cpu_ref = cpu_reference(cs, opt);
    ASSERT_TRUE(cpu_ref.ok);
    const PlanarImage* ref = &cpu_ref.planar;
    const auto& ref_display = cpu_ref.display;
    std::size_t all = 0;
    for (const bool early : {false, true})
      for (long k : {0L, 5L, -1L}) {
        const std::string what = std::string(lossless ? "5/3" : "9/7") + " layers " + std::to_string(layers) +
                                 (early ? " early" : " after tier-2") + " k " + std::to_string(k);
        auto dec = gpu::make_cuda_decoder_typed({gpu::GpuMode::on, 0, {}, gpu::Tier1Mode::gpu, k, false, early});
        ASSERT_TRUE(dec.ok());
        int started = 0;  // frames that started early (32 x 32 code-blocks: every one)
        for (int frame = 0; frame < 4; ++frame) {
          auto img = (*dec)->decode(cs, opt);
          ASSERT_TRUE(img.ok()) << what << ": " << img.error().message;
          EXPECT_TRUE(same(*ref, *img)) << what << " frame " << frame;
          const gpu::GpuTimes t = (*dec)->last_gpu_times();
          const std::size_t blocks = t.tier1_blocks + t.tier1_host_blocks + t.tier1_early_blocks;
          if (all == 0) all = blocks;
          EXPECT_EQ(blocks, all) << what << ": every block decoded once";
          if (t.tier1_early_blocks > 0) {
            ++started;
            EXPECT_GT(t.tier1_blocks, 0u) << what << ": the last resolutions' kernel";
          }
          if (k >= 0) {
            EXPECT_EQ(t.tier1_host_blocks, static_cast<std::size_t>(k)) << what;
          }
        }
        if (early) {
          EXPECT_EQ(started, 4) << what;
        } else {
          EXPECT_EQ(started, 0) << what;
        }
        {
          // On a pool shared with other frames, inside the frame's task (as j2kplay decodes):
          // the side share's loop takes the frame's urgency.
          WorkPool shared(4);
          WorkPool::Task task(shared, 3);
          decoder::DecodeOptions on_shared = opt;
          on_shared.pool = &shared;
          auto img = (*dec)->decode(cs, on_shared);
          ASSERT_TRUE(img.ok()) << what << " (shared pool): " << img.error().message;
          EXPECT_TRUE(same(*ref, *img)) << what << " (shared pool)";
          EXPECT_EQ((*dec)->last_gpu_times().tier1_early_blocks > 0, early) << what << " (shared pool)";
        }
        test::DeviceImage d;
        ASSERT_TRUE(d.allocate(ref->width, ref->height, gpu::OutputFormat::rgba8));
        ASSERT_TRUE((*dec)->decode_to_device(cs, opt, d.target, {}).ok());
        EXPECT_EQ(d.download(), ref_display) << what;
      }
  }
}

TEST(GpuTier1Backend, EarlyStartOnDamagedFramesDecodesAsOnTheCpu) {
  // Damage anywhere (the last resolutions' packets included, read after the start): the same
  // picture as the CPU's or the same error, and the decoder goes on with the next frame.
  REQUIRE_CUDA();
  const auto good = broadcast_codestream(false, 1, 640, 360);
  ASSERT_FALSE(good.empty());
  std::mt19937 rng(11);
  decoder::DecodeOptions opt;
  opt.threads = 4;
  auto cpu = gpu::make_cuda_decoder_typed({gpu::GpuMode::on, 0, {}, gpu::Tier1Mode::cpu});
  auto gpu1 = gpu::make_cuda_decoder_typed({gpu::GpuMode::on, 0, {}, gpu::Tier1Mode::gpu});
  ASSERT_TRUE(cpu.ok() && gpu1.ok());
  int compared = 0, started = 0;  // started: damaged frames decoded with an early start
  for (int i = 0; i < 60; ++i) {
    std::vector<std::uint8_t> bad = good;
    if (i % 3 == 0) {
      bad.resize(200 + rng() % (good.size() - 200));  // truncated
    } else {
      for (int k = 0; k < 1 + i % 8; ++k) bad[200 + rng() % (bad.size() - 200)] = static_cast<std::uint8_t>(rng());
    }
    for (bool strict : {false, true}) {
      decoder::DecodeOptions o = opt;
      o.strict = strict;
      auto a = (*cpu)->decode(bad, o);
      auto b = (*gpu1)->decode(bad, o);
      ASSERT_EQ(a.ok(), b.ok()) << "case " << i << (a.ok() ? "" : a.error().message) << (b.ok() ? "" : b.error().message);
      if (!a.ok()) continue;
      EXPECT_TRUE(same(*a, *b)) << "case " << i;
      EXPECT_EQ((*cpu)->last_stats().damaged_codeblocks, (*gpu1)->last_stats().damaged_codeblocks) << "case " << i;
      ++compared;
      if ((*gpu1)->last_gpu_times().tier1_early_blocks > 0) ++started;
    }
    auto again = (*gpu1)->decode(good, opt);  // a start left behind must not touch the next frame
    auto want = (*cpu)->decode(good, opt);
    ASSERT_TRUE(again.ok() && want.ok());
    EXPECT_TRUE(same(*again, *want)) << "after case " << i;
    EXPECT_GT((*gpu1)->last_gpu_times().tier1_early_blocks, 0u) << "after case " << i;  // the good frame started early
  }
  EXPECT_GT(compared, 30);
  EXPECT_GT(started, 5);  // the damage was read after the start in these
}

TEST(GpuTier1Backend, AnErrorOfTheCodestreamKeepsTier1OnTheGpu) {
  // --tier1 auto falls back to the CPU's tier-1 for good when the GPU's cannot decode what
  // the CPU can. A frame that fails on both (here a reduction past the stream's levels, as
  // the live pipeline's degrade control may ask once) is the codestream's error: it used to
  // turn GPU tier-1 off for the rest of the run.
  REQUIRE_CUDA();
  const auto cs = textured_codestream(false, 320, 180);
  ASSERT_FALSE(cs.empty());
  auto dec = gpu::make_cuda_decoder_typed({gpu::GpuMode::on, 0, {}, gpu::Tier1Mode::automatic});
  ASSERT_TRUE(dec.ok());
  decoder::DecodeOptions opt;
  opt.threads = 2;
  ASSERT_TRUE((*dec)->decode(cs, opt).ok());
  ASSERT_TRUE((*dec)->last_tier1_on_gpu());
  decoder::DecodeOptions too_far = opt;
  too_far.reduce = 20;
  auto failed = (*dec)->decode(cs, too_far);
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.error().kind, ErrorKind::unsupported);
  EXPECT_EQ((*dec)->tier1_fallbacks(), 0u);
  ASSERT_TRUE((*dec)->decode(cs, opt).ok());
  EXPECT_TRUE((*dec)->last_tier1_on_gpu());
}

#if J2K_HAVE_CUDA
/// GPU memory held as another program would hold it: all that cudaMalloc gives, in
/// shrinking pieces, until it gives nothing; freed with the object.
struct GpuMemoryHog {
  std::vector<void*> held;
  GpuMemoryHog() {
    for (std::size_t piece = std::size_t{1} << 30; piece >= (std::size_t{1} << 16);) {
      void* p = nullptr;
      if (cudaMalloc(&p, piece) == cudaSuccess) {
        held.push_back(p);
      } else {
        (void)cudaGetLastError();  // out of memory is not sticky: clear it for what follows
        piece /= 2;
      }
    }
  }
  ~GpuMemoryHog() {
    for (void* p : held) cudaFree(p);
  }
};
#else
struct GpuMemoryHog {  // no device to hold memory of (the test skips before it would)
  std::vector<void*> held;
};
#endif

TEST(GpuTier1Backend, AutoModeTriesTheGpuAgainAfterAFailure) {
  // GPU memory another program holds makes a larger frame's buffers fail: automatic mode
  // decodes it on the CPU (counted), and used to stay on the CPU for good, tier-1 and
  // reconstruction both. Now the GPU is tried again once the pause after the failure is
  // over (here: the next frame), and the pause is kept (here: an hour).
  REQUIRE_CUDA();
  const auto small = textured_codestream(false, 320, 180);
  const auto large = textured_codestream(false, 1920, 1080);
  ASSERT_FALSE(small.empty() || large.empty());
  decoder::DecodeOptions opt;
  opt.threads = 2;
  auto ref = decoder::make_own_decoder()->decode(large, opt);  // reconstructed on the CPU
  ASSERT_TRUE(ref.ok());
  const CpuReference gpu_ref = cpu_reference(large, opt);      // ... and on the GPU
  ASSERT_TRUE(gpu_ref.ok);
  // The reference's decoder is gone, and with it its reconstructors: none has buffers for
  // the large frame yet.
  ASSERT_EQ(gpu::cuda_reconstructors_alive(0), 0) << "a reconstructor from elsewhere holds buffers";
  gpu::CudaDecoderOptions retry_now{gpu::GpuMode::automatic, 0, {}, gpu::Tier1Mode::automatic};
  retry_now.gpu_retry_first = std::chrono::milliseconds(0);
  gpu::CudaDecoderOptions retry_later = retry_now;
  retry_later.gpu_retry_first = std::chrono::hours(1);
  retry_later.gpu_retry_most = std::chrono::hours(1);
  auto now = gpu::make_cuda_decoder_typed(retry_now);
  auto later = gpu::make_cuda_decoder_typed(retry_later);
  ASSERT_TRUE(now.ok() && later.ok());
  for (auto* dec : {now->get(), later->get()}) {
    ASSERT_TRUE(dec->decode(small, opt).ok());
    ASSERT_TRUE(dec->last_tier1_on_gpu());
  }
  {
    GpuMemoryHog hog;
    ASSERT_FALSE(hog.held.empty());
    for (auto* dec : {now->get(), later->get()}) {
      auto img = dec->decode(large, opt);
      ASSERT_TRUE(img.ok()) << img.error().message;
      EXPECT_TRUE(same(*ref, *img));
      EXPECT_FALSE(dec->last_tier1_on_gpu());
      EXPECT_FALSE(dec->gpu_active());
      EXPECT_EQ(dec->tier1_fallbacks(), 1u);
      EXPECT_NE(dec->last_gpu_error().find("memory"), std::string::npos) << dec->last_gpu_error();
    }
  }
  // The memory is free again.
  auto img = (*now)->decode(large, opt);
  ASSERT_TRUE(img.ok()) << img.error().message;
  EXPECT_TRUE(same(gpu_ref.planar, *img));
  EXPECT_TRUE((*now)->last_tier1_on_gpu());
  EXPECT_TRUE((*now)->gpu_active());
  EXPECT_EQ((*now)->tier1_fallbacks(), 1u);
  img = (*later)->decode(large, opt);  // still within its pause: the CPU, nothing counted again
  ASSERT_TRUE(img.ok()) << img.error().message;
  EXPECT_TRUE(same(*ref, *img));
  EXPECT_FALSE((*later)->last_tier1_on_gpu());
  EXPECT_FALSE((*later)->gpu_active());
  EXPECT_EQ((*later)->tier1_fallbacks(), 1u);
}

TEST(GpuTier1Backend, DecodeIntoWritesIntoTheGivenPicturesPages) {
  // The live pipeline decodes each frame into the last frame's picture (decode_into). The
  // GPU backend used to fill a fresh picture instead: 66 MB of new pages per 2160 4:2:2
  // frame, ~5 ms of a decode worker's 17 on the GPU machine (the per-frame debug log).
  // Now the planes keep their memory, on the GPU path and on the CPU's fallback alike.
  REQUIRE_CUDA();
  const auto cs = textured_codestream(false, 640, 360);
  ASSERT_FALSE(cs.empty());
  decoder::DecodeOptions opt;
  opt.threads = 2;
  for (const auto tier1 : {gpu::Tier1Mode::gpu, gpu::Tier1Mode::cpu}) {
    auto dec = gpu::make_cuda_decoder_typed({gpu::GpuMode::on, 0, {}, tier1});
    ASSERT_TRUE(dec.ok());
    auto want = (*dec)->decode(cs, opt);
    ASSERT_TRUE(want.ok());
    PlanarImage pic;
    ASSERT_TRUE((*dec)->decode_into(cs, opt, pic).ok());
    EXPECT_TRUE(same(*want, pic));
    std::vector<const std::int32_t*> pages;
    for (const auto& p : pic.planes) pages.push_back(p.samples.data());
    for (auto& p : pic.planes) std::fill(p.samples.begin(), p.samples.end(), -1);  // nothing stale passes
    ASSERT_TRUE((*dec)->decode_into(cs, opt, pic).ok());
    EXPECT_TRUE(same(*want, pic)) << gpu::to_string(tier1);
    ASSERT_EQ(pic.planes.size(), pages.size());
    for (std::size_t c = 0; c < pages.size(); ++c) EXPECT_EQ(pic.planes[c].samples.data(), pages[c]) << "plane " << c;
  }
}

TEST(GpuTier1Early, TheReconstructorsStartContract) {
  // CudaReconstructor::start_tier1 / cancel_tier1 directly. Refused: a table that lies, a
  // split naming a row outside the table, a frame that asks for a start that was not made;
  // each leaves nothing behind (the next frame's picture is the CPU's). A start that no
  // submit takes, or that was cancelled, is void; a start that the submit takes, with or
  // without a CPU share of the early rows, gives the CPU's picture.
  REQUIRE_CUDA();
  const auto cs = broadcast_codestream(false, 1, 640, 360);
  ASSERT_FALSE(cs.empty());
  decoder::DecodeOptions opt;
  opt.threads = 4;
  const CpuReference cpu_ref = cpu_reference(cs, opt);
  ASSERT_TRUE(cpu_ref.ok);
  // The table as the backend holds it (pinned bytes); its first rows are the early ones.
  decoder::CoefficientDecoder dec;
  decoder::Tier1Batch batch{gpu::cuda_pinned_resource()};
  decoder::EarlyTier1 early;
  early.start = [](const decoder::Tier1Batch&) {};
  auto frame = dec.decode_deferred(cs, opt, batch, nullptr, &early);
  ASSERT_TRUE(frame.ok());
  ASSERT_TRUE(early.kept);
  ASSERT_GT(early.rows, 8u);
  const std::size_t n = batch.blocks.size();
  ASSERT_GT(n, early.rows);
  std::vector<std::uint32_t> early_rows(early.rows), late(n - early.rows);
  std::iota(early_rows.begin(), early_rows.end(), 0u);
  std::iota(late.begin(), late.end(), static_cast<std::uint32_t>(early.rows));
  auto rec = gpu::CudaReconstructor::create();
  ASSERT_TRUE(rec.ok()) << rec.error().message;
  auto expect_next_frame_right = [&](const std::string& what) {
    gpu::ReconstructRequest plain;
    plain.tier1 = &batch;
    auto img = (*rec)->reconstruct(*frame, plain);
    ASSERT_TRUE(img.ok()) << what << ": " << img.error().message;
    EXPECT_TRUE(same(cpu_ref.planar, *img)) << what;
  };
  expect_next_frame_right("first");

  decoder::Tier1Batch lying = batch;
  lying.blocks[1].seg_count = 60000;  // segments past the table's
  auto refused = (*rec)->start_tier1(lying, early_rows, {});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().kind, ErrorKind::corrupt);
  expect_next_frame_right("after a lying table");

  const std::vector<std::uint32_t> outside{static_cast<std::uint32_t>(n)};
  refused = (*rec)->start_tier1(batch, outside, {});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().kind, ErrorKind::corrupt);
  expect_next_frame_right("after a row outside the table");

  // The share of a frame started early: the last resolutions' rows all on the GPU.
  gpu::Tier1HostShare share;
  share.gpu_rows = late;
  share.decode = [](std::span<const std::uint32_t>, std::int32_t*) -> Result<std::uint64_t> { return std::uint64_t{0}; };
  gpu::ReconstructRequest taken;
  taken.tier1 = &batch;
  taken.tier1_share = &share;
  taken.tier1_early = true;
  share.early_rows = early_rows;
  auto not_started = (*rec)->reconstruct(*frame, taken);
  ASSERT_FALSE(not_started.ok());
  EXPECT_EQ(not_started.error().kind, ErrorKind::corrupt);
  expect_next_frame_right("after a frame that claimed a start");

  ASSERT_TRUE((*rec)->start_tier1(batch, early_rows, {}).ok());
  expect_next_frame_right("a start that no submit took");
  ASSERT_TRUE((*rec)->start_tier1(batch, early_rows, {}).ok());
  (*rec)->cancel_tier1();
  expect_next_frame_right("a cancelled start");

  ASSERT_TRUE((*rec)->start_tier1(batch, early_rows, {}).ok());
  auto img = (*rec)->reconstruct(*frame, taken);
  ASSERT_TRUE(img.ok()) << img.error().message;
  EXPECT_TRUE(same(cpu_ref.planar, *img)) << "a start taken";

  // Its first rows on the CPU meanwhile (the side thread's part), decoded into the area the
  // start returned before the frame is submitted.
  const std::span<const std::uint32_t> on_cpu(early_rows.data(), 5), on_gpu(early_rows.data() + 5, early_rows.size() - 5);
  auto packed = (*rec)->start_tier1(batch, on_gpu, on_cpu);
  ASSERT_TRUE(packed.ok());
  ASSERT_NE(*packed, nullptr);
  decoder::decode_tier1_rows_cpu(batch, on_cpu, *packed);
  share.early_rows = on_gpu;
  share.early_host_rows = on_cpu;
  img = (*rec)->reconstruct(*frame, taken);
  ASSERT_TRUE(img.ok()) << img.error().message;
  EXPECT_TRUE(same(cpu_ref.planar, *img)) << "a start taken, with a CPU share";
  expect_next_frame_right("last");
}

TEST(GpuTier1Backend, CorruptCodestreamsDecodeAsOnTheCpu) {
  REQUIRE_CUDA();
  // Cut and damaged codestreams: the same picture (resilient decoding) or the same error.
  const auto good = textured_codestream(false, 640, 360);
  ASSERT_FALSE(good.empty());
  std::mt19937 rng(5);
  auto cpu = gpu::make_cuda_decoder_typed({gpu::GpuMode::on, 0, {}, gpu::Tier1Mode::cpu});
  auto gpu1 = gpu::make_cuda_decoder_typed({gpu::GpuMode::on, 0, {}, gpu::Tier1Mode::gpu});
  ASSERT_TRUE(cpu.ok() && gpu1.ok());
  int compared = 0;
  for (int i = 0; i < 40; ++i) {
    std::vector<std::uint8_t> bad = good;
    if (i % 2 == 0) {
      bad.resize(200 + rng() % (good.size() - 200));  // truncated
    } else {
      for (int k = 0; k < 8; ++k) bad[200 + rng() % (bad.size() - 200)] = static_cast<std::uint8_t>(rng());
    }
    auto a = (*cpu)->decode(bad, {});
    auto b = (*gpu1)->decode(bad, {});
    ASSERT_EQ(a.ok(), b.ok()) << "case " << i;
    if (!a.ok()) continue;
    EXPECT_TRUE(same(*a, *b)) << "case " << i;
    EXPECT_EQ((*cpu)->last_stats().damaged_codeblocks, (*gpu1)->last_stats().damaged_codeblocks) << "case " << i;
    ++compared;
  }
  EXPECT_GT(compared, 20);
}

}  // namespace

// The page-locked resource: what it gives is page-locked where CUDA is usable (the copy
// engine reads it directly), ordinary memory otherwise; a table built on it keeps it.
TEST(PinnedMemory, TablesKeepTheirPageLockedBytes) {
  decoder::Tier1Batch batch(gpu::cuda_pinned_resource());
  batch.bytes.assign(100000, 0x5A);
  batch.clear();
  batch.bytes.resize(3000000, 0xA5);
  EXPECT_EQ(batch.bytes.get_allocator().resource(), gpu::cuda_pinned_resource());
  EXPECT_EQ(batch.bytes[2999999], 0xA5);
  if (!gpu::cuda_available()) GTEST_SKIP() << "no CUDA: ordinary memory";
#if J2K_HAVE_CUDA
  cudaPointerAttributes a{};
  ASSERT_EQ(cudaPointerGetAttributes(&a, batch.bytes.data()), cudaSuccess);
  EXPECT_EQ(a.type, cudaMemoryTypeHost);
#endif
}
