#include "tier1/code_block_decoder.hpp"

#include <algorithm>
#include <array>
#include <cstring>

#include "tier1/mq_decoder.hpp"

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
constexpr std::array<MqTransition, 94> make_mq_table() {
  std::array<MqTransition, 94> t{};
  for (int i = 0; i < 47; ++i)
    for (int mps = 0; mps < 2; ++mps) {
      int lps_mps = kQe[i].sw ? 1 - mps : mps;
      t[i * 2 + mps] = {kQe[i].qe, static_cast<std::uint8_t>(kQe[i].nmps * 2 + mps),
                        static_cast<std::uint8_t>(kQe[i].nlps * 2 + lps_mps)};
    }
  return t;
}
}  // namespace

const std::array<MqTransition, 94> kMqTable = make_mq_table();

namespace {

// Per-sample state word. Bits 0-7: significance of the 8 neighbours; 8-11: their signs
// (negative) for N, S, W, E; then the sample's own state. Keeping the neighbourhood in the
// sample's own word makes every context a table lookup on one load (D.3.1–D.3.3).
constexpr std::uint32_t kSigN = 1u << 0, kSigS = 1u << 1, kSigW = 1u << 2, kSigE = 1u << 3;
constexpr std::uint32_t kSigNW = 1u << 4, kSigNE = 1u << 5, kSigSW = 1u << 6, kSigSE = 1u << 7;
constexpr std::uint32_t kNeighbours = 0xFFu;
constexpr std::uint32_t kSgnN = 1u << 8, kSgnS = 1u << 9, kSgnW = 1u << 10, kSgnE = 1u << 11;
constexpr std::uint32_t kSig = 1u << 12, kVisit = 1u << 13, kRefined = 1u << 14, kNeg = 1u << 15;

// Context numbers: 0-8 zero coding, 9-13 sign, 14-16 refinement, 17 run-length, 18 uniform.
constexpr int kCtxMr = 14, kCtxRl = 17, kCtxUni = 18, kNumCtx = 19;

struct Tables {
  std::uint8_t zc[3][256];  // [LL/LH, HL, HH][neighbour significance]
  std::uint8_t sc[256];     // (context << 1) | xor bit, from 4 significance + 4 sign bits
};

constexpr Tables make_tables() {
  Tables t{};
  for (int n = 0; n < 256; ++n) {
    int v = ((n & kSigN) != 0) + ((n & kSigS) != 0);
    int h = ((n & kSigW) != 0) + ((n & kSigE) != 0);
    int d = ((n & kSigNW) != 0) + ((n & kSigNE) != 0) + ((n & kSigSW) != 0) + ((n & kSigSE) != 0);
    // Table D.1, LL and LH bands.
    auto lh = [](int hh, int vv, int dd) {
      if (hh == 2) return 8;
      if (hh == 1) return vv >= 1 ? 7 : dd >= 1 ? 6 : 5;
      if (vv == 2) return 4;
      if (vv == 1) return 3;
      return dd >= 2 ? 2 : dd;
    };
    t.zc[0][n] = static_cast<std::uint8_t>(lh(h, v, d));
    t.zc[1][n] = static_cast<std::uint8_t>(lh(v, h, d));  // HL: h and v swap roles
    int hv = h + v;
    int hh;
    if (d >= 3) hh = 8;
    else if (d == 2) hh = hv >= 1 ? 7 : 6;
    else if (d == 1) hh = hv >= 2 ? 5 : hv == 1 ? 4 : 3;
    else hh = hv >= 2 ? 2 : hv;
    t.zc[2][n] = static_cast<std::uint8_t>(hh);
  }
  // Tables D.2/D.3: contributions +1 (positive), -1 (negative), 0 (insignificant).
  for (int n = 0; n < 256; ++n) {
    auto contrib = [n](int sig_bit, int neg_bit) { return (n & sig_bit) ? ((n & neg_bit) ? -1 : 1) : 0; };
    int vc = contrib(1, 16) + contrib(2, 32);   // N, S (sign bits shifted to 4..7)
    int hc = contrib(4, 64) + contrib(8, 128);  // W, E
    hc = std::clamp(hc, -1, 1);
    vc = std::clamp(vc, -1, 1);
    int ctx, x = 0;
    if (hc == 0 && vc == 0) ctx = 9;
    else if (hc == 0) ctx = 10, x = vc < 0;
    else if (vc == 0) ctx = 12, x = hc < 0;
    else if (hc == vc) ctx = 13, x = hc < 0;
    else ctx = 11, x = hc < 0;
    t.sc[n] = static_cast<std::uint8_t>(ctx << 1 | x);
  }
  return t;
}
constexpr Tables kTables = make_tables();

void reset_contexts(std::uint8_t* ctx) {
  std::memset(ctx, 0, kNumCtx);
  ctx[0] = 4 * 2;        // D.7 / Table D.7: zero-coding context 0 starts in state 4
  ctx[kCtxRl] = 3 * 2;   // run-length: state 3
  ctx[kCtxUni] = 46 * 2; // uniform: state 46
}

struct BlockState {
  std::uint32_t* flags;  // (w + 2) x (h + 2), one-sample border
  std::int32_t* data;    // w x h magnitudes (2x scale)
  int w, h, stride;
  const std::uint8_t* zc;
  bool causal;
};

[[gnu::always_inline]] inline std::uint32_t sign_index(std::uint32_t f) { return (f & 0xF) | ((f >> 4) & 0xF0); }

/// Marks a sample significant and tells its 8 neighbours (D.3.1). In vertically causal
/// mode the row above a stripe does not learn about this stripe (D.7, Table D.8).
[[gnu::always_inline]] inline void set_significant(std::uint32_t* f, int stride, std::uint32_t neg, bool skip_up) {
  f[0] |= kSig | (neg ? kNeg : 0);
  f[-1] |= kSigE | (neg ? kSgnE : 0);
  f[1] |= kSigW | (neg ? kSgnW : 0);
  if (!skip_up) {
    f[-stride] |= kSigS | (neg ? kSgnS : 0);
    f[-stride - 1] |= kSigSE;
    f[-stride + 1] |= kSigSW;
  }
  f[stride] |= kSigN | (neg ? kSgnN : 0);
  f[stride - 1] |= kSigNE;
  f[stride + 1] |= kSigNW;
}

// The pass functions below are long on purpose: the MQ registers stay in locals for the
// whole pass, which is what makes tier-1 fast (decoder-performance.md).

/// Significance propagation pass (D.3.1), MQ-coded.
void sig_pass_mq(BlockState& s, int p, MqRegisters& mqr, std::uint8_t* ctx) {
  MqRegisters mq = mqr;
  const std::int32_t one = 3 << p;
  const int stride = s.stride;
  for (int y0 = 0; y0 < s.h; y0 += 4) {
    const int rows = std::min(4, s.h - y0);
    std::uint32_t* fcol = s.flags + (y0 + 1) * stride + 1;
    std::int32_t* dcol = s.data + y0 * s.w;
    for (int x = 0; x < s.w; ++x) {
      std::uint32_t* f = fcol + x;
      for (int k = 0; k < rows; ++k, f += stride) {
        std::uint32_t fl = *f;
        if ((fl & kSig) || !(fl & kNeighbours)) continue;
        std::uint32_t bit = mq_decode(mq, ctx[s.zc[fl & kNeighbours]]);
        *f = fl | kVisit;
        if (bit) {
          std::uint8_t sc = kTables.sc[sign_index(fl)];
          std::uint32_t neg = mq_decode(mq, ctx[sc >> 1]) ^ (sc & 1u);
          set_significant(f, stride, neg, s.causal && k == 0);
          dcol[k * s.w + x] = one;
        }
      }
    }
  }
  mqr = mq;
}

void sig_pass_raw(BlockState& s, int p, RawRegisters& rr) {
  RawRegisters raw = rr;
  const std::int32_t one = 3 << p;
  const int stride = s.stride;
  for (int y0 = 0; y0 < s.h; y0 += 4) {
    const int rows = std::min(4, s.h - y0);
    std::uint32_t* fcol = s.flags + (y0 + 1) * stride + 1;
    std::int32_t* dcol = s.data + y0 * s.w;
    for (int x = 0; x < s.w; ++x) {
      std::uint32_t* f = fcol + x;
      for (int k = 0; k < rows; ++k, f += stride) {
        std::uint32_t fl = *f;
        if ((fl & kSig) || !(fl & kNeighbours)) continue;
        std::uint32_t bit = raw_bit(raw);
        *f = fl | kVisit;
        if (bit) {
          std::uint32_t neg = raw_bit(raw);  // D.6: the sign is a raw bit too
          set_significant(f, stride, neg, s.causal && k == 0);
          dcol[k * s.w + x] = one;
        }
      }
    }
  }
  rr = raw;
}

/// Magnitude refinement pass (D.3.3).
template <bool kRaw, typename Regs>
void refine_pass(BlockState& s, int p, Regs& regs, std::uint8_t* ctx) {
  Regs r = regs;
  const std::int32_t half = 1 << p;
  const int stride = s.stride;
  for (int y0 = 0; y0 < s.h; y0 += 4) {
    const int rows = std::min(4, s.h - y0);
    std::uint32_t* fcol = s.flags + (y0 + 1) * stride + 1;
    std::int32_t* dcol = s.data + y0 * s.w;
    for (int x = 0; x < s.w; ++x) {
      std::uint32_t* f = fcol + x;
      for (int k = 0; k < rows; ++k, f += stride) {
        std::uint32_t fl = *f;
        if ((fl & (kSig | kVisit)) != kSig) continue;
        std::uint32_t bit;
        if constexpr (kRaw) {
          bit = raw_bit(r);
          (void)ctx;
        } else {
          int c = (fl & kRefined) ? kCtxMr + 2 : (fl & kNeighbours) ? kCtxMr + 1 : kCtxMr;
          bit = mq_decode(r, ctx[c]);
        }
        // The previous plane's midpoint bit sits where this plane's bit goes: add or remove half.
        dcol[k * s.w + x] += bit ? half : -half;
        *f = fl | kRefined;
      }
    }
  }
  regs = r;
}

/// Cleanup pass (D.3.4) with run-length mode for empty stripe columns.
void cleanup_pass(BlockState& s, int p, MqRegisters& mqr, std::uint8_t* ctx) {
  MqRegisters mq = mqr;
  const std::int32_t one = 3 << p;
  const int stride = s.stride;
  for (int y0 = 0; y0 < s.h; y0 += 4) {
    const int rows = std::min(4, s.h - y0);
    std::uint32_t* fcol = s.flags + (y0 + 1) * stride + 1;
    std::int32_t* dcol = s.data + y0 * s.w;
    for (int x = 0; x < s.w; ++x) {
      std::uint32_t* f = fcol + x;
      int k = 0;
      if (rows == 4 &&
          ((f[0] | f[stride] | f[2 * stride] | f[3 * stride]) & (kSig | kVisit | kNeighbours)) == 0) {
        if (!mq_decode(mq, ctx[kCtxRl])) continue;  // four more zeros
        k = static_cast<int>(mq_decode(mq, ctx[kCtxUni]) << 1);
        k |= static_cast<int>(mq_decode(mq, ctx[kCtxUni]));
        std::uint32_t* fk = f + k * stride;
        std::uint8_t sc = kTables.sc[sign_index(*fk)];
        std::uint32_t neg = mq_decode(mq, ctx[sc >> 1]) ^ (sc & 1u);
        set_significant(fk, stride, neg, s.causal && k == 0);
        dcol[k * s.w + x] = one;
        ++k;
      }
      for (; k < rows; ++k) {
        std::uint32_t* fk = f + k * stride;
        std::uint32_t fl = *fk;
        if (fl & (kSig | kVisit)) continue;
        if (mq_decode(mq, ctx[s.zc[fl & kNeighbours]])) {
          std::uint8_t sc = kTables.sc[sign_index(fl)];
          std::uint32_t neg = mq_decode(mq, ctx[sc >> 1]) ^ (sc & 1u);
          set_significant(fk, stride, neg, s.causal && k == 0);
          dcol[k * s.w + x] = one;
        }
      }
      for (k = 0; k < rows; ++k) f[k * stride] &= ~kVisit;
    }
  }
  mqr = mq;
}

}  // namespace

bool CodeBlockDecoder::decode(const CodeBlockJob& job) {
  const CodeBlock& cb = *job.block;
  const int w = cb.rect.width(), h = cb.rect.height();
  if (w <= 0 || h <= 0) return true;
  if (cb.damaged) return false;  // cut in tier-2: its output stays zero
  const int numbps = job.magnitude_bits - cb.zero_bitplanes;
  if (cb.passes == 0 || cb.segments.empty()) return true;  // nothing coded: stays zero
  if (numbps <= 0) return true;
  if (numbps > 30) return false;  // beyond our 32-bit magnitudes

  // Gather the segments into one buffer, each followed by two 0xFF bytes (see mq_decoder.hpp).
  std::size_t total = 0;
  for (Bytes c : cb.chunks) total += c.size();
  bytes_.resize(total + 2 * cb.segments.size() + 2);
  seg_offsets_.clear();
  {
    std::size_t chunk = 0, in_chunk = 0, out = 0;
    for (const Segment& seg : cb.segments) {
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

  const int stride = w + 2;
  flags_.assign(static_cast<std::size_t>(stride) * (h + 2), 0);
  data_.assign(static_cast<std::size_t>(w) * h, 0);
  BlockState s{flags_.data(), data_.data(), w, h, stride,
               kTables.zc[job.orientation == BandOrientation::HH   ? 2
                          : job.orientation == BandOrientation::HL ? 1
                                                                   : 0],
               (job.cb_style & kVerticalCausal) != 0};
  std::uint8_t ctx[kNumCtx];
  reset_contexts(ctx);
  MqRegisters mq;
  RawRegisters raw;
  const bool bypass = (job.cb_style & kBypass) != 0;
  bool ok = true;

  std::size_t seg = 0;
  int left_in_seg = 0;
  int pass = 0;
  for (; seg <= cb.segments.size(); ) {
    if (left_in_seg == 0) {
      if (seg == cb.segments.size()) break;
      left_in_seg = cb.segments[seg].passes;
      const std::uint8_t* start = bytes_.data() + seg_offsets_[seg];
      const int type = (pass + 2) % 3;
      if (bypass && pass >= 10 && type != 2) raw_init(raw, start);
      else mq_init(mq, start);
      ++seg;
      if (left_in_seg == 0) continue;
    }
    const int plane = numbps - 1 - (pass + 2) / 3;
    if (plane < 0) break;  // more passes than bit-planes: ignore the excess
    const int type = (pass + 2) % 3;  // 0 significance, 1 refinement, 2 cleanup
    const bool is_raw = bypass && pass >= 10 && type != 2;
    if (type == 0) {
      if (is_raw) sig_pass_raw(s, plane, raw);
      else sig_pass_mq(s, plane, mq, ctx);
    } else if (type == 1) {
      if (is_raw) refine_pass<true>(s, plane, raw, ctx);
      else refine_pass<false>(s, plane, mq, ctx);
    } else {
      cleanup_pass(s, plane, mq, ctx);
      if (job.cb_style & kSegmentation) {
        // D.5: the four-symbol segmentation marker 1010 ends every cleanup pass.
        std::uint32_t sym = 0;
        for (int i = 0; i < 4; ++i) sym = sym << 1 | mq_decode(mq, ctx[kCtxUni]);
        if (sym != 0xA) ok = false;
      }
    }
    if (job.cb_style & kReset) reset_contexts(ctx);
    ++pass;
    --left_in_seg;
    if (!ok) break;
  }
  if (!ok) {
    for (int y = 0; y < h; ++y) std::memset(job.out + static_cast<std::ptrdiff_t>(y) * job.stride, 0, sizeof(std::int32_t) * w);
    return false;
  }

  // Write out with signs. H.1 (ROI maxshift): magnitudes >= 2^s belong to the region and
  // were scaled up by the encoder; scale them back down.
  const int roi = job.roi_shift;
  const std::int32_t roi_threshold = roi ? (roi + 1 < 31 ? (1 << (roi + 1)) : INT32_MAX) : INT32_MAX;
  for (int y = 0; y < h; ++y) {
    const std::int32_t* d = data_.data() + static_cast<std::ptrdiff_t>(y) * w;
    const std::uint32_t* f = flags_.data() + static_cast<std::ptrdiff_t>(y + 1) * stride + 1;
    std::int32_t* o = job.out + static_cast<std::ptrdiff_t>(y) * job.stride;
    for (int x = 0; x < w; ++x) {
      std::int32_t v = d[x];
      if (roi && v >= roi_threshold) v >>= roi;
      o[x] = (f[x] & kNeg) ? -v : v;
    }
  }
  return true;
}

}  // namespace j2k::decoder::own
