// libFuzzer harness: the whole own decode (codestream, tier-2, tier-1, reconstruction) on
// arbitrary bytes, in resilient and strict mode, with small limits so that a hostile SIZ
// cannot ask for gigabytes. Built as a fuzzer with clang (fuzz preset) and as a replay
// program in the normal test build (tests/decoder_own).
#include <cstddef>
#include <cstdint>

#include "decoder/decoder.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace j2k::decoder;
  DecodeLimits limits;
  limits.max_pixels = 1 << 20;  // 1 Mpixel: enough for the corpus, cheap per run
  limits.max_components = 8;
  static auto dec = make_decoder(Backend::own, limits);
  if (!dec.ok()) return 0;
  j2k::Bytes bytes(data, size);
  DecodeOptions opt;
  opt.strict = (size & 1) != 0;  // both modes from one corpus
  opt.reduce = (size >> 1) & 1;
  auto out = (*dec)->decode(bytes, opt);
  (void)out;
  return 0;
}
