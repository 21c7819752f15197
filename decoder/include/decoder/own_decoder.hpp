#pragma once
// Our own JPEG 2000 Part 1 decoder (15444-1): tier-2, tier-1 and CPU reconstruction.
// Most callers use make_decoder(Backend::own); this header exposes the split after
// tier-1 so that a later stage (the GPU) can take over reconstruction.
#include <memory>

#include "decoder/coefficients.hpp"
#include "decoder/decoder.hpp"

namespace j2k::decoder {

/// Parses the codestream and runs tier-2 and tier-1, stopping before dequantisation.
/// `stats` (optional) receives the tier-2/tier-1 times and damage counters.
Result<CoefficientFrame> decode_coefficients(Bytes codestream, const DecodeOptions& options,
                                             const DecodeLimits& limits = {}, DecodeStats* stats = nullptr);

/// The own backend as a Decoder. It keeps its worker threads and frame buffers between
/// calls; one Decoder decodes one frame at a time (use one per thread for more).
std::unique_ptr<Decoder> make_own_decoder(const DecodeLimits& limits = {});

}  // namespace j2k::decoder
