#pragma once
// Tag tree decoder (15444-1 B.10.2): a quad-tree of minima over a grid of code-blocks,
// used for inclusion and for the number of missing most significant bit-planes.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "tier2/packet_bit_reader.hpp"

namespace j2k::decoder::own {

class TagTreeDecoder {
 public:
  TagTreeDecoder() = default;
  void reset(int width, int height) {
    levels_ = 0;
    std::uint32_t total = 0;
    int w = width, h = height;
    for (;;) {
      offset_[levels_] = total;
      width_[levels_] = w;
      ++levels_;
      total += static_cast<std::uint32_t>(w) * static_cast<std::uint32_t>(h);
      if ((w <= 1 && h <= 1) || levels_ == kMaxLevels) break;
      w = (w + 1) / 2;
      h = (h + 1) / 2;
    }
    nodes_.assign(total, 0);
  }
  /// The nodes a tree over `width` x `height` leaves holds (what reset() allocates, 4 bytes each).
  static std::size_t nodes(int width, int height) {
    std::size_t total = 0;
    for (int lv = 0, w = width, h = height;; ++lv, w = (w + 1) / 2, h = (h + 1) / 2) {
      total += static_cast<std::size_t>(w) * static_cast<std::size_t>(h);
      if ((w <= 1 && h <= 1) || lv + 1 == kMaxLevels) return total;
    }
  }
  static constexpr std::size_t kNodeBytes = sizeof(std::uint32_t);

  /// Decodes until the leaf's value is known to be >= threshold or is known exactly.
  /// Returns true when value < threshold. (B.10.2: each node's value is at least its parent's.)
  bool decode(PacketBitReader& br, int x, int y, int threshold) {
    int low = 0;
    for (int lv = levels_ - 1; lv >= 0; --lv) {
      std::uint32_t& n = nodes_[offset_[lv] + static_cast<std::size_t>(y >> lv) * width_[lv] + (x >> lv)];
      const int held = static_cast<int>(n & kLow);
      if (low > held) n = (n & kKnown) | static_cast<std::uint32_t>(low);
      else low = held;
      if (n & kKnown) continue;
      bool known = false;
      while (low < threshold) {
        const bool one = br.bit() != 0;
        if (br.failed()) return false;  // what was raised above stays; the bits read are lost
        if (one) {
          known = true;
          break;
        }
        ++low;
      }
      n = static_cast<std::uint32_t>(low) | (known ? kKnown : 0u);
      if (!known) return false;
    }
    return low < threshold;
  }
  /// The leaf's value once decode() has established it.
  int value(int x, int y) const { return static_cast<int>(nodes_[static_cast<std::size_t>(y) * width_[0] + x] & kLow); }

 private:
  // A node: the lower bound known so far (the value once known) in the low 31 bits, and
  // whether it is known in the top one. The levels' offsets and widths in place (not on the
  // heap): every code-block of a packet header walks them twice. A tree is made for every
  // precinct-band that data reaches (hundreds of thousands in an 8K frame with small
  // precincts), so the place is kept small: a precinct is at most 2^15 wide (B.6) and a
  // code-block at least 4 (A.6.1), so a side has at most 2^13 + 1 leaves: 15 levels.
  static constexpr std::uint32_t kKnown = 0x80000000u, kLow = 0x7FFFFFFFu;
  static constexpr int kMaxLevels = 16;
  std::vector<std::uint32_t> nodes_;
  std::uint32_t offset_[kMaxLevels] = {};
  std::int32_t width_[kMaxLevels] = {};
  int levels_ = 0;
};

}  // namespace j2k::decoder::own
