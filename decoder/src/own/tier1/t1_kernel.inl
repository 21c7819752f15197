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
constexpr std::uint32_t kSig = 1u << 12, kVisit = 1u << 13, kRefined = 1u << 14, kNeg = 1u << 15;
static_assert(kVisit == 1u << 13 && kRefined == 1u << 14, "lane masks below shift by these bit numbers");

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
// column of a stripe (D.2.1 scan order) are adjacent, so one 64-bit load gives the whole
// column's state and empty columns are skipped with one test. Flags have a one-column
// border left/right and a one-stripe border above/below.
struct BlockState {
  std::uint16_t* flags;  // (stripes + 2) x (w + 2) x 4
  std::int32_t* data;    // stripes x w x 4
  int w, h, stripes;
  int row_stride;        // flags per stripe row: (w + 2) * 4
  const std::uint8_t* zc;
  bool causal;
  /// Written by the significance propagation pass: the samples significant before this
  /// bit-plane (exactly the refinement pass's work) in scan order, each as
  /// (flag index << 16) | data index (indices of 16-bit flags from the first column of
  /// stripe row 1, and of magnitudes); -1 when not built for this plane. The pass
  /// stores four entries per column (the unused ones are overwritten), so the buffer has
  /// room for 4 * stripes * w + 4.
  std::uint32_t* columns;
  int num_columns;
};

constexpr std::uint64_t lanes(std::uint64_t m) { return m | m << 16 | m << 32 | m << 48; }
constexpr std::uint64_t kNeighbours4 = lanes(kNeighbours);
constexpr std::uint64_t kSig4 = lanes(kSig);
constexpr std::uint64_t kVisit4 = lanes(kVisit);
constexpr std::uint64_t kCleanupBusy4 = lanes(kSig | kVisit | kNeighbours);

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

/// Marks sample k of the stripe column at `f` significant and tells its 8 neighbours
/// (D.3.1), with whole-column 64-bit updates (16-bit stores followed by the next column's
/// 64-bit load would stall store forwarding). In vertically causal mode the stripe above
/// does not learn about this one (D.7).
/// set_significant without the sample's own column, for passes that keep that column in
/// a register and store it once at the end.
[[gnu::always_inline]] inline void set_significant_around(std::uint16_t* f, int k, int row_stride, std::uint32_t neg,
                                                          bool causal) {
  or_column(f - 4, kSigMasks.left[k][neg]);
  or_column(f + 4, kSigMasks.right[k][neg]);
  if (k == 0 && !causal) {
    std::uint16_t* u = f - row_stride;
    or_column(u - 4, std::uint64_t{kSigSE} << 48);
    or_column(u, std::uint64_t{kSigS | (neg ? kSgnS : 0)} << 48);
    or_column(u + 4, std::uint64_t{kSigSW} << 48);
  } else if (k == 3) {
    std::uint16_t* d = f + row_stride;
    or_column(d - 4, kSigNE);
    or_column(d, kSigN | (neg ? kSgnN : 0));
    or_column(d + 4, kSigNW);
  }
}

[[gnu::always_inline]] inline void set_significant(std::uint16_t* f, int k, int row_stride, std::uint32_t neg,
                                                   bool causal) {
  or_column(f, kSigMasks.self[k][neg]);
  set_significant_around(f, k, row_stride, neg, causal);
}

// The pass functions below are long on purpose: the MQ registers stay in locals for the
// whole pass, which is what makes tier-1 fast (decoder-performance.md).

/// Lane k (bit 16k) set for each of the `rows` samples of a column that satisfy a test.
constexpr std::uint64_t kLaneBits = lanes(1);
[[gnu::always_inline]] inline std::uint64_t row_mask(int rows) {
  return rows >= 4 ? kLaneBits : kLaneBits & ((1ull << (16 * rows)) - 1);
}
/// Samples not yet significant that have a significant neighbour (the SPP's candidates).
[[gnu::always_inline]] inline std::uint64_t spp_candidates(std::uint64_t col, std::uint64_t rows) {
  // (n + 0xFF) carries into bit 8 exactly when a lane's neighbour byte is non-zero.
  const std::uint64_t any = (((col & kNeighbours4) + lanes(0xFF)) >> 8) & kLaneBits;
  const std::uint64_t sig = (col >> 12) & kLaneBits;
  return any & ~sig & rows;
}

/// Per mask of significant lanes (4 bits), the lanes' entry offsets k * 0x10001 packed
/// in ascending order (see BlockState::columns), and their number.
struct LaneLists {
  alignas(16) std::uint32_t lanes[16][4];
  std::uint8_t count[16];
};
constexpr LaneLists make_lane_lists() {
  LaneLists l{};
  for (int m = 0; m < 16; ++m) {
    int n = 0;
    for (int k = 0; k < 4; ++k)
      if (m >> k & 1) l.lanes[m][n++] = static_cast<std::uint32_t>(k) * 0x10001u;
    l.count[m] = static_cast<std::uint8_t>(n);
  }
  return l;
}
constexpr LaneLists kLaneLists = make_lane_lists();

/// Appends the significant samples of a column (lane bits of `col`) to the refinement list.
[[gnu::always_inline]] inline int append_significant(std::uint32_t* list, int n, std::uint32_t entry4,
                                                     std::uint64_t col) {
  // The lane bits 0, 16, 32, 48 gathered into bits 48..51 (no two products overlap).
  const std::uint64_t sig = (col >> 12) & kLaneBits;
  const auto m = static_cast<unsigned>((sig * (1ull << 48 | 1ull << 33 | 1ull << 18 | 1ull << 3)) >> 48);
#if defined(__SSE2__)
  const __m128i v = _mm_add_epi32(_mm_set1_epi32(static_cast<int>(entry4)),
                                  _mm_load_si128(reinterpret_cast<const __m128i*>(kLaneLists.lanes[m])));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(list + n), v);
#else
  for (int i = 0; i < 4; ++i) list[n + i] = entry4 + kLaneLists.lanes[m][i];
#endif
  return n + kLaneLists.count[m];
}

/// Significance propagation pass (D.3.1); kRaw: bypass mode raw bits (D.6).
/// Works from per-column candidate masks, so settled samples cost no branch each.
template <bool kRaw, bool kCausal, typename Regs>
[[gnu::noinline]] void sig_pass(BlockState& s, int p, Regs& regs, CtxBlock& cb) {
  Regs r = regs;
  const std::int32_t one = 3 << p;
  std::uint32_t* const list = s.columns;
  int n = 0;
  for (int st = 0; st < s.stripes; ++st) {
    const std::uint64_t rows = row_mask(s.h - 4 * st);
    std::uint16_t* f = s.flags + (st + 1) * s.row_stride + 4;
    std::int32_t* d = s.data + st * s.w * 4;
    // Column list entry: flag column index (st * (w + 2) + x) << 16 | data column index.
    std::uint32_t entry = static_cast<std::uint32_t>(st * (s.w + 2)) << 16 | static_cast<std::uint32_t>(st * s.w);
    for (int x = 0; x < s.w; ++x, f += 4, d += 4, entry += 0x10001u) {
      // The column stays in a register (exact: only this column's own samples change it
      // while it is coded) and is stored once at the end, visited marks included.
      std::uint64_t col = load_column(f);
      // Its significant samples, before any changes below: the refinement pass's work.
      n = append_significant(list, n, entry * 4, col);
      std::uint64_t cand = spp_candidates(col, rows);
      if (!cand) continue;
      while (cand) {
        const int sh = __builtin_ctzll(cand);  // 16 * row
        const int k = sh >> 4;
        const std::uint64_t lane = cand & (0 - cand);
        cand ^= lane;
        col |= lane << 13;  // visited (kVisit is bit 13 of each lane; no other lane reads it)
        const std::uint32_t fl = static_cast<std::uint32_t>(col >> sh) & 0xFFFF;
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
          set_significant_around(f, k, s.row_stride, neg, kCausal);
          col |= kSigMasks.self[k][neg];
          d[k] = one;
          // Only the sample right below can have become a candidate (its N neighbour is
          // now significant), unless it is significant already.
          cand |= (lane << 16) & ~(col >> 12) & rows;
        }
      }
      store_column(f, col);
    }
  }
  s.num_columns = n;
  regs = r;
}

/// One column of the refinement pass: samples significant before this bit-plane and
/// not coded by its significance propagation pass.
template <bool kRaw, typename Regs>
[[gnu::always_inline]] inline void refine_column(std::uint16_t* f, std::int32_t* d, std::uint64_t cand, std::uint64_t col,
                                                 int p, Regs& r, CtxBlock& cb) {
  const std::int32_t half = 1 << p;
  or_column(f, cand << 14);  // kRefined (bit 14) for every lane refined below
  while (cand) {
    const int sh = __builtin_ctzll(cand);  // 16 * row
    cand &= cand - 1;
    const std::uint32_t fl = static_cast<std::uint32_t>(col >> sh) & 0xFFFF;  // state before this pass
    std::uint32_t bit;
    if constexpr (kRaw) {
      bit = raw_bit(r);
    } else {
      // kCtxMr + 2 once refined, else + 1 with a significant neighbour (arithmetic, no branch).
      const std::uint32_t refined = (fl >> 14) & 1u, busy = (fl & kNeighbours) != 0;
      const int c = kCtxMr + static_cast<int>(busy + refined * (2 - busy));
      bit = decode(r, cb, c);
    }
    // The previous plane's midpoint bit sits where this plane's bit goes: add or remove half.
    d[sh >> 4] += static_cast<std::int32_t>(bit << (p + 1)) - half;  // +half or -half
  }
}

/// Magnitude refinement pass (D.3.3): samples significant before this bit-plane. Visits
/// only the columns the significance propagation pass listed (no scan of empty columns).
template <bool kRaw, typename Regs>
[[gnu::noinline]] void refine_pass(BlockState& s, int p, Regs& regs, CtxBlock& cb) {
  Regs r = regs;
  if (s.num_columns >= 0) {
    // One loop over samples (no loop per column, whose exit is hard to predict).
    const std::uint32_t* list = s.columns;
    std::uint16_t* const f0 = s.flags + s.row_stride + 4;
    const std::int32_t half = 1 << p;
    for (int i = 0, n = s.num_columns; i < n; ++i) {
      const std::uint32_t e = list[i];
      std::uint16_t* const f = f0 + (e >> 16);
      const std::uint32_t fl = *f;
      *f = static_cast<std::uint16_t>(fl | kRefined);
      std::uint32_t bit;
      if constexpr (kRaw) {
        bit = raw_bit(r);
      } else {
        const std::uint32_t refined = (fl >> 14) & 1u, busy = (fl & kNeighbours) != 0;
        const int c = kCtxMr + static_cast<int>(busy + refined * (2 - busy));
        bit = decode(r, cb, c);
      }
      s.data[e & 0xFFFF] += static_cast<std::int32_t>(bit << (p + 1)) - half;
    }
    s.num_columns = -1;
  } else {
    for (int st = 0; st < s.stripes; ++st) {
      std::uint16_t* f = s.flags + (st + 1) * s.row_stride + 4;
      std::int32_t* d = s.data + st * s.w * 4;
      for (int x = 0; x < s.w; ++x, f += 4, d += 4) {
        const std::uint64_t col = load_column(f);
        const std::uint64_t cand = (col >> 12) & ~(col >> 13) & kLaneBits;  // significant, not visited
        if (cand) refine_column<kRaw>(f, d, cand, col, p, r, cb);
      }
    }
  }
  regs = r;
}

/// Cleanup pass (D.3.4) with run-length mode for empty stripe columns.
template <bool kCausal>
[[gnu::noinline]] void cleanup_pass(BlockState& s, int p, MqRegisters& mqr, CtxBlock& cb) {
  MqRegisters mq = mqr;
  // The run-length context is used once per empty column, back to back: kept in a
  // register, its state word does not go through a store and a reload per symbol.
  MqContext rl = cb.cx[kCtxRl];
  const std::int32_t one = 3 << p;
  for (int st = 0; st < s.stripes; ++st) {
    const bool full = s.h - 4 * st >= 4;
    const std::uint64_t rows = row_mask(s.h - 4 * st);
    std::uint16_t* f = s.flags + (st + 1) * s.row_stride + 4;
    std::int32_t* d = s.data + st * s.w * 4;
    for (int x = 0; x < s.w; ++x, f += 4, d += 4) {
      // The column is kept in a register and stored once (see sig_pass).
      std::uint64_t col = load_column(f);
      int k = 0;
      if (full && (col & kCleanupBusy4) == 0) {
        if (!mq_decode_skewed(mq, rl, next_base(cb))) continue;  // four more zeros
        k = static_cast<int>(decode(mq, cb, kCtxUni) << 1);
        k |= static_cast<int>(decode(mq, cb, kCtxUni));
        // No neighbour is significant here, so the sign context is 9 with no XOR bit.
        static_assert(kTables.sc[0] == 9 << 1);
        const std::uint32_t neg = decode(mq, cb, 9);
        set_significant_around(f, k, s.row_stride, neg, kCausal);
        col |= kSigMasks.self[k][neg];
        d[k] = one;
        ++k;
      }
      // Samples neither significant nor visited, from row k on; coding one cannot change
      // another's membership, so the mask is computed once.
      std::uint64_t cand = k >= 4 ? 0 : ~((col >> 12) | (col >> 13)) & rows & ~((1ull << (16 * k)) - 1);
      while (cand) {
        const int sh = __builtin_ctzll(cand);  // 16 * row
        const int kk = sh >> 4;
        cand &= cand - 1;
        const std::uint32_t fl = static_cast<std::uint32_t>(col >> sh) & 0xFFFF;
        if (decode(mq, cb, cb.zc[fl & kNeighbours])) {
          const std::uint8_t sc = cb.sc[sign_index(fl)];
          const std::uint32_t neg = decode(mq, cb, sc >> 1) ^ (sc & 1u);
          set_significant_around(f, kk, s.row_stride, neg, kCausal);
          col |= kSigMasks.self[kk][neg];
          d[kk] = one;
        }
      }
      store_column(f, col & ~kVisit4);
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
  BlockState s{k.flags, k.data, w, h, stripes, row_stride, kTables.zc[k.zc_table], k.causal, k.columns, -1};
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
      if (is_raw) s.causal ? sig_pass<true, true>(s, plane, raw, cb) : sig_pass<true, false>(s, plane, raw, cb);
      else s.causal ? sig_pass<false, true>(s, plane, mq, cb) : sig_pass<false, false>(s, plane, mq, cb);
    } else if (type == 1) {
      if (is_raw) refine_pass<true>(s, plane, raw, cb);
      else refine_pass<false>(s, plane, mq, cb);
    } else {
      s.causal ? cleanup_pass<true>(s, plane, mq, cb) : cleanup_pass<false>(s, plane, mq, cb);
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
