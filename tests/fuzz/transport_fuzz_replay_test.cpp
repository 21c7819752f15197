// The transport fuzz harnesses (TS/PES, ST 2022-1 FEC, the protected stream) as ordinary tests: the committed
// corpora plus deterministic mutations of valid inputs made by our own TS muxer.
#include <gtest/gtest.h>

#include <random>

#include <fmt/format.h>

#include "fuzz_replay.hpp"
#include "packetizer/fec_encoder.hpp"
#include "packetizer/ts_mux.hpp"

using namespace j2k;
using namespace j2k::test::fuzz;

extern "C" int fuzz_ts_session(const std::uint8_t* data, std::size_t size);
extern "C" int fuzz_fec(const std::uint8_t* data, std::size_t size);
extern "C" int fuzz_protected_stream(const std::uint8_t* data, std::size_t size);


namespace {

std::vector<std::uint8_t> pseudo_codestream(std::size_t n, int seed) {
  std::vector<std::uint8_t> v(n);
  std::mt19937 rng(static_cast<unsigned>(seed));
  for (auto& b : v) b = static_cast<std::uint8_t>(rng() & 0x7F);
  v[0] = 0xFF;
  v[1] = 0x4F;
  return v;
}

/// Raw TS (mode 0) or RTP/MP2T datagrams (mode 1) of three frames, progressive or interlaced.
Input ts_input(bool datagrams, bool interlaced) {
  packetizer::TsMuxer muxer({.descriptor = {.horizontal_size = 64, .vertical_size = 48, .den_frame_rate = 1, .num_frame_rate = 25,
                                             .color_specification = 2, .interlaced_video = interlaced}});
  packetizer::RtpMp2tPacketizer rtp(99, 65533);
  Input out{static_cast<std::uint8_t>(datagrams ? 1 : 0)};
  for (int f = 0; f < 3; ++f) {
    auto a = pseudo_codestream(700 + 50 * static_cast<std::size_t>(f), f);
    auto b = pseudo_codestream(650, f + 10);
    std::vector<Bytes> cs{a};
    if (interlaced) cs.push_back(b);
    std::vector<std::uint8_t> ts;
    muxer.mux_frame(cs, 3600u * static_cast<std::uint64_t>(f), {1, 2, 3, static_cast<std::uint8_t>(f)}, ts);
    if (!datagrams) {
      out.insert(out.end(), ts.begin(), ts.end());
      continue;
    }
    std::vector<std::vector<std::uint8_t>> packets;
    rtp.packetize(ts, 3600u * static_cast<std::uint32_t>(f), packets);
    for (const auto& p : packets) append_datagram(out, p);
  }
  return out;
}

/// Media on two paths (some lost on each) with 4×3 column and row FEC, in the harness format.
Input fec_input(unsigned seed) {
  std::mt19937 rng(seed);
  packetizer::FecEncoder enc(4, 3);
  Input out;
  auto put = [&](int kind, const std::vector<std::uint8_t>& p) {
    out.push_back(static_cast<std::uint8_t>(kind));
    append_datagram(out, p);
  };
  for (int i = 0; i < 48; ++i) {
    const auto seq = static_cast<std::uint16_t>(65520 + i);
    std::vector<std::uint8_t> p{0x80, 33, static_cast<std::uint8_t>(seq >> 8), static_cast<std::uint8_t>(seq), 0, 0, 0,
                                static_cast<std::uint8_t>(i / 8), 0, 0, 0, 7};
    for (int k = 0; k < 40 + i % 9; ++k) p.push_back(static_cast<std::uint8_t>(rng()));
    std::vector<std::vector<std::uint8_t>> col, row;
    enc.add(p, col, row);
    if (rng() % 10) put(0, p);
    if (rng() % 10) put(1, p);
    for (const auto& f : row) put(3, f);
    for (const auto& f : col) put(2, f);
  }
  return out;
}

/// The protected stream harness's input: TS frames in RTP on two paths (some lost on each,
/// some on both) with 2×2 FEC (small frames: 1-2 packets each); then, per `seed`, the source's restart (kind 5) or a pause of
/// 200 ms (kind 6), and the sender again with a new SSRC and numbers behind its last.
Input protected_input(unsigned seed) {
  std::mt19937 rng(seed);
  Input out;
  auto put = [&](int kind, const std::vector<std::uint8_t>& p) {
    out.push_back(static_cast<std::uint8_t>(kind));
    append_datagram(out, p);
  };
  for (int run = 0; run < 2; ++run) {
    packetizer::TsMuxer muxer({.descriptor = {.horizontal_size = 64, .vertical_size = 48, .den_frame_rate = 1,
                                              .num_frame_rate = 25, .color_specification = 2}});
    packetizer::RtpMp2tPacketizer rtp(run == 0 ? 0x1111u : 0x2222u + seed, static_cast<std::uint16_t>(run == 0 ? 65500 : 65400));
    packetizer::FecEncoder enc(2, 2);
    if (run == 1) put(seed % 2 == 0 ? 5 : 6, {0x80, 33, 0, 0});
    for (int f = 0; f < 6; ++f) {
      std::vector<std::uint8_t> ts;
      muxer.mux_frame({pseudo_codestream(900 + 100 * static_cast<std::size_t>(f), f + 20 * run)}, 3600u * static_cast<std::uint64_t>(f), {}, ts);
      std::vector<std::vector<std::uint8_t>> packets;
      rtp.packetize(ts, 3600u * static_cast<std::uint32_t>(f), packets);
      for (const auto& p : packets) {
        std::vector<std::vector<std::uint8_t>> col, row;
        enc.add(p, col, row);
        const unsigned r = rng() % 10;
        if (r >= 2) put(4, p);  // both paths
        else if (r == 1) put(static_cast<int>(rng() % 2), p);  // one path
        for (const auto& x : row) put(3, x);
        for (const auto& x : col) put(2, x);
      }
    }
    put(7, {});
  }
  return out;
}

/// Edits that keep the harness's leading mode byte and erase up to a TS packet's worth.
Mutations transport_mutations(int rounds, unsigned seed) { return {.rounds = rounds, .seed = seed, .keep = 1, .cut = 188}; }

}  // namespace

TEST(TransportFuzzReplay, TsSessionCorpusAndMutations) {
  std::vector<Seed> seeds;
  for (bool datagrams : {false, true})
    for (bool interlaced : {false, true})
      seeds.push_back({fmt::format("ts_{}_{}.bin", datagrams ? "rtp" : "raw", interlaced ? "i" : "p"), ts_input(datagrams, interlaced)});
  replay(fuzz_ts_session, "ts_session", seeds, transport_mutations(400, 40));
}

TEST(TransportFuzzReplay, FecAndPathMergeCorpusAndMutations) {
  std::vector<Seed> seeds;
  for (unsigned k = 0; k < 3; ++k) seeds.push_back({fmt::format("fec_{}.bin", k), fec_input(k)});
  replay(fuzz_fec, "fec", seeds, transport_mutations(500, 70));
}

TEST(TransportFuzzReplay, ProtectedStreamCorpusAndMutations) {
  std::vector<Seed> seeds;
  for (unsigned k = 0; k < 3; ++k) seeds.push_back({fmt::format("protected_{}.bin", k), protected_input(k)});
  replay(fuzz_protected_stream, "protected_stream", seeds, transport_mutations(300, 90));
}
