// The RTP/MXF fuzz harness as a normal test: replays the committed corpus and thousands of
// deterministic mutations of a valid stream (bit flips, cuts, insertions, reordering).
#include <gtest/gtest.h>

#include <spdlog/spdlog.h>

#include "fuzz_replay.hpp"
#include "packetizer/mxf_writer.hpp"
#include "packetizer/rtp_packetizer.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

using namespace j2k::packetizer;
using namespace j2k::test::fuzz;

namespace {

/// A short valid stream in the harness's input format: [u16 length][datagram]...
Input valid_input(int frames, std::size_t mtu) {
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
  Input out;
  for (const auto& p : packets) append_datagram(out, p);
  return out;
}

}  // namespace

TEST(RtpSessionFuzzReplay, CommittedCorpus) {
  spdlog::set_level(spdlog::level::off);  // one session per input: keep the log quiet
  replay_corpus("rtp_session", LLVMFuzzerTestOneInput);
}

TEST(RtpSessionFuzzReplay, MutationsOfAValidStream) {
  spdlog::set_level(spdlog::level::off);
  const Input base = valid_input(8, 200);
  write_seed("valid_8_frames.bin", base);
  write_seed("valid_mtu1400.bin", valid_input(3, 1400));
  mutate_and_run(base, LLVMFuzzerTestOneInput, {.rounds = 3000, .seed = 20261121, .max_edits = 8});
  SUCCEED() << "3000 mutated inputs processed without a crash or a broken invariant";
}
