// Benchmark of the CUDA reconstruction stage and of the cuda decoding backend.
//
//   gpu_stage_bench [--frames N] [--threads T] [--tier1 cpu|gpu] [--tier1-host K] [--spin-wait] [--no-early] [--workers W] [--backend stage|zerocopy|own|cuda|cuda-display|throughput|host|floor] FILE.j2k...
//
// --spin-wait: the decoders' reconstructors wait for the GPU spinning on a core (the
//        default sleeps until the GPU signals; CudaReconstructor::Options::spin_wait).
// --tier1-host K: with --tier1 gpu, the K heaviest code-blocks of each frame are decoded on
//        the CPU beside the kernel (hybrid tier-1; 0: all on the GPU); -1 (default): the
//        cost model picks K per frame.
// --no-early: GPU tier-1 starts only after tier-2 has read the whole frame (the default
//        starts it on every resolution but the last where the tile-parts allow:
//        CudaDecoderOptions::early_tier1).
//
// stage: tier-1 once on the CPU, then per frame the GPU part alone (upload of the
//        coefficients, dequantisation + IDWT, MCT/DC/clamp, chroma upsampling + colour
//        into a device RGBA8 buffer, as into a mapped PBO), timed with CUDA events;
//        medians after a warm-up, achieved bandwidth against measured copy bandwidth.
// zerocopy: the same with CudaReconstructor::Options::zero_copy.
// cuda-display: the player's path, decode_to_device into a device RGBA buffer (--tier1 gpu:
//        code-blocks decoded on the GPU, only tier-2 on the CPU).
// own / cuda: whole decode (codestream -> picture) with that backend, wall time per frame.
// host: what the CPU does for a frame before the GPU starts on it, with tier-1 on the GPU
//        (tier-2, the code-block tables, the hybrid's split), timed per step; needs no GPU.
//        Frames that allow an early start are read in two stages as the backend reads them
//        (the start does nothing; --no-early: in one).
// throughput: --workers W threads with a CudaDecoder each, display path: frames/s and CPU use.
// floor: where the hybrid tier-1 stands against its floor on this machine. Every code-block
//        is timed alone on one CPU core (c_i, best of 3); the display path then runs with
//        the K heaviest blocks forced onto the CPU for a sweep of K (--frames frames each),
//        which measures the GPU's chain per CPU-microsecond (G = the kernel's time over the
//        cost of the heaviest block left to it) and the CPU share's efficiency. With them,
//        the floor of any split of this frame, min over K of max(G c_K, sum c_0..K-1 /
//        threads) with the blocks in true-cost order, against the measured best.
// Peak RSS of the process is printed last.
#include <cuda_runtime.h>
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "decoder/coefficients.hpp"
#include "decoder/own_decoder.hpp"
#include "decoder/tier1_batch.hpp"
#include "gpu/cuda.hpp"
#include "gpu/cuda_decoder.hpp"
#include "gpu/cuda_reconstructor.hpp"
#include "gpu/tier1_split.hpp"
#include "common/bench_stats.hpp"
#include "syntax/locate.hpp"

using namespace j2k;
using j2k::bench::median;

namespace {

long g_tier1_host = -1;    // --tier1-host
bool g_spin_wait = false;  // --spin-wait
bool g_early = true;        // --no-early: tier-1 starts only after tier-2 (CudaDecoderOptions::early_tier1)


std::vector<std::uint8_t> read_file(const char* p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

#define CHECK(x)                                                                 \
  do {                                                                           \
    cudaError_t e_ = (x);                                                        \
    if (e_ != cudaSuccess) {                                                     \
      std::fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_));              \
      return -1;                                                                 \
    }                                                                            \
  } while (0)

/// One cudaMemcpyAsync on the default stream, timed with CUDA events (`ms`); the first error.
cudaError_t timed_copy(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind, cudaEvent_t e0, cudaEvent_t e1,
                       float& ms) {
  cudaError_t e = cudaEventRecord(e0);
  if (e == cudaSuccess) e = cudaMemcpyAsync(dst, src, bytes, kind);
  if (e == cudaSuccess) e = cudaEventRecord(e1);
  if (e == cudaSuccess) e = cudaEventSynchronize(e1);
  if (e == cudaSuccess) e = cudaEventElapsedTime(&ms, e0, e1);
  return e;
}

/// GB/s of a device-to-device copy (bytes read + written) and of a pinned host-to-device copy.
int measure_copy(double& d2d, double& h2d) {
  const std::size_t n = 256u << 20;
  void *a = nullptr, *b = nullptr, *h = nullptr;
  CHECK(cudaMalloc(&a, n));
  CHECK(cudaMalloc(&b, n));
  CHECK(cudaMallocHost(&h, 64u << 20));
  CHECK(cudaMemset(a, 1, n));
  std::memset(h, 1, 64u << 20);
  cudaEvent_t e0, e1;
  CHECK(cudaEventCreate(&e0));
  CHECK(cudaEventCreate(&e1));
  std::vector<double> t1, t2;
  for (int i = 0; i < 12; ++i) {
    float ms = 0;
    CHECK(timed_copy(b, a, n, cudaMemcpyDeviceToDevice, e0, e1, ms));
    if (i >= 2) t1.push_back(ms);
    CHECK(timed_copy(a, h, 64u << 20, cudaMemcpyHostToDevice, e0, e1, ms));
    if (i >= 2) t2.push_back(ms);
  }
  d2d = 2.0 * n / (median(t1) * 1e6);
  h2d = double(64u << 20) / (median(t2) * 1e6);
  // Small copies: the per-copy cost that a frame-sized upload pays.
  for (std::size_t mb : {1, 4, 8, 16, 32}) {
    std::vector<double> t;
    for (int i = 0; i < 12; ++i) {
      float ms = 0;
      CHECK(timed_copy(a, h, mb << 20, cudaMemcpyHostToDevice, e0, e1, ms));
      if (i >= 2) t.push_back(ms);
    }
    std::printf("  pinned H2D %2zu MiB: %.3f ms = %.1f GB/s\n", mb, median(t), double(mb << 20) / (median(t) * 1e6));
  }
  // The same 8 MiB copy after 2 ms of idle bus, as between frames of a player.
  {
    std::vector<double> t;
    for (int i = 0; i < 12; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      float ms = 0;
      CHECK(timed_copy(a, h, 8u << 20, cudaMemcpyHostToDevice, e0, e1, ms));
      if (i >= 2) t.push_back(ms);
    }
    std::printf("  pinned H2D  8 MiB after 2 ms idle: %.3f ms = %.1f GB/s\n", median(t), double(8u << 20) / (median(t) * 1e6));
  }
  cudaFree(a);
  cudaFree(b);
  cudaFreeHost(h);
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  return 0;
}

/// Fewest device bytes the kernels must move (each stage reads its input once and writes
/// its output once): the yardstick for "achieved bandwidth".
double kernel_bytes(const decoder::CoefficientFrame& f, double uploaded) {
  double bytes = uploaded;  // dequant reads what was uploaded
  for (const auto& t : f.tiles)
    for (const auto& cc : t.components) {
      const double n = static_cast<double>(cc.data.size());
      bytes += n * 4;  // dequant writes
      double area = n;
      for (int l = 0; l < cc.decoded_levels; ++l) {
        bytes += area * 16;  // rows: read+write, columns: read+write
        area /= 4;
      }
    }
  // fused finish + colour: read the work buffers, write 4 bytes per pixel
  const double pixels = static_cast<double>(f.components[0].rect.width()) * f.components[0].rect.height();
  double planes = 0;
  for (const auto& c : f.components) planes += static_cast<double>(c.rect.width()) * c.rect.height();
  return bytes + planes * 4 + pixels * 4;
}

int bench_stage(const char* path, const std::vector<std::uint8_t>& bytes, int frames, int threads, double d2d, double h2d,
                bool zero_copy) {
  decoder::DecodeOptions opt;
  opt.threads = threads;
  auto frame = decoder::decode_coefficients(bytes, opt);
  if (!frame) {
    std::fprintf(stderr, "%s: %s\n", path, frame.error().message.c_str());
    return 1;
  }
  gpu::CudaReconstructor::Options ro;
  ro.timing = true;
  ro.zero_copy = zero_copy;
  auto rec = gpu::CudaReconstructor::create(ro);
  if (!rec) {
    std::fprintf(stderr, "%s\n", rec.error().message.c_str());
    return 1;
  }
  const auto& c0 = frame->components[0];
  const int w = c0.rect.width(), h = c0.rect.height();
  void* rgba = nullptr;
  if (cudaMalloc(&rgba, static_cast<std::size_t>(w) * h * 4) != cudaSuccess) return 1;
  gpu::DeviceTarget target{rgba, static_cast<std::size_t>(w) * 4, w, h, gpu::OutputFormat::rgba8, 0, 1};
  gpu::ReconstructRequest req;
  req.planar = false;
  req.target = &target;
  std::vector<double> up, idwt, store, colour, total, wall;
  gpu::GpuTimes t;
  for (int i = 0; i < frames + 20; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    auto r = (*rec)->reconstruct(*frame, req, &t);
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (!r) {
      std::fprintf(stderr, "%s\n", r.error().message.c_str());
      return 1;
    }
    if (i < 20) continue;  // warm-up
    up.push_back(t.upload_ms);
    idwt.push_back(t.idwt_ms);
    store.push_back(t.store_ms);
    colour.push_back(t.colour_ms);
    total.push_back(t.total_ms);
    wall.push_back(ms);
  }
  // Pipelined: two frames in flight (upload of N+1 overlaps kernels of N).
  gpu::CudaReconstructor::Options ro2;
  ro2.zero_copy = zero_copy;
  auto rec2 = gpu::CudaReconstructor::create(ro2);
  if (!rec2) return 1;
  auto tp0 = std::chrono::steady_clock::now();
  int pending = -1;
  for (int i = 0; i < frames; ++i) {
    auto tk = (*rec2)->submit(*frame, req);
    if (!tk) return 1;
    if (pending >= 0 && !(*rec2)->collect(pending)) return 1;
    pending = *tk;
  }
  if (!(*rec2)->collect(pending)) return 1;
  const double per_frame_pipelined =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - tp0).count() / frames;
  const double kb = kernel_bytes(*frame, static_cast<double>(t.upload_bytes));
  const double kernel_ms = median(idwt) + median(store) + median(colour);
  std::printf("%s: %dx%d, %zu codestream bytes, coefficients %s, %s, %d frames after 20 warm-up\n", path, w, h,
              bytes.size(), t.packed16 ? "8/16-bit per band" : "8/16/32-bit per band", zero_copy ? "ZERO-COPY (read over the bus by the dequant kernel)" : "memcpy upload", frames);
  std::printf("  GPU median ms: upload %.3f (%.2f MB, %.1f GB/s; pinned H2D peak %.1f) | dequant+IDWT %.3f | MCT/DC %.3f | "
              "upsample+colour+write %.3f | total %.3f\n",
              median(up), t.upload_bytes / 1e6, t.upload_bytes / (median(up) * 1e6), h2d, median(idwt), median(store),
              median(colour), median(total));
  std::printf("  kernels: %.1f MB moved (lower bound) in %.3f ms = %.0f GB/s = %.0f%% of device copy %.0f GB/s\n", kb / 1e6,
              kernel_ms, kb / (kernel_ms * 1e6), 100.0 * kb / (kernel_ms * 1e6) / d2d, d2d);
  std::printf("  host wall per frame (staging + submit + wait): median %.3f ms; pipelined 2 slots: %.3f ms/frame\n",
              median(wall), per_frame_pipelined);
  cudaFree(rgba);
  return 0;
}

/// A device RGBA8 picture of the codestream's size, as the player maps for display (freed
/// with the object); `ok()` false when the size cannot be read or the memory not had.
class DevicePicture {
 public:
  explicit DevicePicture(const std::vector<std::uint8_t>& bytes) {
    auto geometry = syntax::read_geometry(bytes);
    if (!geometry) return;
    const int w = geometry->width, h = geometry->height;
    if (cudaMalloc(&rgba_, static_cast<std::size_t>(w) * h * 4) != cudaSuccess) {
      rgba_ = nullptr;
      return;
    }
    target_ = {rgba_, static_cast<std::size_t>(w) * 4, w, h, gpu::OutputFormat::rgba8, 0, 1};
  }
  ~DevicePicture() {
    if (rgba_) cudaFree(rgba_);
  }
  DevicePicture(const DevicePicture&) = delete;
  DevicePicture& operator=(const DevicePicture&) = delete;
  bool ok() const { return rgba_ != nullptr; }
  const gpu::DeviceTarget& target() const { return target_; }

 private:
  void* rgba_ = nullptr;
  gpu::DeviceTarget target_;
};

/// The display path `warm + frames` times; `measured(ms)` after each of the last `frames`
/// (the decoder's times are then those of that frame). False, with the reason printed, on an
/// error, or when `gpu_tier1` asks for tier-1 on the GPU and it ran elsewhere.
template <typename Measured>
bool display_frames(gpu::CudaDecoder& dec, const char* path, const std::vector<std::uint8_t>& bytes,
                    const decoder::DecodeOptions& opt, const gpu::DeviceTarget& target, int frames, int warm,
                    bool gpu_tier1, Measured&& measured) {
  for (int i = 0; i < frames + warm; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    auto r = dec.decode_to_device(bytes, opt, target, {}, false);
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (!r) {
      std::fprintf(stderr, "%s: %s\n", path, r.error().message.c_str());
      return false;
    }
    if (gpu_tier1 && !dec.last_tier1_on_gpu()) {
      std::fprintf(stderr, "%s: tier-1 did not run on the GPU\n", path);
      return false;
    }
    if (i >= warm) measured(ms);
  }
  return true;
}

/// The player's path: decode straight into a device RGBA buffer (no planar download).
int bench_display(const char* path, const std::vector<std::uint8_t>& bytes, int frames, int threads, gpu::Tier1Mode tier1) {
  auto dec = gpu::make_cuda_decoder_typed({gpu::GpuMode::on, 0, {}, tier1, g_tier1_host, g_spin_wait, g_early});
  if (!dec) {
    std::fprintf(stderr, "%s\n", dec.error().message.c_str());
    return 1;
  }
  decoder::DecodeOptions opt;
  opt.threads = threads;
  const DevicePicture picture(bytes);
  if (!picture.ok()) return 1;
  std::vector<double> wall, t1, t2, gpu_ms, up_ms, gt1_ms, idwt_ms, colour_ms;
  std::vector<double> host_ms, host_blocks, h_deferred, h_split, h_stage, h_enqueue, h_wait, h_rest, early_ms, early_blocks, early_host_ms;
  std::size_t up_bytes = 0, blocks = 0;
  bool direct = false;
  const bool ran = display_frames(**dec, path, bytes, opt, picture.target(), frames, 3, tier1 == gpu::Tier1Mode::gpu,
                                  [&](double ms) {
    wall.push_back(ms);
    t1.push_back((*dec)->last_stats().tier1_ms);
    t2.push_back((*dec)->last_stats().tier2_ms);
    const gpu::GpuTimes g = (*dec)->last_gpu_times();
    gpu_ms.push_back(g.total_ms);
    up_ms.push_back(g.upload_ms);
    gt1_ms.push_back(g.tier1_ms);
    idwt_ms.push_back(g.idwt_ms);
    colour_ms.push_back(g.store_ms + g.colour_ms);
    up_bytes = g.upload_bytes;
    blocks = g.tier1_blocks;
    direct = g.tier1_bytes_direct;
    host_ms.push_back(g.tier1_host_ms);
    h_deferred.push_back(g.host_deferred_ms);
    h_split.push_back(g.host_split_ms);
    h_stage.push_back(g.host_stage_ms);
    h_enqueue.push_back(g.host_enqueue_ms);
    h_wait.push_back(g.host_wait_ms);
    h_rest.push_back(ms - g.host_deferred_ms - g.host_split_ms - g.host_stage_ms - g.host_enqueue_ms - g.host_wait_ms);
    host_blocks.push_back(static_cast<double>(g.tier1_host_blocks));
    early_ms.push_back(g.tier1_early_ms);
    early_host_ms.push_back(g.tier1_early_host_ms);
    early_blocks.push_back(static_cast<double>(g.tier1_early_blocks));
  });
  if (!ran) return 1;
  std::printf("%s: %zu bytes, backend cuda, display path (RGBA into device memory, no planar copy), tier-1 on the %s, "
              "%d threads, %d frames: median %.2f ms/frame (tier-2 %.2f, tier-1 %.2f, GPU %.3f)\n",
              path, bytes.size(), tier1 == gpu::Tier1Mode::gpu ? "GPU" : "CPU", threads, frames, median(wall), median(t2),
              median(t1), median(gpu_ms));
  std::printf("  GPU medians ms: upload %.3f (%.2f MB%s) | tier-1 %.3f (%zu code-blocks) | dequant+IDWT %.3f | "
              "store+colour %.3f\n",
              median(up_ms), up_bytes / 1e6, direct ? ", code-block bytes unstaged" : "", median(gt1_ms), blocks, median(idwt_ms), median(colour_ms));
  if (tier1 != gpu::Tier1Mode::cpu) {
    std::printf("  host timeline medians ms: tier-2 + tables %.3f | split %.3f | stage %.3f | enqueue (with the CPU "
                "share) %.3f | wait %.3f | the rest %.3f\n",
                median(h_deferred), median(h_split), median(h_stage), median(h_enqueue), median(h_wait), median(h_rest));
    std::printf("  hybrid tier-1 (--tier1-host %ld): CPU share median %.0f code-blocks (min %.0f, max %.0f) in %.3f ms\n",
                g_tier1_host, median(host_blocks), *std::min_element(host_blocks.begin(), host_blocks.end()),
                *std::max_element(host_blocks.begin(), host_blocks.end()), median(host_ms));
    if (median(early_blocks) > 0)
      std::printf("  tier-1 started early (every resolution but the last, beside tier-2): kernel median %.0f code-blocks "
                  "in %.3f ms, its CPU share %.3f ms; the last resolutions' kernel %.3f ms (CPU share above)\n",
                  median(early_blocks), median(early_ms), median(early_host_ms), median(gt1_ms));
  }
  return 0;
}

/// The host's serial part of a GPU tier-1 frame: decode_deferred (tier-2 and the tables)
/// and split_tier1 (order and split), as CudaDecoder runs them.
int bench_host(const char* path, const std::vector<std::uint8_t>& bytes, int frames, int threads) {
  decoder::CoefficientDecoder dec;
  decoder::DecodeOptions opt;
  opt.threads = threads;
  decoder::Tier1Batch batch;
  gpu::Tier1Split split;
  gpu::Tier1CostModel model;
  model.cpu_threads = threads;
  std::vector<double> deferred, t2, splits, early_rows;
  std::size_t blocks = 0, table_bytes = 0;
  for (int i = 0; i < frames + 3; ++i) {
    decoder::DecodeStats stats;
    // As the backend reads frames (unless --no-early): a frame that allows it in two stages,
    // the first stage's rows tabled between them (the start itself does nothing here).
    decoder::EarlyTier1 early;
    if (g_early) early.start = [](const decoder::Tier1Batch&) {};
    const auto t0 = std::chrono::steady_clock::now();
    auto frame = dec.decode_deferred(bytes, opt, batch, &stats, &early);
    const auto t1 = std::chrono::steady_clock::now();
    if (!frame) {
      std::fprintf(stderr, "%s: %s\n", path, frame.error().message.c_str());
      return 1;
    }
    gpu::split_tier1(batch, model, split, g_tier1_host);
    const auto t2e = std::chrono::steady_clock::now();
    dec.recycle(std::move(*frame));
    if (i < 3) continue;
    deferred.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    t2.push_back(stats.tier2_ms);
    splits.push_back(std::chrono::duration<double, std::milli>(t2e - t1).count());
    early_rows.push_back(early.kept ? static_cast<double>(early.rows) : 0.0);
    blocks = batch.blocks.size();
    table_bytes = batch.bytes.size() + batch.blocks.size() * sizeof(decoder::Tier1Block) +
                  batch.segments.size() * sizeof(decoder::Tier1Segment);
  }
  std::printf("%s: host part of a GPU tier-1 frame, %d frames: decode_deferred median %.3f ms (of which tier-2 %.3f), "
              "split_tier1 %.3f ms; %zu code-blocks (%.0f tabled between the stages), %.2f MB of tables\n",
              path, frames, median(deferred), median(t2), median(splits), blocks, median(early_rows), table_bytes / 1e6);
  return 0;
}

/// Per-block CPU cost and a sweep of forced hybrid splits: the floor of tier-1 one frame at a
/// time on this machine (see the header).
int bench_floor(const char* path, const std::vector<std::uint8_t>& bytes, int frames, int threads) {
  decoder::CoefficientDecoder host;
  decoder::DecodeOptions opt;
  opt.threads = 1;
  decoder::Tier1Batch batch;
  auto frame = host.decode_deferred(bytes, opt, batch);
  if (!frame) {
    std::fprintf(stderr, "%s: %s\n", path, frame.error().message.c_str());
    return 1;
  }
  const std::size_t n = batch.blocks.size();
  if (n == 0) return 1;
  // c_i: one block alone on this core, the median of three passes over the whole frame (a
  // block timed twice in a row would find its bytes in the cache and the branch predictor
  // trained on its very symbols: 10-30 % faster than it ever runs in a frame).
  std::vector<std::vector<double>> runs(n);
  std::vector<std::int32_t> packed(64 * 1024);
  for (int pass = 0; pass < 3; ++pass)
    for (std::size_t i = 0; i < n; ++i) {
      const decoder::Tier1Block& b = batch.blocks[i];
      if (packed.size() < std::size_t{b.width} * b.height) packed.resize(std::size_t{b.width} * b.height);
      const std::uint32_t row = static_cast<std::uint32_t>(i);
      const auto t0 = std::chrono::steady_clock::now();
      decoder::decode_tier1_rows_cpu(batch, std::span<const std::uint32_t>(&row, 1), packed.data());
      runs[i].push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
    }
  std::vector<double> cost(n);
  for (std::size_t i = 0; i < n; ++i) cost[i] = median(runs[i]);
  // The split's order (tier1_block_cost, heaviest first) and the true order.
  gpu::Tier1Split all;
  gpu::split_tier1(batch, {}, all, 0);
  const std::vector<std::uint32_t> order(all.order.begin(), all.order.end());
  std::vector<double> sorted = cost;
  std::sort(sorted.begin(), sorted.end(), std::greater<>());
  double total = 0;
  for (double c : cost) total += c;
  std::printf("%s: %zu code-blocks, %.1f ms of tier-1 on one core (heaviest %.0f us, median %.0f us)\n", path, n,
              total / 1000, sorted[0], sorted[n / 2]);
  // The sweep: display path with K forced.
  struct Point {
    long k;
    double wall, gpu, cpu;
  };
  std::vector<Point> points;
  const DevicePicture picture(bytes);
  if (!picture.ok()) return 1;
  decoder::DecodeOptions dopt;
  dopt.threads = threads;
  std::vector<long> ks{-1, 0};
  for (long k = 20; k <= static_cast<long>(std::min<std::size_t>(n, 320)); k += 20) ks.push_back(k);
  for (long k : ks) {
    auto dec = gpu::make_cuda_decoder_typed({gpu::GpuMode::on, 0, {}, gpu::Tier1Mode::gpu, k, g_spin_wait, g_early});
    if (!dec) {
      std::fprintf(stderr, "%s\n", dec.error().message.c_str());
      return 1;
    }
    std::vector<double> wall, g, c;
    // The cost model (K = -1) starts from its priors: 30 frames to settle before measuring.
    const bool ran = display_frames(**dec, path, bytes, dopt, picture.target(), frames, k < 0 ? 30 : 3, true, [&](double ms) {
      wall.push_back(ms);
      g.push_back((*dec)->last_gpu_times().tier1_ms);
      c.push_back((*dec)->last_gpu_times().tier1_host_ms);
    });
    if (!ran) return 1;
    points.push_back({k, median(wall), median(g), median(c)});
  }
  // G: the kernel's time over the split-order cost of the heaviest block left to it; E: the
  // CPU share's ideal time (its blocks' costs over the threads) over its measured time.
  std::vector<double> gs, es;
  std::printf("  K (forced; -1: the cost model) | frame ms | GPU tier-1 ms | CPU share ms | G = GPU / heaviest c left to "
              "it | CPU share efficiency\n");
  for (const Point& p : points) {
    double g = 0, e = 0;
    if (p.k >= 0 && static_cast<std::size_t>(p.k) < n) {
      double heaviest = 0;  // the longest chain left to the GPU
      for (std::size_t r = static_cast<std::size_t>(p.k); r < n; ++r) heaviest = std::max(heaviest, cost[order[r]]);
      g = p.gpu * 1000 / heaviest;
      gs.push_back(g);
    }
    if (p.k > 0) {
      double done = 0;
      for (long r = 0; r < p.k; ++r) done += cost[order[static_cast<std::size_t>(r)]];
      e = p.cpu > 0 ? done / threads / (p.cpu * 1000) : 0;
      es.push_back(e);
    }
    std::printf("  %5ld | %.2f | %.3f | %.3f | %.1f | %.2f\n", p.k, p.wall, p.gpu, p.cpu, g, e);
  }
  const double g = median(gs), e = median(es);
  // Floor: blocks in true-cost order, the GPU's chain G per CPU-microsecond, the CPU at the
  // measured efficiency (and at 1, the ideal).
  auto floor_at = [&](double gr, double eff, std::size_t& best_k) {
    double done = 0, best = 1e30;
    for (std::size_t k = 0; k <= n; ++k) {
      const double gpu = k < n ? gr * sorted[k] : 0;
      const double cpu = k > 0 ? std::max(sorted[0], done / threads) / eff : 0;
      if (std::max(gpu, cpu) < best) {
        best = std::max(gpu, cpu);
        best_k = k;
      }
      if (k < n) done += sorted[k];
    }
    return best / 1000;
  };
  std::size_t k1 = 0, k2 = 0;
  const double f_meas = floor_at(g, e, k1), f_ideal = floor_at(g, 1.0, k2);
  double best_meas = 1e30;
  long best_k = 0;
  for (const Point& p : points)
    if (std::max(p.gpu, p.cpu) < best_meas) {
      best_meas = std::max(p.gpu, p.cpu);
      best_k = p.k;
    }
  std::printf("  G (median) %.1f, CPU share efficiency (median) %.2f on %d threads\n", g, e, threads);
  {
    // The CPU share alone (no GPU beside it) at the floor's K, on 1..threads threads.
    const std::span<const std::uint32_t> rows(order.data(), std::min<std::size_t>(k2, n));
    double ideal = 0;
    for (std::uint32_t r : rows) ideal += cost[r];
    std::vector<std::uint64_t> offsets;
    std::vector<std::int32_t> out(decoder::tier1_packed_offsets(batch, rows, offsets));
    std::printf("  the CPU share alone, K = %zu (sum of its c_i %.2f ms):", rows.size(), ideal / 1000);
    for (int t = 1; t <= threads; t *= 2) {
      decoder::CoefficientDecoder cpu;
      decoder::DecodeOptions topt;
      topt.threads = t;
      decoder::Tier1Batch scratch;
      if (!cpu.decode_deferred(bytes, topt, scratch)) return 1;
      std::vector<double> ms;
      for (int i = 0; i < 11; ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        if (!cpu.decode_tier1_rows(batch, rows, out.data())) return 1;
        ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
      }
      std::printf(" %d thr %.2f ms (eff. %.2f)%s", t, median(ms), ideal / 1000 / t / median(ms), t * 2 <= threads ? "," : "\n");
    }
  }
  std::printf("  tier-1 floor: %.2f ms at K = %zu (CPU at that efficiency), %.2f ms at K = %zu (CPU ideal); "
              "measured best max(GPU, CPU) %.2f ms at K = %ld\n",
              f_meas, k1, f_ideal, k2, best_meas, best_k);
  for (double want_ms : {1.0, 1.5, 2.0}) {
    // The G that a tier-1 of `target` ms would need with this CPU (ideal).
    double lo = 0.1, hi = g;
    for (int it = 0; it < 40; ++it) {
      const double mid = (lo + hi) / 2;
      std::size_t kk = 0;
      (floor_at(mid, 1.0, kk) <= want_ms ? lo : hi) = mid;
    }
    std::printf("  tier-1 in %.1f ms would need G <= %.1f (%.1fx this GPU's chain speed)\n", want_ms, lo, g / lo);
  }
  return 0;
}

/// Throughput of `workers` decode threads, each with its own CudaDecoder (sharing the
/// device's reconstructors), each decoding `frames` frames into its own device picture, as
/// the pipeline's workers do: frames per second over the whole run.
int bench_throughput(const char* path, const std::vector<std::uint8_t>& bytes, int frames, int workers,
                     gpu::Tier1Mode tier1, int threads) {
  std::vector<std::unique_ptr<gpu::CudaDecoder>> decs;
  std::vector<std::unique_ptr<DevicePicture>> pictures;
  for (int i = 0; i < workers; ++i) {
    auto d = gpu::make_cuda_decoder_typed({gpu::GpuMode::on, 0, {}, tier1, g_tier1_host, g_spin_wait, g_early});
    if (!d) return 1;
    decs.push_back(std::move(*d));
    pictures.push_back(std::make_unique<DevicePicture>(bytes));
    if (!pictures.back()->ok()) return 1;
  }
  std::atomic<int> failures{0};
  auto run = [&](int count) {
    std::vector<std::thread> pool;
    for (int i = 0; i < workers; ++i)
      pool.emplace_back([&, i] {
        decoder::DecodeOptions opt;
        opt.threads = threads;
        const gpu::DeviceTarget& target = pictures[static_cast<std::size_t>(i)]->target();
        for (int f = 0; f < count; ++f)
          if (!decs[static_cast<std::size_t>(i)]->decode_to_device(bytes, opt, target, {}, false)) ++failures;
      });
    for (std::thread& t : pool) t.join();
  };
  run(2);  // warm-up: buffers, pools
  rusage r0{}, r1{};
  getrusage(RUSAGE_SELF, &r0);
  const auto t0 = std::chrono::steady_clock::now();
  run(frames);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  getrusage(RUSAGE_SELF, &r1);
  const double cpu_s = (r1.ru_utime.tv_sec - r0.ru_utime.tv_sec) + (r1.ru_stime.tv_sec - r0.ru_stime.tv_sec) +
                       1e-6 * ((r1.ru_utime.tv_usec - r0.ru_utime.tv_usec) + (r1.ru_stime.tv_usec - r0.ru_stime.tv_usec));
  std::printf("%s: throughput, %d workers x %d threads, tier-1 on the %s, %d frames each: %.1f frames/s (%.2f ms/frame), "
              "CPU %.2f cores busy, %d failures\n",
              path, workers, threads, tier1 == gpu::Tier1Mode::gpu ? "GPU" : "CPU", frames,
              workers * frames / s, 1000.0 * s / (workers * frames), cpu_s / s, failures.load());
  return failures.load() ? 1 : 0;
}

int bench_decode(const char* path, const std::vector<std::uint8_t>& bytes, int frames, int threads, bool cuda) {
  std::unique_ptr<decoder::Decoder> dec;
  if (cuda) {
    auto d = gpu::make_cuda_decoder({gpu::GpuMode::on});
    if (!d) {
      std::fprintf(stderr, "%s\n", d.error().message.c_str());
      return 1;
    }
    dec = std::move(*d);
  } else {
    dec = decoder::make_own_decoder();
  }
  decoder::DecodeOptions opt;
  opt.threads = threads;
  std::vector<double> wall, t1, t2, idwt, colour;
  for (int i = 0; i < frames + 3; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    auto img = dec->decode(bytes, opt);
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (!img) {
      std::fprintf(stderr, "%s: %s\n", path, img.error().message.c_str());
      return 1;
    }
    if (i < 3) continue;
    const auto s = dec->last_stats();
    wall.push_back(ms);
    t1.push_back(s.tier1_ms);
    t2.push_back(s.tier2_ms);
    idwt.push_back(s.idwt_ms);
    colour.push_back(s.colour_ms);
  }
  std::printf("%s: backend %s, %d threads, %d frames: median %.2f ms/frame (tier-2 %.2f, tier-1 %.2f, idwt %.2f, "
              "colour/MCT %.2f)\n",
              path, cuda ? "cuda" : "own", threads, frames, median(wall), median(t2), median(t1), median(idwt),
              median(colour));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  int frames = 200, threads = 16;
  std::string backend = "stage";
  gpu::Tier1Mode tier1 = gpu::Tier1Mode::cpu;
  int workers = 4;
  std::vector<const char*> files;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--frames" && i + 1 < argc) frames = std::atoi(argv[++i]);
    else if (a == "--threads" && i + 1 < argc) threads = std::atoi(argv[++i]);
    else if (a == "--backend" && i + 1 < argc) backend = argv[++i];
    else if (a == "--workers" && i + 1 < argc) workers = std::atoi(argv[++i]);
    else if (a == "--tier1-host" && i + 1 < argc) g_tier1_host = std::atol(argv[++i]);
    else if (a == "--spin-wait") g_spin_wait = true;
    else if (a == "--no-early") g_early = false;
    else if (a == "--tier1" && i + 1 < argc) tier1 = gpu::parse_tier1_mode(argv[++i]).value_or(gpu::Tier1Mode::cpu);
    else files.push_back(argv[i]);
  }
  std::printf("device: %s\n", gpu::cuda_describe().c_str());
  if (backend != "own" && backend != "host" && !gpu::cuda_available()) {
    std::fprintf(stderr, "no CUDA device\n");
    return 1;
  }
  double d2d = 0, h2d = 0;
  if (backend == "stage" || backend == "zerocopy") {
    if (measure_copy(d2d, h2d) != 0) return 1;
    std::printf("measured: device-to-device copy %.0f GB/s (read+write), pinned host-to-device %.1f GB/s\n", d2d, h2d);
  }
  int rc = 0;
  for (const char* f : files) {
    const auto bytes = read_file(f);
    if (backend == "stage" || backend == "zerocopy")
      rc |= bench_stage(f, bytes, frames, threads, d2d, h2d, backend == "zerocopy");
    else if (backend == "cuda-display") rc |= bench_display(f, bytes, frames, threads, tier1);
    else if (backend == "host") rc |= bench_host(f, bytes, frames, threads);
    else if (backend == "throughput") rc |= bench_throughput(f, bytes, frames, workers, tier1, threads);
    else if (backend == "floor") rc |= bench_floor(f, bytes, frames, threads);
    else rc |= bench_decode(f, bytes, frames, threads, backend == "cuda");
  }
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  std::printf("peak RSS: %.1f MiB\n", ru.ru_maxrss / 1024.0);
  return rc;
}
