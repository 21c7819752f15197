#pragma once
// MQ arithmetic decoder (15444-1 Annex C, software conventions of C.3).
//
// The registers live in a small struct that pass loops copy into locals (so the compiler
// keeps A, C, CT and the byte pointer in registers) and write back at the end of a pass.
// Every segment is followed by two 0xFF padding bytes in the caller's buffer: BYTEIN then
// sees a marker (0xFF followed by a byte > 0x8F) at the end and feeds 1-bits forever,
// so the hot path needs no end-of-buffer check.
#include <array>
#include <cstdint>

namespace j2k::decoder::own {

/// One entry per (state, MPS) pair of Table C.2. A context is a pointer to its entry, so
/// a decode is one load for Qe and MPS and one pointer store for the transition.
struct MqState {
  std::uint32_t qe;
  std::uint32_t mps;
  const MqState* next_mps;  ///< after an MPS
  const MqState* next_lps;  ///< after an LPS (MPS flipped where SWITCH = 1)
};
using MqContext = const MqState*;

/// Entry `index * 2 + mps`.
extern const std::array<MqState, 94> kMqStates;

struct MqRegisters {
  std::uint32_t a = 0;
  std::uint32_t c = 0;
  int ct = 0;
  const std::uint8_t* bp = nullptr;
};

[[gnu::always_inline]] inline void mq_byte_in(MqRegisters& r) {
  // C.3.4 BYTEIN: after 0xFF, a byte > 0x8F is a marker: stay, feed 1-bits.
  if (r.bp[0] == 0xFF) {
    if (r.bp[1] > 0x8F) {
      r.c += 0xFF00;
      r.ct = 8;
    } else {
      ++r.bp;
      r.c += static_cast<std::uint32_t>(r.bp[0]) << 9;
      r.ct = 7;
    }
  } else {
    ++r.bp;
    r.c += static_cast<std::uint32_t>(r.bp[0]) << 8;
    r.ct = 8;
  }
}

/// C.3.5 INITDEC. `data` must be followed by two 0xFF bytes.
inline void mq_init(MqRegisters& r, const std::uint8_t* data) {
  r.bp = data;
  r.c = static_cast<std::uint32_t>(data[0]) << 16;
  mq_byte_in(r);
  r.c <<= 7;
  r.ct -= 7;
  r.a = 0x8000;
}

/// C.3.2 DECODE with C.3.3 RENORMD.
[[gnu::always_inline]] inline std::uint32_t mq_decode(MqRegisters& r, MqContext& cx) {
  const MqState* st = cx;
  const std::uint32_t qe = st->qe;
  std::uint32_t d;
  r.a -= qe;
  if ((r.c >> 16) < qe) {
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
    r.c -= qe << 16;
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
  // RENORMD: shift A back above 0x8000. When the bits left in C's low byte suffice, do all
  // shifts at once (one branch instead of a loop of unpredictable length).
  const int n = __builtin_clz(r.a) - 16;  // 1..15: A is non-zero here
  if (n <= r.ct) {
    r.a <<= n;
    r.c <<= n;
    r.ct -= n;
    return d;
  }
  do {
    if (r.ct == 0) mq_byte_in(r);
    r.a <<= 1;
    r.c <<= 1;
    --r.ct;
  } while (!(r.a & 0x8000));
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
