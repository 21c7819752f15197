#pragma once
// Bytes written as hex digits in a test ("000A0000" "2c48…"), as a dump shows them.
#include <cstdint>
#include <string>
#include <vector>

namespace j2k::test {

/// Each two hex digits of `s` as a byte (a trailing odd digit is ignored).
inline std::vector<std::uint8_t> hex(const char* s) {
  std::vector<std::uint8_t> out;
  for (; s[0] && s[1]; s += 2) out.push_back(static_cast<std::uint8_t>(std::stoi(std::string(s, 2), nullptr, 16)));
  return out;
}

}  // namespace j2k::test
