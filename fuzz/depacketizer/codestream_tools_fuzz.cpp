// Fuzz harness: MXF file reading, codestream splitting and luma+chroma merging on arbitrary
// bytes. The first byte picks the target; for the merge, the rest is cut in two at a point
// given by the next two bytes.
#include <cstddef>
#include <cstdint>

#include "depacketizer/codestream_tools.hpp"
#include "packetizer/mxf_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace j2k::depacketizer;
  if (size < 3) return 0;
  const j2k::Bytes rest(data + 3, size - 3);
  switch (data[0] % 3) {
    case 0: {
      auto mxf = j2k::packetizer::read_mxf(rest);
      if (mxf.ok() && mxf->packages.empty()) __builtin_trap();  // success means pictures were found
      break;
    }
    case 1: {
      auto parts = split_codestreams(rest);
      if (parts.ok()) {
        std::size_t total = 0;
        for (auto p : *parts) total += p.size();
        if (total > rest.size()) __builtin_trap();  // pieces are views into the input
      }
      break;
    }
    default: {
      const std::size_t cut = (static_cast<std::size_t>(data[1]) << 8 | data[2]) % (rest.size() + 1);
      auto merged = merge_luma_chroma(rest.first(cut), rest.subspan(cut));
      (void)merged;
      break;
    }
  }
  return 0;
}
