// The tag tree's missing-bit-plane decode (B.10.5): tier-2 decodes a leaf's exact value in
// one walk with an open threshold; the standard's way raises the threshold one plane at a
// time until the leaf's value is below it. Both must give the same value, consume the same
// bits and leave the tree in the same state, on any bits, for every leaf in any order, and
// fail the same way when the value reaches the limit or the bits run out.
#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <random>
#include <vector>

#include "tier2/tag_tree.hpp"

using namespace j2k::decoder::own;

namespace {

struct Outcome {
  bool ok;
  int value;
  std::size_t position;
  bool failed;
  bool operator==(const Outcome&) const = default;
};

constexpr int kLimit = 80;  // tier-2's kMaxZeroBitplanes

Outcome plane_by_plane(TagTreeDecoder& tree, PacketBitReader& br, int x, int y) {
  int t = 1;
  while (!tree.decode(br, x, y, t)) {
    if (br.failed() || ++t > kLimit) return {false, 0, br.position(), br.failed()};
  }
  return {true, tree.value(x, y), br.position(), br.failed()};
}

Outcome one_walk(TagTreeDecoder& tree, PacketBitReader& br, int x, int y) {
  if (!tree.decode(br, x, y, kLimit)) return {false, 0, br.position(), br.failed()};
  return {true, tree.value(x, y), br.position(), br.failed()};
}

}  // namespace

TEST(TagTree, OneWalkDecodesMissingBitPlanesLikePlaneByPlane) {
  std::mt19937 rng(1234);
  int compared = 0, failures = 0;
  for (int round = 0; round < 3000; ++round) {
    const int w = 1 + static_cast<int>(rng() % 40), h = 1 + static_cast<int>(rng() % 24);
    // Bits with mostly zeros (large values), mostly ones (small values), or mixed.
    std::vector<std::uint8_t> bytes(1 + rng() % 300);
    const unsigned density = rng() % 3;
    for (auto& b : bytes) {
      unsigned v = 0;
      for (int k = 0; k < 8; ++k) {
        const bool one = density == 0 ? rng() % 8 == 0 : density == 1 ? rng() % 8 != 0 : rng() % 2 == 0;
        v = v << 1 | (one ? 1u : 0u);
      }
      b = static_cast<std::uint8_t>(v);
    }
    std::vector<int> order(static_cast<std::size_t>(w * h));
    std::iota(order.begin(), order.end(), 0);
    if (round % 2) std::shuffle(order.begin(), order.end(), rng);
    TagTreeDecoder a, b;
    a.reset(w, h);
    b.reset(w, h);
    PacketBitReader ra(j2k::Bytes(bytes.data(), bytes.size())), rb(j2k::Bytes(bytes.data(), bytes.size()));
    for (const int leaf : order) {
      const int x = leaf % w, y = leaf / w;
      const Outcome want = plane_by_plane(a, ra, x, y);
      const Outcome got = one_walk(b, rb, x, y);
      ASSERT_EQ(got, want) << "round " << round << " leaf " << x << "," << y;
      ++compared;
      if (!want.ok) {
        ++failures;
        break;  // tier-2 stops at a damaged header
      }
    }
  }
  EXPECT_GT(compared, 100000);
  EXPECT_GT(failures, 100);  // the limit and the end of the bits were both reached
}

TEST(PacketBitReader, BitsReadLikeBitByBit) {
  // bits(n) takes up to a byte's worth a step; it must read what n calls of bit() read,
  // across stuffed bytes after 0xFF and past the end (zeros, and the failure flag).
  std::mt19937 rng(99);
  for (int round = 0; round < 2000; ++round) {
    std::vector<std::uint8_t> bytes(rng() % 24);
    for (auto& b : bytes) b = rng() % 3 == 0 ? 0xFF : static_cast<std::uint8_t>(rng());
    const j2k::Bytes data(bytes.data(), bytes.size());
    PacketBitReader a(data), b(data);
    for (int step = 0; step < 12; ++step) {
      const int n = static_cast<int>(rng() % 33);
      std::uint32_t want = 0;
      for (int i = 0; i < n; ++i) want = want << 1 | a.bit();
      ASSERT_EQ(b.bits(n), want) << "round " << round << " step " << step << " n " << n;
      ASSERT_EQ(b.failed(), a.failed());
      ASSERT_EQ(b.position(), a.position());
      if (rng() % 4 == 0) {
        a.align();
        b.align();
      }
    }
  }
}
