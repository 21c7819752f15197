#pragma once
// MQ arithmetic decoder (15444-1 Annex C, software conventions of C.3).
//
// The registers live in a small struct that pass loops copy into locals (so the compiler
// keeps A, C, CT and the byte pointer in registers) and write back at the end of a pass.
// C is 64 bits wide so that code bytes are read in bursts (see MqRegisters).
// Every segment is followed by two 0xFF padding bytes in the caller's buffer: BYTEIN then
// sees a marker (0xFF followed by a byte > 0x8F) at the end and feeds 1-bits forever,
// so the hot path needs no end-of-buffer check.
#include <array>
#include <cstdint>

namespace j2k::decoder::own {

/// One entry per (state, MPS) pair of Table C.2. A context is a pointer to its entry, so
/// a decode is one load for Qe and MPS and one pointer store for the transition.
struct alignas(32) MqState {
  std::uint64_t qe48;       ///< Qe << 48: compared with and subtracted from the 64-bit C
  std::uint32_t qe;
  std::uint32_t mps;
  const MqState* next_mps;  ///< after an MPS
  const MqState* next_lps;  ///< after an LPS (MPS flipped where SWITCH = 1)
};
using MqContext = const MqState*;

/// Entry `index * 2 + mps`.
extern const std::array<MqState, 94> kMqStates;

/// The C register of C.3 widened to 64 bits: C.3's 32-bit C sits in bits 32..63 (Chigh,
/// compared with Qe, in bits 48..63), and below it up to 40 further code bits are kept
/// (`ct` counts the valid bits below bit 48). Bytes are therefore read in bursts of
/// three to five, and a renormalisation needs a refill only every few bytes instead of
/// every byte: the common renormalisation is one shift with no loop.
struct MqRegisters {
  std::uint32_t a = 0;
  std::uint64_t c = 0;
  int ct = 0;
  const std::uint8_t* bp = nullptr;
};

/// C.3.4 BYTEIN repeated until more than 32 bits are buffered; `bp` points at the last
/// byte consumed. After 0xFF, a byte > 0x8F is a marker: stay, feed 1-bits.
[[gnu::always_inline]] inline void mq_fill(MqRegisters& r) {
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

/// C.3.5 INITDEC. `data` must be followed by two 0xFF bytes.
inline void mq_init(MqRegisters& r, const std::uint8_t* data) {
  r.bp = data;
  r.c = std::uint64_t{data[0]} << 48;
  r.ct = 0;
  mq_fill(r);
  r.c <<= 7;
  r.ct -= 7;
  r.a = 0x8000;
}

/// Chigh (bits 16..31 of C.3's C), for tests against the flowcharts.
inline std::uint32_t mq_c_high(const MqRegisters& r) { return static_cast<std::uint32_t>(r.c >> 48); }

/// C.3.2 DECODE with C.3.3 RENORMD.
[[gnu::always_inline]] inline std::uint32_t mq_decode(MqRegisters& r, MqContext& cx) {
  const MqState* st = cx;
  const std::uint32_t qe = st->qe;
  std::uint32_t d;
  r.a -= qe;
  if (r.c < st->qe48) {
    // LPS exchange (C.3.2, Figure C.17)
    if (r.a < qe) {
      d = st->mps;
      cx = st->next_mps;
    } else {
      d = st->mps ^ 1u;
      cx = st->next_lps;
    }
    r.a = qe;
  } else {
    r.c -= st->qe48;
    if (r.a & 0x8000) return st->mps;  // the common case: no renormalisation
    // MPS exchange (Figure C.16)
    if (r.a < qe) {
      d = st->mps ^ 1u;
      cx = st->next_lps;
    } else {
      d = st->mps;
      cx = st->next_mps;
    }
  }
  // RENORMD: shift A back above 0x8000 in one step; more than 32 bits are buffered after
  // a refill, so the refill branch is rarely taken.
  const int n = __builtin_clz(r.a) - 16;  // 1..15: A is non-zero here
  if (n > r.ct) [[unlikely]] mq_fill(r);
  r.a <<= n;
  r.c <<= n;
  r.ct -= n;
  return d;
}

/// Raw (bypass) bits (D.6): MSB first; after 0xFF the next byte has 7 bits. Same padding.
struct RawRegisters {
  std::uint32_t c = 0;
  int ct = 0;
  const std::uint8_t* bp = nullptr;
};

inline void raw_init(RawRegisters& r, const std::uint8_t* data) {
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
