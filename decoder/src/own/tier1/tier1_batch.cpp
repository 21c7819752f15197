// Tier-1 batch tables: validation (the contract a trusting tier-1 relies on) and the CPU
// reference decode over a batch (CodeBlockDecoder per row).
#include "decoder/tier1_batch.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "dsp.hpp"
#include "tier1/code_block_decoder.hpp"
#include "tier1/tier1_jobs.hpp"
#include "tier2/tile_structure.hpp"

namespace j2k::decoder {

namespace {
/// Most passes a segment starting at pass `first` holds (B.10.7, D.6 / Table D.9); the same
/// rule tier-2 applies when it builds segments, so every segment is all-MQ or all-raw.
std::uint32_t segment_capacity(int style, std::uint32_t first) {
  if (style & kTier1TermAll) return 1;
  if (style & kTier1Bypass) {
    if (first < 10) return 10 - first;
    return (first - 10) % 3 == 0 ? 2 : 1;
  }
  return 255;
}
}  // namespace

Status validate_tier1_batch(const Tier1Batch& batch) {
  auto bad = [](std::size_t i, const char* what) {
    return make_error(ErrorKind::corrupt, fmt::format("tier-1 table row {}: {}", i, what));
  };
  for (std::size_t i = 0; i < batch.blocks.size(); ++i) {
    const Tier1Block& b = batch.blocks[i];
    if (b.width == 0 || b.height == 0 || b.width > kTier1MaxSide || b.height > kTier1MaxSide ||
        static_cast<int>(b.width) * b.height > kTier1MaxBlockSamples)
      return bad(i, "code-block size out of range");
    if (b.stride < b.width) return bad(i, "stride below the width");
    // Last element written: out + (h - 1) * stride + w - 1 (all 64-bit, no overflow for 32-bit fields).
    const std::uint64_t end = b.out + static_cast<std::uint64_t>(b.height - 1) * b.stride + b.width;
    if (b.out >= batch.coefficient_count || end > batch.coefficient_count) return bad(i, "block outside the coefficients");
    if (b.numbps < 1 || b.numbps > 30) return bad(i, "bit-planes out of range");
    if (b.passes < 1 || b.passes > 3 * b.numbps - 2) return bad(i, "pass count out of range");
    if (b.band > 2) return bad(i, "band out of range");
    if (b.roi_shift > 29) return bad(i, "ROI shift out of range (0..29; larger shifts scale nothing back)");
    if (b.style & 0xC0) return bad(i, "unknown code-block style bits");
    if (b.seg_count == 0 || b.seg_first > batch.segments.size() || b.seg_count > batch.segments.size() - b.seg_first)
      return bad(i, "segments outside the segment table");
    std::uint64_t bytes = 0;
    std::uint32_t first = 0;  // the segment's first pass
    for (std::uint32_t s = 0; s < b.seg_count; ++s) {
      const Tier1Segment& seg = batch.segments[b.seg_first + s];
      if (seg.passes == 0 || seg.passes > segment_capacity(b.style, first))
        return bad(i, "segment pass count does not fit the code-block style");
      first += seg.passes;
      bytes += seg.length;
    }
    if (b.byte_offset > batch.bytes.size() || bytes > batch.bytes.size() - b.byte_offset)
      return bad(i, "segments run past the compressed bytes");
  }
  return {};
}

namespace own {

bool decode_tier1_row(CodeBlockDecoder& dec, CodeBlock& cb, const Tier1Batch& batch, const Tier1Block& b,
                      std::int32_t* out, std::uint32_t stride) {
  cb.rect = {0, 0, b.width, b.height};
  cb.zero_bitplanes = 0;
  cb.passes = b.passes;
  cb.segments.clear();
  std::size_t bytes = 0;
  for (std::uint32_t s = 0; s < b.seg_count; ++s) {
    const Tier1Segment& seg = batch.segments[b.seg_first + s];
    cb.segments.push_back({seg.length, static_cast<std::uint16_t>(seg.passes), static_cast<std::uint16_t>(seg.passes)});
    bytes += seg.length;
  }
  cb.chunks.assign(1, Bytes(batch.bytes.data() + b.byte_offset, bytes));
  CodeBlockJob job;
  job.block = &cb;
  job.orientation = b.band == 2 ? BandOrientation::HH : b.band == 1 ? BandOrientation::HL : BandOrientation::LH;
  job.magnitude_bits = b.numbps;
  job.roi_shift = b.roi_shift;
  job.cb_style = b.style;
  job.out = out;
  job.stride = static_cast<int>(stride);
  return dec.decode(job);  // false: zeroed (damaged)
}

}  // namespace own

std::uint64_t decode_tier1_batch_cpu(const Tier1Batch& batch, std::int32_t* coefficients) {
  own::CodeBlockDecoder dec(own::t1_dsp());
  own::CodeBlock cb;
  std::uint64_t damaged = 0;
  for (const Tier1Block& b : batch.blocks)
    if (!own::decode_tier1_row(dec, cb, batch, b, coefficients + b.out, b.stride)) ++damaged;
  return damaged;
}

std::uint64_t tier1_packed_offsets(const Tier1Batch& batch, std::span<const std::uint32_t> rows,
                                   std::vector<std::uint64_t>& offsets) {
  offsets.resize(rows.size());
  std::uint64_t pos = 0;
  for (std::size_t j = 0; j < rows.size(); ++j) {
    offsets[j] = pos;
    const Tier1Block& b = batch.blocks[rows[j]];
    pos += std::uint64_t{b.width} * b.height;
  }
  return pos;
}

void copy_tier1_rows(const Tier1Batch& from, std::span<const std::uint32_t> rows, Tier1Batch& to) {
  to.clear();
  to.component_base = from.component_base;
  to.coefficient_count = from.coefficient_count;
  for (const std::uint32_t r : rows) {
    Tier1Block b = from.blocks[r];
    std::size_t bytes = 0;
    const auto seg = from.segments.begin() + b.seg_first;
    for (auto s = seg; s != seg + b.seg_count; ++s) bytes += s->length;
    b.seg_first = static_cast<std::uint32_t>(to.segments.size());
    to.segments.insert(to.segments.end(), seg, seg + b.seg_count);
    const auto at = from.bytes.begin() + b.byte_offset;
    b.byte_offset = static_cast<std::uint32_t>(to.bytes.size());
    to.bytes.insert(to.bytes.end(), at, at + static_cast<std::ptrdiff_t>(bytes));
    to.blocks.push_back(b);
  }
}

std::uint64_t decode_tier1_rows_cpu(const Tier1Batch& batch, std::span<const std::uint32_t> rows, std::int32_t* packed) {
  own::CodeBlockDecoder dec(own::t1_dsp());
  own::CodeBlock cb;
  std::uint64_t damaged = 0, pos = 0;
  for (const std::uint32_t r : rows) {
    const Tier1Block& b = batch.blocks[r];
    if (!own::decode_tier1_row(dec, cb, batch, b, packed + pos, b.width)) ++damaged;
    pos += std::uint64_t{b.width} * b.height;
  }
  return damaged;
}

}  // namespace j2k::decoder
