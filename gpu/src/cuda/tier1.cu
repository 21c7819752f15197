// Tier-1 on the GPU (15444-1 Annex C, D, H.1): one thread decodes one code-block.
//
// The same decisions as the CPU tier-1 (decoder/src/own/tier1/t1_kernel.inl), written
// sample by sample instead of with bit masks: the CPU kernel is the reference, and the
// tests compare every coefficient.
//
// State of a block: one 32-bit word per stripe column in zeroed shared memory, with a
// one-column border left and right and a one-stripe border above and below, so no
// neighbour access needs a bounds test:
//   bits  0..5   significance of rows -1..4 of the column (row -1: last row of the stripe
//                above; row 4: first row of the stripe below; 1..4 are the stripe's own)
//   bits  6..11  their signs (1 = negative)
//   bits 12..15  coded by this bit-plane's significance propagation pass (rows 0..3)
//   bits 16..19  refined at least once (rows 0..3)
// Magnitudes (2x value, midpoint in bit 0) are kept in shared memory beside the state and
// get their sign (and the ROI shift) when the warp writes the block out.
//
// Every loop is bounded by the block's size and pass count, every byte read by the
// segment's length (reads past it see 0xFF, as the CPU's two padding bytes make it see):
// a corrupt segment decodes to whatever the CPU decodes, never past its data.
#include <cuda_runtime.h>

#include <cstdint>

#include "tier1_kernel.hpp"

namespace j2k::gpu::cuda {

namespace {

// Table C.2: Qe (bits 0..15), NMPS (16..22), NLPS (24..30), SWITCH (31).
constexpr std::uint32_t qe_row(std::uint32_t qe, std::uint32_t nmps, std::uint32_t nlps, std::uint32_t sw) {
  return qe | nmps << 16 | nlps << 24 | sw << 31;
}
__constant__ std::uint32_t kQe[47] = {
    qe_row(0x5601, 1, 1, 1),   qe_row(0x3401, 2, 6, 0),   qe_row(0x1801, 3, 9, 0),   qe_row(0x0AC1, 4, 12, 0),
    qe_row(0x0521, 5, 29, 0),  qe_row(0x0221, 38, 33, 0), qe_row(0x5601, 7, 6, 1),   qe_row(0x5401, 8, 14, 0),
    qe_row(0x4801, 9, 14, 0),  qe_row(0x3801, 10, 14, 0), qe_row(0x3001, 11, 17, 0), qe_row(0x2401, 12, 18, 0),
    qe_row(0x1C01, 13, 20, 0), qe_row(0x1601, 29, 21, 0), qe_row(0x5601, 15, 14, 1), qe_row(0x5401, 16, 14, 0),
    qe_row(0x5101, 17, 15, 0), qe_row(0x4801, 18, 16, 0), qe_row(0x3801, 19, 17, 0), qe_row(0x3401, 20, 18, 0),
    qe_row(0x3001, 21, 19, 0), qe_row(0x2801, 22, 19, 0), qe_row(0x2401, 23, 20, 0), qe_row(0x2201, 24, 21, 0),
    qe_row(0x1C01, 25, 22, 0), qe_row(0x1801, 26, 23, 0), qe_row(0x1601, 27, 24, 0), qe_row(0x1401, 28, 25, 0),
    qe_row(0x1201, 29, 26, 0), qe_row(0x1101, 30, 27, 0), qe_row(0x0AC1, 31, 28, 0), qe_row(0x09C1, 32, 29, 0),
    qe_row(0x08A1, 33, 30, 0), qe_row(0x0521, 34, 31, 0), qe_row(0x0441, 35, 32, 0), qe_row(0x02A1, 36, 33, 0),
    qe_row(0x0221, 37, 34, 0), qe_row(0x0141, 38, 35, 0), qe_row(0x0111, 39, 36, 0), qe_row(0x0085, 40, 37, 0),
    qe_row(0x0049, 41, 38, 0), qe_row(0x0025, 42, 39, 0), qe_row(0x0015, 43, 40, 0), qe_row(0x0009, 44, 41, 0),
    qe_row(0x0005, 45, 42, 0), qe_row(0x0001, 45, 43, 0), qe_row(0x5601, 46, 46, 0),
};

// Context numbers as on the CPU: 0-8 zero coding, 9-13 sign, 14-16 refinement,
// 17 run-length, 18 uniform. A context is one byte: state (bits 0..5), MPS (bit 7).
constexpr int kCtxMr = 14, kCtxRl = 17, kCtxUni = 18, kNumCtx = 19;

constexpr std::uint32_t kSignShift = 6, kVisitShift = 12, kRefShift = 16;

struct Mq {
  const std::uint8_t* data;
  std::uint32_t len, pos;
  std::uint32_t a, c;
  int ct;
};

struct Raw {
  const std::uint8_t* data;
  std::uint32_t len, pos;
  std::uint32_t c;
  int ct;
};

__device__ __forceinline__ std::uint32_t byte_at(const std::uint8_t* data, std::uint32_t len, std::uint32_t i) {
  return i < len ? static_cast<std::uint32_t>(__ldg(data + i)) : 0xFFu;
}

/// C.3.4 BYTEIN: after 0xFF, a byte above 0x8F is a marker (or the end): feed 1-bits, stay.
__device__ __forceinline__ void byte_in(Mq& m) {
  const std::uint32_t b = byte_at(m.data, m.len, m.pos);
  if (b == 0xFF) {
    const std::uint32_t b1 = byte_at(m.data, m.len, m.pos + 1);
    if (b1 > 0x8F) {
      m.c += 0xFF00u;
      m.ct = 8;
    } else {
      ++m.pos;
      m.c += b1 << 9;
      m.ct = 7;
    }
  } else {
    ++m.pos;
    m.c += byte_at(m.data, m.len, m.pos) << 8;
    m.ct = 8;
  }
}

/// C.3.5 INITDEC.
__device__ __forceinline__ void mq_init(Mq& m, const std::uint8_t* data, std::uint32_t len) {
  m.data = data;
  m.len = len;
  m.pos = 0;
  m.c = byte_at(data, len, 0) << 16;
  byte_in(m);
  m.c <<= 7;
  m.ct -= 7;
  m.a = 0x8000u;
}

/// C.3.2 DECODE with C.3.3 RENORMD.
__device__ __forceinline__ std::uint32_t mq_decode(Mq& m, std::uint8_t* ctx, int i) {
  const std::uint32_t cx = ctx[i];
  const std::uint32_t row = kQe[cx & 0x3F];
  const std::uint32_t qe = row & 0xFFFF, mps = cx >> 7;
  const std::uint32_t nmps = (row >> 16) & 0x7F, nlps = (row >> 24) & 0x7F, sw = row >> 31;
  std::uint32_t d;
  m.a -= qe;
  if ((m.c >> 16) < qe) {
    // LPS path with conditional exchange.
    if (m.a < qe) {
      d = mps;
      ctx[i] = static_cast<std::uint8_t>(nmps | mps << 7);
    } else {
      d = 1 - mps;
      ctx[i] = static_cast<std::uint8_t>(nlps | (mps ^ sw) << 7);
    }
    m.a = qe;
  } else {
    m.c -= qe << 16;
    if (m.a & 0x8000u) return mps;
    if (m.a < qe) {
      d = 1 - mps;
      ctx[i] = static_cast<std::uint8_t>(nlps | (mps ^ sw) << 7);
    } else {
      d = mps;
      ctx[i] = static_cast<std::uint8_t>(nmps | mps << 7);
    }
  }
  do {
    if (m.ct == 0) byte_in(m);
    m.a <<= 1;
    m.c <<= 1;
    --m.ct;
  } while (!(m.a & 0x8000u));
  return d;
}

__device__ __forceinline__ void raw_init(Raw& r, const std::uint8_t* data, std::uint32_t len) {
  r.data = data;
  r.len = len;
  r.pos = 0;
  r.c = 0;
  r.ct = 0;
}

/// D.6 raw bits: MSB first; after 0xFF the next byte holds 7 bits; a byte above 0x8F
/// after 0xFF (or the end) feeds 1-bits without moving.
__device__ __forceinline__ std::uint32_t raw_bit(Raw& r) {
  if (r.ct == 0) {
    if (r.c == 0xFF) {
      const std::uint32_t b = byte_at(r.data, r.len, r.pos);
      if (b > 0x8F) {
        r.c = 0xFF;
        r.ct = 8;
      } else {
        r.c = b;
        ++r.pos;
        r.ct = 7;
      }
    } else {
      r.c = byte_at(r.data, r.len, r.pos);
      ++r.pos;
      r.ct = 8;
    }
  }
  --r.ct;
  return (r.c >> r.ct) & 1u;
}

__device__ __forceinline__ void reset_contexts(std::uint8_t* ctx) {
  for (int i = 0; i < kNumCtx; ++i) ctx[i] = 0;
  ctx[0] = 4;        // Table D.7
  ctx[kCtxRl] = 3;
  ctx[kCtxUni] = 46;
}

/// The 8-neighbour significance of row k of the column at `col` as the CPU's flag bits
/// (N 0, S 1, W 2, E 3, NW 4, NE 5, SW 6, SE 7); `below` masks row k + 1 when it lies in
/// the next stripe and the block is vertically causal (D.7).
__device__ __forceinline__ std::uint32_t neighbours(std::uint32_t l, std::uint32_t c, std::uint32_t r, int k,
                                                    std::uint32_t below) {
  // Rows k-1, k, k+1 are bits k, k+1, k+2 of the 6-bit column.
  const std::uint32_t n = (c >> k) & 1u, s = (c >> (k + 2)) & below;
  const std::uint32_t w = (l >> (k + 1)) & 1u, e = (r >> (k + 1)) & 1u;
  const std::uint32_t nw = (l >> k) & 1u, ne = (r >> k) & 1u;
  const std::uint32_t sw = (l >> (k + 2)) & below, se = (r >> (k + 2)) & below;
  return n | s << 1 | w << 2 | e << 3 | nw << 4 | ne << 5 | sw << 6 | se << 7;
}

/// Table D.1 zero-coding context from the neighbour bits.
__device__ __forceinline__ int zc_context(std::uint32_t nb, int band) {
  const int v = static_cast<int>((nb & 1u) + ((nb >> 1) & 1u));
  const int h = static_cast<int>(((nb >> 2) & 1u) + ((nb >> 3) & 1u));
  const int d = __popc(nb >> 4);
  if (band == 2) {
    const int hv = h + v;
    if (d >= 3) return 8;
    if (d == 2) return hv >= 1 ? 7 : 6;
    if (d == 1) return hv >= 2 ? 5 : hv == 1 ? 4 : 3;
    return hv >= 2 ? 2 : hv;
  }
  const int hh = band == 1 ? v : h, vv = band == 1 ? h : v;  // HL: the roles swap
  if (hh == 2) return 8;
  if (hh == 1) return vv >= 1 ? 7 : d >= 1 ? 6 : 5;
  if (vv == 2) return 4;
  if (vv == 1) return 3;
  return d >= 2 ? 2 : d;
}

/// Tables D.2/D.3: the sign context (bits 1..) and XOR bit (bit 0) of row k.
__device__ __forceinline__ std::uint32_t sign_context(std::uint32_t l, std::uint32_t c, std::uint32_t r, int k,
                                                      std::uint32_t below) {
  auto contrib = [](std::uint32_t word, int bit, std::uint32_t mask) {
    const std::uint32_t sig = (word >> bit) & mask;
    return sig ? (((word >> (bit + kSignShift)) & 1u) ? -1 : 1) : 0;
  };
  int vc = contrib(c, k, 1u) + contrib(c, k + 2, below);
  int hc = contrib(l, k + 1, 1u) + contrib(r, k + 1, 1u);
  vc = vc < -1 ? -1 : vc > 1 ? 1 : vc;
  hc = hc < -1 ? -1 : hc > 1 ? 1 : hc;
  if (hc == 0 && vc == 0) return 9u << 1;
  if (hc == 0) return 10u << 1 | (vc < 0);
  if (vc == 0) return 12u << 1 | (hc < 0);
  if (hc == vc) return 13u << 1 | (hc < 0);
  return 11u << 1 | (hc < 0);
}

struct Block {
  std::uint32_t* col;  // (stripes + 2) x (w + 2) column words; stripe s, column x at (s + 1) * cw + x + 1
  std::int32_t* out;
  int w, h, stripes, cw, band;
  std::uint32_t stride;
  bool causal;
};

/// Marks row k of column x of stripe st significant with sign `neg` (its own column and
/// the rows that the stripes above and below see).
__device__ __forceinline__ void set_significant(const Block& b, int st, int x, int k, std::uint32_t neg) {
  std::uint32_t* const w = b.col + (st + 1) * b.cw + x + 1;
  *w |= (1u << (k + 1)) | (neg << (k + 1 + kSignShift));
  if (k == 0) w[-b.cw] |= (1u << 5) | (neg << (5 + kSignShift));  // row 4 of the stripe above
  if (k == 3) w[b.cw] |= 1u | (neg << kSignShift);                 // row -1 of the stripe below
}

__device__ __forceinline__ std::int32_t* out_at(const Block& b, int st, int x, int k) {
  return b.out + static_cast<std::size_t>(4 * st + k) * b.stride + x;
}

template <bool kRaw, typename Regs>
__device__ void sig_pass(const Block& b, int p, Regs& r, std::uint8_t* ctx) {
  const std::int32_t one = 3 << p;
  for (int st = 0; st < b.stripes; ++st) {
    const int rows = min(4, b.h - 4 * st);
    std::uint32_t* const row = b.col + (st + 1) * b.cw + 1;
    for (int x = 0; x < b.w; ++x) {
      row[x] &= ~(0xFu << kVisitShift);
      for (int k = 0; k < rows; ++k) {
        const std::uint32_t c = row[x];
        if ((c >> (k + 1)) & 1u) continue;  // significant
        const std::uint32_t below = (b.causal && k == 3) ? 0u : 1u;
        const std::uint32_t l = row[x - 1], rr = row[x + 1];
        const std::uint32_t nb = neighbours(l, c, rr, k, below);
        if (!nb) continue;
        row[x] |= 1u << (k + kVisitShift);
        std::uint32_t bit;
        if constexpr (kRaw) bit = raw_bit(r);
        else bit = mq_decode(r, ctx, zc_context(nb, b.band));
        if (!bit) continue;
        std::uint32_t neg;
        if constexpr (kRaw) {
          neg = raw_bit(r);
        } else {
          const std::uint32_t sc = sign_context(l, c, rr, k, below);
          neg = mq_decode(r, ctx, static_cast<int>(sc >> 1)) ^ (sc & 1u);
        }
        set_significant(b, st, x, k, neg);
        *out_at(b, st, x, k) = one;
      }
    }
  }
}

template <bool kRaw, typename Regs>
__device__ void refine_pass(const Block& b, int p, Regs& r, std::uint8_t* ctx) {
  const std::int32_t half = 1 << p;
  for (int st = 0; st < b.stripes; ++st) {
    const int rows = min(4, b.h - 4 * st);
    std::uint32_t* const row = b.col + (st + 1) * b.cw + 1;
    for (int x = 0; x < b.w; ++x) {
      const std::uint32_t c = row[x];
      for (int k = 0; k < rows; ++k) {
        // Significant before this bit-plane: significant and not coded by its sig pass.
        if (!((c >> (k + 1)) & 1u) || ((c >> (k + kVisitShift)) & 1u)) continue;
        std::uint32_t bit;
        if constexpr (kRaw) {
          bit = raw_bit(r);
        } else {
          int cx;
          if ((c >> (k + kRefShift)) & 1u) {
            cx = kCtxMr + 2;
          } else {
            const std::uint32_t below = (b.causal && k == 3) ? 0u : 1u;
            cx = kCtxMr + (neighbours(row[x - 1], c, row[x + 1], k, below) ? 1 : 0);
          }
          bit = mq_decode(r, ctx, cx);
        }
        std::int32_t* const o = out_at(b, st, x, k);
        *o += static_cast<std::int32_t>(bit << (p + 1)) - half;
      }
      // Refined flags: the refinement context of a later row never reads them (only its own).
      std::uint32_t refined = 0;
      for (int k = 0; k < rows; ++k)
        if (((c >> (k + 1)) & 1u) && !((c >> (k + kVisitShift)) & 1u)) refined |= 1u << (k + kRefShift);
      row[x] = c | refined;
    }
  }
}

__device__ void cleanup_pass(const Block& b, int p, Mq& m, std::uint8_t* ctx) {
  const std::int32_t one = 3 << p;
  for (int st = 0; st < b.stripes; ++st) {
    const int rows = min(4, b.h - 4 * st);
    std::uint32_t* const row = b.col + (st + 1) * b.cw + 1;
    for (int x = 0; x < b.w; ++x) {
      int k0 = 0;
      if (rows == 4) {
        // Run-length mode (D.3.4): all four rows uncoded and insignificant, with no
        // significant neighbour (the column's own rows are insignificant, so only rows -1
        // and 4 of it, and rows -1..4 of the columns beside it, count).
        const std::uint32_t c = row[x];
        const std::uint32_t span = b.causal ? 0x1Fu : 0x3Fu;
        const bool empty = (c & 0x3Fu & ~(b.causal ? 0x20u : 0u)) == 0 && ((c >> kVisitShift) & 0xFu) == 0 &&
                           (row[x - 1] & span) == 0 && (row[x + 1] & span) == 0;
        if (empty) {
          if (!mq_decode(m, ctx, kCtxRl)) continue;  // four more zeros
          int k = static_cast<int>(mq_decode(m, ctx, kCtxUni)) << 1;
          k |= static_cast<int>(mq_decode(m, ctx, kCtxUni));
          const std::uint32_t neg = mq_decode(m, ctx, 9);  // no significant neighbour: context 9, no XOR
          set_significant(b, st, x, k, neg);
          *out_at(b, st, x, k) = one;
          k0 = k + 1;
        }
      }
      for (int k = k0; k < rows; ++k) {
        const std::uint32_t c = row[x];
        if ((c >> (k + 1)) & 1u) continue;
        if ((c >> (k + kVisitShift)) & 1u) continue;
        const std::uint32_t below = (b.causal && k == 3) ? 0u : 1u;
        const std::uint32_t l = row[x - 1], rr = row[x + 1];
        if (!mq_decode(m, ctx, zc_context(neighbours(l, c, rr, k, below), b.band))) continue;
        const std::uint32_t sc = sign_context(l, c, rr, k, below);
        const std::uint32_t neg = mq_decode(m, ctx, static_cast<int>(sc >> 1)) ^ (sc & 1u);
        set_significant(b, st, x, k, neg);
        *out_at(b, st, x, k) = one;
      }
    }
  }
}

/// The coding passes of block i into `state` (zeroed, t1_state_words) and `mag` (zeroed,
/// w*h magnitudes, row stride w); false when a segmentation symbol was wrong.
__device__ bool decode_block(const T1Launch& L, int i, std::uint8_t* ctx, std::uint32_t* state, std::int32_t* mag) {
  const T1Block& tb = L.blocks[i];
  Block b;
  b.w = tb.width;
  b.h = tb.height;
  b.stripes = (b.h + 3) / 4;
  b.cw = b.w + 2;
  b.band = tb.band;
  b.stride = tb.width;
  b.causal = (tb.style & kT1Causal) != 0;
  b.out = mag;
  b.col = state;
  const bool bypass = (tb.style & kT1Bypass) != 0;
  const bool reset = (tb.style & kT1Reset) != 0;
  const bool segmentation = (tb.style & kT1Segmentation) != 0;
  const int numbps = tb.numbps;

  reset_contexts(ctx);
  Mq mq{L.bytes, 0, 0, 0, 0, 0};
  Raw raw{L.bytes, 0, 0, 0, 0};
  bool ok = true;
  std::uint32_t seg = 0, seg_start = tb.byte_offset;
  int left_in_seg = 0;
  for (int pass = 0; pass < tb.passes; ++pass) {
    // The same segment walk as the CPU (t1_kernel.inl run_passes).
    while (left_in_seg == 0) {
      if (seg == tb.seg_count) break;
      const T1Segment s = L.segments[tb.seg_first + seg];
      left_in_seg = static_cast<int>(s.passes);
      const std::uint8_t* start = L.bytes + seg_start;
      if (bypass && pass >= 10 && (pass + 2) % 3 != 2) raw_init(raw, start, s.length);
      else mq_init(mq, start, s.length);
      seg_start += s.length;
      ++seg;
    }
    if (left_in_seg == 0) break;
    const int plane = numbps - 1 - (pass + 2) / 3;
    if (plane < 0) break;
    const int type = (pass + 2) % 3;
    const bool is_raw = bypass && pass >= 10 && type != 2;
    if (type == 0) {
      if (is_raw) sig_pass<true>(b, plane, raw, ctx);
      else sig_pass<false>(b, plane, mq, ctx);
    } else if (type == 1) {
      if (is_raw) refine_pass<true>(b, plane, raw, ctx);
      else refine_pass<false>(b, plane, mq, ctx);
    } else {
      cleanup_pass(b, plane, mq, ctx);
      if (segmentation) {
        std::uint32_t sym = 0;
        for (int j = 0; j < 4; ++j) sym = sym << 1 | mq_decode(mq, ctx, kCtxUni);
        if (sym != 0xA) ok = false;
      }
    }
    if (reset) reset_contexts(ctx);
    --left_in_seg;
    if (!ok) break;
  }

  return ok;
}

/// Write-out by the warp's lanes (coalesced rows): signs, ROI shift (H.1: magnitudes >= 2^s
/// were scaled up by the encoder); a damaged block is zeroed (the CPU's resilient decoding).
__device__ void write_block(const T1Block& tb, const std::uint32_t* state, const std::int32_t* mag, bool ok,
                            std::int32_t* out, int lane, int lanes) {
  const int w = tb.width, h = tb.height, cw = w + 2;
  const int roi = tb.roi_shift;
  const std::int32_t roi_threshold = roi + 1 < 31 ? (1 << (roi + 1)) : 0x7FFFFFFF;
  for (int y = 0; y < h; ++y) {
    const std::uint32_t* const row = state + ((y >> 2) + 1) * cw + 1;
    const int k = y & 3;
    for (int x = lane; x < w; x += lanes) {
      const std::uint32_t c = row[x];
      std::int32_t v = 0;
      if (ok && ((c >> (k + 1)) & 1u)) {
        v = mag[y * w + x];
        if (roi && v >= roi_threshold) v >>= (roi & 31);
        if ((c >> (k + 1 + kSignShift)) & 1u) v = -v;
      }
      out[static_cast<std::size_t>(y) * tb.stride + x] = v;
    }
  }
}

// One code-block per CTA of one warp, its passes decoded by the first lane: the decode is
// one sequential chain of data-dependent branches, and 32 code-blocks in one warp's lanes
// would run one after the other (measured on an H100: 57 ms for the 908 blocks of a 1080
// frame, 15 SMs busy). The block's state and magnitudes live in shared memory (the
// refinement pass's read-modify-write of a magnitude in global memory cost an L2 round trip
// per symbol: 15 ms for the same frame); the lanes clear it and write the block out.
__global__ void tier1_kernel(const T1Launch L) {
  extern __shared__ std::uint32_t smem[];
  __shared__ std::uint8_t contexts[32];  // the block's 19 MQ contexts
  __shared__ int ok;
  const int i = static_cast<int>(blockIdx.x);
  const int lane = static_cast<int>(threadIdx.x);
  const T1Block& tb = L.blocks[i];
  const int state_words = static_cast<int>(t1_state_words(tb.width, tb.height));
  const int words = state_words + tb.width * tb.height;
  for (int k = lane; k < words; k += 32) smem[k] = 0;
  __syncwarp();
  auto* mag = reinterpret_cast<std::int32_t*>(smem + state_words);
  if (lane == 0) {
    ok = decode_block(L, i, contexts, smem, mag) ? 1 : 0;
    if (!ok) atomicAdd(L.damaged, 1u);
  }
  __syncwarp();
  write_block(tb, smem, mag, ok != 0, L.coefficients + tb.out, lane, 32);
}

}  // namespace

cudaError_t launch_tier1(const T1Launch& launch, cudaStream_t stream) {
  if (launch.count <= 0) return cudaSuccess;
  tier1_kernel<<<launch.count, 32, launch.shared_bytes, stream>>>(launch);
  return cudaGetLastError();
}

}  // namespace j2k::gpu::cuda
