// The RTCP fuzz harness as an ordinary test: its committed corpus, then deterministic
// mutations of a stream of RFC 5371 packets interleaved with sender reports and a final BYE.
#include <gtest/gtest.h>
#include <spdlog/spdlog.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>

#include "packetizer/rtcp_writer.hpp"
#include "packetizer/rtp_j2k_packetizer.hpp"

using Input = std::vector<std::uint8_t>;
extern "C" int fuzz_rtcp(const std::uint8_t* data, std::size_t size);

namespace {

void append(Input& out, const std::vector<std::uint8_t>& datagram) {
  out.push_back(static_cast<std::uint8_t>(datagram.size() >> 8));
  out.push_back(static_cast<std::uint8_t>(datagram.size()));
  out.insert(out.end(), datagram.begin(), datagram.end());
}

/// Five frames, a report after each, the last three packets missing, then SR + BYE.
Input stream_with_reports() {
  std::vector<std::uint8_t> cs = {0xFF, 0x4F, 0xFF, 0x51, 0x00, 0x04, 0x00, 0x00, 0xFF, 0x90, 0x00, 0x0A,
                                  0, 0, 0, 0, 0, 0, 0, 1};
  cs.resize(cs.size() + 600, 0x5C);
  j2k::packetizer::Rfc5371Packetizer p(0x600DF00D, 96, 65533, 200);
  Input out = {1};  // first byte odd: the harness reads RFC 5371
  std::vector<std::vector<std::uint8_t>> packets;
  std::uint32_t sent = 0;
  for (int f = 0; f < 5; ++f) {
    packets.clear();
    (void)p.packetize(cs, static_cast<std::uint32_t>(3600 * f), 0, packets);
    for (std::size_t i = 0; i < packets.size(); ++i)
      if (f < 4 || i + 3 < packets.size()) append(out, packets[i]);
    sent += static_cast<std::uint32_t>(packets.size());
    j2k::depacketizer::SenderReport sr{0x600DF00D, 0, static_cast<std::uint32_t>(3600 * f + 3000), sent, sent * 200};
    append(out, j2k::packetizer::rtcp_sender_report(sr, "fuzz@127.0.0.1", f == 4));
  }
  return out;
}

}  // namespace

TEST(RtcpFuzzReplay, CorpusAndMutationsOfAStreamWithReports) {
  spdlog::set_level(spdlog::level::off);
  const Input base = stream_with_reports();
  if (const char* dir = std::getenv("J2K_WRITE_SEEDS"))
    std::ofstream(std::string(dir) + "/stream_with_reports.bin", std::ios::binary)
        .write(reinterpret_cast<const char*>(base.data()), static_cast<std::streamsize>(base.size()));
  const std::filesystem::path dir = std::string(J2K_SOURCE_DIR) + "/fuzz/corpus/rtcp";
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    std::ifstream f(e.path(), std::ios::binary);
    Input data((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    fuzz_rtcp(data.data(), data.size());
    ++files;
  }
  EXPECT_GT(files, 0);
  std::mt19937 rng(2026);
  fuzz_rtcp(base.data(), base.size());
  for (int i = 0; i < 3000; ++i) {
    Input m = base;
    const int edits = 1 + static_cast<int>(rng() % 6);
    for (int e = 0; e < edits && m.size() > 1; ++e) {
      const std::size_t at = 1 + rng() % (m.size() - 1);
      switch (rng() % 4) {
        case 0: m[at] ^= static_cast<std::uint8_t>(1u << (rng() % 8)); break;
        case 1: m[at] = static_cast<std::uint8_t>(rng()); break;
        case 2: m.resize(at); break;
        case 3: m.insert(m.begin() + static_cast<std::ptrdiff_t>(at), static_cast<std::uint8_t>(rng())); break;
      }
    }
    fuzz_rtcp(m.data(), m.size());
  }
}
