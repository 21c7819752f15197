#pragma once
// MQ arithmetic decoder (15444-1 Annex C, software conventions of C.3).
//
// The registers live in a small struct that pass loops copy into locals (so the compiler
// keeps A, C, CT and the byte pointer in registers) and write back at the end of a pass.
// C is 64 bits wide so that code bytes are read in bursts (see MqRegisters).
// Every segment is followed by two 0xFF padding bytes in the caller's buffer: BYTEIN then
// sees a marker (0xFF followed by a byte > 0x8F) at the end and feeds 1-bits forever,
// so the hot path needs no end-of-buffer check. The buffer must also be readable for two
// more bytes after that padding (the refill reads four bytes at a time).
#include <array>
#include <cstdint>
#include <cstring>

namespace j2k::decoder::own {

/// A context is its state word itself (not a pointer), one word per (state, MPS) pair of
/// Table C.2 (pair = state * 2 + MPS):
///   bits 48..63  Qe, and bits 32..47 zero: word >> 32 is Qe << 16 (compared with A, which
///                is kept as A << 16), word & 0xFFFF'0000'0000'0000 is Qe << 48 (compared
///                with the 64-bit C);
///   bits  5..11  kMqNextOffset + pair * 32: the byte offset of the pair's row of 4
///                successors from the start of an MqNextTable (or of any block that has
///                the successor rows at that offset, like the kernel's context block);
///   bit   0      MPS.
/// After a decode the successor is row[flip * 2 + (A' >> 31)], flip = decision != MPS and
/// A' the new A << 16 before renormalisation: [0] NMPS (MPS, renormalising), [1] the same
/// word (MPS, no renormalisation), [2] and [3] NLPS (MPS flipped where SWITCH = 1; an LPS
/// or exchange always renormalises). A decode thus needs no load before it can compare
/// with Qe: the per-symbol chain is context word -> compares -> one table load.
using MqContext = std::uint64_t;

/// Word of pair `state * 2 + mps`.
extern const std::array<std::uint64_t, 94> kMqStates;
/// The successor rows, 4 words per pair (see MqContext), kMqNextOffset bytes into the
/// table block (the kernel keeps its 24 context words in front of its copy).
constexpr int kMqNextOffset = 24 * 8;
struct MqNextTable {
  std::uint64_t front[kMqNextOffset / 8];
  std::uint64_t next[94 * 4];
};
extern const MqNextTable kMqNextTable;
[[gnu::always_inline]] inline const std::uint8_t* mq_next_base() { return reinterpret_cast<const std::uint8_t*>(&kMqNextTable); }

constexpr std::uint64_t kMqQeMask = 0xFFFF000000000000ull;
[[gnu::always_inline]] inline std::uint32_t mq_state_qe(MqContext cx) { return static_cast<std::uint32_t>(cx >> 48); }
[[gnu::always_inline]] inline std::uint32_t mq_state_mps(MqContext cx) { return static_cast<std::uint32_t>(cx) & 1u; }

/// The C register of C.3 widened to 64 bits: C.3's 32-bit C sits in bits 32..63 (Chigh,
/// compared with Qe, in bits 48..63), and below it up to 40 further code bits are kept
/// (`ct` counts the valid bits below bit 48). Bytes are therefore read in bursts of
/// three to five, and a renormalisation needs a refill only every few bytes instead of
/// every byte: the common renormalisation is one shift with no loop.
struct MqRegisters {
  std::uint32_t a = 0;  ///< A << 16: renormalisation shifts by lzcnt(a) directly
  std::uint64_t c = 0;
  int ct = 0;
  const std::uint8_t* bp = nullptr;
};

/// C.3.4 BYTEIN repeated until more than 32 bits are buffered; `bp` points at the last
/// byte consumed. After 0xFF, a byte > 0x8F is a marker: stay, feed 1-bits.
[[gnu::always_inline]] inline void mq_fill(MqRegisters& r) {
  // Fast path: none of the four bytes from bp is 0xFF, so the next four bytes are plain
  // 8-bit bytes: append 32 bits at once. Called with ct <= 16 (a decode refills when its
  // shift, at most 15, exceeds ct; INITDEC with ct = 0), so they fit below the valid bits.
  std::uint32_t w;
  std::memcpy(&w, r.bp, sizeof w);
  const std::uint32_t t = ~w;  // a zero byte here is a 0xFF byte there
  if (((t - 0x01010101u) & ~t & 0x80808080u) == 0 && r.ct <= 16) [[likely]] {
    const std::uint8_t* b = r.bp;
    const std::uint32_t next = std::uint32_t{b[1]} << 24 | std::uint32_t{b[2]} << 16 | std::uint32_t{b[3]} << 8 | b[4];
    r.c += std::uint64_t{next} << (16 - r.ct);
    r.ct += 32;
    r.bp += 4;
    return;
  }
  std::uint64_t c = r.c;
  int ct = r.ct;
  const std::uint8_t* bp = r.bp;
  do {
    if (bp[0] == 0xFF) {
      if (bp[1] > 0x8F) {
        c += std::uint64_t{0xFF} << (40 - ct);
        ct += 8;
      } else {
        ++bp;
        c += std::uint64_t{bp[0]} << (41 - ct);
        ct += 7;
      }
    } else {
      ++bp;
      c += std::uint64_t{bp[0]} << (40 - ct);
      ct += 8;
    }
  } while (ct <= 32);
  r.c = c;
  r.ct = ct;
  r.bp = bp;
}

/// C.3.5 INITDEC. `data` must be followed by two 0xFF bytes and two more readable bytes.
[[gnu::always_inline]] inline void mq_init(MqRegisters& r, const std::uint8_t* data) {
  r.bp = data;
  r.c = std::uint64_t{data[0]} << 48;
  r.ct = 0;
  mq_fill(r);
  r.c <<= 7;
  r.ct -= 7;
  r.a = 0x80000000u;
}

/// A as in C.3 (16 bits), for tests against the flowcharts.
[[gnu::always_inline]] inline std::uint32_t mq_a(const MqRegisters& r) { return r.a >> 16; }

/// Chigh (bits 16..31 of C.3's C), for tests against the flowcharts.
[[gnu::always_inline]] inline std::uint32_t mq_c_high(const MqRegisters& r) { return static_cast<std::uint32_t>(r.c >> 48); }

/// C.3.2 DECODE with C.3.3 RENORMD, without branches on the decoded data: the decision,
/// the conditional exchange and the state transition are selects, and RENORMD is one
/// shift by the number of leading zeros of A (0 when A >= 0x8000). The only branch is the
/// refill, taken once every few bytes. The caller still branches on the symbol, but that
/// is one data-dependent branch per symbol instead of two or three.
/// `base` is mq_next_base() or a block with a copy of the successor rows at kMqNextOffset
/// (the kernel keeps its contexts in front of them, so one base register addresses both).
[[gnu::always_inline]] inline std::uint32_t mq_decode(MqRegisters& r, MqContext& cx, const std::uint8_t* base) {
  const std::uint64_t e = cx;
  const std::uint32_t qa = static_cast<std::uint32_t>(e >> 32);  // Qe << 16
  const std::uint64_t q48 = e & kMqQeMask;
  const std::uint32_t a = r.a - qa;
  const std::uint64_t c = r.c;
  const std::uint32_t lps = c < q48;   // C.3.2: Chigh < Qe
  const std::uint32_t exch = a < qa;   // conditional exchange (never when A >= 0x8000)
  const std::uint32_t flip = lps ^ exch;  // the decision is not the MPS
  const std::uint32_t d = (static_cast<std::uint32_t>(e) ^ flip) & 1u;
  // Masks rather than ?: so that the compiler cannot turn the selects back into a branch.
  const std::uint64_t keep = std::uint64_t{lps} - 1;  // all ones on the MPS path
  const std::uint32_t na = a ^ ((a ^ qa) & ~static_cast<std::uint32_t>(keep));
  {
    // C on the MPS path minus Qe, else unchanged: a conditional move (shorter chain than
    // masking), forced with asm where the compiler might branch.
    std::uint64_t nc = c - q48;
#if defined(__x86_64__) && defined(__GNUC__)
    __asm__("cmp %[q], %[c]\n\tcmovb %[c], %[nc]" : [nc] "+r"(nc) : [c] "r"(c), [q] "r"(q48) : "cc");
#else
    nc = c - (q48 & keep);
#endif
    r.c = nc;
  }
  const std::uint32_t slot = flip * 2 + (na >> 31);
  std::memcpy(&cx, base + (e & 0xFE0) + slot * 8, sizeof cx);
  const int n = __builtin_clz(na);  // 0..15: A is non-zero
  if (n > r.ct) [[unlikely]] mq_fill(r);
  r.a = na << n;
  r.c <<= n;
  r.ct -= n;
  return d;
}

/// mq_decode with a branch for the common case of a skewed context: an MPS that needs no
/// renormalisation (C >= Qe and A - Qe >= 0x8000) is two subtractions. For contexts that
/// sit in low-Qe states for long runs (run-length mode in empty areas), where the branch
/// is well predicted.
[[gnu::always_inline]] inline std::uint32_t mq_decode_skewed(MqRegisters& r, MqContext& cx, const std::uint8_t* base) {
  const std::uint64_t e = cx;
  const std::uint32_t a = r.a - static_cast<std::uint32_t>(e >> 32);
  const std::uint64_t q48 = e & kMqQeMask;
  if (r.c >= q48 && (a >> 31)) [[likely]] {
    r.a = a;
    r.c -= q48;
    return mq_state_mps(e);
  }
  return mq_decode(r, cx, base);
}

[[gnu::always_inline]] inline std::uint32_t mq_decode(MqRegisters& r, MqContext& cx) {
  return mq_decode(r, cx, mq_next_base());
}

/// Raw (bypass) bits (D.6): MSB first; after 0xFF the next byte has 7 bits. Same padding.
struct RawRegisters {
  std::uint32_t c = 0;
  int ct = 0;
  const std::uint8_t* bp = nullptr;
};

[[gnu::always_inline]] inline void raw_init(RawRegisters& r, const std::uint8_t* data) {
  r.bp = data;
  r.c = 0;
  r.ct = 0;
}

[[gnu::always_inline]] inline std::uint32_t raw_bit(RawRegisters& r) {
  if (r.ct == 0) {
    if (r.c == 0xFF) {
      if (r.bp[0] > 0x8F) {  // marker or padding: feed ones without moving
        r.c = 0xFF;
        r.ct = 8;
      } else {
        r.c = *r.bp++;
        r.ct = 7;
      }
    } else {
      r.c = *r.bp++;
      r.ct = 8;
    }
  }
  --r.ct;
  return (r.c >> r.ct) & 1u;
}

}  // namespace j2k::decoder::own
