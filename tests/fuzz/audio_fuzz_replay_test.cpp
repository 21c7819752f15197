// The sound fuzz harness as an ordinary test: its committed corpus, then deterministic
// mutations of valid inputs — ST 302M payloads, an MXF sound descriptor and PCM element, an MXF
// stream in RTP with sound among the pictures, and a TR-01 TS with an ST 302M PID.
#include <gtest/gtest.h>

#include "depacketizer/audio.hpp"
#include "packetizer/mxf_writer.hpp"
#include "packetizer/rtp_packetizer.hpp"
#include "packetizer/ts_mux.hpp"
#include "fuzz_replay.hpp"
#include "sound_fixtures.hpp"

extern "C" int fuzz_audio(const std::uint8_t* data, std::size_t size);

namespace {

using namespace j2k;
using namespace j2k::test::fuzz;

depacketizer::AudioBlock ramp(const depacketizer::AudioFormat& f, std::size_t frames) { return test::sound_ramp(f, frames); }
std::vector<std::uint8_t> codestream() { return test::stand_in_codestream(300); }

std::vector<Input> inputs() {
  std::vector<Input> out;
  // 0: ST 302M payloads, 24-bit stereo and 20-bit 6 channels.
  for (const auto& f : {depacketizer::AudioFormat{2, 48000, 24}, depacketizer::AudioFormat{6, 48000, 20}}) {
    Input in = {0};
    const auto p = depacketizer::encode_s302m(ramp(f, 40));
    in.insert(in.end(), p.begin(), p.end());
    out.push_back(in);
  }
  // 1: a WAVE descriptor's items, and a PCM element read as 3 channels of 16 bits.
  Input desc = {1};
  const auto items = depacketizer::sound_descriptor_items({2, 48000, 24}, 25, 1);
  desc.insert(desc.end(), items.begin(), items.end());
  out.push_back(desc);
  Input pcm = {1, 2, 4};
  const auto element = depacketizer::encode_pcm_element(ramp({3, 48000, 16}, 30));
  pcm.insert(pcm.end(), element.begin() + 2, element.end());
  out.push_back(pcm);
  // 2: an MXF stream in RTP: header with a sound descriptor, four content packages.
  Input mxf = {2};
  packetizer::RtpPacketizer rtp(0xABCD, 96, 65530, 400);
  std::vector<std::vector<std::uint8_t>> packets;
  const auto d = packetizer::mxf_sound_descriptor({2, 48000, 24}, 25, 1);
  for (const auto& k : {packetizer::mxf_partition_pack(true, 0, d.size()), packetizer::mxf_primer_pack(), d}) rtp.packetize(k, 0, packets);
  for (std::uint32_t n = 0; n < 4; ++n)
    for (const auto& k : {packetizer::mxf_picture_element(codestream()), packetizer::mxf_sound_element(ramp({2, 48000, 24}, 96))})
      rtp.packetize(k, n * 3600, packets);
  for (const auto& p : packets) append_datagram(mxf, p);
  out.push_back(mxf);
  // 3: a TS of three frames with ST 302M.
  packetizer::TsMuxer mux(test::ts_config_with_sound(0x0101));
  Input ts = {3};
  for (std::uint64_t n = 0; n < 3; ++n) {
    std::vector<std::uint8_t> bytes;
    const auto cs = codestream();
    mux.mux_frame({cs}, n * 3600, {}, bytes);
    mux.mux_audio(ramp({2, 48000, 16}, 192), n * 3600, bytes);
    ts.insert(ts.end(), bytes.begin(), bytes.end());
  }
  out.push_back(ts);
  return out;
}

}  // namespace

TEST(AudioFuzzReplay, CorpusAndMutations) {
  std::vector<Seed> seeds;
  for (const auto& in : inputs()) seeds.push_back({"audio_" + std::to_string(seeds.size()) + ".bin", in});
  replay(fuzz_audio, "audio", seeds, {.rounds = 600, .seed = 160, .keep = 1});
}
