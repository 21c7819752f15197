// The RTP/MXF fuzz harness as a normal test: replays the committed corpus and thousands of
// deterministic mutations of a valid stream (bit flips, cuts, insertions, reordering).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>

#include <spdlog/spdlog.h>

#include "packetizer/mxf_writer.hpp"
#include "packetizer/rtp_packetizer.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

using namespace j2k::packetizer;

namespace {

/// A short valid stream in the harness's input format: [u16 length][datagram]...
std::vector<std::uint8_t> valid_input(int frames, std::size_t mtu) {
  MxfPictureParams params;
  params.width = 64; params.height = 32;
  RtpPacketizer packetizer(0x1234, 96, 65530, mtu);
  std::vector<std::vector<std::uint8_t>> packets;
  for (int f = 0; f < frames; ++f) {
    const auto ts = static_cast<std::uint32_t>(f * 3600);
    if (f % 3 == 0) {
      packetizer.packetize(mxf_partition_pack(f == 0, 0, 0), ts, packets);
      packetizer.packetize(mxf_primer_pack(), ts, packets);
      packetizer.packetize(mxf_cdci_descriptor(params), ts, packets);
    }
    packetizer.packetize(mxf_system_item(static_cast<std::uint16_t>(f)), ts, packets);
    std::vector<std::uint8_t> cs(300 + 50 * static_cast<std::size_t>(f), static_cast<std::uint8_t>(f));
    packetizer.packetize(mxf_picture_element(cs, f % 2 ? 2 : 1, 1), ts, packets);
  }
  std::vector<std::uint8_t> out;
  for (const auto& p : packets) {
    out.push_back(static_cast<std::uint8_t>(p.size() >> 8));
    out.push_back(static_cast<std::uint8_t>(p.size()));
    out.insert(out.end(), p.begin(), p.end());
  }
  return out;
}

}  // namespace

TEST(RtpSessionFuzzReplay, CommittedCorpus) {
  spdlog::set_level(spdlog::level::off);  // one session per input: keep the log quiet
  const std::filesystem::path dir = std::string(J2K_SOURCE_DIR) + "/fuzz/corpus/rtp_session";
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    std::ifstream f(e.path(), std::ios::binary);
    std::vector<std::uint8_t> data((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    LLVMFuzzerTestOneInput(data.data(), data.size());
    ++n;
  }
  EXPECT_GT(n, 0);
}

TEST(RtpSessionFuzzReplay, MutationsOfAValidStream) {
  spdlog::set_level(spdlog::level::off);
  std::mt19937 rng(20261121);
  const std::vector<std::uint8_t> base = valid_input(8, 200);
  if (const char* dir = std::getenv("J2K_WRITE_SEEDS")) {
    std::ofstream(std::string(dir) + "/valid_8_frames.bin", std::ios::binary)
        .write(reinterpret_cast<const char*>(base.data()), static_cast<std::streamsize>(base.size()));
    auto big = valid_input(3, 1400);
    std::ofstream(std::string(dir) + "/valid_mtu1400.bin", std::ios::binary)
        .write(reinterpret_cast<const char*>(big.data()), static_cast<std::streamsize>(big.size()));
  }
  LLVMFuzzerTestOneInput(base.data(), base.size());
  for (int i = 0; i < 3000; ++i) {
    std::vector<std::uint8_t> m = base;
    const int edits = 1 + static_cast<int>(rng() % 8);
    for (int e = 0; e < edits && !m.empty(); ++e) {
      const std::size_t at = rng() % m.size();
      switch (rng() % 4) {
        case 0: m[at] ^= static_cast<std::uint8_t>(1u << (rng() % 8)); break;
        case 1: m[at] = static_cast<std::uint8_t>(rng()); break;
        case 2: m.resize(at); break;
        case 3: m.insert(m.begin() + static_cast<std::ptrdiff_t>(at), static_cast<std::uint8_t>(rng())); break;
      }
    }
    LLVMFuzzerTestOneInput(m.data(), m.size());
  }
  SUCCEED() << "3000 mutated inputs processed without a crash or a broken invariant";
}
