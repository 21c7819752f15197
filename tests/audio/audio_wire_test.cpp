// Sound on the wire: ST 302M as FFmpeg packs it, MXF PCM elements and descriptors, and the
// per-frame sample counts.
#include <gtest/gtest.h>

#include <array>
#include <random>

#include "depacketizer/audio.hpp"
#include "hex.hpp"

namespace j2k::depacketizer {
namespace {

using test::hex;

/// Two stereo sample pairs of an ST 302M payload FFmpeg wrote decode at `bits` to `want`.
void expect_ffmpeg_pairs(const char* payload, int bits, const std::array<std::int32_t, 4>& want) {
  auto b = decode_s302m(hex(payload));
  ASSERT_TRUE(b) << b.error().message;
  EXPECT_EQ(b->format, (AudioFormat{2, 48000, bits}));
  ASSERT_EQ(b->samples.size(), 4u);
  for (std::size_t i = 0; i < 4; ++i) EXPECT_EQ(b->samples[i], want[i]) << "sample " << i;
}

// The first two sample pairs of PES payloads FFmpeg 5.1's s302m encoder wrote for a stereo
// WAV whose samples are L = 0x1234 + i, R = 0x0ABC + 3i (16-bit) and L = 0x123450 + i,
// R = 0x0ABC00 + 3i (24-bit), with the header's size rewritten for two pairs.
TEST(S302m, DecodesWhatFfmpegWrote16Bit) {
  expect_ffmpeg_pairs("000A0000" "2c4813d500" "ac480fd500", 16, {0x1234, 0x0ABC, 0x1235, 0x0ABF});
}

TEST(S302m, DecodesWhatFfmpegWrote24Bit) {
  expect_ffmpeg_pairs("000E0020" "0a2c481003d500" "8a2c480c03d500", 24, {0x123450, 0x0ABC00, 0x123451, 0x0ABC03});
}

TEST(S302m, RoundTripsEveryDepthAndChannelCount) {
  std::mt19937 rng(302);
  for (int bits : {16, 20, 24})
    for (int channels : {2, 4, 6, 8}) {
      AudioBlock in;
      in.format = {channels, 48000, bits};
      std::uniform_int_distribution<std::int32_t> d(-(1 << (bits - 1)), (1 << (bits - 1)) - 1);
      for (int i = 0; i < 1920 * channels; ++i) in.samples.push_back(d(rng));
      const auto bytes = encode_s302m(in);
      auto out = decode_s302m(bytes);
      ASSERT_TRUE(out) << bits << " " << channels << ": " << out.error().message;
      EXPECT_EQ(out->format, in.format);
      EXPECT_EQ(out->samples, in.samples) << bits << " bits, " << channels << " channels";
    }
}

TEST(S302m, HostilePayloadsAreRefused) {
  EXPECT_FALSE(decode_s302m(hex("0000")));                   // no header
  EXPECT_FALSE(decode_s302m(hex("00FF0000" "2c4813d500")));  // size lies
  EXPECT_FALSE(decode_s302m(hex("00040000" "2c4813d5")));    // not a whole pair
  EXPECT_FALSE(decode_s302m(hex("00070030" "0a2c481003d500")));  // bits code 3 reserved
  EXPECT_FALSE(decode_s302m(hex("00054000" "2c4813d500")));  // 4 channels need two pairs a frame
}

TEST(MxfSound, PcmElementsRoundTripAndBadSizesAreRefused) {
  for (int bits : {16, 20, 24}) {
    AudioBlock in;
    in.format = {2, 48000, bits};
    for (int i = 0; i < 1920; ++i) {
      in.samples.push_back((i * 37) % (1 << (bits - 1)));
      in.samples.push_back(-((i * 11) % (1 << (bits - 1))));
    }
    const auto bytes = encode_pcm_element(in);
    auto out = decode_pcm_element(bytes, in.format);
    ASSERT_TRUE(out) << out.error().message;
    EXPECT_EQ(out->samples, in.samples);
  }
  std::vector<std::uint8_t> odd(11521, 0);
  EXPECT_FALSE(decode_pcm_element(odd, {2, 48000, 24}));
  std::vector<std::uint8_t> huge(6 * 48001, 0);
  auto h = decode_pcm_element(huge, {2, 48000, 24});
  ASSERT_FALSE(h);
  EXPECT_EQ(h.error().kind, ErrorKind::limit);
  EXPECT_FALSE(decode_pcm_element(odd, {0, 48000, 24}));
  EXPECT_FALSE(decode_pcm_element(odd, {17, 48000, 24}));
}

TEST(MxfSound, DescriptorItemsReadBackAndImplausibleOnesAreRefused) {
  const auto items = sound_descriptor_items({8, 48000, 24}, 25, 1);
  auto d = parse_sound_descriptor(items, false);
  ASSERT_TRUE(d);
  auto f = d->format();
  ASSERT_TRUE(f) << f.error().message;
  EXPECT_EQ(*f, (AudioFormat{8, 48000, 24}));
  SoundDescriptor bad = *d;
  bad.channels = 4096;
  EXPECT_FALSE(bad.format());
  bad = *d;
  bad.bits = 4294967295u;
  EXPECT_FALSE(bad.format());
  bad = *d;
  bad.block_align = 7;
  EXPECT_FALSE(bad.format());
  std::vector<std::uint8_t> cut = items;
  cut[3] = 0xFF;  // first item claims 255 bytes
  EXPECT_FALSE(parse_sound_descriptor(cut, false));
}

TEST(MxfSound, SamplesPerFrame) {
  EXPECT_EQ(samples_in_frame(48000, 25, 1, 0), 1920);
  EXPECT_EQ(samples_in_frame(48000, 50, 1, 7), 960);
  const int seq[] = {1602, 1601, 1602, 1601, 1602};
  for (std::uint64_t i = 0; i < 20; ++i) EXPECT_EQ(samples_in_frame(48000, 30000, 1001, i), seq[i % 5]) << i;
  int total = 0;
  for (std::uint64_t i = 0; i < 5; ++i) total += samples_in_frame(48000, 60000, 1001, i);
  EXPECT_EQ(total, 4004);
}

}  // namespace
}  // namespace j2k::depacketizer
