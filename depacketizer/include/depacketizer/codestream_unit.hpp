#pragma once
// One access unit handed from the depacketizer to the decoder: a frame (or a field pair),
// as one or more J2K codestreams, with what is known of its completeness.
#include <chrono>
#include <cstdint>
#include <optional>
#include <vector>

#include "depacketizer/mxf.hpp"

namespace j2k::depacketizer {

struct CodestreamUnit {
  std::vector<std::vector<std::uint8_t>> codestreams;  ///< in picture-element order
  std::uint32_t rtp_timestamp = 0;
  std::uint64_t index = 0;            ///< running number of units emitted by this depacketizer
  bool complete = true;               ///< every expected element arrived intact
  std::uint64_t missing_bytes = 0;    ///< bytes declared but not received (lower bound)
  int expected_elements = 1;
  std::optional<PictureDescriptor> descriptor;  ///< latest descriptor seen, if any
  std::chrono::steady_clock::time_point first_arrival{};
  std::chrono::steady_clock::time_point last_arrival{};

  std::size_t total_bytes() const noexcept {
    std::size_t n = 0;
    for (const auto& c : codestreams) n += c.size();
    return n;
  }
};

}  // namespace j2k::depacketizer
