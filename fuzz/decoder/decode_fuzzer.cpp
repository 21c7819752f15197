// libFuzzer harness: the whole own decode (codestream, tier-2, tier-1, reconstruction) on
// arbitrary bytes, in resilient and strict mode, with the limits the tools use
// (DecodeLimits' defaults: 16384^2 samples, 16384 components, 2 GiB), so that what a
// hostile header can make the tools allocate or compute is what the fuzzer explores. Run
// it with -rss_limit_mb above the memory limit (fuzz/decoder/README.md). Built as a fuzzer
// with clang (fuzz preset) and as a replay program in the normal test build
// (tests/decoder_own).
#include <cstddef>
#include <cstdint>

#include "decoder/decoder.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace j2k::decoder;
  static auto dec = make_decoder(Backend::own, DecodeLimits{});
  if (!dec.ok()) return 0;
  j2k::Bytes bytes(data, size);
  DecodeOptions opt;
  opt.strict = (size & 1) != 0;  // both modes from one corpus
  opt.reduce = (size >> 1) & 1;
  opt.threads = 2;  // tile-parts of whole components are read one per thread
  auto out = (*dec)->decode(bytes, opt);
  (void)out;
  return 0;
}
