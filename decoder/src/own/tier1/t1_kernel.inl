// The tier-1 kernel (15444-1 Annex D): the coding passes of one code-block.
// Included by code_block_decoder.cpp (J2K_T1_NS = t1_base, baseline flags) and by
// code_block_decoder_v3.cpp (J2K_T1_NS = t1_v3, -march=x86-64-v3: LZCNT/TZCNT/BMI make
// the MQ renormalisation and the candidate scans shorter). Everything here has internal
// linkage or lives in J2K_T1_NS, so the two copies never share out-of-line code.
#include <algorithm>
#include <cstdint>
#include <cstddef>
#include <cstring>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "tier1/mq_decoder.hpp"
#include "tier1/t1_kernel.hpp"

#ifndef J2K_T1_NS
#error "define J2K_T1_NS before including t1_kernel.inl"
#endif

// GCC's SLP vectoriser merges the neighbour updates of two adjacent stripe columns into
// one 128-bit read-modify-write; a later 64-bit or 128-bit load that spans two separate
// earlier stores then cannot be store-forwarded and stalls. Keep them scalar.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-tree-slp-vectorize")
#endif

namespace j2k::decoder::own {

namespace {

// Per-sample state word. Bits 0-7: significance of the 8 neighbours; 8-11: their signs
// (negative) for N, S, W, E; then the sample's own state. Keeping the neighbourhood in the
// sample's own word makes every context a table lookup on one load (D.3.1–D.3.3).
constexpr std::uint32_t kSigN = 1u << 0, kSigS = 1u << 1, kSigW = 1u << 2, kSigE = 1u << 3;
constexpr std::uint32_t kSigNW = 1u << 4, kSigNE = 1u << 5, kSigSW = 1u << 6, kSigSE = 1u << 7;
constexpr std::uint32_t kNeighbours = 0xFFu;
constexpr std::uint32_t kSgnN = 1u << 8, kSgnS = 1u << 9, kSgnW = 1u << 10, kSgnE = 1u << 11;
constexpr std::uint32_t kSig = 1u << 12, kRefined = 1u << 14, kNeg = 1u << 15;  // bit 13 unused

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

/// Everything a pass looks up per symbol, in one block on the kernel's stack so that one
/// base register (or the stack pointer) addresses all of it: the contexts' state words,
/// the MQ state table they step through, and the band's zero-coding and the sign tables.
struct alignas(64) CtxBlock {
  MqContext cx[24];  // kNumCtx used
  std::uint64_t next[94 * 4];
  std::uint8_t zc[256];
  std::uint8_t sc[256];
};

static_assert(offsetof(CtxBlock, next) == kMqNextOffset, "the successor rows sit where the state words point");

[[gnu::always_inline]] inline const std::uint8_t* next_base(const CtxBlock& cb) {
  return reinterpret_cast<const std::uint8_t*>(&cb);
}

[[gnu::always_inline]] inline std::uint32_t decode(MqRegisters& r, CtxBlock& cb, int i) {
  return mq_decode(r, cb.cx[i], next_base(cb));
}

void reset_contexts(MqContext* ctx) {
  for (int i = 0; i < kNumCtx; ++i) ctx[i] = kMqStates[0];
  ctx[0] = kMqStates[4 * 2];         // Table D.7: zero-coding context 0 starts in state 4
  ctx[kCtxRl] = kMqStates[3 * 2];    // run-length: state 3
  ctx[kCtxUni] = kMqStates[46 * 2];  // uniform: state 46
}


// Layout: flags and magnitudes are stored stripe-column-major: the four samples of one
// column of a stripe (D.2.1 scan order) are adjacent, so sample k of column x is entry
// 4x + k of its stripe row, and the scan order of a stripe is the order of its entries.
// Flags have a one-column border left/right and a one-stripe border above/below.
//
// The passes do not walk columns. They work through bit masks over a stripe's entries
// (one 64-bit word per 16 columns): bit i stands for the sample at entry i. A pass takes
// the lowest set bit, codes that sample and clears the bit, so the loop's only branches
// are the coded decisions and the end of a word, and settled or empty columns cost
// nothing. Which samples are significant is kept as such a mask too (`sig`, beside the
// flags), so that which samples have a significant neighbour is a few shifts of it and
// the flags are read only for the samples coded. The significance propagation pass
// records the samples it coded (`visited`, for the cleanup pass) and those significant
// before it (`refine`, exactly the refinement pass's work).
struct BlockState {
  std::uint16_t* flags;  // (stripes + 2) x (w + 2) x 4
  std::int32_t* data;    // stripes x w x 4
  int w, h, stripes;
  int row_stride;        // flags per stripe row: (w + 2) * 4
  int words;             // mask words per stripe: ceil(4w / 64)
  std::uint64_t* sig;      // (stripes + 2) x (words + 2): a zero border all round
  std::uint64_t* refine;   // stripes x words
  std::uint64_t* visited;  // stripes x words
  std::uint64_t* sig_row(int st) const { return sig + static_cast<std::ptrdiff_t>(st + 1) * (words + 2) + 1; }
};

[[gnu::always_inline]] inline std::uint64_t load_column(const std::uint16_t* f) {
  std::uint64_t v;
  std::memcpy(&v, f, sizeof v);
  return v;
}
[[gnu::always_inline]] inline void store_column(std::uint16_t* f, std::uint64_t v) { std::memcpy(f, &v, sizeof v); }

[[gnu::always_inline]] inline std::uint32_t sign_index(std::uint32_t f) { return (f & 0xF) | ((f >> 4) & 0xF0); }

[[gnu::always_inline]] inline void or_column(std::uint16_t* f, std::uint64_t bits) { store_column(f, load_column(f) | bits); }

/// What one sample becoming significant sets in its own column word and in the words of
/// the columns to its left and right, per row k and sign (D.3.1 neighbourhood).
struct SignificanceMasks {
  std::uint64_t self[4][2], left[4][2], right[4][2];
};
constexpr SignificanceMasks make_significance_masks() {
  SignificanceMasks m{};
  for (int k = 0; k < 4; ++k)
    for (int neg = 0; neg < 2; ++neg) {
      auto lane = [](std::uint64_t bits, int row) { return row < 0 || row > 3 ? 0 : bits << (16 * row); };
      m.self[k][neg] = lane(kSig | (neg ? kNeg : 0), k) | lane(kSigS | (neg ? kSgnS : 0), k - 1) |
                       lane(kSigN | (neg ? kSgnN : 0), k + 1);
      m.left[k][neg] = lane(kSigE | (neg ? kSgnE : 0), k) | lane(kSigSE, k - 1) | lane(kSigNE, k + 1);
      m.right[k][neg] = lane(kSigW | (neg ? kSgnW : 0), k) | lane(kSigSW, k - 1) | lane(kSigNW, k + 1);
    }
  return m;
}
constexpr SignificanceMasks kSigMasks = make_significance_masks();

/// The three column updates that tell the stripe above (k = 0, unless vertically causal,
/// D.7) or below (k = 3) about a new significant sample, per [causal][k][neg]: left,
/// centre, right. Zero for the middle rows.
struct VerticalMasks {
  std::uint64_t m[2][4][2][3];
};
constexpr VerticalMasks make_vertical_masks() {
  VerticalMasks v{};
  for (int causal = 0; causal < 2; ++causal)
    for (int neg = 0; neg < 2; ++neg) {
      if (!causal) {
        v.m[causal][0][neg][0] = std::uint64_t{kSigSE} << 48;
        v.m[causal][0][neg][1] = std::uint64_t{kSigS | (neg ? kSgnS : 0)} << 48;
        v.m[causal][0][neg][2] = std::uint64_t{kSigSW} << 48;
      }
      v.m[causal][3][neg][0] = kSigNE;
      v.m[causal][3][neg][1] = kSigN | (neg ? kSgnN : 0);
      v.m[causal][3][neg][2] = kSigNW;
    }
  return v;
}
constexpr VerticalMasks kVerticalMasks = make_vertical_masks();

/// Marks sample k of the stripe column at `f` significant and tells its 8 neighbours
/// (D.3.1), with whole-column 64-bit updates (a 64-bit load of a column after 16-bit
/// stores into it would stall store forwarding). The stripe above or below is updated
/// without a branch on the row, which would mispredict half the time: for the middle rows
/// the same three updates go to this stripe's columns with zero masks, a no-op.
[[gnu::always_inline]] inline void set_significant(std::uint16_t* f, int k, int row_stride, std::uint32_t neg,
                                                   bool causal) {
  or_column(f, kSigMasks.self[k][neg]);
  or_column(f - 4, kSigMasks.left[k][neg]);
  or_column(f + 4, kSigMasks.right[k][neg]);
  const std::ptrdiff_t step[4] = {-row_stride, 0, 0, row_stride};
  std::uint16_t* const u = f + step[k];
  const std::uint64_t* const m = kVerticalMasks.m[causal][k][neg];
  or_column(u - 4, m[0]);
  or_column(u, m[1]);
  or_column(u + 4, m[2]);
}

/// The samples that gain a significant neighbour, and come later in the scan, when the
/// sample at entry i (row k = i & 3) becomes significant, as offsets from i: the one
/// below (+1, same column) and rows k-1..k+1 of the next column (+3..+5).
constexpr std::uint64_t kLaterNeighbours[4] = {1u << 1 | 1u << 4 | 1u << 5, 1u << 1 | 1u << 3 | 1u << 4 | 1u << 5,
                                               1u << 1 | 1u << 3 | 1u << 4 | 1u << 5, 1u << 3 | 1u << 4};

// The pass functions below are long on purpose: the MQ registers stay in locals for the
// whole pass, which is what makes tier-1 fast (decoder-performance.md).

/// The bits of a stripe's mask word `j` that stand for real samples: entries below 4w
/// (`samples`), and of each column the rows in `rows` (row_pattern: all four, or fewer in a
/// stripe cut by the block's bottom).
[[gnu::always_inline]] inline std::uint64_t valid_bits(int j, int samples, std::uint64_t rows) {
  const int left = samples - 64 * j;
  return left >= 64 ? rows : rows & ((std::uint64_t{1} << left) - 1);
}
[[gnu::always_inline]] inline std::uint64_t row_pattern(int rows) {
  return rows >= 4 ? ~std::uint64_t{0} : 0x1111111111111111ull * ((1u << rows) - 1);
}

constexpr std::uint64_t kRow0 = 0x1111111111111111ull, kRow3 = 0x8888888888888888ull;

/// A mask word spread to the rows above and below within each column.
[[gnu::always_inline]] inline std::uint64_t column_spread(std::uint64_t m) {
  return m | ((m << 1) & ~kRow0) | ((m >> 1) & ~kRow3);
}
/// A mask word spread to the columns left and right; `prev` and `next` are the words
/// before and after it (their last and first columns border this word's).
[[gnu::always_inline]] inline std::uint64_t row_spread(std::uint64_t m, std::uint64_t prev, std::uint64_t next) {
  return m | (m << 4) | (prev >> 60) | (m >> 4) | (next << 60);
}

/// The samples of word j of a stripe (row `sig`, see BlockState::sig_row) that are
/// significant or have a significant one among their 8 neighbours: the row's own
/// significance spread both ways, the last row of the stripe above spread along its row,
/// and (unless vertically causal, D.7) the first row of the stripe below.
template <bool kCausal>
[[gnu::always_inline]] inline std::uint64_t near_significant(const std::uint64_t* sig, int words, int j) {
  const std::uint64_t* const above = sig - (words + 2);
  const std::uint64_t* const below = sig + (words + 2);
  std::uint64_t m = row_spread(column_spread(sig[j]), column_spread(sig[j - 1]), column_spread(sig[j + 1]));
  m |= row_spread((above[j] >> 3) & kRow0, (above[j - 1] >> 3) & kRow0, (above[j + 1] >> 3) & kRow0);
  if constexpr (!kCausal)
    m |= row_spread((below[j] << 3) & kRow3, (below[j - 1] << 3) & kRow3, (below[j + 1] << 3) & kRow3);
  return m;
}

/// Significance propagation pass (D.3.1); kRaw: bypass mode raw bits (D.6).
template <bool kRaw, bool kCausal, typename Regs>
[[gnu::noinline]] void sig_pass(BlockState& s, int p, Regs& regs, CtxBlock& cb) {
  Regs r = regs;
  const std::int32_t one = 3 << p;
  const int words = s.words, samples = 4 * s.w, row_stride = s.row_stride;
  for (int st = 0; st < s.stripes; ++st) {
    const std::uint64_t rows = row_pattern(s.h - 4 * st);
    std::uint16_t* const f_row = s.flags + (st + 1) * row_stride + 4;
    std::int32_t* const d_row = s.data + st * s.w * 4;
    std::uint64_t* const sig_row = s.sig_row(st);
    std::uint64_t* const refine = s.refine + st * words;
    std::uint64_t* const visited = s.visited + st * words;
    std::uint64_t carry = 0;  // candidates that the previous word's samples handed on
    for (int j = 0; j < words; ++j) {
      const std::uint64_t sig = sig_row[j];
      refine[j] = sig;
      // Candidates: insignificant samples with a significant neighbour. None of them can
      // become significant before it is reached, so `open` stays exact through the word.
      const std::uint64_t open = ~sig & valid_bits(j, samples, rows);
      std::uint64_t cand = (near_significant<kCausal>(sig_row, words, j) | carry) & open;
      std::uint64_t coded = cand, became = 0;
      carry = 0;
      while (cand) {
        const int b = __builtin_ctzll(cand);
        cand &= cand - 1;
        const int i = 64 * j + b;
        const std::uint32_t fl = f_row[i];
        std::uint32_t bit;
        if constexpr (kRaw) bit = raw_bit(r);
        else bit = decode(r, cb, cb.zc[fl & kNeighbours]);
        if (bit) {
          std::uint32_t neg;
          if constexpr (kRaw) {
            neg = raw_bit(r);
          } else {
            const std::uint8_t sc = cb.sc[sign_index(fl)];
            neg = decode(r, cb, sc >> 1) ^ (sc & 1u);
          }
          const int k = i & 3;
          set_significant(f_row + (i - k), k, row_stride, neg, kCausal);
          d_row[i] = one;
          became |= std::uint64_t{1} << b;
          // The later samples around it are candidates now (bits past 63 go to the next word).
          const std::uint64_t later = kLaterNeighbours[k];
          const std::uint64_t added = (later << b) & open;
          cand |= added;
          coded |= added;
          if (b > 58) carry |= later >> (64 - b);
        }
      }
      sig_row[j] = sig | became;
      visited[j] = coded;
    }
  }
  regs = r;
}

/// Magnitude refinement pass (D.3.3): the samples the significance propagation pass of
/// this bit-plane found significant before it.
template <bool kRaw, typename Regs>
[[gnu::noinline]] void refine_pass(BlockState& s, int p, Regs& regs, CtxBlock& cb) {
  Regs r = regs;
  const std::int32_t half = 1 << p;
  const int words = s.words;
  for (int st = 0; st < s.stripes; ++st) {
    std::uint16_t* const f_row = s.flags + (st + 1) * s.row_stride + 4;
    std::int32_t* const d_row = s.data + st * s.w * 4;
    const std::uint64_t* const refine = s.refine + st * words;
    for (int j = 0; j < words; ++j) {
      std::uint64_t todo = refine[j];
      while (todo) {
        const int i = 64 * j + __builtin_ctzll(todo);
        todo &= todo - 1;
        std::uint16_t* const f = f_row + i;
        const std::uint32_t fl = *f;
        *f = static_cast<std::uint16_t>(fl | kRefined);
        std::uint32_t bit;
        if constexpr (kRaw) {
          bit = raw_bit(r);
        } else {
          // kCtxMr + 2 once refined, else + 1 with a significant neighbour (arithmetic, no branch).
          const std::uint32_t refined = (fl >> 14) & 1u, near = (fl & kNeighbours) != 0;
          const int c = kCtxMr + static_cast<int>(near + refined * (2 - near));
          bit = decode(r, cb, c);
        }
        // The previous plane's midpoint bit sits where this plane's bit goes: add or remove half.
        d_row[i] += static_cast<std::int32_t>(bit << (p + 1)) - half;  // +half or -half
      }
    }
  }
  regs = r;
}

/// Cleanup pass (D.3.4): the samples neither significant nor coded by this bit-plane's
/// significance propagation pass, with run-length mode for empty stripe columns.
template <bool kCausal>
[[gnu::noinline]] void cleanup_pass(BlockState& s, int p, MqRegisters& mqr, CtxBlock& cb) {
  MqRegisters mq = mqr;
  // The run-length context is used once per empty column, back to back: kept in a
  // register, its state word does not go through a store and a reload per symbol.
  MqContext rl = cb.cx[kCtxRl];
  const std::int32_t one = 3 << p;
  const int words = s.words, samples = 4 * s.w, row_stride = s.row_stride;
  for (int st = 0; st < s.stripes; ++st) {
    const bool full = s.h - 4 * st >= 4;
    const std::uint64_t rows = row_pattern(s.h - 4 * st);
    std::uint16_t* const f_row = s.flags + (st + 1) * row_stride + 4;
    std::int32_t* const d_row = s.data + st * s.w * 4;
    std::uint64_t* const sig_row = s.sig_row(st);
    const std::uint64_t* const visited = s.visited + st * words;
    std::uint64_t blocked = 0;  // 1: the next word's first column gained a significant neighbour
    for (int j = 0; j < words; ++j) {
      const std::uint64_t sig = sig_row[j];
      // Coding one sample cannot change another's membership: the mask is exact.
      std::uint64_t todo = ~(sig | visited[j]) & valid_bits(j, samples, rows);
      // Run-length columns (bit 4x): all four samples to be coded here and nothing
      // significant around them. A column loses that when a sample of the column before
      // it becomes significant (below).
      std::uint64_t run = 0;
      if (full) {
        const std::uint64_t near = near_significant<kCausal>(sig_row, words, j);
        run = todo & (todo >> 1) & (todo >> 2) & (todo >> 3) & ~(near | near >> 1 | near >> 2 | near >> 3) & kRow0 &
              ~blocked;
      }
      blocked = 0;
      std::uint64_t became = 0;
      while (todo) {
        const int b = __builtin_ctzll(todo);
        const int i = 64 * j + b;
        std::uint16_t* const f = f_row + i;
        int k = i & 3;
        if ((run >> b) & 1) {
          todo &= ~(std::uint64_t{0xF} << b);
          if (!mq_decode_skewed(mq, rl, next_base(cb))) continue;  // four more zeros
          k = static_cast<int>(decode(mq, cb, kCtxUni) << 1);
          k |= static_cast<int>(decode(mq, cb, kCtxUni));
          // No neighbour is significant here, so the sign context is 9 with no XOR bit.
          static_assert(kTables.sc[0] == 9 << 1);
          const std::uint32_t neg = decode(mq, cb, 9);
          set_significant(f, k, row_stride, neg, kCausal);
          d_row[i + k] = one;
          became |= std::uint64_t{1} << (b + k);
          // The rows below it are coded one by one.
          todo |= (std::uint64_t{0xE} << (b + k)) & (std::uint64_t{0xF} << b);
        } else {
          todo &= todo - 1;
          const std::uint32_t fl = *f;
          if (!decode(mq, cb, cb.zc[fl & kNeighbours])) continue;
          const std::uint8_t sc = cb.sc[sign_index(fl)];
          const std::uint32_t neg = decode(mq, cb, sc >> 1) ^ (sc & 1u);
          set_significant(f - k, k, row_stride, neg, kCausal);
          d_row[i] = one;
          became |= std::uint64_t{1} << b;
        }
        // The next column has a significant neighbour now.
        const int next = (b & ~3) + 4;
        if (next < 64) run &= ~(std::uint64_t{1} << next);
        else blocked = 1;
      }
      sig_row[j] = sig | became;
    }
  }
  cb.cx[kCtxRl] = rl;
  mqr = mq;
}

/// Plain write-out (the reference for the SSE2 one): stripe-column-major magnitudes to
/// signed row-major coefficients; samples never significant are 0.
inline void write_out_rows_scalar(const std::uint16_t* flags, const std::int32_t* data, int w, int y0, int y1,
                                  int row_stride, std::int32_t* out, int stride) {
  for (int y = y0; y < y1; ++y) {
    const int st = y >> 2, k = y & 3;
    const std::int32_t* d = data + static_cast<std::ptrdiff_t>(st) * w * 4 + k;
    const std::uint16_t* f = flags + static_cast<std::ptrdiff_t>(st + 1) * row_stride + 4 + k;
    std::int32_t* o = out + static_cast<std::ptrdiff_t>(y) * stride;
    for (int x = 0; x < w; ++x) {
      const std::uint32_t fl = f[4 * x];
      const std::int32_t v = (fl & kSig) ? d[4 * x] : 0;
      o[x] = (fl & kNeg) ? -v : v;
    }
  }
}

#if defined(__SSE2__)
/// One stripe column's four magnitudes with signs applied and non-significant lanes zeroed.
[[gnu::always_inline]] inline __m128i signed_column(__m128i mag, __m128i flags_hi) {
  // flags_hi: each lane's 16-bit flags in its upper half (bit 15 -> 31, bit 12 -> 28).
  const __m128i neg = _mm_srai_epi32(flags_hi, 31);
  const __m128i sig = _mm_srai_epi32(_mm_slli_epi32(flags_hi, 3), 31);
  return _mm_sub_epi32(_mm_xor_si128(_mm_and_si128(mag, sig), neg), neg);
}
#endif

/// Write-out of a whole block: full stripes four columns at a time with a 4x4 transpose.
inline void write_out(const std::uint16_t* flags, const std::int32_t* data, int w, int h, int row_stride,
                      std::int32_t* out, int stride) {
#if defined(__SSE2__)
  const int full_stripes = h / 4;
  const int w4 = w & ~3;
  for (int st = 0; st < full_stripes; ++st) {
    const std::int32_t* d = data + static_cast<std::ptrdiff_t>(st) * w * 4;
    const std::uint16_t* f = flags + static_cast<std::ptrdiff_t>(st + 1) * row_stride + 4;
    std::int32_t* o0 = out + static_cast<std::ptrdiff_t>(4 * st) * stride;
    std::int32_t* o1 = o0 + stride;
    std::int32_t* o2 = o1 + stride;
    std::int32_t* o3 = o2 + stride;
    const __m128i zero = _mm_setzero_si128();
    for (int x = 0; x < w4; x += 4) {
      const __m128i f01 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(f + 4 * x));
      const __m128i f23 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(f + 4 * x + 8));
      const __m128i c0 = signed_column(_mm_loadu_si128(reinterpret_cast<const __m128i*>(d + 4 * x)),
                                       _mm_unpacklo_epi16(zero, f01));
      const __m128i c1 = signed_column(_mm_loadu_si128(reinterpret_cast<const __m128i*>(d + 4 * x + 4)),
                                       _mm_unpackhi_epi16(zero, f01));
      const __m128i c2 = signed_column(_mm_loadu_si128(reinterpret_cast<const __m128i*>(d + 4 * x + 8)),
                                       _mm_unpacklo_epi16(zero, f23));
      const __m128i c3 = signed_column(_mm_loadu_si128(reinterpret_cast<const __m128i*>(d + 4 * x + 12)),
                                       _mm_unpackhi_epi16(zero, f23));
      const __m128i t0 = _mm_unpacklo_epi32(c0, c1), t1 = _mm_unpacklo_epi32(c2, c3);
      const __m128i t2 = _mm_unpackhi_epi32(c0, c1), t3 = _mm_unpackhi_epi32(c2, c3);
      _mm_storeu_si128(reinterpret_cast<__m128i*>(o0 + x), _mm_unpacklo_epi64(t0, t1));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(o1 + x), _mm_unpackhi_epi64(t0, t1));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(o2 + x), _mm_unpacklo_epi64(t2, t3));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(o3 + x), _mm_unpackhi_epi64(t2, t3));
    }
    for (int x = w4; x < w; ++x) {
      for (int k = 0; k < 4; ++k) {
        const std::uint32_t fl = f[4 * x + k];
        const std::int32_t v = (fl & kSig) ? d[4 * x + k] : 0;
        out[static_cast<std::ptrdiff_t>(4 * st + k) * stride + x] = (fl & kNeg) ? -v : v;
      }
    }
  }
  write_out_rows_scalar(flags, data, w, full_stripes * 4, h, row_stride, out, stride);
#else
  write_out_rows_scalar(flags, data, w, 0, h, row_stride, out, stride);
#endif
}

}  // namespace

namespace J2K_T1_NS {

bool run_passes(const T1Kernel& k) {
  const int w = k.w, h = k.h, numbps = k.numbps;
  const int stripes = (h + 3) / 4;
  const int row_stride = (w + 2) * 4;
  const int words = t1_mask_words(w);
  const std::size_t sig_words = static_cast<std::size_t>(stripes + 2) * (words + 2);
  BlockState s{k.flags, k.data, w, h, stripes, row_stride, words,
               k.masks, k.masks + sig_words, k.masks + sig_words + static_cast<std::size_t>(stripes) * words};
  // Nothing is significant yet, and the first cleanup pass codes every sample.
  std::memset(s.sig, 0, sizeof(std::uint64_t) * sig_words);
  std::memset(s.visited, 0, sizeof(std::uint64_t) * static_cast<std::size_t>(stripes) * words);
  CtxBlock cb;
  std::memcpy(cb.next, kMqNextTable.next, sizeof cb.next);
  std::memcpy(cb.zc, kTables.zc[k.zc_table], sizeof cb.zc);
  std::memcpy(cb.sc, kTables.sc, sizeof cb.sc);
  MqContext* ctx = cb.cx;
  reset_contexts(ctx);
  MqRegisters mq;
  RawRegisters raw;
  const bool bypass = k.bypass;
  bool ok = true;

  std::size_t seg = 0;
  int left_in_seg = 0;
  for (int pass = 0; pass < k.passes; ++pass) {
    while (left_in_seg == 0) {
      if (seg == static_cast<std::size_t>(k.num_segments)) break;
      left_in_seg = k.segments[seg].passes;
      const std::uint8_t* start = k.bytes + k.segments[seg].offset;
      if (bypass && pass >= 10 && (pass + 2) % 3 != 2) raw_init(raw, start);
      else mq_init(mq, start);
      ++seg;
    }
    if (left_in_seg == 0) break;
    const int plane = numbps - 1 - (pass + 2) / 3;
    if (plane < 0) break;  // more passes than bit-planes: ignore the excess
    const int type = (pass + 2) % 3;  // 0 significance, 1 refinement, 2 cleanup
    const bool is_raw = bypass && pass >= 10 && type != 2;
    if (type == 0) {
      // Templated on the causal flag (rare) so that the common passes test nothing for it.
      if (is_raw) k.causal ? sig_pass<true, true>(s, plane, raw, cb) : sig_pass<true, false>(s, plane, raw, cb);
      else k.causal ? sig_pass<false, true>(s, plane, mq, cb) : sig_pass<false, false>(s, plane, mq, cb);
    } else if (type == 1) {
      if (is_raw) refine_pass<true>(s, plane, raw, cb);
      else refine_pass<false>(s, plane, mq, cb);
    } else {
      k.causal ? cleanup_pass<true>(s, plane, mq, cb) : cleanup_pass<false>(s, plane, mq, cb);
      if (k.segmentation) {
        // D.5: the four-symbol segmentation marker 1010 ends every cleanup pass.
        std::uint32_t sym = 0;
        for (int i = 0; i < 4; ++i) sym = sym << 1 | decode(mq, cb, kCtxUni);
        if (sym != 0xA) ok = false;
      }
    }
    if (k.reset) reset_contexts(ctx);
    --left_in_seg;
    if (!ok) break;
  }
  return ok;
}

}  // namespace J2K_T1_NS
}  // namespace j2k::decoder::own
