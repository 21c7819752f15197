#include "tier1/code_block_decoder.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "dsp.hpp"
#include "tier1/mq_decoder.hpp"
#include "tier1/t1_kernel.hpp"

namespace j2k::decoder::own {

// Table C.2: Qe, NMPS, NLPS, SWITCH for the 47 probability states.
namespace {
struct QeRow {
  std::uint16_t qe;
  std::uint8_t nmps, nlps, sw;
};
constexpr QeRow kQe[47] = {
    {0x5601, 1, 1, 1},   {0x3401, 2, 6, 0},   {0x1801, 3, 9, 0},   {0x0AC1, 4, 12, 0},  {0x0521, 5, 29, 0},
    {0x0221, 38, 33, 0}, {0x5601, 7, 6, 1},   {0x5401, 8, 14, 0},  {0x4801, 9, 14, 0},  {0x3801, 10, 14, 0},
    {0x3001, 11, 17, 0}, {0x2401, 12, 18, 0}, {0x1C01, 13, 20, 0}, {0x1601, 29, 21, 0}, {0x5601, 15, 14, 1},
    {0x5401, 16, 14, 0}, {0x5101, 17, 15, 0}, {0x4801, 18, 16, 0}, {0x3801, 19, 17, 0}, {0x3401, 20, 18, 0},
    {0x3001, 21, 19, 0}, {0x2801, 22, 19, 0}, {0x2401, 23, 20, 0}, {0x2201, 24, 21, 0}, {0x1C01, 25, 22, 0},
    {0x1801, 26, 23, 0}, {0x1601, 27, 24, 0}, {0x1401, 28, 25, 0}, {0x1201, 29, 26, 0}, {0x1101, 30, 27, 0},
    {0x0AC1, 31, 28, 0}, {0x09C1, 32, 29, 0}, {0x08A1, 33, 30, 0}, {0x0521, 34, 31, 0}, {0x0441, 35, 32, 0},
    {0x02A1, 36, 33, 0}, {0x0221, 37, 34, 0}, {0x0141, 38, 35, 0}, {0x0111, 39, 36, 0}, {0x0085, 40, 37, 0},
    {0x0049, 41, 38, 0}, {0x0025, 42, 39, 0}, {0x0015, 43, 40, 0}, {0x0009, 44, 41, 0}, {0x0005, 45, 42, 0},
    {0x0001, 45, 43, 0}, {0x5601, 46, 46, 0},
};
}  // namespace

// Packed state words and their successors (see mq_decoder.hpp).
namespace {
constexpr std::uint64_t mq_word(int pair) {
  return std::uint64_t{kQe[pair / 2].qe} << 48 | static_cast<std::uint64_t>(kMqNextOffset + pair * 32) |
         static_cast<std::uint64_t>(pair & 1);
}
}  // namespace

static_assert(kMqNextOffset % 32 == 0 && kMqNextOffset + 93 * 32 <= 0xFE0, "row offsets fit bits 5..11");
alignas(64) const std::array<std::uint64_t, 94> kMqStates = [] {
  std::array<std::uint64_t, 94> t{};
  for (int pair = 0; pair < 94; ++pair) t[pair] = mq_word(pair);
  return t;
}();

alignas(64) const MqNextTable kMqNextTable = [] {
  MqNextTable t{};
  for (int i = 0; i < 47; ++i)
    for (int mps = 0; mps < 2; ++mps) {
      const int pair = i * 2 + mps;
      const int lps_mps = kQe[i].sw ? 1 - mps : mps;
      t.next[pair * 4 + 0] = mq_word(kQe[i].nmps * 2 + mps);
      t.next[pair * 4 + 1] = mq_word(pair);
      t.next[pair * 4 + 2] = mq_word(kQe[i].nlps * 2 + lps_mps);
      t.next[pair * 4 + 3] = mq_word(kQe[i].nlps * 2 + lps_mps);
    }
  return t;
}();

}  // namespace j2k::decoder::own

#define J2K_T1_NS t1_base
#include "tier1/t1_kernel.inl"

namespace j2k::decoder::own {

CodeBlockDecoder::CodeBlockDecoder(const T1Dsp& dsp) : dsp_(&dsp) {}

BlockPlan plan_block(const CodeBlock& cb, int magnitude_bits) {
  BlockPlan plan;
  if (cb.rect.width() <= 0 || cb.rect.height() <= 0 || cb.passes == 0 || cb.segments.empty()) return plan;
  plan.numbps = magnitude_bits - cb.zero_bitplanes;
  if (plan.numbps <= 0 || plan.numbps > 30) {
    plan.zeroed = plan.numbps <= 0 ? kDamaged : kTooDeep;
    return plan;
  }
  // D.1: a block of numbps bit-planes has at most 3 * numbps - 2 coding passes; tier-2
  // may have read more (B.10.6 allows 164), which code nothing and are not decoded.
  const int last_pass = 3 * plan.numbps - 2;
  for (const Segment& seg : cb.segments) {
    if (plan.passes >= last_pass) break;
    plan.passes += seg.passes;
    ++plan.segments;
  }
  plan.passes = std::min(plan.passes, last_pass);
  return plan;
}

namespace {
void zero_block(const CodeBlockJob& job, int w, int h) {
  for (int y = 0; y < h; ++y)
    std::memset(job.out + static_cast<std::ptrdiff_t>(y) * job.stride, 0, sizeof(std::int32_t) * static_cast<std::size_t>(w));
}
}  // namespace

bool CodeBlockDecoder::decode(const CodeBlockJob& job) {
  const CodeBlock& cb = *job.block;
  const int w = cb.rect.width(), h = cb.rect.height();
  if (w <= 0 || h <= 0) return true;
  const BlockPlan plan = plan_block(cb, job.magnitude_bits);
  if (plan.passes == 0) {  // nothing coded, or damaged: zero
    zero_block(job, w, h);
    return plan.zeroed != kDamaged;  // too deep: counted from the plans (collect_tier1_jobs)
  }
  const int numbps = plan.numbps;
  const int nseg = plan.segments;

  // Gather the segments into one buffer, each followed by two 0xFF bytes (see mq_decoder.hpp).
  std::size_t total = 0;
  for (Bytes c : cb.chunks) total += c.size();
  bytes_.resize(total + 2 * static_cast<std::size_t>(nseg) + 4);  // + 4: the MQ refill reads ahead (mq_decoder.hpp)
  seg_offsets_.clear();
  {
    std::size_t chunk = 0, in_chunk = 0, out = 0;
    for (int s = 0; s < nseg; ++s) {
      const Segment& seg = cb.segments[static_cast<std::size_t>(s)];
      seg_offsets_.push_back(static_cast<std::uint32_t>(out));
      std::size_t need = seg.length;
      while (need > 0 && chunk < cb.chunks.size()) {
        std::size_t take = std::min(need, cb.chunks[chunk].size() - in_chunk);
        std::memcpy(bytes_.data() + out, cb.chunks[chunk].data() + in_chunk, take);
        out += take;
        need -= take;
        in_chunk += take;
        if (in_chunk == cb.chunks[chunk].size()) {
          ++chunk;
          in_chunk = 0;
        }
      }
      bytes_[out++] = 0xFF;
      bytes_[out++] = 0xFF;
    }
  }

  const int stripes = (h + 3) / 4;
  const int row_stride = (w + 2) * 4;
  flags_.assign(static_cast<std::size_t>(stripes + 2) * row_stride, 0);
  // Not cleared: a magnitude is written when its sample becomes significant, and only
  // significant samples are read (refinement, write-out).
  if (data_.size() < static_cast<std::size_t>(stripes) * w * 4) data_.resize(static_cast<std::size_t>(stripes) * w * 4);
  if (masks_.size() < static_cast<std::size_t>(t1_mask_size(w, h))) masks_.resize(t1_mask_size(w, h));
  segs_.clear();
  for (int i = 0; i < nseg; ++i)
    segs_.push_back({seg_offsets_[static_cast<std::size_t>(i)], static_cast<int>(cb.segments[static_cast<std::size_t>(i)].passes)});
  const T1Kernel kernel{flags_.data(),
                        data_.data(),
                        masks_.data(),
                        w,
                        h,
                        job.orientation == BandOrientation::HH ? 2 : job.orientation == BandOrientation::HL ? 1 : 0,
                        numbps,
                        plan.passes,
                        segs_.data(),
                        static_cast<int>(segs_.size()),
                        bytes_.data(),
                        (job.cb_style & kBypass) != 0,
                        (job.cb_style & kReset) != 0,
                        (job.cb_style & kVerticalCausal) != 0,
                        (job.cb_style & kSegmentation) != 0};
  if (!dsp_->run_passes(kernel)) {  // the output region was never written
    zero_block(job, w, h);
    return false;
  }

  // Write out with signs. Magnitudes were written only where a sample became significant
  // (data_ is not cleared between blocks), so the significance flag selects them.
  // H.1 (ROI maxshift): magnitudes >= 2^s belong to the region and were scaled up by the
  // encoder; scale them back down. data_ holds twice the magnitude (the midpoint bit below),
  // hence the threshold 2^(s+1). OpenJPEG (and Grok's decoder) compare their doubled values
  // with 2^s, i.e. the magnitude with 2^(s-1): one bit-plane lower than H.1. It only shows
  // on streams whose background reaches bit-plane s-1, such as Grok's, which carry the RGN
  // marker with unshifted coefficients (tests/decoder_own/corpus_test.cpp, *_grk_roi_*).
  // Magnitudes are below 2^30 (numbps <= 30): a shift of 30 or more (A.6.3 allows 37)
  // scales nothing back. (Comparing with INT32_MAX instead shifted a block's largest
  // possible value by up to 37 bits.)
  const int roi = job.roi_shift < 30 ? job.roi_shift : 0;
  if (roi) {
    const std::int32_t roi_threshold = 1 << (roi + 1);
    for (int y = 0; y < h; ++y) {
      const int st = y >> 2, k = y & 3;
      const std::int32_t* d = data_.data() + static_cast<std::ptrdiff_t>(st) * w * 4 + k;
      const std::uint16_t* f = flags_.data() + static_cast<std::ptrdiff_t>(st + 1) * row_stride + 4 + k;
      std::int32_t* o = job.out + static_cast<std::ptrdiff_t>(y) * job.stride;
      for (int x = 0; x < w; ++x) {
        std::int32_t v = (f[4 * x] & kSig) ? d[4 * x] : 0;
        if (v >= roi_threshold) v >>= roi;
        o[x] = (f[4 * x] & kNeg) ? -v : v;
      }
    }
  } else {
    write_out(flags_.data(), data_.data(), w, h, row_stride, job.out, job.stride);
  }
  return true;
}

}  // namespace j2k::decoder::own
