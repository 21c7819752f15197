// Per-decode user cycles (perf_event_open on this thread), for A/B of tier-1 changes on a
// shared machine: the minimum over many decodes is far steadier than wall time.
//   t1_bench FILE [runs=20] [backend=own|openjpeg]
// Prints min / median of user cycles, instructions, branch misses and the tier-1 stage
// time (own backend) per decode, 1 thread.
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "core/planar_image.hpp"
#include "decoder/decoder.hpp"
#include "common/bench_stats.hpp"

namespace {

int open_counter(std::uint64_t config) {
  perf_event_attr attr{};
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_HARDWARE;
  attr.config = config;
  attr.exclude_kernel = 1;
  attr.exclude_hv = 1;
  return static_cast<int>(syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0));
}

std::uint64_t read_counter(int fd) {
  std::uint64_t v = 0;
  if (fd < 0 || read(fd, &v, sizeof v) != sizeof v) return 0;
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace j2k;
  using j2k::bench::median;
  if (argc < 2) {
    std::fprintf(stderr, "usage: t1_bench FILE [runs] [own|openjpeg]\n");
    return 2;
  }
  std::ifstream in(argv[1], std::ios::binary);
  std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const int runs = argc > 2 ? std::max(1, std::atoi(argv[2])) : 20;
  const bool opj = argc > 3 && std::strcmp(argv[3], "openjpeg") == 0;
  auto dec = decoder::make_decoder(opj ? decoder::Backend::openjpeg : decoder::Backend::own);
  if (!dec) {
    std::fprintf(stderr, "no decoder\n");
    return 1;
  }
  decoder::DecodeOptions opt;
  opt.threads = 1;
  const int fc = open_counter(PERF_COUNT_HW_CPU_CYCLES), fi = open_counter(PERF_COUNT_HW_INSTRUCTIONS),
            fb = open_counter(PERF_COUNT_HW_BRANCH_MISSES);
  std::vector<double> cyc, ins, bm, t1;
  std::uint64_t sum = 0;
  for (int r = 0; r <= runs; ++r) {
    const std::uint64_t c0 = read_counter(fc), i0 = read_counter(fi), b0 = read_counter(fb);
    auto img = (*dec)->decode(Bytes(bytes.data(), bytes.size()), opt);
    const std::uint64_t c1 = read_counter(fc), i1 = read_counter(fi), b1 = read_counter(fb);
    if (!img) {
      std::fprintf(stderr, "decode failed\n");
      return 1;
    }
    if (r == 0) {  // warm-up
      sum = checksum(*img);
      continue;
    }
    cyc.push_back(static_cast<double>(c1 - c0) / 1e6);
    ins.push_back(static_cast<double>(i1 - i0) / 1e6);
    bm.push_back(static_cast<double>(b1 - b0) / 1e6);
    t1.push_back((*dec)->last_stats().tier1_ms);
  }
  std::printf("cycles:u min %.1f M med %.1f M | instr %.1f M | branch-misses %.3f M | tier-1 ms min %.2f med %.2f | checksum %016llx\n",
              *std::min_element(cyc.begin(), cyc.end()), median(cyc), median(ins), median(bm),
              *std::min_element(t1.begin(), t1.end()), median(t1), static_cast<unsigned long long>(sum));
  return 0;
}
