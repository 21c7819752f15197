#pragma once
// Tag tree decoder (15444-1 B.10.2): a quad-tree of minima over a grid of code-blocks,
// used for inclusion and for the number of missing most significant bit-planes.
#include <cstdint>
#include <vector>

#include "tier2/packet_bit_reader.hpp"

namespace j2k::decoder::own {

class TagTreeDecoder {
 public:
  TagTreeDecoder() = default;
  void reset(int width, int height) {
    nodes_.clear();
    level_offset_.clear();
    level_width_.clear();
    int w = width, h = height;
    for (;;) {
      level_offset_.push_back(static_cast<int>(nodes_.size()));
      level_width_.push_back(w);
      nodes_.resize(nodes_.size() + static_cast<std::size_t>(w) * h);
      if (w <= 1 && h <= 1) break;
      w = (w + 1) / 2;
      h = (h + 1) / 2;
    }
  }

  /// Decodes until the leaf's value is known to be >= threshold or is known exactly.
  /// Returns true when value < threshold. (B.10.2: each node's value is at least its parent's.)
  bool decode(PacketBitReader& br, int x, int y, int threshold) {
    int path[34];
    int depth = 0;
    for (std::size_t lv = 0; lv < level_offset_.size(); ++lv) {
      path[depth++] = level_offset_[lv] + y * level_width_[lv] + x;
      x >>= 1;
      y >>= 1;
    }
    int low = 0;
    for (int i = depth - 1; i >= 0; --i) {
      Node& n = nodes_[path[i]];
      if (low > n.low) n.low = low;
      else low = n.low;
      while (low < threshold && !n.known) {
        if (br.bit()) {
          n.known = true;
        } else {
          ++low;
        }
        if (br.failed()) return false;
      }
      n.low = low;
      if (!n.known) return false;
    }
    return nodes_[path[0]].low < threshold;
  }
  /// The leaf's value once decode() has established it.
  int value(int x, int y) const { return nodes_[static_cast<std::size_t>(y) * level_width_[0] + x].low; }

 private:
  struct Node {
    int low = 0;        ///< lower bound known so far (the value once `known`)
    bool known = false;
  };
  std::vector<Node> nodes_;
  std::vector<int> level_offset_;
  std::vector<int> level_width_;
};

}  // namespace j2k::decoder::own
