// Decoder benchmarks: whole-frame decode (own vs OpenJPEG, 1 and 2 threads) on the two
// frames of bench/RESULTS.md, plus the inner stages (inverse DWT level) on their own.
//
//   build/release/bin/decoder_bench --benchmark_min_time=2
//   build/release/bin/decoder_bench --write-inputs=/tmp/bench   (the two codestreams as files)
#include <benchmark/benchmark.h>

#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "decoder/decoder.hpp"
#include "packetizer/openjpeg_encoder.hpp"
#include "media/image_io.hpp"
#include "transform/idwt.hpp"

namespace {

using namespace j2k;
using namespace j2k::decoder;
using namespace j2k::packetizer;

const PlanarImage& flower_1080() {
  static const PlanarImage img = [] {
    auto rgb = media::load_rgb(std::string(J2K_MEDIA_DIR) + "/flower.png");
    if (!rgb.ok()) throw std::runtime_error(rgb.error().message);
    return media::crop(*rgb, 200, 200, 1920, 1080);
  }();
  return img;
}

/// 1080 4:2:2 10-bit, 9/7, about 5 Mbit (the lossy frame of RESULTS.md).
const std::vector<std::uint8_t>& lossy_422() {
  static const std::vector<std::uint8_t> cs = [] {
    EncodeParams p;
    p.lossless = false;
    p.target_bytes = 5'000'000 / 8;
    p.progression = Progression::LRCP;
    auto out = encode_openjpeg(media::rgb_to_ycbcr709(flower_1080(), 10, 2), p);
    if (!out.ok()) throw std::runtime_error(out.error().message);
    return std::move(out).value();
  }();
  return cs;
}

/// 1080p RGB 8-bit lossless (5/3 + RCT) from the photograph.
const std::vector<std::uint8_t>& lossless_rgb() {
  static const std::vector<std::uint8_t> cs = [] {
    EncodeParams p;
    p.lossless = true;
    p.progression = Progression::LRCP;
    auto out = encode_openjpeg(flower_1080(), p);
    if (!out.ok()) throw std::runtime_error(out.error().message);
    return std::move(out).value();
  }();
  return cs;
}

void decode_frame(benchmark::State& state, Backend backend, const std::vector<std::uint8_t>& cs) {
  auto dec = make_decoder(backend);
  if (!dec.ok()) {
    state.SkipWithError(dec.error().message.c_str());
    return;
  }
  DecodeOptions opt;
  opt.threads = static_cast<int>(state.range(0));
  for (auto _ : state) {
    auto img = (*dec)->decode(cs, opt);
    if (!img.ok()) {
      state.SkipWithError(img.error().message.c_str());
      return;
    }
    benchmark::DoNotOptimize(img->planes[0].samples.data());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * cs.size()));
  state.counters["Mbit/s/core"] = benchmark::Counter(static_cast<double>(state.iterations() * cs.size() * 8) / 1e6 / opt.threads,
                                                     benchmark::Counter::kIsRate);
}

void BM_Lossy422_Own(benchmark::State& s) { decode_frame(s, Backend::own, lossy_422()); }
void BM_Lossy422_OpenJpeg(benchmark::State& s) { decode_frame(s, Backend::openjpeg, lossy_422()); }
void BM_LosslessRgb_Own(benchmark::State& s) { decode_frame(s, Backend::own, lossless_rgb()); }
void BM_LosslessRgb_OpenJpeg(benchmark::State& s) { decode_frame(s, Backend::openjpeg, lossless_rgb()); }
BENCHMARK(BM_Lossy422_Own)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Lossy422_OpenJpeg)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_LosslessRgb_Own)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_LosslessRgb_OpenJpeg)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

/// One synthesis level of a 1920x1080 plane (single thread): 9/7 on floats, 5/3 on integers.
template <typename T>
void idwt_level_1080(benchmark::State& state) {
  std::vector<T> buf(1920u * 1080u);
  for (std::size_t i = 0; i < buf.size(); ++i) buf[i] = static_cast<T>((i * 2654435761u) % 1024) - T{512};
  const Rect res{0, 0, 1920, 1080};
  for (auto _ : state) {
    if constexpr (std::is_same_v<T, float>) own::idwt97_level(buf.data(), 1920, res, own::IdwtSchedule::fused);
    else own::idwt53_level(buf.data(), 1920, res, own::IdwtSchedule::fused);
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * buf.size()));
}
void BM_Idwt97Level1080(benchmark::State& state) { idwt_level_1080<float>(state); }
void BM_Idwt53Level1080(benchmark::State& state) { idwt_level_1080<std::int32_t>(state); }
BENCHMARK(BM_Idwt97Level1080)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Idwt53Level1080)->Unit(benchmark::kMillisecond);

void write_file(const std::string& path, const std::vector<std::uint8_t>& bytes) {
  std::ofstream f(path, std::ios::binary);
  f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

}  // namespace

// `--write-inputs=DIR` writes the two benchmark codestreams (for j2kdecode --bench,
// opj_decompress and grk_decompress) and exits; other flags go to Google Benchmark.
int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.rfind("--write-inputs=", 0) == 0) {
      std::string dir = arg.substr(15);
      write_file(dir + "/lossy_1080_422_10bit.j2k", lossy_422());
      write_file(dir + "/lossless_1080_rgb8.j2k", lossless_rgb());
      std::printf("wrote %s/lossy_1080_422_10bit.j2k (%zu bytes), %s/lossless_1080_rgb8.j2k (%zu bytes)\n", dir.c_str(),
                  lossy_422().size(), dir.c_str(), lossless_rgb().size());
      return 0;
    }
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
