#pragma once
// One code-block's decode for tier1_kernel (tier1.cu), 15444-1 Annex C, D, H.1. Written
// so that the host compiler builds it too (decode_tier1_batch_emulated runs it on the CPU,
// one lane, for the tests that need no GPU): the kernel calls run_block with its warp's
// lane number and 32 lanes, the host with lane 0 of 1.
//
// The scheme is the CPU tier-1's (decoder/src/own/tier1/t1_kernel.inl, the reference):
// passes do not walk the block sample by sample but take the samples they code from bit
// masks (bit 4x + k of a stripe's mask words stands for row k of column x; 8 columns a
// 32-bit word: the GPU's shifts and bit scans are 32-bit), so a pass costs its coded
// symbols, not the block's size. The coded symbols are one chain of data-dependent MQ
// decodes, which lane 0 runs; the other lanes do what is data-parallel around it:
// clearing the state, the tables, the refinement contexts (known before the pass), the
// magnitudes' refinement (after it) and the write-out.
//
// Per block, in shared memory (T1SharedLayout):
//   sig      significance masks, with a zero border of one word and one stripe
//   colw     one word per stripe column, with a one-column and one-stripe border:
//              bits 0..5  significance of rows -1..4 (row -1: last row of the stripe
//                         above; row 4: first row of the stripe below, left unmarked
//                         in a vertically causal block)
//              bits 6..11 their signs (1 = negative)
//            so that a sample's context is a lookup on three words (left, own, right)
//   ctx      the 19 context words; next, zc, sc: the MQ successor table and the context
//            lookups, built by the lanes
// and in global memory, the block's place in the frame's coefficients (`out`, row stride
// `stride`): the magnitudes (2x value, midpoint in bit 0) while the passes run, only read
// where the sample is significant (so never cleared first), and the signed values after
// write_block. Keeping them there rather than in shared memory (16 KB of a 64 x 64
// block's 27 KB) lets an SM hold 2.5x as many blocks at once: lane 0 only stores to them
// (a store does not wait), the lanes read them once per refinement pass and at the end.
// Every loop is bounded by the block's size and pass count, every byte read by the
// segment's length (reads past it see 0xFF, as the CPU's padding bytes make it see).
#include <cstdint>

#include "tier1_kernel.hpp"

#if defined(__CUDACC__)
#define J2K_T1_FN __host__ __device__ __forceinline__
#else
#define J2K_T1_FN inline
#endif

namespace j2k::gpu::cuda::t1 {

using u8 = std::uint8_t;
using u32 = std::uint32_t;
using Mask = std::uint32_t;  ///< 8 stripe columns: bit 4x + k is row k of column x

// ---- Portable primitives ---------------------------------------------------------------

/// The lowest set bit's index; any value for v = 0 (the pass loops find the next sample
/// before they know whether one is left, and end without using it).
J2K_T1_FN int lowest_bit(Mask v) {
#if defined(__CUDA_ARCH__)
  return __ffs(static_cast<int>(v)) - 1;
#else
  return v ? __builtin_ctz(v) : 0;
#endif
}
J2K_T1_FN int leading_zeros(u32 v) {  // v != 0
#if defined(__CUDA_ARCH__)
  // The shift that brings the highest set bit to bit 31, in one instruction (FLO.SH):
  // __clz keeps its answer for 0 with a subtraction from 31 on the renormalisation's path.
  u32 n;
  asm("bfind.shiftamt.u32 %0, %1;" : "=r"(n) : "r"(v));
  return static_cast<int>(n);
#else
  return __builtin_clz(v);
#endif
}
J2K_T1_FN u32 load_byte(const u8* p) {
#if defined(__CUDA_ARCH__)
  return __ldg(p);
#else
  return *p;
#endif
}
/// An OR into shared state whose old value nobody waits for (a reduction on the GPU).
J2K_T1_FN void or_into(u32* p, u32 bits) {
#if defined(__CUDA_ARCH__)
  atomicOr(p, bits);
#else
  *p |= bits;
#endif
}
J2K_T1_FN void sync_lanes() {
#if defined(__CUDA_ARCH__)
  __syncwarp();
#endif
}

// ---- Tables ----------------------------------------------------------------------------

// Table C.2: Qe (bits 0..15), NMPS (16..22), NLPS (24..30), SWITCH (31).
#define J2K_T1_QE_ROW(qe, nmps, nlps, sw) \
  (static_cast<std::uint32_t>(qe) | static_cast<std::uint32_t>(nmps) << 16 | static_cast<std::uint32_t>(nlps) << 24 | static_cast<std::uint32_t>(sw) << 31)
#define J2K_T1_QE_TABLE                                                                                              \
  {                                                                                                                  \
    J2K_T1_QE_ROW(0x5601, 1, 1, 1), J2K_T1_QE_ROW(0x3401, 2, 6, 0), J2K_T1_QE_ROW(0x1801, 3, 9, 0),                  \
    J2K_T1_QE_ROW(0x0AC1, 4, 12, 0), J2K_T1_QE_ROW(0x0521, 5, 29, 0), J2K_T1_QE_ROW(0x0221, 38, 33, 0),              \
    J2K_T1_QE_ROW(0x5601, 7, 6, 1), J2K_T1_QE_ROW(0x5401, 8, 14, 0), J2K_T1_QE_ROW(0x4801, 9, 14, 0),                \
    J2K_T1_QE_ROW(0x3801, 10, 14, 0), J2K_T1_QE_ROW(0x3001, 11, 17, 0), J2K_T1_QE_ROW(0x2401, 12, 18, 0),            \
    J2K_T1_QE_ROW(0x1C01, 13, 20, 0), J2K_T1_QE_ROW(0x1601, 29, 21, 0), J2K_T1_QE_ROW(0x5601, 15, 14, 1),            \
    J2K_T1_QE_ROW(0x5401, 16, 14, 0), J2K_T1_QE_ROW(0x5101, 17, 15, 0), J2K_T1_QE_ROW(0x4801, 18, 16, 0),            \
    J2K_T1_QE_ROW(0x3801, 19, 17, 0), J2K_T1_QE_ROW(0x3401, 20, 18, 0), J2K_T1_QE_ROW(0x3001, 21, 19, 0),            \
    J2K_T1_QE_ROW(0x2801, 22, 19, 0), J2K_T1_QE_ROW(0x2401, 23, 20, 0), J2K_T1_QE_ROW(0x2201, 24, 21, 0),            \
    J2K_T1_QE_ROW(0x1C01, 25, 22, 0), J2K_T1_QE_ROW(0x1801, 26, 23, 0), J2K_T1_QE_ROW(0x1601, 27, 24, 0),            \
    J2K_T1_QE_ROW(0x1401, 28, 25, 0), J2K_T1_QE_ROW(0x1201, 29, 26, 0), J2K_T1_QE_ROW(0x1101, 30, 27, 0),            \
    J2K_T1_QE_ROW(0x0AC1, 31, 28, 0), J2K_T1_QE_ROW(0x09C1, 32, 29, 0), J2K_T1_QE_ROW(0x08A1, 33, 30, 0),            \
    J2K_T1_QE_ROW(0x0521, 34, 31, 0), J2K_T1_QE_ROW(0x0441, 35, 32, 0), J2K_T1_QE_ROW(0x02A1, 36, 33, 0),            \
    J2K_T1_QE_ROW(0x0221, 37, 34, 0), J2K_T1_QE_ROW(0x0141, 38, 35, 0), J2K_T1_QE_ROW(0x0111, 39, 36, 0),            \
    J2K_T1_QE_ROW(0x0085, 40, 37, 0), J2K_T1_QE_ROW(0x0049, 41, 38, 0), J2K_T1_QE_ROW(0x0025, 42, 39, 0),            \
    J2K_T1_QE_ROW(0x0015, 43, 40, 0), J2K_T1_QE_ROW(0x0009, 44, 41, 0), J2K_T1_QE_ROW(0x0005, 45, 42, 0),            \
    J2K_T1_QE_ROW(0x0001, 45, 43, 0), J2K_T1_QE_ROW(0x5601, 46, 46, 0),                                              \
  }

// Context numbers as on the CPU: 0-8 zero coding, 9-13 sign, 14-16 refinement,
// 17 run-length, 18 uniform.
constexpr int kCtxSign = 9, kCtxMr = 14, kCtxRl = 17, kCtxUni = 18, kNumCtx = 19;

/// A context word: Qe << 16 | (state * 2 + MPS). Its successors, at next[pair * 2 + x]
/// (x = 1: the decision was not the MPS): the NMPS word, and the NLPS word with the MPS
/// switched where Table C.2 says so.
J2K_T1_FN u32 context_word(const u32* qe_table, u32 state, u32 mps) {
  return (qe_table[state] & 0xFFFFu) << 16 | (state << 1 | mps);
}

/// Table D.1 zero-coding context from the CPU's neighbour bits (N 0, S 1, W 2, E 3,
/// NW 4, NE 5, SW 6, SE 7).
J2K_T1_FN int zc_context(u32 nb, int band) {
  const int v = static_cast<int>((nb & 1u) + ((nb >> 1) & 1u));
  const int h = static_cast<int>(((nb >> 2) & 1u) + ((nb >> 3) & 1u));
  const int d = static_cast<int>(((nb >> 4) & 1u) + ((nb >> 5) & 1u) + ((nb >> 6) & 1u) + ((nb >> 7) & 1u));
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

/// The zero-coding lookup's index for row k of a column: bits 0..2 the left column's
/// rows k-1..k+1, 3 and 5 the own column's rows k-1 and k+1, 6..8 the right column's.
/// (Row 4, the next stripe's first row, is never marked in a vertically causal block:
/// set_significant.)
J2K_T1_FN u32 zc_index(u32 l, u32 c, u32 r, int k) {
  return ((l >> k) & 7u) | (((c >> k) & 5u) << 3) | (((r >> k) & 7u) << 6);
}
/// The sign lookup's index: bits 0/6 N significant/negative, 2/8 S, 1/7 W, 3/9 E.
J2K_T1_FN u32 sc_index(u32 l, u32 c, u32 r, int k) {
  return ((c >> k) & 0x145u) | (((l >> (k + 1)) & 0x41u) << 1) | (((r >> (k + 1)) & 0x41u) << 3);
}
/// Tables D.2/D.3 for an sc_index: the sign context (bits 1..) and XOR bit (bit 0).
J2K_T1_FN u32 sign_context(u32 idx) {
  auto contrib = [idx](int sig_bit, int neg_bit) {
    return ((idx >> sig_bit) & 1u) ? (((idx >> neg_bit) & 1u) ? -1 : 1) : 0;
  };
  int vc = contrib(0, 6) + contrib(2, 8);
  int hc = contrib(1, 7) + contrib(3, 9);
  vc = vc < -1 ? -1 : vc > 1 ? 1 : vc;
  hc = hc < -1 ? -1 : hc > 1 ? 1 : hc;
  if (hc == 0 && vc == 0) return 9u << 1;
  if (hc == 0) return 10u << 1 | (vc < 0);
  if (vc == 0) return 12u << 1 | (hc < 0);
  if (hc == vc) return 13u << 1 | (hc < 0);
  return 11u << 1 | (hc < 0);
}

// ---- Mask helpers (as the CPU's, on 32-bit words) --------------------------------------

constexpr Mask kRow0 = 0x11111111u, kRow3 = 0x88888888u;

/// Later samples that gain a significant neighbour when the sample at entry i (row
/// k = i & 3) becomes significant, as offsets from i: the one below and rows k-1..k+1 of
/// the next column.
J2K_T1_FN Mask later_neighbours(int k) {
  return k == 0 ? (1u << 1 | 1u << 4 | 1u << 5) : k == 3 ? (1u << 3 | 1u << 4) : (1u << 1 | 1u << 3 | 1u << 4 | 1u << 5);
}
J2K_T1_FN Mask valid_bits(int j, int samples, Mask rows) {
  const int left = samples - 32 * j;
  return left >= 32 ? rows : rows & ((1u << left) - 1);
}
J2K_T1_FN Mask row_pattern(int rows) { return rows >= 4 ? ~0u : kRow0 * ((1u << rows) - 1); }
J2K_T1_FN Mask vertical(Mask m) { return ((m << 1) & ~kRow0) | ((m >> 1) & ~kRow3); }
J2K_T1_FN Mask column_spread(Mask m) { return m | vertical(m); }
J2K_T1_FN Mask row_spread(Mask m, Mask prev, Mask next) { return m | (m << 4) | (prev >> 28) | (m >> 4) | (next << 28); }

/// Three neighbouring words (j - 1, j, j + 1) of the significance of a stripe (s), of the
/// stripe above (a) and of the one below (b), slid along the stripe word by word so that
/// each step loads three words.
struct Window3 {
  Mask ap, a, an, sp, s, sn, bp, b, bn;
  /// At word 0 of the stripe whose words start at `sig` (borders around).
  J2K_T1_FN void start(const Mask* sig, int words) {
    const Mask* const above = sig - (words + 2);
    const Mask* const below = sig + (words + 2);
    ap = above[-1];
    a = above[0];
    an = above[1];
    sp = sig[-1];
    s = sig[0];
    sn = sig[1];
    bp = below[-1];
    b = below[0];
    bn = below[1];
  }
  /// From word j to j + 1; `s_now` is word j's significance now.
  J2K_T1_FN void advance(const Mask* sig, int words, int j, Mask s_now) {
    ap = a;
    a = an;
    sp = s_now;
    s = sn;
    bp = b;
    b = bn;
    if (j + 2 <= words) {
      an = sig[j + 2 - (words + 2)];
      sn = sig[j + 2];
      bn = sig[j + 2 + (words + 2)];
    } else {
      an = sn = bn = 0;
    }
  }
  /// Samples of word j that are significant or have a significant one among their 8
  /// neighbours: the row's own significance spread both ways, the last row of the stripe
  /// above spread along its row, and (unless vertically causal, D.7) the first row of the
  /// stripe below.
  J2K_T1_FN Mask near(bool causal) const {
    Mask m = row_spread(column_spread(s), column_spread(sp), column_spread(sn));
    m |= row_spread((a >> 3) & kRow0, (ap >> 3) & kRow0, (an >> 3) & kRow0);
    if (!causal) m |= row_spread((b << 3) & kRow3, (bp << 3) & kRow3, (bn << 3) & kRow3);
    return m;
  }
};

/// Of word j of a stripe (`sig` points at the stripe's words, borders around): the
/// samples with a significant sample among their 8 neighbours (not counting themselves).
J2K_T1_FN Mask neighbour_significant(const Mask* sig, int words, int j, bool causal) {
  const Mask* const above = sig - (words + 2);
  const Mask* const below = sig + (words + 2);
  const Mask cs = column_spread(sig[j]);
  Mask m = vertical(sig[j]) | (cs << 4) | (column_spread(sig[j - 1]) >> 28) | (cs >> 4) | (column_spread(sig[j + 1]) << 28);
  m |= row_spread((above[j] >> 3) & kRow0, (above[j - 1] >> 3) & kRow0, (above[j + 1] >> 3) & kRow0);
  if (!causal) m |= row_spread((below[j] << 3) & kRow3, (below[j - 1] << 3) & kRow3, (below[j + 1] << 3) & kRow3);
  return m;
}

/// The column words of a stripe around one column (left, own, right), read afresh for each
/// sample: three independent loads cost the chain less than keeping the words in registers
/// and sliding them along (measured 3 % faster: the slide's conditional moves and branch
/// were on every sample's path).
struct Columns {
  u32 l, c, r;
  J2K_T1_FN void at(const u32* crow, int x) {
    l = crow[x - 1];
    c = crow[x];
    r = crow[x + 1];
  }
};

// ---- MQ decoder (C.3) and raw bits (D.6) -------------------------------------------------

/// C as in C.3 (Chigh in bits 16..31) with up to 16 code bits waiting below it (`ct` of
/// them, from bit 15 down) where C.3 keeps at most 8: a byte is appended as soon as 8 or
/// fewer wait, so a renormalisation rarely has to stop for one. The bytes and their
/// positions are C.3's, so C's value is the same. A is kept as A << 16 (compared with
/// C and with Qe << 16 as they are; RENORMD shifts by its leading zeros). `last` is the
/// byte C.3's BP points at, `next` the one after it (read ahead, so that a BYTEIN never
/// waits for memory).
struct Mq {
  const u8* data;
  u32 len, pos;
  u32 a, c;
  int ct;
  u32 last, next;
};

J2K_T1_FN u32 byte_at(const u8* data, u32 len, u32 i) { return i < len ? load_byte(data + i) : 0xFFu; }

/// C.3.4 BYTEIN, for ct <= 8: after 0xFF, a byte above 0x8F is a marker (or the end):
/// feed 1-bits and stay; a byte up to 0x8F holds 7 bits.
J2K_T1_FN void byte_in(Mq& m) {
  // As selects around the one branch that moves on (1 % faster on the GPU than a branch
  // for the marker case).
  const bool ff = m.last == 0xFFu;
  const bool marker = ff && m.next > 0x8Fu;
  const bool seven = ff && !marker;
  m.c += (marker ? 0xFFu : m.next) << ((seven ? 9 : 8) - m.ct);
  m.ct += seven ? 7 : 8;
  if (!marker) {
    ++m.pos;
    m.last = m.next;
    m.next = byte_at(m.data, m.len, m.pos + 1);
  }
}

/// C.3.5 INITDEC.
J2K_T1_FN void mq_init(Mq& m, const u8* data, u32 len) {
  m.data = data;
  m.len = len;
  m.pos = 0;
  m.last = byte_at(data, len, 0);
  m.next = byte_at(data, len, 1);
  m.c = m.last << 16;
  m.ct = 0;
  byte_in(m);
  m.c <<= 7;
  m.ct -= 7;
  m.a = 0x80000000u;
  if (m.ct <= 8) byte_in(m);
}

/// C.3.3 RENORMD: shift until A >= 0x8000, in one step when the waiting bits suffice.
J2K_T1_FN void renorm(Mq& m) {
  int n = leading_zeros(m.a);
  if (n <= m.ct) {
    m.a <<= n;
    m.c <<= n;
    m.ct -= n;
  } else {
    while (n > 0) {
      if (m.ct == 0) byte_in(m);
      const int s = n < m.ct ? n : m.ct;
      m.a <<= s;
      m.c <<= s;
      m.ct -= s;
      n -= s;
    }
  }
  if (m.ct <= 8) byte_in(m);
}

/// C.3.2 DECODE of the context word `e` (updated in place from the successor table).
J2K_T1_FN u32 mq_decode(Mq& m, u32& e, const u32* next) {
  // Written as selects around one branch (the MPS without renormalisation, a third of
  // the decisions): 5-6 % faster on the GPU than C.3's nested branches.
  const u32 q = e & 0xFFFF0000u;  // Qe << 16
  const bool lower = m.c < q;     // Chigh < Qe
  const u32 a = m.a - q;
  m.c = lower ? m.c : m.c - q;
  if (!lower && (a & 0x80000000u)) {
    m.a = a;
    return e & 1u;
  }
  // 1: the decision is not the MPS (lower: the conditional exchange of C.3.2).
  const u32 x = (a < q) != lower ? 1u : 0u;
  m.a = lower ? q : a;
  const u32 d = (e ^ x) & 1u;
  e = next[(e & 0x7Fu) << 1 | x];
  renorm(m);
  return d;
}

struct Raw {
  const u8* data;
  u32 len, pos;
  u32 c;
  int ct;
};

J2K_T1_FN void raw_init(Raw& r, const u8* data, u32 len) {
  r.data = data;
  r.len = len;
  r.pos = 0;
  r.c = 0;
  r.ct = 0;
}

/// D.6 raw bits: MSB first; after 0xFF the next byte holds 7 bits; a byte above 0x8F
/// after 0xFF (or the end) feeds 1-bits without moving.
J2K_T1_FN u32 raw_bit(Raw& r) {
  if (r.ct == 0) {
    if (r.c == 0xFFu) {
      const u32 b = byte_at(r.data, r.len, r.pos);
      if (b > 0x8Fu) {
        r.c = 0xFFu;
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

// ---- The block ---------------------------------------------------------------------------

struct Block {
  Mask *sig, *refine, *visited, *refined, *near, *rbits;
  u32* colw;
  std::int32_t* out;  ///< the block's coefficients (global): magnitudes until write_block
  std::size_t stride;
  u32* ctx;
  u32* next;
  u8* zc;
  u8* sc;
  int w, h, stripes, words, cw;  // cw: column words per stripe row (w + 2)
  bool causal;

  J2K_T1_FN Mask* sig_row(int st) const { return sig + (st + 1) * (words + 2) + 1; }
  J2K_T1_FN u32* col_row(int st) const { return colw + (st + 1) * cw + 1; }
  /// Row k of stripe st of the output.
  J2K_T1_FN std::int32_t* out_row(int st, int k) const { return out + static_cast<std::size_t>(4 * st + k) * stride; }
};

J2K_T1_FN Block block_at(unsigned char* smem, const T1Block& tb, std::int32_t* coefficients) {
  const T1SharedLayout l = t1_shared_layout(tb.width, tb.height);
  Block b;
  b.sig = reinterpret_cast<Mask*>(smem + l.sig);
  b.refine = reinterpret_cast<Mask*>(smem + l.refine);
  b.visited = reinterpret_cast<Mask*>(smem + l.visited);
  b.refined = reinterpret_cast<Mask*>(smem + l.refined);
  b.near = reinterpret_cast<Mask*>(smem + l.near);
  b.rbits = reinterpret_cast<Mask*>(smem + l.rbits);
  b.colw = reinterpret_cast<u32*>(smem + l.colw);
  b.out = coefficients + tb.out;
  b.stride = tb.stride;
  b.ctx = reinterpret_cast<u32*>(smem + l.ctx);
  b.next = reinterpret_cast<u32*>(smem + l.next);
  b.zc = smem + l.zc;
  b.sc = smem + l.sc;
  b.w = tb.width;
  b.h = tb.height;
  b.stripes = (b.h + 3) / 4;
  b.words = t1_mask_words(b.w);
  b.cw = b.w + 2;
  b.causal = (tb.style & kT1Causal) != 0;
  return b;
}

/// The lanes clear the state (masks with borders, column words) and build the tables.
J2K_T1_FN void init_block(const Block& b, const u32* qe_table, int band, int lane, int lanes) {
  const int sig_words = (b.stripes + 2) * (b.words + 2);
  for (int i = lane; i < sig_words; i += lanes) b.sig[i] = 0;
  for (int i = lane; i < b.stripes * b.words; i += lanes) {
    b.visited[i] = 0;
    b.refined[i] = 0;
  }
  for (int i = lane; i < (b.stripes + 2) * b.cw; i += lanes) b.colw[i] = 0;
  for (int i = lane; i < 188; i += lanes) {
    const u32 pair = static_cast<u32>(i) >> 1, x = static_cast<u32>(i) & 1u;
    const u32 state = pair >> 1, mps = pair & 1u, row = qe_table[state];
    b.next[i] = x ? context_word(qe_table, (row >> 24) & 0x7Fu, mps ^ (row >> 31))
                  : context_word(qe_table, (row >> 16) & 0x7Fu, mps);
  }
  for (int i = lane; i < 512; i += lanes) {
    const u32 n = static_cast<u32>(i);
    const u32 nb = ((n >> 3) & 1u) | ((n >> 5) & 1u) << 1 | ((n >> 1) & 1u) << 2 | ((n >> 7) & 1u) << 3 |
                   (n & 1u) << 4 | ((n >> 6) & 1u) << 5 | ((n >> 2) & 1u) << 6 | ((n >> 8) & 1u) << 7;
    b.zc[i] = static_cast<u8>(zc_context(nb, band));
  }
  for (int i = lane; i < 1024; i += lanes) b.sc[i] = static_cast<u8>(sign_context(static_cast<u32>(i)));
}

/// Table D.7 initial states (lane 0).
J2K_T1_FN void reset_contexts(const Block& b, const u32* qe_table) {
  for (int i = 0; i < kNumCtx; ++i) b.ctx[i] = context_word(qe_table, 0, 0);
  b.ctx[0] = context_word(qe_table, 4, 0);
  b.ctx[kCtxRl] = context_word(qe_table, 3, 0);
  b.ctx[kCtxUni] = context_word(qe_table, 46, 0);
}

/// The contexts in shared memory: a decode loads its word and stores it back, changed or
/// not (a store does not wait; testing for a change first measured 1 % slower). (Keeping
/// the last one in a register, written back when another is needed, measured 1.5 % slower:
/// the extra compare and predicated store outweigh the loads saved.)
struct Contexts {
  u32* mem;
  J2K_T1_FN u32 decode(Mq& m, int i, const u32* next) const {
    u32 w = mem[i];
    const u32 d = mq_decode(m, w, next);
    mem[i] = w;
    return d;
  }
  /// A sign with an sc lookup (context and XOR bit).
  J2K_T1_FN u32 decode_sc(Mq& m, u32 sc, const u32* next) const {
    return decode(m, static_cast<int>(sc >> 1), next) ^ (sc & 1u);
  }
};

/// What a pass walking stripe st uses: its rows (row_pattern), significance words, column
/// words, output rows, and the windows slid along them.
struct Stripe {
  Mask rows;
  Mask* srow;
  u32* crow;
  std::int32_t* orow;  ///< row 0 of the stripe in the output
  std::size_t stride;
  Window3 win;
  Columns col;
  J2K_T1_FN Stripe(const Block& b, int st)
      : rows(row_pattern(b.h - 4 * st)), srow(b.sig_row(st)), crow(b.col_row(st)), orow(b.out_row(st, 0)),
        stride(b.stride), col{0, 0, 0} {
    win.start(srow, b.words);
  }
  /// The magnitude of row k, column x.
  J2K_T1_FN std::int32_t& mag(int x, int k) const { return orow[static_cast<std::size_t>(k) * stride + x]; }
};

/// Marks row k of column x (its word `c`, in a register) significant with sign `neg`.
J2K_T1_FN void set_significant(const Block& b, u32* crow, int x, u32& c, int k, u32 neg) {
  c |= (1u << (k + 1)) | (neg << (k + 7));
  crow[x] = c;
  // Row 4 of the stripe above, which its contexts see unless the block is vertically causal
  // (D.7): leaving it unmarked there makes the context lookups need no mask for it.
  if (k == 0 && !b.causal) or_into(crow + x - b.cw, (1u << 5) | (neg << 11));
  if (k == 3) or_into(crow + x + b.cw, 1u | (neg << 6));          // row -1 of the stripe below
}

/// Significance propagation pass (D.3.1), lane 0; kRaw: bypass mode raw bits (D.6).
template <bool kRaw, typename Regs>
J2K_T1_FN void sig_pass(const Block& b, int p, Regs& r, const Contexts& cx) {
  const std::int32_t one = 3 << p;
  const int words = b.words, samples = 4 * b.w;
  for (int st = 0; st < b.stripes; ++st) {
    Stripe sp(b, st);
    Mask carry = 0;  // candidates that the previous word's samples handed on
    for (int j = 0; j < words; ++j) {
      const Mask s = sp.win.s;
      b.refine[st * words + j] = s;
      // Candidates: insignificant samples with a significant neighbour; samples that
      // become significant add the later ones around them.
      const Mask open = ~s & valid_bits(j, samples, sp.rows);
      Mask cand = (sp.win.near(b.causal) | carry) & open;
      Mask coded = cand, became = 0;
      carry = 0;
      const u32* const cj = sp.crow + 8 * j;  // the word's first column: one add per sample
      // The next candidate is found while this one decodes (off the chain of decodes), and
      // found again only when a new significant sample adds candidates.
      int next = lowest_bit(cand);
      while (cand) {
        const int bit = next;
        cand &= cand - 1;
        next = lowest_bit(cand);
        const int x = 8 * j + (bit >> 2), k = bit & 3;
        sp.col.at(cj, bit >> 2);
        u32 d;
        if constexpr (kRaw) d = raw_bit(r);
        else d = cx.decode(r, b.zc[zc_index(sp.col.l, sp.col.c, sp.col.r, k)], b.next);
        if (!d) continue;
        u32 neg;
        if constexpr (kRaw) {
          neg = raw_bit(r);
        } else {
          const u32 sc = b.sc[sc_index(sp.col.l, sp.col.c, sp.col.r, k)];
          neg = cx.decode_sc(r, sc, b.next);
        }
        set_significant(b, sp.crow, x, sp.col.c, k, neg);
        sp.mag(x, k) = one;
        became |= 1u << bit;
        const Mask later = later_neighbours(k);
        const Mask added = (later << bit) & open;
        cand |= added;
        next = lowest_bit(cand);
        coded |= added;
        if (bit > 26) carry |= later >> (32 - bit);
      }
      sp.srow[j] = s | became;
      b.visited[st * words + j] = coded;
      sp.win.advance(sp.srow, words, j, s | became);
    }
  }
}

/// Before a refinement pass (all lanes): which samples of it have a significant
/// neighbour (D.3.3; significance does not change during the pass).
J2K_T1_FN void refine_prepare(const Block& b, int lane, int lanes) {
  for (int i = lane; i < b.stripes * b.words; i += lanes) {
    const int st = i / b.words, j = i - st * b.words;
    b.near[i] = b.refine[i] ? neighbour_significant(b.sig_row(st), b.words, j, b.causal) : 0;
  }
}

/// Magnitude refinement pass (D.3.3), lane 0: the bits, into rbits.
template <bool kRaw, typename Regs>
J2K_T1_FN void refine_pass(const Block& b, Regs& r) {
  u32 e14 = 0, e15 = 0, e16 = 0;
  if constexpr (!kRaw) {
    e14 = b.ctx[kCtxMr];
    e15 = b.ctx[kCtxMr + 1];
    e16 = b.ctx[kCtxMr + 2];
  }
  const int n = b.stripes * b.words;
  for (int i = 0; i < n; ++i) {
    Mask todo = b.refine[i];
    if (!todo) continue;
    const Mask near = b.near[i], refined = b.refined[i];
    Mask bits = 0;
    int next = lowest_bit(todo);  // found while the previous sample decodes
    while (todo) {
      const int bit = next;
      todo &= todo - 1;
      next = lowest_bit(todo);
      u32 d;
      if constexpr (kRaw) {
        d = raw_bit(r);
      } else {
        // kCtxMr + 2 once refined, else + 1 with a significant neighbour.
        if ((refined >> bit) & 1u) {
          d = mq_decode(r, e16, b.next);
        } else if ((near >> bit) & 1u) {
          d = mq_decode(r, e15, b.next);
        } else {
          d = mq_decode(r, e14, b.next);
        }
      }
      bits |= d << bit;
    }
    b.rbits[i] = bits;
  }
  if constexpr (!kRaw) {
    b.ctx[kCtxMr] = e14;
    b.ctx[kCtxMr + 1] = e15;
    b.ctx[kCtxMr + 2] = e16;
  }
}

/// After a refinement pass (all lanes, a mask word each): the bits into the magnitudes
/// (the previous plane's midpoint bit sits where this plane's bit goes: add or remove
/// half). A lane's loads are independent of each other, so they overlap.
J2K_T1_FN void refine_apply(const Block& b, int p, int lane, int lanes) {
  const std::int32_t half = 1 << p;
  for (int i = lane; i < b.stripes * b.words; i += lanes) {
    Mask todo = b.refine[i];
    if (!todo) continue;
    b.refined[i] |= todo;
    const Mask bits = b.rbits[i];
    const int st = i / b.words, j = i - st * b.words;
    std::int32_t* const row0 = b.out_row(st, 0);
    while (todo) {
      const int bit = lowest_bit(todo);
      todo &= todo - 1;
      std::int32_t& m = row0[static_cast<std::size_t>(bit & 3) * b.stride + 8 * j + (bit >> 2)];
      m += static_cast<std::int32_t>(((bits >> bit) & 1u) << (p + 1)) - half;
    }
  }
}

/// Cleanup pass (D.3.4), lane 0, with run-length mode for empty stripe columns.
J2K_T1_FN void cleanup_pass(const Block& b, int p, Mq& mq, const Contexts& cx) {
  u32 rl = b.ctx[kCtxRl];  // used once per empty column, back to back: kept in a register
  const std::int32_t one = 3 << p;
  const int words = b.words, samples = 4 * b.w;
  for (int st = 0; st < b.stripes; ++st) {
    const bool full = b.h - 4 * st >= 4;
    Stripe sp(b, st);
    Mask blocked = 0;  // 1: the next word's first column gained a significant neighbour
    for (int j = 0; j < words; ++j) {
      const Mask s = sp.win.s;
      // Coding one sample cannot change another's membership: the mask is exact.
      Mask todo = ~(s | b.visited[st * words + j]) & valid_bits(j, samples, sp.rows);
      // Run-length columns (bit 4x): all four samples to be coded here and nothing
      // significant around them; a column loses that when the one before it gains a
      // significant sample (below).
      Mask run = 0;
      if (full) {
        const Mask near = sp.win.near(b.causal);
        run = todo & (todo >> 1) & (todo >> 2) & (todo >> 3) & ~(near | near >> 1 | near >> 2 | near >> 3) & kRow0 &
              ~blocked;
      }
      blocked = 0;
      Mask became = 0;
      const u32* const cj = sp.crow + 8 * j;  // the word's first column: one add per sample
      int next = lowest_bit(todo);      // found while the previous sample decodes
      while (todo) {
        const int bit = next;
        const int x = 8 * j + (bit >> 2);
        if ((run >> bit) & 1u) {
          todo &= ~(0xFu << bit);
          next = lowest_bit(todo);
          if (!mq_decode(mq, rl, b.next)) continue;  // four more zeros
          int k = static_cast<int>(cx.decode(mq, kCtxUni, b.next) << 1);
          k |= static_cast<int>(cx.decode(mq, kCtxUni, b.next));
          // No neighbour is significant here: sign context 9, no XOR bit.
          const u32 neg = cx.decode(mq, kCtxSign, b.next);
          sp.col.at(sp.crow, x);
          set_significant(b, sp.crow, x, sp.col.c, k, neg);
          sp.mag(x, k) = one;
          became |= 1u << (bit + k);
          // The rows below it are coded one by one.
          todo |= (0xEu << (bit + k)) & (0xFu << bit);
          next = lowest_bit(todo);
        } else {
          todo &= todo - 1;
          next = lowest_bit(todo);
          const int k = bit & 3;
          sp.col.at(cj, bit >> 2);
          if (!cx.decode(mq, b.zc[zc_index(sp.col.l, sp.col.c, sp.col.r, k)], b.next)) continue;
          const u32 sc = b.sc[sc_index(sp.col.l, sp.col.c, sp.col.r, k)];
          const u32 neg = cx.decode_sc(mq, sc, b.next);
          set_significant(b, sp.crow, x, sp.col.c, k, neg);
          sp.mag(x, k) = one;
          became |= 1u << bit;
        }
        // The next column has a significant neighbour now.
        const int nxt = (bit & ~3) + 4;
        if (nxt < 32) run &= ~(1u << nxt);
        else blocked = 1;
      }
      sp.srow[j] = s | became;
      sp.win.advance(sp.srow, words, j, s | became);
    }
  }
  b.ctx[kCtxRl] = rl;
}

/// The coding passes of block `tb` (all lanes call it; lane 0 decodes): false when a
/// segmentation symbol was wrong (D.5; the block is then zeroed, as on the CPU).
J2K_T1_FN bool decode_passes(const T1Launch& L, const T1Block& tb, const Block& b, const u32* qe_table, int lane,
                             int lanes) {
  const bool bypass = (tb.style & kT1Bypass) != 0;
  const bool reset = (tb.style & kT1Reset) != 0;
  const bool segmentation = (tb.style & kT1Segmentation) != 0;
  const int numbps = tb.numbps;
  Mq mq{L.bytes, 0, 0, 0, 0, 0, 0, 0};
  Raw raw{L.bytes, 0, 0, 0, 0};
  const Contexts cx{b.ctx};
  if (lane == 0) reset_contexts(b, qe_table);
  int ok = 1;
  u32 seg = 0, seg_start = tb.byte_offset;
  int left_in_seg = 0;
  for (int pass = 0; pass < tb.passes; ++pass) {
    // The same segment walk as the CPU (t1_kernel.inl run_passes), on every lane.
    while (left_in_seg == 0) {
      if (seg == tb.seg_count) break;
      const T1Segment s = L.segments[tb.seg_first + seg];
      left_in_seg = static_cast<int>(s.passes);
      if (lane == 0) {
        const u8* start = L.bytes + seg_start;
        if (bypass && pass >= 10 && (pass + 2) % 3 != 2) raw_init(raw, start, s.length);
        else mq_init(mq, start, s.length);
      }
      seg_start += s.length;
      ++seg;
    }
    if (left_in_seg == 0) break;
    const int plane = numbps - 1 - (pass + 2) / 3;
    if (plane < 0) break;
    const int type = (pass + 2) % 3;
    const bool is_raw = bypass && pass >= 10 && type != 2;
    if (type == 0) {
      if (lane == 0) {
        if (is_raw) sig_pass<true>(b, plane, raw, cx);
        else sig_pass<false>(b, plane, mq, cx);
      }
      sync_lanes();
    } else if (type == 1) {
      refine_prepare(b, lane, lanes);
      sync_lanes();
      if (lane == 0) {
        if (is_raw) refine_pass<true>(b, raw);
        else refine_pass<false>(b, mq);
      }
      sync_lanes();
      refine_apply(b, plane, lane, lanes);
      sync_lanes();
    } else {
      if (lane == 0) {
        cleanup_pass(b, plane, mq, cx);
        if (segmentation) {
          u32 sym = 0;
          for (int j = 0; j < 4; ++j) sym = sym << 1 | cx.decode(mq, kCtxUni, b.next);
          if (sym != 0xA) ok = 0;
        }
      }
#if defined(__CUDA_ARCH__)
      ok = __shfl_sync(0xFFFFFFFFu, ok, 0);
#endif
      sync_lanes();
    }
    if (reset && lane == 0) reset_contexts(b, qe_table);
    --left_in_seg;
    if (!ok) break;
  }
  return ok != 0;
}

/// Write-out by the lanes (rows), in place over the magnitudes: signs, ROI shift (H.1:
/// magnitudes >= 2^s were scaled up by the encoder), zero where not significant; a
/// damaged block is zeroed (the CPU's resilient decoding).
J2K_T1_FN void write_block(const T1Block& tb, const Block& b, bool ok, int lane, int lanes) {
  const int roi = tb.roi_shift;
  const std::int32_t roi_threshold = roi + 1 < 31 ? (1 << (roi + 1)) : 0x7FFFFFFF;
  for (int y = 0; y < b.h; ++y) {
    const int st = y >> 2, k = y & 3;
    const u32* const crow = b.col_row(st);
    std::int32_t* const o = b.out_row(st, k);
    for (int x = lane; x < b.w; x += lanes) {
      const u32 c = crow[x];
      std::int32_t v = 0;
      if (ok && ((c >> (k + 1)) & 1u)) {
        v = o[x];
        if (roi && v >= roi_threshold) v >>= (roi & 31);
        if ((c >> (k + 7)) & 1u) v = -v;
      }
      o[x] = v;
    }
  }
}

/// Block i of the launch, by `lanes` lanes in `smem` (t1_shared_bytes of the block);
/// true when it decoded, false when it was damaged (and zeroed).
J2K_T1_FN bool run_block(const T1Launch& L, int i, unsigned char* smem, const u32* qe_table, int lane, int lanes) {
  const T1Block tb = L.blocks[i];
  const Block b = block_at(smem, tb, L.coefficients);
  init_block(b, qe_table, tb.band, lane, lanes);
  sync_lanes();
  const bool ok = decode_passes(L, tb, b, qe_table, lane, lanes);
  sync_lanes();
  write_block(tb, b, ok, lane, lanes);
  return ok;
}

}  // namespace j2k::gpu::cuda::t1
