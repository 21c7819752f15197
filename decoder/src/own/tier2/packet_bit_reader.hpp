#pragma once
// Bit reader for packet headers (15444-1 B.10.1): MSB first, and after a 0xFF byte the
// next byte carries only 7 bits (its MSB is a stuffed 0). Reading past the end returns
// zeros and sets a sticky error flag.
#include <cstddef>
#include <cstdint>

#include "core/byte_reader.hpp"

namespace j2k::decoder::own {

class PacketBitReader {
 public:
  explicit PacketBitReader(Bytes data, std::size_t pos = 0) noexcept : data_(data), pos_(pos) {}

  std::uint32_t bit() noexcept {
    if (bits_left_ == 0) {
      if (pos_ >= data_.size()) {
        failed_ = true;
        return 0;
      }
      bits_left_ = last_ == 0xFF ? 7 : 8;
      last_ = data_[pos_++];
    }
    --bits_left_;
    return (last_ >> bits_left_) & 1u;
  }
  /// n <= 32 bits, MSB first: the same bits as n calls of bit(), taken a byte's worth at a
  /// time (a segment length is 10 to 20 bits).
  std::uint32_t bits(int n) noexcept {
    std::uint64_t v = 0;
    while (n > 0) {
      if (bits_left_ == 0) {
        if (pos_ >= data_.size()) {
          failed_ = true;
          return static_cast<std::uint32_t>(v << n);  // the missing bits read as zeros
        }
        bits_left_ = last_ == 0xFF ? 7 : 8;
        last_ = data_[pos_++];
      }
      const int take = n < bits_left_ ? n : bits_left_;
      bits_left_ -= take;
      v = v << take | ((static_cast<std::uint32_t>(last_) >> bits_left_) & ((1u << take) - 1));
      n -= take;
    }
    return static_cast<std::uint32_t>(v);
  }
  /// B.10.1: the header ends on a byte boundary; a final 0xFF is followed by a stuffed byte.
  void align() noexcept {
    bits_left_ = 0;
    if (last_ == 0xFF) {
      if (pos_ >= data_.size()) failed_ = true;
      else ++pos_;
      last_ = 0;
    }
  }
  std::size_t position() const noexcept { return pos_; }
  bool failed() const noexcept { return failed_; }

 private:
  Bytes data_;
  std::size_t pos_ = 0;
  int bits_left_ = 0;
  std::uint8_t last_ = 0;
  bool failed_ = false;
};

}  // namespace j2k::decoder::own
