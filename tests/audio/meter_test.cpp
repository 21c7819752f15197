// Level meters against known signals; the WAV dump reads back in FFmpeg's terms.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <numbers>

#include "audio/meter.hpp"
#include "audio/wav.hpp"

namespace j2k::audio {
namespace {

using depacketizer::AudioBlock;
using depacketizer::AudioFormat;

AudioBlock sine(const AudioFormat& f, double freq, double peak_dbfs, double seconds, int silent_channel = -1) {
  AudioBlock b;
  b.format = f;
  const std::size_t frames = static_cast<std::size_t>(seconds * f.sample_rate);
  const double a = std::ldexp(1.0, f.bits - 1) * std::pow(10.0, peak_dbfs / 20.0);
  for (std::size_t i = 0; i < frames; ++i)
    for (int c = 0; c < f.channels; ++c)
      b.samples.push_back(c == silent_channel ? 0
                                              : static_cast<std::int32_t>(std::lround(
                                                    a * std::sin(2 * std::numbers::pi * freq * static_cast<double>(i) / f.sample_rate))));
  return b;
}

TEST(LevelMeter, SineReadsTheBs1770Level) {
  LevelMeter m;
  m.push(sine({2, 48000, 24}, 997, -20, 1.0));
  const auto l = m.levels();
  ASSERT_EQ(l.size(), 2u);
  for (const auto& c : l) {
    EXPECT_NEAR(c.peak_dbfs, -20.0, 0.05);
    EXPECT_NEAR(c.rms_dbfs, -23.01, 0.05);
    EXPECT_NEAR(c.momentary_db, -23.0, 0.2);  // K-weighting is ~+0.7 dB at 1 kHz, minus 0.691
    EXPECT_FALSE(c.silent);
    EXPECT_FALSE(c.clipping);
  }
}

TEST(LevelMeter, KWeightingCutsLowFrequencies) {
  LevelMeter m;
  m.push(sine({1, 48000, 24}, 20, -20, 2.0));
  EXPECT_LT(m.levels()[0].momentary_db, -30.0);  // the RLB high-pass takes ~14 dB off at 20 Hz
  EXPECT_NEAR(m.levels()[0].rms_dbfs, -23.0, 0.1);
}

// Review 2026-11-29: the 2 s peak hold fell, when it expired, to the current sample rather
// than the highest peak of the last 2 s: after a -0.1 dBFS peak and a -0.9 dBFS one 1.8 s
// later, the hold read about -26 dBFS at 2.0 s, below the meter's own peak.
TEST(LevelMeter, ThePeakHoldIsTheHighestPeakOfTheLastTwoSeconds) {
  LevelMeter m;
  const AudioFormat f{1, 48000, 16};
  auto tone = [&](double dbfs, double seconds) { m.push(sine(f, 997, dbfs, seconds)); };
  tone(-0.1, 0.1);   // the loudest, at 0 s
  tone(-30, 1.7);
  tone(-0.9, 0.1);   // 1.8 s
  tone(-30, 0.35);   // 2.25 s: the first peak is over 2 s old, the second is not
  auto l = m.levels();
  EXPECT_NEAR(l[0].peak_hold_dbfs, -0.9, 0.15);
  tone(-30, 2.0);    // both over 2 s old: the hold is the tone's own level
  l = m.levels();
  EXPECT_NEAR(l[0].peak_hold_dbfs, -30, 0.15);
}

TEST(LevelMeter, SilenceAndClippingPerChannel) {
  LevelMeter m;
  m.push(sine({2, 48000, 16}, 1000, 0, 2.5, /*silent_channel=*/1));  // channel 1 silent, channel 0 at full scale
  const auto l = m.levels();
  EXPECT_TRUE(l[1].silent);
  EXPECT_FALSE(l[0].silent);
  EXPECT_TRUE(l[0].clipping);
  EXPECT_FALSE(l[1].clipping);
  EXPECT_EQ(m.silence_events(), 1u);
  EXPECT_EQ(m.clipping_events(), 1u);
}

// Review 2026-11-25: silence was judged on each sample's peak, not the RMS the option names:
// a channel of hiss at -70 dBFS RMS (peaks near -56 dBFS) was never reported silent.
TEST(LevelMeter, HissBelowTheSilenceLevelIsSilent) {
  const AudioFormat f{2, 48000, 24};
  AudioBlock b;
  b.format = f;
  std::uint32_t state = 12345;
  const double full = std::ldexp(1.0, f.bits - 1);
  const double rms = full * std::pow(10.0, -71.0 / 20.0), click = full * std::pow(10.0, -55.0 / 20.0);
  for (int i = 0; i < 3 * f.sample_rate; ++i) {
    // Channel 0: uniform noise of RMS -71 dBFS (a uniform on [-a, a] has RMS a / sqrt(3)) with
    // a click at -55 dBFS every 10 ms: about -70.7 dBFS RMS. Channel 1: a tone at -50 dBFS.
    state = state * 1664525u + 1013904223u;
    const double u = static_cast<double>(state >> 8) / static_cast<double>(1u << 24) * 2.0 - 1.0;
    b.samples.push_back(static_cast<std::int32_t>(std::lround(i % 480 == 7 ? click : u * rms * std::sqrt(3.0))));
    b.samples.push_back(static_cast<std::int32_t>(
        std::lround(std::ldexp(1.0, f.bits - 1) * std::pow(10.0, -50.0 / 20.0) * std::sin(2 * std::numbers::pi * 997 * i / 48000.0))));
  }
  LevelMeter m;
  m.push(b);
  const auto l = m.levels();
  EXPECT_NEAR(l[0].rms_dbfs, -70.7, 0.5);
  EXPECT_GT(l[0].peak_dbfs, -60.0) << "its peaks are above the silence level";
  EXPECT_TRUE(l[0].silent);
  EXPECT_FALSE(l[1].silent);
  EXPECT_EQ(m.silence_events(), 1u);
}

TEST(Wav, DumpHasTheHeaderAndSamples) {
  const auto path = (std::filesystem::temp_directory_path() / "j2k_wav_test.wav").string();
  const AudioFormat f{2, 48000, 24};
  const AudioBlock tone = lineup_tone(f, 0, 4800);
  {
    auto w = WavWriter::create(path, f);
    ASSERT_TRUE(w);
    ASSERT_TRUE((*w)->write(tone));
    EXPECT_FALSE((*w)->write(lineup_tone({4, 48000, 24}, 0, 10)));  // format change refused
  }
  std::ifstream in(path, std::ios::binary);
  std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(in)), {});
  ASSERT_EQ(bytes.size(), 68u + 4800u * 6u);
  EXPECT_EQ(std::string(bytes.begin(), bytes.begin() + 4), "RIFF");
  EXPECT_EQ(std::string(bytes.begin() + 8, bytes.begin() + 12), "WAVE");
  // The samples after the 68-byte header are the tone's, little-endian 24-bit.
  for (std::size_t i = 0; i < tone.samples.size(); i += 997) {
    const std::size_t at = 68 + 3 * i;
    std::int32_t v = bytes[at] | bytes[at + 1] << 8 | bytes[at + 2] << 16;
    if (v & 0x800000) v -= 1 << 24;
    EXPECT_EQ(v, tone.samples[i]) << i;
  }
  std::filesystem::remove(path);
}

TEST(LineupTone, ChannelsAreIdentifiedByTheirGaps) {
  const AudioFormat f{4, 48000, 24};
  const AudioBlock t = lineup_tone(f, 0, 48000);  // the first second of the 3 s cycle
  for (int c = 0; c < 4; ++c) {
    // Silent from the start for 250 ms per channel number, then the tone (which only
    // passes zero every 24 samples).
    std::size_t first_sound = 0;
    while (first_sound < 48000 && t.samples[first_sound * 4 + static_cast<std::size_t>(c)] == 0) ++first_sound;
    EXPECT_NEAR(static_cast<double>(first_sound), 12000.0 * (c + 1), 2.0) << "channel " << c;
  }
}

TEST(LineupTone, AtFullScaleItClipsInsteadOfWrapping) {
  const AudioFormat f{2, 48000, 24};
  const auto b = lineup_tone(f, 0, 48000, 0.0);
  const auto [lo, hi] = std::minmax_element(b.samples.begin(), b.samples.end());
  EXPECT_EQ(*hi, (1 << 23) - 1);
  EXPECT_GE(*lo, -(1 << 23));
  LevelMeter m;
  m.push(b);
  EXPECT_TRUE(m.levels()[0].clipping);
}

}  // namespace
}  // namespace j2k::audio
