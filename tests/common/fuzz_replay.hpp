#pragma once
// Fuzz harnesses run as ordinary tests: the committed corpus of a harness, then deterministic
// mutations of valid inputs the test builds (and can write out as new corpus seeds).
#include <gtest/gtest.h>
#include <spdlog/spdlog.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

namespace j2k::test::fuzz {

using Input = std::vector<std::uint8_t>;
using Harness = int (*)(const std::uint8_t*, std::size_t);

/// Runs `harness` on every file of fuzz/corpus/NAME; an empty corpus fails the test.
inline void replay_corpus(const std::string& name, Harness harness) {
  const std::filesystem::path dir = std::string(J2K_SOURCE_DIR) + "/fuzz/corpus/" + name;
  std::size_t n = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    std::ifstream f(e.path(), std::ios::binary);
    Input data((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    harness(data.data(), data.size());
    ++n;
  }
  EXPECT_GT(n, 0u) << "empty corpus " << dir;
}

/// How mutate_and_run changes a valid input.
struct Mutations {
  int rounds = 0;        ///< mutated inputs, each made from the base
  unsigned seed = 0;     ///< of the deterministic generator
  std::size_t keep = 0;  ///< leading bytes never edited (a harness's mode byte)
  int max_edits = 6;     ///< each input gets 1 to this many edits
  std::size_t cut = 0;   ///< the fourth kind of edit: 0 inserts a byte, N > 0 erases up to N bytes
};

/// Runs `harness` on `base`, then on `how.rounds` copies of it, each with random edits: a bit
/// flipped, a byte set, the input cut short, a byte inserted (or a span erased).
inline void mutate_and_run(const Input& base, Harness harness, const Mutations& how) {
  std::mt19937 rng(how.seed);
  harness(base.data(), base.size());
  for (int i = 0; i < how.rounds; ++i) {
    Input m = base;
    const int edits = 1 + static_cast<int>(rng() % static_cast<unsigned>(how.max_edits));
    for (int e = 0; e < edits && m.size() > how.keep; ++e) {
      const std::size_t at = how.keep + rng() % (m.size() - how.keep);
      const auto pos = m.begin() + static_cast<std::ptrdiff_t>(at);
      switch (rng() % 4) {
        case 0: m[at] ^= static_cast<std::uint8_t>(1u << (rng() % 8)); break;
        case 1: m[at] = static_cast<std::uint8_t>(rng()); break;
        case 2: m.resize(at); break;
        case 3:
          if (how.cut == 0) m.insert(pos, static_cast<std::uint8_t>(rng()));
          else m.erase(pos, m.begin() + static_cast<std::ptrdiff_t>(std::min(m.size(), at + how.cut)));
          break;
      }
    }
    harness(m.data(), m.size());
  }
}

/// Writes `data` as corpus seed NAME into the folder J2K_WRITE_SEEDS names, when it is set.
inline void write_seed(const std::string& name, const Input& data) {
  if (const char* dir = std::getenv("J2K_WRITE_SEEDS"))
    std::ofstream(std::string(dir) + "/" + name, std::ios::binary)
        .write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size()));
}

/// A valid input to mutate, and the corpus file it becomes when seeds are written.
struct Seed {
  std::string name;
  Input data;
};

/// A replay test's whole work with one harness, logging off: the committed corpus
/// fuzz/corpus/CORPUS, then each seed written out (when asked) and mutated, seed k with the
/// generator seeded `how.seed + k`.
inline void replay(Harness harness, const std::string& corpus, const std::vector<Seed>& seeds, Mutations how) {
  spdlog::set_level(spdlog::level::off);
  replay_corpus(corpus, harness);
  const unsigned first = how.seed;
  for (std::size_t k = 0; k < seeds.size(); ++k) {
    write_seed(seeds[k].name, seeds[k].data);
    how.seed = first + static_cast<unsigned>(k);
    mutate_and_run(seeds[k].data, harness, how);
  }
}

/// Appends `datagram` in the session harnesses' input format: [u16 big-endian length][bytes].
inline void append_datagram(Input& out, const std::vector<std::uint8_t>& datagram) {
  out.push_back(static_cast<std::uint8_t>(datagram.size() >> 8));
  out.push_back(static_cast<std::uint8_t>(datagram.size()));
  out.insert(out.end(), datagram.begin(), datagram.end());
}

}  // namespace j2k::test::fuzz
