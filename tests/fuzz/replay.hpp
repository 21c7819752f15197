#pragma once
// What the fuzz-harness replay tests share: the committed corpus of a harness run as ordinary
// inputs, deterministic mutations of a valid input (bit flips, byte changes, cuts, inserted
// bytes; the first `protect` bytes, e.g. a mode byte, left alone), and writing seeds
// (J2K_WRITE_SEEDS=DIR) for the corpus.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

namespace j2k::test {

using FuzzInput = std::vector<std::uint8_t>;
using Harness = int (*)(const std::uint8_t*, std::size_t);

inline void replay_corpus(const std::string& name, Harness harness) {
  const std::filesystem::path dir = std::string(J2K_SOURCE_DIR) + "/fuzz/corpus/" + name;
  std::size_t n = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    std::ifstream f(e.path(), std::ios::binary);
    FuzzInput data((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    harness(data.data(), data.size());
    ++n;
  }
  EXPECT_GT(n, 0u) << "empty corpus " << dir;
}

inline void mutate_and_run(const FuzzInput& base, Harness harness, int rounds, unsigned seed, std::size_t protect = 0) {
  std::mt19937 rng(seed);
  harness(base.data(), base.size());
  for (int i = 0; i < rounds; ++i) {
    FuzzInput m = base;
    const int edits = 1 + static_cast<int>(rng() % 6);
    for (int e = 0; e < edits && m.size() > protect; ++e) {
      const std::size_t at = protect + rng() % (m.size() - protect);
      switch (rng() % 4) {
        case 0: m[at] ^= static_cast<std::uint8_t>(1u << (rng() % 8)); break;
        case 1: m[at] = static_cast<std::uint8_t>(rng()); break;
        case 2: m.resize(at); break;
        case 3: m.insert(m.begin() + static_cast<std::ptrdiff_t>(at), static_cast<std::uint8_t>(rng())); break;
      }
    }
    harness(m.data(), m.size());
  }
}

inline void write_seed(const char* dir, const std::string& name, const FuzzInput& data) {
  std::ofstream(std::string(dir) + "/" + name, std::ios::binary)
      .write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size()));
}

}  // namespace j2k::test
