// Reconstruction alone (dequantisation, IDWT, colour, store) through the public API:
// tier-2 + tier-1 once, then reconstruct() K times on the same CoefficientFrame. Prints the
// thread CPU time per reconstruction (robust to time slicing on a shared machine) and wall
// time. Usage: recon_bench FILE.j2k [K=40] [threads=1]
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <vector>

#include "decoder/coefficients.hpp"
#include "decoder/own_decoder.hpp"

namespace {
double thread_cpu_ms() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}
}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: recon_bench FILE.j2k [K] [threads]\n");
    return 2;
  }
  std::ifstream f(argv[1], std::ios::binary);
  std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  const int k = argc > 2 ? std::atoi(argv[2]) : 40;
  const int threads = argc > 3 ? std::atoi(argv[3]) : 1;
  j2k::decoder::DecodeOptions opt;
  opt.threads = threads;
  auto frame = j2k::decoder::decode_coefficients(bytes, opt);
  if (!frame) {
    std::fprintf(stderr, "decode failed: %s\n", frame.error().message.c_str());
    return 1;
  }
  std::vector<double> cpu, wall;
  for (int i = 0; i < k; ++i) {
    const double c0 = thread_cpu_ms();
    const auto t0 = std::chrono::steady_clock::now();
    auto img = j2k::decoder::reconstruct(*frame, threads);
    wall.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    cpu.push_back(thread_cpu_ms() - c0);
    if (!img) return 1;
  }
  std::sort(cpu.begin(), cpu.end());
  std::sort(wall.begin(), wall.end());
  if (k > 0)
    std::printf("reconstruct x%d, %d thread(s): caller-thread CPU ms min %.2f median %.2f | wall ms min %.2f median %.2f\n",
                k, threads, cpu.front(), cpu[cpu.size() / 2], wall.front(), wall[wall.size() / 2]);
  // The decoder's own path: persistent pool, output planes reused (no allocation, no zero fill).
  {
    j2k::decoder::CoefficientDecoder dec;
    auto fr = dec.decode(bytes, opt);
    if (!fr) return 1;
    j2k::PlanarImage out;
    std::vector<double> c2, w2;
    for (int i = 0; i < k; ++i) {
      const double c0 = thread_cpu_ms();
      const auto t0 = std::chrono::steady_clock::now();
      if (!dec.reconstruct(*fr, out)) return 1;
      w2.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
      c2.push_back(thread_cpu_ms() - c0);
    }
    std::sort(c2.begin(), c2.end());
    std::sort(w2.begin(), w2.end());
    if (k > 0)
      std::printf("CoefficientDecoder::reconstruct into a reused image x%d, %d thread(s): caller-thread CPU ms min %.2f "
                  "median %.2f | wall ms min %.2f median %.2f\n",
                  k, threads, c2.front(), c2[c2.size() / 2], w2.front(), w2[w2.size() / 2]);
  }
  return 0;
}
