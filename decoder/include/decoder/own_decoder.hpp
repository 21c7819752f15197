#pragma once
// Our own JPEG 2000 Part 1 decoder (15444-1): tier-2, tier-1 and CPU reconstruction.
// Most callers use make_decoder(Backend::own); this header exposes the split after
// tier-1 so that a later stage (the GPU) can take over reconstruction.
#include <memory>

#include "decoder/coefficients.hpp"
#include "decoder/decoder.hpp"
#include "decoder/tier1_batch.hpp"

namespace j2k::decoder {

/// Parses the codestream and runs tier-2 and tier-1, stopping before dequantisation.
/// `stats` (optional) receives the tier-2/tier-1 times and damage counters. The thread pool
/// is kept per calling thread between calls (sized by options.threads); the frame's
/// buffers are fresh every time (CoefficientDecoder below recycles them).
Result<CoefficientFrame> decode_coefficients(Bytes codestream, const DecodeOptions& options,
                                             const DecodeLimits& limits = {}, DecodeStats* stats = nullptr);

/// Tier-2 + tier-1 for a stream of frames, with a thread pool and buffers that live as
/// long as the object (decode_coefficients() builds and tears down both for every call).
/// One frame at a time per object (not thread-safe); use one per decoding thread.
///
///   CoefficientDecoder dec(limits);
///   auto frame = dec.decode(bytes, options, &stats);   // options.threads sizes the pool
///   ... reconstruct on the GPU, or dec.reconstruct(*frame, image) on the CPU ...
///   dec.recycle(std::move(*frame));                     // optional: next frame reuses its buffers
class CoefficientDecoder {
 public:
  explicit CoefficientDecoder(const DecodeLimits& limits = {});
  ~CoefficientDecoder();
  CoefficientDecoder(CoefficientDecoder&&) noexcept;
  CoefficientDecoder& operator=(CoefficientDecoder&&) noexcept;

  /// Same result as decode_coefficients(); the pool is (re)built only when options.threads
  /// changes.
  Result<CoefficientFrame> decode(Bytes codestream, const DecodeOptions& options, DecodeStats* stats = nullptr);
  /// Parsing and tier-2 only: the frame's geometry (its `data` vectors sized, contents
  /// unspecified) and, in `batch`, the tier-1 work for another tier-1 (the GPU's) that
  /// fills the frame's coefficients in the Tier1Batch layout. stats->tier1_ms stays 0.
  /// `early` (optional): tier-1 may start on part of the batch before tier-2 ends (EarlyTier1).
  Result<CoefficientFrame> decode_deferred(Bytes codestream, const DecodeOptions& options, Tier1Batch& batch,
                                           DecodeStats* stats = nullptr, EarlyTier1* early = nullptr);
  /// The CPU tier-1 over `rows` of the last decode_deferred's batch (or any valid batch),
  /// into `packed` (tier1_packed_offsets layout), on this object's pool (the last decode's
  /// threads or shared pool), heaviest rows best given first. Returns the damaged (zeroed)
  /// block count. Used beside the GPU tier-1, which decodes the other rows meanwhile. One
  /// call with `beside` may run on another thread at the same time as decode_deferred (after
  /// EarlyTier1::start) or as one call without it (its own scratch), each on a batch that
  /// the other does not change.
  Result<std::uint64_t> decode_tier1_rows(const Tier1Batch& batch, std::span<const std::uint32_t> rows,
                                          std::int32_t* packed, bool beside = false);
  /// Gives a frame's coefficient buffers back for the next decode() (saves allocating,
  /// zero-filling and page-faulting ~4 bytes per sample per frame).
  void recycle(CoefficientFrame&& frame);
  /// CPU reconstruction (same result as reconstruct()) on this object's pool, into `out`,
  /// whose planes are reused when their sizes match.
  Status reconstruct(const CoefficientFrame& frame, PlanarImage& out, ReconstructTimes* times = nullptr);
  /// Threads of the last decode() (the pool's size).
  int threads() const noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// The own backend as a Decoder. It keeps its worker threads and frame buffers between
/// calls; one Decoder decodes one frame at a time (use one per thread for more).
std::unique_ptr<Decoder> make_own_decoder(const DecodeLimits& limits = {});

}  // namespace j2k::decoder
