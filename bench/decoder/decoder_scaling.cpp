// Thread scaling of a decoder backend on one codestream, for machines without Qt (the
// device bundle of device_scaling.sh): links only the decoder library (OpenJPEG, fmt).
//   decoder_scaling FILE.j2k --backend own|openjpeg|own-coefficients|own-coefficients-fresh
//                   --threads T --frames N
// own: Decoder::decode_into a reused picture (the player's path).
// own-coefficients: tier-2 + tier-1 only, CoefficientDecoder (persistent pool, recycled frames).
// own-coefficients-fresh: tier-2 + tier-1 only, the decode_coefficients() free function.
// Prints the median and best wall time per frame after 3 warm-up frames, the median stage
// times (own), process CPU time per frame, and the peak RSS.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "decoder/decoder.hpp"
#include "decoder/own_decoder.hpp"
#include "common/bench_stats.hpp"

using namespace j2k;
using j2k::bench::median;

namespace {
double cpu_s() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}
}  // namespace

int main(int argc, char** argv) {
  std::string file, backend = "own";
  int threads = 1, frames = 20;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--backend" && i + 1 < argc) backend = argv[++i];
    else if (a == "--threads" && i + 1 < argc) threads = std::atoi(argv[++i]);
    else if (a == "--frames" && i + 1 < argc) frames = std::atoi(argv[++i]);
    else file = a;
  }
  std::ifstream f(file, std::ios::binary);
  const std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (bytes.empty()) {
    std::fprintf(stderr, "usage: decoder_scaling FILE.j2k --backend B --threads T --frames N\n");
    return 2;
  }
  decoder::DecodeOptions opt;
  opt.threads = threads;
  std::vector<double> wall, t2, t1, idwt, colour;
  std::unique_ptr<decoder::Decoder> dec;
  decoder::CoefficientDecoder coeff;
  if (backend == "own" || backend == "openjpeg") {
    auto d = decoder::make_decoder(backend == "own" ? decoder::Backend::own : decoder::Backend::openjpeg);
    if (!d) {
      std::fprintf(stderr, "%s\n", d.error().message.c_str());
      return 1;
    }
    dec = std::move(*d);
  } else if (backend != "own-coefficients" && backend != "own-coefficients-fresh") {
    std::fprintf(stderr, "unknown backend %s\n", backend.c_str());
    return 2;
  }
  PlanarImage img;
  double cpu0 = 0;
  for (int i = 0; i < frames + 3; ++i) {
    if (i == 3) cpu0 = cpu_s();
    decoder::DecodeStats s;
    const auto t0 = std::chrono::steady_clock::now();
    if (dec) {
      if (auto st = dec->decode_into(bytes, opt, img); !st) {
        std::fprintf(stderr, "%s\n", st.error().message.c_str());
        return 1;
      }
      s = dec->last_stats();
    } else if (backend == "own-coefficients") {
      auto fr = coeff.decode(bytes, opt, &s);
      if (!fr) return 1;
      coeff.recycle(std::move(*fr));
    } else {
      auto fr = decoder::decode_coefficients(bytes, opt, {}, &s);
      if (!fr) return 1;
    }
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (i < 3) continue;
    wall.push_back(ms);
    t2.push_back(s.tier2_ms);
    t1.push_back(s.tier1_ms);
    idwt.push_back(s.idwt_ms);
    colour.push_back(s.colour_ms);
  }
  const double cpu_per_frame = (cpu_s() - cpu0) * 1e3 / frames;
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  std::printf("%-24s threads %2d: median %7.2f ms/frame (best %7.2f) | tier-2 %6.2f tier-1 %7.2f idwt %6.2f colour %5.2f | "
              "CPU %7.2f ms/frame | peak RSS %5.0f MiB\n",
              backend.c_str(), threads, median(wall), *std::min_element(wall.begin(), wall.end()), median(t2), median(t1),
              median(idwt), median(colour), cpu_per_frame, static_cast<double>(ru.ru_maxrss) / 1024.0);
  return 0;
}
