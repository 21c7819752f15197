// libFuzzer harness: the tables that the GPU tier-1 is handed (CoefficientDecoder::
// decode_deferred: tier-2, then code-blocks, segments and bytes as a Tier1Batch) on arbitrary
// bytes, with the tools' limits. Two oracles, each a crash when it fails:
//   - every table the decoder builds passes validate_tier1_batch, the check that a GPU launch
//     trusts (a table that lies about sizes must never come from our own tier-2);
//   - the CPU tier-1 over the table gives the coefficients that the direct decode gives
//     (frames up to 16 M coefficients), whatever the codestream's damage; the deferred
//     decode runs on two threads (tile-parts of whole components read at once), the direct
//     one on one (read in one sequence), so this also holds the two tier-2 readings equal;
//   - tier-1 started early (EarlyTier1, frames whose tile-parts allow it): the rows handed
//     over before tier-2 ended are the final table's first rows, unchanged, when it says so.
// Built as a fuzzer with clang (fuzz preset) and as a replay program in the normal test
// build (tests/decoder_own), over the same corpus as decode_fuzzer.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "decoder/own_decoder.hpp"
#include "decoder/tier1_batch.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace j2k::decoder;
  static CoefficientDecoder direct{DecodeLimits{}}, deferred{DecodeLimits{}};
  static Tier1Batch batch;
  const j2k::Bytes bytes(data, size);
  DecodeOptions opt;
  opt.threads = 2;  // tile-parts of whole components read one per thread, the direct decode's in one sequence
  opt.reduce = (size >> 1) & 1;
  DecodeOptions one = opt;
  one.threads = 1;
  EarlyTier1 early;
  std::vector<Tier1Block> handed;  // the rows as `start` saw them
  early.start = [&handed](const Tier1Batch& b) { handed.assign(b.blocks.begin(), b.blocks.end()); };
  auto frame = deferred.decode_deferred(bytes, opt, batch, nullptr, &early);
  if (!frame.ok()) return 0;
  if (!validate_tier1_batch(batch).ok()) __builtin_trap();
  if (early.rows != handed.size()) __builtin_trap();
  if (early.kept) {
    if (handed.size() > batch.blocks.size()) __builtin_trap();
    if (!handed.empty() && std::memcmp(handed.data(), batch.blocks.data(), handed.size() * sizeof(Tier1Block)) != 0)
      __builtin_trap();
  }
  constexpr std::uint64_t kMaxCompared = std::uint64_t{1} << 24;
  if (batch.coefficient_count > kMaxCompared) return 0;
  auto ref = direct.decode(bytes, one);
  if (!ref.ok()) return 0;  // the tables may be made where the direct decode then fails (its limits)
  std::vector<std::int32_t> coeffs(batch.coefficient_count, 0);
  const std::uint64_t damaged = decode_tier1_batch_cpu(batch, coeffs.data());
  // The deferred frame counts the blocks the table leaves out as damaged (too many bit-planes,
  // or damaged in a component with nothing else to decode); the table's decode the rest.
  if (damaged + frame->damaged_codeblocks != ref->damaged_codeblocks) __builtin_trap();
  std::size_t at = 0;
  for (const TileCoefficients& t : ref->tiles)
    for (const ComponentCoefficients& c : t.components)
      for (const std::int32_t v : c.data) {
        if (at >= coeffs.size() || coeffs[at] != v) __builtin_trap();
        ++at;
      }
  if (at != coeffs.size()) __builtin_trap();
  return 0;
}
