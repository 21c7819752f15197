#pragma once
// The input format of the RTP session harnesses: repeated [u16 length][datagram bytes]
// (a length past the end takes what is left). Calls `each(bytes, index)` per datagram.
#include <cstddef>
#include <cstdint>

#include "core/byte_reader.hpp"

namespace j2k::fuzz {

template <typename Each>
void for_each_datagram(const std::uint8_t* data, std::size_t size, Each each) {
  std::size_t pos = 0;
  int index = 0;
  while (pos + 2 <= size) {
    const std::size_t len = static_cast<std::size_t>(data[pos] << 8 | data[pos + 1]);
    pos += 2;
    const std::size_t take = len < size - pos ? len : size - pos;
    each(Bytes(data + pos, take), index++);
    pos += take;
  }
}

}  // namespace j2k::fuzz
