// The MQ decoder's fast path (packed state-word contexts, one-step renormalisation) against a plain
// transcription of the 15444-1 C.3 flowcharts, on random byte strings and random context
// sequences: both must produce the same symbols and context states.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "tier1/mq_decoder.hpp"

using namespace j2k::decoder::own;

namespace {

/// Table C.2 as (Qe, NMPS, NLPS, SWITCH), written out again independently of the decoder.
struct Row {
  unsigned qe, nmps, nlps, sw;
};
const Row kTable[47] = {
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

/// C.3.4–C.3.5 literally: INITDEC, BYTEIN, DECODE with LPS_EXCHANGE/MPS_EXCHANGE, RENORMD.
struct ReferenceMq {
  const std::uint8_t* bp;
  unsigned a, c;
  int ct;
  struct Ctx {
    unsigned index = 0, mps = 0;
  };
  void bytein() {
    if (*bp == 0xFF) {
      if (bp[1] > 0x8F) {
        c += 0xFF00;
        ct = 8;
      } else {
        ++bp;
        c += static_cast<unsigned>(*bp) << 9;
        ct = 7;
      }
    } else {
      ++bp;
      c += static_cast<unsigned>(*bp) << 8;
      ct = 8;
    }
  }
  void init(const std::uint8_t* data) {
    bp = data;
    c = static_cast<unsigned>(*bp) << 16;
    bytein();
    c <<= 7;
    ct -= 7;
    a = 0x8000;
  }
  void renorm() {
    do {
      if (ct == 0) bytein();
      a <<= 1;
      c <<= 1;
      --ct;
    } while ((a & 0x8000) == 0);
  }
  unsigned decode(Ctx& cx) {
    const Row& r = kTable[cx.index];
    unsigned d;
    a -= r.qe;
    if ((c >> 16) < r.qe) {
      if (a < r.qe) {  // LPS_EXCHANGE, conditional exchange
        a = r.qe;
        d = cx.mps;
        cx.index = r.nmps;
      } else {
        a = r.qe;
        d = 1 - cx.mps;
        if (r.sw) cx.mps = 1 - cx.mps;
        cx.index = r.nlps;
      }
      renorm();
    } else {
      c -= r.qe << 16;
      if ((a & 0x8000) == 0) {
        if (a < r.qe) {  // MPS_EXCHANGE
          d = 1 - cx.mps;
          if (r.sw) cx.mps = 1 - cx.mps;
          cx.index = r.nlps;
        } else {
          d = cx.mps;
          cx.index = r.nmps;
        }
        renorm();
      } else {
        d = cx.mps;
      }
    }
    return d;
  }
};

/// The fast decoder and the reference on the same bytes, with N contexts each started in the
/// same random state (MPS 0, or a random MPS too).
template <int N>
struct BothDecoders {
  std::vector<std::uint8_t> data;
  MqRegisters fast;
  ReferenceMq ref;
  MqContext fast_ctx[N];
  ReferenceMq::Ctx ref_ctx[N];

  BothDecoders(std::vector<std::uint8_t> bytes, std::mt19937& rng, bool random_mps) : data(std::move(bytes)) {
    data.push_back(0xFF);  // the padding both decoders rely on
    data.push_back(0xFF);
    data.push_back(0);  // readable, never used (the fast decoder's refill reads ahead)
    data.push_back(0);
    mq_init(fast, data.data());
    ref.init(data.data());
    for (int i = 0; i < N; ++i) {
      const unsigned start = rng() % 47;
      const unsigned mps = random_mps ? rng() % 2 : 0;
      fast_ctx[i] = kMqStates[start * 2 + mps];
      ref_ctx[i].index = start;
      ref_ctx[i].mps = mps;
    }
  }
  /// The packed state word for the reference context's state.
  MqContext reference_state(int cx) const { return kMqStates[ref_ctx[cx].index * 2 + ref_ctx[cx].mps]; }
};

TEST(MqDecoder, MatchesFlowchartReferenceOnRandomInput) {
  std::mt19937 rng(2024);
  for (int trial = 0; trial < 200; ++trial) {
    // Random bytes with the occasional 0xFF (and 0xFF followed by a marker-like byte).
    std::vector<std::uint8_t> data(1 + rng() % 400);
    for (auto& b : data) {
      unsigned v = rng() % 256;
      b = static_cast<std::uint8_t>(v < 20 ? 0xFF : v);
    }
    constexpr int kContexts = 19;
    BothDecoders<kContexts> d(std::move(data), rng, false);
    for (int n = 0; n < 4000; ++n) {
      int cx = static_cast<int>(rng() % kContexts);
      unsigned want = d.ref.decode(d.ref_ctx[cx]);
      unsigned got = mq_decode(d.fast, d.fast_ctx[cx]);
      ASSERT_EQ(got, want) << "trial " << trial << " symbol " << n;
      ASSERT_EQ(d.fast_ctx[cx], d.reference_state(cx)) << "trial " << trial << " symbol " << n;
    }
    EXPECT_EQ(mq_a(d.fast), d.ref.a);
    EXPECT_EQ(mq_c_high(d.fast), d.ref.c >> 16);  // the fast C keeps more code bits below
  }
}

// The same with the branchy fast path (mq_decode_skewed, used for the run-length context)
// mixed in, on data that mostly decodes MPS symbols in low-Qe states (all-zero bytes with
// a few random ones), so that both its fast path and its fallback are taken often.
TEST(MqDecoder, SkewedFastPathMatchesFlowchartReference) {
  std::mt19937 rng(7);
  std::uint64_t fast_hits = 0, total = 0;
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<std::uint8_t> data(1 + rng() % 400);
    for (auto& b : data) {
      unsigned v = rng() % 256;
      b = static_cast<std::uint8_t>(v < 200 ? 0 : v < 210 ? 0xFF : v);
    }
    constexpr int kContexts = 3;
    BothDecoders<kContexts> d(std::move(data), rng, true);
    for (int n = 0; n < 4000; ++n) {
      int cx = rng() % 8 == 0 ? static_cast<int>(rng() % kContexts) : 0;
      unsigned want = d.ref.decode(d.ref_ctx[cx]);
      const std::uint32_t a_before = d.fast.a;
      unsigned got = (n & 3) ? mq_decode_skewed(d.fast, d.fast_ctx[cx], mq_next_base()) : mq_decode(d.fast, d.fast_ctx[cx]);
      fast_hits += (n & 3) && d.fast.a == a_before - static_cast<std::uint32_t>(d.fast_ctx[cx] >> 32) ? 1 : 0;
      ++total;
      ASSERT_EQ(got, want) << "trial " << trial << " symbol " << n;
      ASSERT_EQ(d.fast_ctx[cx], d.reference_state(cx)) << "trial " << trial << " symbol " << n;
      ASSERT_EQ(mq_a(d.fast), d.ref.a) << "trial " << trial << " symbol " << n;
    }
    EXPECT_EQ(mq_c_high(d.fast), d.ref.c >> 16);
  }
  EXPECT_GT(fast_hits, total / 10);  // the fast path was exercised
}

}  // namespace
