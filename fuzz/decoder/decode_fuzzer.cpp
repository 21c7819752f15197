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
  // Options from the input's length, so that one corpus explores them all: both modes,
  // reduction 0 to 2, all layers or only the first one or two (the layers read past them
  // without being kept still advance the code-blocks' headers), one thread or two (tile-parts
  // of whole components are read one per thread).
  opt.strict = (size & 1) != 0;
  opt.reduce = static_cast<int>((size >> 1) % 3);
  opt.max_layers = static_cast<int>((size >> 3) % 3);
  opt.threads = 1 + static_cast<int>((size >> 5) & 1);
  auto out = (*dec)->decode(bytes, opt);
  (void)out;
  return 0;
}
