// Mutated codestreams (issue 9 item 4): thousands of mutants of the fuzz corpus's
// codestreams decode or fail cleanly, and each stays within the memory the decoder's own
// accounting (DecodeStats::memory_bytes, charged before allocating) allows. Deterministic:
// one seed, so a failure names a mutant that can be rebuilt.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "decoder/decoder.hpp"

namespace j2k::decoder {
namespace {

std::vector<std::vector<std::uint8_t>> corpus_codestreams() {
  std::vector<std::vector<std::uint8_t>> out;
  const auto dir = std::filesystem::path(J2K_SOURCE_DIR) / "fuzz" / "decoder" / "corpus";
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.is_regular_file() && e.path().filename().string().rfind("seed_", 0) == 0) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const auto& p : files) {
    std::ifstream f(p, std::ios::binary);
    out.emplace_back(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  }
  return out;
}

/// One mutation of the kinds a fuzzer or a damaged link produces, biased towards the
/// main header (where one byte changes what the decoder must set up).
void mutate(std::vector<std::uint8_t>& d, std::mt19937& rng) {
  if (d.size() < 8) return;
  auto pick = [&](std::size_t n) { return static_cast<std::size_t>(rng() % n); };
  const std::size_t header = std::min<std::size_t>(d.size(), 160);
  const std::size_t at = (rng() & 1) ? pick(header) : pick(d.size());
  switch (rng() % 6) {
    case 0: d[at] ^= static_cast<std::uint8_t>(1u << (rng() % 8)); break;  // bit flip
    case 1: d[at] = static_cast<std::uint8_t>(rng()); break;               // random byte
    case 2:                                                                // extreme 16-bit field
      if (at + 1 < d.size()) d[at] = d[at + 1] = (rng() & 1) ? 0xFF : 0x00;
      break;
    case 3:  // extreme 32-bit field (sizes, tile sizes, Psot)
      if (at + 3 < d.size()) std::fill_n(d.begin() + static_cast<std::ptrdiff_t>(at), 4, (rng() & 1) ? 0xFF : 0x00);
      break;
    case 4:  // cut
      d.resize(std::max<std::size_t>(at, 2));
      break;
    default: {  // duplicate a range (repeated markers, packets)
      const std::size_t n = std::min<std::size_t>(1 + pick(64), d.size() - at);
      std::vector<std::uint8_t> range(d.begin() + static_cast<std::ptrdiff_t>(at),
                                      d.begin() + static_cast<std::ptrdiff_t>(at + n));
      d.insert(d.begin() + static_cast<std::ptrdiff_t>(at), range.begin(), range.end());
    }
  }
}

TEST(Mutants, DecodeOrFailWithinTheMemoryAccounting) {
  const auto seeds = corpus_codestreams();
  ASSERT_GE(seeds.size(), 5u);
  DecodeLimits limits;  // the tools' limits, with a memory limit small enough for a test
  limits.max_memory = 48LL << 20;
  auto dec = make_decoder(Backend::own, limits);
  ASSERT_TRUE(dec.ok());
  std::mt19937 rng(20261124);
  int decoded = 0, refused = 0, failed = 0;
  for (std::size_t s = 0; s < seeds.size(); ++s) {
    for (int m = 0; m < 250; ++m) {
      std::vector<std::uint8_t> d = seeds[s];
      const int edits = 1 + static_cast<int>(rng() % 4);
      for (int e = 0; e < edits; ++e) mutate(d, rng);
      DecodeOptions opt;
      opt.strict = (m & 1) != 0;
      opt.threads = 1 + m % 2;
      auto image = (*dec)->decode(d, opt);  // must return: no exception, no abort
      const auto stats = (*dec)->last_stats();
      ASSERT_LE(stats.memory_bytes, static_cast<std::uint64_t>(limits.max_memory)) << "seed " << s << " mutant " << m;
      if (image.ok()) {
        ++decoded;
        // What was decoded was accounted for: at least its output planes.
        std::uint64_t samples = 0;
        for (const Plane& p : image->planes) samples += p.samples.size();
        EXPECT_GE(stats.memory_bytes, samples * 4) << "seed " << s << " mutant " << m;
      } else if (image.error().kind == ErrorKind::limit) {
        ++refused;
      } else {
        ++failed;
      }
    }
  }
  // The mutants reach all three outcomes (a sanity check of the mutator, not of timing).
  EXPECT_GT(decoded, 0);
  EXPECT_GT(failed, 0);
  std::printf("mutants: %d decoded, %d refused by a limit, %d failed as corrupt/unsupported\n", decoded, refused, failed);
}

}  // namespace
}  // namespace j2k::decoder
