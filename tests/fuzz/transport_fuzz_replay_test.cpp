// The transport fuzz harnesses (TS/PES, ST 2022-1 FEC) as ordinary tests: the committed
// corpora plus deterministic mutations of valid inputs made by our own TS muxer.
#include <gtest/gtest.h>
#include <spdlog/spdlog.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>

#include <fmt/format.h>

#include "packetizer/fec_encoder.hpp"
#include "packetizer/ts_mux.hpp"
#include "replay.hpp"

using namespace j2k;
using Input = std::vector<std::uint8_t>;
using Harness = int (*)(const std::uint8_t*, std::size_t);

extern "C" int fuzz_ts_session(const std::uint8_t* data, std::size_t size);
extern "C" int fuzz_fec(const std::uint8_t* data, std::size_t size);

using j2k::test::replay_corpus;
using j2k::test::write_seed;

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
  packetizer::TsMuxConfig mc;
  mc.descriptor.horizontal_size = 64;
  mc.descriptor.vertical_size = 48;
  mc.descriptor.den_frame_rate = 1;
  mc.descriptor.num_frame_rate = 25;
  mc.descriptor.color_specification = 2;
  mc.descriptor.interlaced_video = interlaced;
  packetizer::TsMuxer muxer(mc);
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
    for (const auto& p : packets) {
      out.push_back(static_cast<std::uint8_t>(p.size() >> 8));
      out.push_back(static_cast<std::uint8_t>(p.size()));
      out.insert(out.end(), p.begin(), p.end());
    }
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
    out.push_back(static_cast<std::uint8_t>(p.size() >> 8));
    out.push_back(static_cast<std::uint8_t>(p.size()));
    out.insert(out.end(), p.begin(), p.end());
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


void mutate_and_run(const Input& base, Harness harness, int rounds, unsigned seed) {
  std::mt19937 rng(seed);
  harness(base.data(), base.size());
  for (int i = 0; i < rounds; ++i) {
    Input m = base;
    const int edits = 1 + static_cast<int>(rng() % 6);
    for (int e = 0; e < edits && m.size() > 1; ++e) {
      const std::size_t at = 1 + rng() % (m.size() - 1);  // keep the mode byte
      switch (rng() % 4) {
        case 0: m[at] ^= static_cast<std::uint8_t>(1u << (rng() % 8)); break;
        case 1: m[at] = static_cast<std::uint8_t>(rng()); break;
        case 2: m.resize(at); break;
        case 3: m.erase(m.begin() + static_cast<std::ptrdiff_t>(at), m.begin() + static_cast<std::ptrdiff_t>(std::min(m.size(), at + 188))); break;
      }
    }
    harness(m.data(), m.size());
  }
}


}  // namespace

TEST(TransportFuzzReplay, TsSessionCorpusAndMutations) {
  spdlog::set_level(spdlog::level::off);
  int k = 0;
  for (bool datagrams : {false, true})
    for (bool interlaced : {false, true}) {
      const Input base = ts_input(datagrams, interlaced);
      if (const char* dir = std::getenv("J2K_WRITE_SEEDS"))
        write_seed(dir, fmt::format("ts_{}_{}.bin", datagrams ? "rtp" : "raw", interlaced ? "i" : "p"), base);
      mutate_and_run(base, fuzz_ts_session, 400, 40 + static_cast<unsigned>(k++));
    }
  replay_corpus("ts_session", fuzz_ts_session);
}

TEST(TransportFuzzReplay, FecAndPathMergeCorpusAndMutations) {
  spdlog::set_level(spdlog::level::off);
  for (unsigned k = 0; k < 3; ++k) {
    const Input base = fec_input(k);
    if (const char* dir = std::getenv("J2K_WRITE_SEEDS")) write_seed(dir, fmt::format("fec_{}.bin", k), base);
    mutate_and_run(base, fuzz_fec, 500, 70 + k);
  }
  replay_corpus("fec", fuzz_fec);
}
