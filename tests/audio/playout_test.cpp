// The receivers' sound path (queue, meters, events, WAV dump) and the player's playout in
// step with the pictures on screen, on simulated clocks.
#include <gtest/gtest.h>
#include <spdlog/spdlog.h>

#include <cmath>
#include <filesystem>
#include <functional>
#include <fstream>
#include <thread>

#include "audio/audio_monitor.hpp"
#include "audio/playout.hpp"

namespace j2k::audio {
namespace {

using depacketizer::AudioBlock;
using depacketizer::AudioFormat;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

/// 1920 frames of silence (25 fps at 48 kHz) with a click at the start when asked.
AudioBlock frame_sound(const AudioFormat& f, std::uint32_t ts, bool click, std::int32_t level = 0) {
  AudioBlock b;
  b.format = f;
  b.rtp_timestamp = ts;
  b.samples.assign(1920 * static_cast<std::size_t>(f.channels), level);
  if (click)
    for (std::size_t i = 0; i < 48 * static_cast<std::size_t>(f.channels); ++i) b.samples[i] = 1 << (f.bits - 2);
  return b;
}

Clock::duration ms(double v) { return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double, std::milli>(v)); }

TEST(Playout, TheClickIsHeardWhenItsPictureIsShown) {
  // Pictures at 25 fps shown 73 ms after their nominal time, sound pulled 10 ms at a time;
  // the frame with the click (frame 30) is shown at W0 + 30 × 40 ms + 73 ms.
  const AudioFormat f{2, 48000, 24};
  AudioPlayout p;
  std::vector<Clock::time_point> heard;
  p.set_onset_hook([&](Clock::time_point t) { heard.push_back(t); });
  const std::uint32_t t0 = 4294960000u;  // the RTP clock wraps during the test
  const Clock::time_point w0 = Clock::now();
  std::vector<std::int16_t> out(480 * 2);
  Clock::time_point device = w0;  // the moment the next pulled frame is heard
  for (int k = 0; k < 60; ++k) {
    const std::uint32_t ts = t0 + 3600u * static_cast<std::uint32_t>(k);
    p.push(frame_sound(f, ts, k == 30));
    p.on_video_shown(ts, w0 + ms(40.0 * k + 73));
    for (int i = 0; i < 4; ++i) {
      p.pull(out.data(), 480, device);
      device += ms(10);
    }
  }
  ASSERT_EQ(heard.size(), 1u);
  const double offset = std::chrono::duration<double, std::milli>(heard[0] - (w0 + ms(30 * 40.0 + 73))).count();
  EXPECT_LT(std::abs(offset), 1.0) << "click heard " << offset << " ms from its picture";
  const auto s = p.stats();
  EXPECT_TRUE(s.on_picture_clock);
  EXPECT_GT(s.frames_played, 48000u);
  EXPECT_LE(s.corrections, 3u) << "after the first alignment a steady stream plays untouched";
}

TEST(Playout, SettlesOnThePictureClockWithinTheTolerance) {
  // The pictures start being shown 10 ms later (within the 15 ms tolerance, so no jump): the
  // sound is slewed a frame per pull until the click is heard with its picture again.
  const AudioFormat f{2, 48000, 24};
  AudioPlayout p;
  std::vector<Clock::time_point> heard;
  p.set_onset_hook([&](Clock::time_point t) { heard.push_back(t); });
  const Clock::time_point w0 = Clock::now();
  std::vector<std::int16_t> out(240 * 2);
  Clock::time_point device = w0;
  auto shown_at = [&](int k) { return w0 + ms(40.0 * k + (k < 10 ? 73 : 83)); };
  for (int k = 0; k < 100; ++k) {
    const std::uint32_t ts = 3600u * static_cast<std::uint32_t>(k);
    p.push(frame_sound(f, ts, k == 90));
    p.on_video_shown(ts, shown_at(k));
    for (int i = 0; i < 8; ++i) {
      p.pull(out.data(), 240, device);
      device += ms(5);
    }
  }
  ASSERT_EQ(heard.size(), 1u);
  const double offset = std::chrono::duration<double, std::milli>(heard[0] - shown_at(90)).count();
  EXPECT_LT(std::abs(offset), 1.1) << "click heard " << offset << " ms from its picture";
  EXPECT_EQ(p.stats().corrections, 0u) << "no jump: the sound slid over";
  EXPECT_GT(p.stats().frames_slewed, 400u);
}

// Review 2026-11-25: --audio 3,4 on a stereo stream played silence without a word.
TEST(Playout, ChosenChannelsTheStreamLacksAreSaid) {
  PlayoutOptions o;
  o.channels = {2, 3};  // --audio 3,4
  AudioPlayout p(o);
  p.push(frame_sound({2, 48000, 16}, 0, false, 100));
  EXPECT_EQ(p.stats().missing_channels, (std::vector<int>{3, 4}));
  p.push(frame_sound({4, 48000, 16}, 3600, false, 100));
  EXPECT_TRUE(p.stats().missing_channels.empty());
}

TEST(Playout, WithoutPicturesTheSoundPlaysOnItsOwnClock) {
  const AudioFormat f{2, 48000, 16};
  AudioPlayout p;
  std::vector<std::int16_t> out(960 * 2);
  Clock::time_point device = Clock::now();
  for (int k = 0; k < 20; ++k) p.push(frame_sound(f, 1000u + 3600u * static_cast<std::uint32_t>(k), false, 1000 + k));
  std::vector<std::int16_t> all;
  for (int i = 0; i < 45; ++i) {
    p.pull(out.data(), 960, device);
    device += ms(20);
    all.insert(all.end(), out.begin(), out.end());
  }
  // 100 ms of silence first (the free-run delay), then every sample in order.
  std::size_t first = 0;
  while (first < all.size() && all[first] == 0) ++first;
  EXPECT_EQ(first, 4800u * 2);
  for (int k = 0; k < 20; ++k)
    EXPECT_EQ(all[first + static_cast<std::size_t>(k) * 1920 * 2], 1000 + k) << k;
  EXPECT_FALSE(p.stats().on_picture_clock);
  EXPECT_EQ(p.stats().frames_played, 20u * 1920);
}

// Review 2026-11-29: without pictures the sound's own clock was anchored once and never
// again: after the stream's time jumped back (a looped capture, a sender started again) or
// after an underrun, every block was "late" against the old anchor and skipped, or "early"
// and held in silence for good. A jump or an empty buffer anchors it afresh.
TEST(Playout, WithoutPicturesTheSoundRecoversAfterAJumpAndAGap) {
  const AudioFormat f{2, 48000, 16};
  AudioPlayout p;
  std::vector<std::int16_t> out(960 * 2);
  Clock::time_point device = Clock::now();
  auto play = [&](std::uint32_t first_ts, int blocks, int pulls) {
    for (int k = 0; k < blocks; ++k) p.push(frame_sound(f, first_ts + 3600u * static_cast<std::uint32_t>(k), false, 500));
    for (int i = 0; i < pulls; ++i) {
      p.pull(out.data(), 960, device);
      device += ms(20);
    }
  };
  play(90000u * 100, 25, 60);  // a second of sound, played out, then 200 ms of nothing
  const auto first = p.stats().frames_played;
  EXPECT_EQ(first, 25u * 1920);
  play(90000u * 40, 25, 60);  // the stream's time 60 s back (a loop): a second more
  EXPECT_EQ(p.stats().frames_played, 2 * first) << "skipped " << p.stats().frames_skipped;
  play(90000u * 300, 25, 60);  // and 260 s ahead, after a pause
  EXPECT_EQ(p.stats().frames_played, 3 * first) << "silence " << p.stats().frames_silence;
}

/// Two passes of a stream as the player meets them: each frame's sound arrives with it (a
/// quiet level, a click in frame `click`), its picture is shown 200 ms later, the device asks
/// 10 ms at a time for sound it plays 20 ms later. `second` is when the second pass (its time
/// 9 s before the first's) begins to arrive; 25 fps. `each` is called after every pull.
struct TwoPasses {
  int frames_per_pass = 50;
  double second = 2000;
  std::size_t click = 60;
  double until = 4000;
  std::vector<std::int16_t> all;  // what was played, interleaved stereo, from the first pull on
  std::vector<Clock::time_point> heard;
  Clock::time_point w0 = Clock::now();

  double arrives_ms(std::size_t f) const {
    const auto n = static_cast<std::size_t>(frames_per_pass);
    return f < n ? 40.0 * static_cast<double>(f) : second + 40.0 * static_cast<double>(f - n);
  }
  void run(AudioPlayout& p, const std::function<void(double now)>& each = {}) {
    const AudioFormat f{2, 48000, 16};
    p.set_onset_hook([&](Clock::time_point t) { heard.push_back(t); });
    const auto n = static_cast<std::size_t>(frames_per_pass);
    auto ts = [&](std::size_t k) { return (k < n ? 900000u : 90000u) + 3600u * static_cast<std::uint32_t>(k % n); };
    std::size_t pushed = 0, shown = 0;
    std::vector<std::int16_t> out(480 * 2);
    for (double now = 0; now < until; now += 10) {
      for (; pushed < 2 * n && arrives_ms(pushed) <= now; ++pushed) p.push(frame_sound(f, ts(pushed), pushed == click, 100));
      for (; shown < pushed && arrives_ms(shown) + 200 <= now; ++shown) p.on_video_shown(ts(shown), w0 + ms(arrives_ms(shown) + 200));
      p.pull(out.data(), 480, w0 + ms(now + 20));
      if (each) each(now);
      all.insert(all.end(), out.begin(), out.end());
    }
  }
  /// The click heard against its picture, ms (+: after it).
  double click_offset_ms() const { return std::chrono::duration<double, std::milli>(heard.at(0) - (w0 + ms(arrives_ms(click) + 200))).count(); }
};

// Review 2026-11-29 (left open since 2026-11-28): a looped capture (or a sender started
// again) jumps the stream's time back. The sound after the jump arrives while the old pass's
// last pictures are still waiting to be shown: the playout cleared the old sound's tail and
// held the new sound against the old pictures' clock, skipping it as "late" until the new
// pictures were on screen. A quarter to half a second of sound was lost at each loop.
TEST(Playout, ALoopPlaysOnWithoutAGapAndInStepWithItsPictures) {
  AudioPlayout p;
  TwoPasses run;  // the second pass right after the first (loop at 2.2 s), a click in its frame 10
  std::uint64_t before_loop_corrections = 0;
  run.run(p, [&](double now) {
    if (now == 2000) before_loop_corrections = p.stats().corrections;
  });
  // Sound without a hole from when it settled on the pictures (it starts on its own clock
  // before the first picture, then moves) to the end, across the loop.
  std::size_t holes = 0;
  for (std::size_t i = 1000 * 48 * 2; i < run.all.size(); i += 2) holes += run.all[i] == 0;
  EXPECT_EQ(holes, 0u) << "frames of silence inside the sound (about " << holes / 48 << " ms)";
  const auto s = p.stats();
  EXPECT_EQ(s.frames_skipped, 0u);
  EXPECT_EQ(s.timeline_changes, 1u);
  ASSERT_EQ(run.heard.size(), 1u) << "the click";
  // The new pass goes on where the old one was (here still sliding off the few ms its start
  // left): within the tolerance of its pictures, not moved by a jump.
  EXPECT_LT(std::abs(run.click_offset_ms()), 15.0) << "click heard " << run.click_offset_ms() << " ms from its picture";
  EXPECT_EQ(s.corrections, before_loop_corrections) << "no jump at the loop";
}

// Review of that fix: with a pause at the loop's seam the old sound has run dry when the new
// pass's arrives, and that sound was still measured against the old pictures' clock and
// skipped as late until its pictures came. It now waits for them.
TEST(Playout, AfterAPauseAtTheSeamTheNewPassWaitsForItsPictures) {
  AudioPlayout p;
  TwoPasses run;
  run.frames_per_pass = 25;
  run.second = 1400;  // 400 ms after the first pass's last frame
  run.click = 30;
  run.until = 2600;
  std::uint64_t skipped_before = 0;
  run.run(p, [&](double now) {
    if (now == 1300) skipped_before = p.stats().frames_skipped;
  });
  const auto s = p.stats();
  EXPECT_EQ(s.timeline_changes, 1u);
  // At most what the device asked for ahead of the first new picture (20 ms here).
  EXPECT_LE(s.frames_skipped - skipped_before, 1920u) << "the new pass's sound was skipped as late";
  ASSERT_EQ(run.heard.size(), 1u) << "the click";
  EXPECT_LT(std::abs(run.click_offset_ms()), 15.0) << "click heard " << run.click_offset_ms() << " ms from its picture";
}

// The other way round: the new pass's pictures come while the old sound still plays (sound
// that lags its pictures). The old sound gives way to the sound that fits the pictures.
TEST(Playout, SoundThatOutlastsItsPicturesGivesWayToTheNextTimeline) {
  const AudioFormat f{2, 48000, 16};
  AudioPlayout p;
  const Clock::time_point w0 = Clock::now();
  std::vector<std::int16_t> out(480 * 2);
  for (int k = 0; k < 25; ++k) p.push(frame_sound(f, 900000u + 3600u * static_cast<std::uint32_t>(k), false, 500));
  for (int k = 0; k < 10; ++k) p.push(frame_sound(f, 90000u + 3600u * static_cast<std::uint32_t>(k), false, 700));
  // The old pass's pictures for 400 ms, then the new pass's.
  for (int k = 0; k < 10; ++k) p.on_video_shown(900000u + 3600u * static_cast<std::uint32_t>(k), w0 + ms(40.0 * k));
  for (double now = 0; now < 400; now += 10) p.pull(out.data(), 480, w0 + ms(now));
  p.on_video_shown(90000u, w0 + ms(400));
  p.pull(out.data(), 480, w0 + ms(400));
  EXPECT_EQ(out[0], 700) << "the new pass's sound plays with the new pass's pictures";
  const auto s = p.stats();
  EXPECT_EQ(s.timeline_changes, 1u);
  EXPECT_EQ(s.frames_skipped, 15u * 1920) << "what was left of the old pass's sound";
}

// Review 2026-11-29: when the playing timeline ran out within a pull and the next one (the
// stream's time had jumped) could not fill the rest of it either, the underrun went uncounted:
// switching timelines marked the sound as not playing. The same sound without the jump counts it.
TEST(Playout, RunningDryRightAfterATimelineSwitchIsAnUnderrun) {
  const AudioFormat f{2, 48000, 16};
  auto block = [&](std::uint32_t ts, std::size_t frames) {
    AudioBlock b;
    b.format = f;
    b.rtp_timestamp = ts;
    b.samples.assign(frames * 2, 300);
    return b;
  };
  // `first` frames, then `second` more: right after them, or 9 s of stream time back (a loop:
  // a timeline of its own). The sound starts on a pull's boundary (100 ms: five pulls).
  auto underruns = [&](std::size_t first, std::size_t second, bool jump) {
    AudioPlayout p;
    p.push(block(900000u, first));
    p.push(block(jump ? 90000u : 900000u + static_cast<std::uint32_t>(first * 90000 / 48000), second));
    std::vector<std::int16_t> out(960 * 2);
    const Clock::time_point device = Clock::now();
    for (int i = 0; i < 12; ++i) p.pull(out.data(), 960, device + ms(20.0 * i));
    EXPECT_EQ(p.stats().frames_played, first + second) << (jump ? "with the jump" : "without");
    EXPECT_EQ(p.stats().timeline_changes, jump ? 1u : 0u);
    return p.stats().underruns;
  };
  // The first timeline ends within a pull, or (review of the fix) on a pull's end, so that the
  // next pull begins with the switch.
  for (auto [first, second] : {std::pair<std::size_t, std::size_t>{2400, 100}, {1920, 480}}) {
    const std::uint64_t without_jump = underruns(first, second, false);
    EXPECT_GE(without_jump, 1u);
    EXPECT_EQ(underruns(first, second, true), without_jump)
        << "an underrun right after the switch went uncounted (" << first << " + " << second << ")";
  }
}

TEST(Playout, ChannelsMuteAndTheBufferBound) {
  const AudioFormat f{4, 48000, 24};
  PlayoutOptions o;
  o.channels = {2};  // the third channel, to both sides
  o.max_buffer_s = 0.5;
  AudioPlayout p(o);
  EXPECT_EQ(p.sample_rate(), 0) << "no output is opened before sound arrives";
  AudioBlock b = frame_sound(f, 0, false);
  for (std::size_t i = 0; i < b.frames(); ++i) b.samples[i * 4 + 2] = 0x123400;
  for (int k = 0; k < 20; ++k) {
    b.rtp_timestamp = 3600u * static_cast<std::uint32_t>(k);
    p.push(b);
  }
  EXPECT_EQ(p.stats().frames_dropped, 20u * 1920 - 24000) << "half a second is kept";
  std::vector<std::int16_t> out(100 * 2);
  const auto t = Clock::now();
  p.pull(out.data(), 100, t);
  p.pull(out.data(), 100, t + 200ms);  // after the free-run delay
  EXPECT_EQ(out[0], 0x1234);
  EXPECT_EQ(out[1], 0x1234);
  p.set_muted(true);
  p.pull(out.data(), 100, t + 200ms + ms(100.0 / 48));
  EXPECT_EQ(out[0], 0);
  EXPECT_EQ(out[1], 0);
  EXPECT_EQ(p.stats().frames_played, 200u) << "muted sound is consumed, not held";
}

TEST(SyncProbe, PairsEachClickWithTheNearestFlash) {
  SyncProbe probe;
  const auto t = Clock::now();
  for (int k = 0; k < 5; ++k) probe.on_flash(t + std::chrono::seconds(k));
  for (int k = 0; k < 5; ++k) probe.on_click(t + std::chrono::seconds(k) + ms(k - 2.0));
  probe.on_click(t + std::chrono::seconds(20));  // nothing near it
  const auto r = probe.report();
  EXPECT_EQ(r.pairs, 5u);
  EXPECT_EQ(r.clicks, 6u);
  EXPECT_NEAR(r.mean_ms, 0.0, 1e-6);
  EXPECT_NEAR(r.min_ms, -2.0, 1e-6);
  EXPECT_NEAR(r.max_abs_ms, 2.0, 1e-6);
}

TEST(AudioMonitor, MetersDumpsAndReportsSilenceAndClipping) {
  spdlog::set_level(spdlog::level::off);
  const std::string path = "audio_monitor_test.wav";
  std::vector<AudioEvent> events;
  std::mutex m;
  std::uint64_t forwarded = 0;
  auto made = AudioMonitor::create({MeterOptions{-60, 0.5}, path},
                                   [&](const AudioEvent& e) { std::lock_guard l(m); events.push_back(e); },
                                   [&](const AudioBlock&) { ++forwarded; });
  ASSERT_TRUE(made);
  auto& mon = **made;
  const AudioFormat f{2, 48000, 16};
  for (int k = 0; k < 50; ++k) {
    AudioBlock b = frame_sound(f, 3600u * static_cast<std::uint32_t>(k), false, k < 25 ? 3000 : 0);
    if (k == 10) b.samples[1] = 32767;  // channel 2 touches full scale
    if (k < 25)
      for (std::size_t i = 0; i < b.samples.size(); i += 2) b.samples[i] = (i / 2) % 2 ? 3000 : -3000;
    mon.push(std::move(b));
  }
  mon.stop();
  const auto s = mon.snapshot();
  EXPECT_TRUE(s.seen);
  EXPECT_EQ(s.blocks, 50u);
  EXPECT_EQ(s.sample_frames, 50u * 1920);
  EXPECT_EQ(s.dump_frames, 50u * 1920);
  EXPECT_EQ(forwarded, 50u);
  ASSERT_EQ(s.totals.size(), 2u);
  EXPECT_NEAR(s.totals[1].peak_dbfs, 0.0, 0.01);
  EXPECT_NEAR(s.totals[0].peak_dbfs, 20 * std::log10(3000.0 / 32768), 0.01);
  EXPECT_NEAR(s.totals[0].rms_dbfs, 20 * std::log10(3000.0 / 32768) - 10 * std::log10(2.0), 0.05) << "half the time at ±3000";
  int silences = 0, clips = 0;
  for (const auto& e : events) {
    silences += e.kind == AudioEvent::Kind::silence;
    clips += e.kind == AudioEvent::Kind::clipping && e.channel == 2;
  }
  EXPECT_EQ(silences, 2) << "both channels fall silent after the 25th block";
  EXPECT_EQ(clips, 1);
  const auto header = std::filesystem::file_size(path) - 50u * 1920 * 4;
  EXPECT_TRUE(header == 44 || header == 68) << "RIFF/WAVE header, then every sample: " << header;
  std::filesystem::remove(path);
}

// Review 2026-11-25: after 2 channels at -18 dBFS became 8 at -40, channel 1 said peak -18
// and RMS -46 (the new format's sum over every frame of the run), and "seconds" counted the
// run's frames at the new rate.
TEST(AudioMonitor, TotalsStartAfreshWhenTheFormatChanges) {
  spdlog::set_level(spdlog::level::off);
  auto made = AudioMonitor::create({}, {}, {});
  ASSERT_TRUE(made);
  auto& mon = **made;
  auto square = [](const AudioFormat& f, std::int32_t level) {
    AudioBlock b = frame_sound(f, 0, false);
    for (std::size_t i = 0; i < b.samples.size(); ++i) b.samples[i] = (i / static_cast<std::size_t>(f.channels)) % 2 ? level : -level;
    return b;
  };
  const AudioFormat stereo{2, 48000, 16}, eight{8, 96000, 24};
  for (int k = 0; k < 25; ++k) mon.push(square(stereo, 4096));  // -18 dBFS
  for (int k = 0; k < 25; ++k) mon.push(square(eight, 83886));   // -40 dBFS at 24 bits
  mon.stop();
  const auto s = mon.snapshot();
  ASSERT_EQ(s.totals.size(), 8u);
  for (const auto& t : s.totals) {
    EXPECT_NEAR(t.peak_dbfs, -40.0, 0.05);
    EXPECT_NEAR(t.rms_dbfs, -40.0, 0.05);
  }
  const double stereo_s = 25.0 * static_cast<double>(frame_sound(stereo, 0, false).frames()) / 48000;
  const double eight_s = 25.0 * static_cast<double>(frame_sound(eight, 0, false).frames()) / 96000;
  EXPECT_NEAR(s.seconds, stereo_s + eight_s, 1e-9);
  EXPECT_EQ(s.format_sample_frames, 25u * frame_sound(eight, 0, false).frames());
}

TEST(AudioMonitor, AFullQueueDropsAndCountsNeverWaits) {
  std::atomic<bool> release{false};
  AudioMonitorOptions o;
  o.queue_blocks = 4;
  auto made = AudioMonitor::create(o, {}, [&](const AudioBlock&) {
    while (!release.load()) std::this_thread::sleep_for(1ms);  // a stuck consumer
  });
  ASSERT_TRUE(made);
  const AudioFormat f{2, 48000, 16};
  const auto start = Clock::now();
  for (int k = 0; k < 100; ++k) (*made)->push(frame_sound(f, 0, false));
  EXPECT_LT(Clock::now() - start, 5s) << "push never waits for the consumer";
  release = true;
  (*made)->stop();
  const auto s = (*made)->snapshot();
  EXPECT_EQ(s.blocks + s.dropped_queue_full, 100u);
  EXPECT_GE(s.dropped_queue_full, 95u);
}

TEST(AudioMonitor, AnUnwritableDumpIsAnErrorAtOnceAndNoSoundLeavesNoFile) {
  EXPECT_FALSE(AudioMonitor::create({MeterOptions{}, "/nonexistent-dir/x.wav"}));
  spdlog::set_level(spdlog::level::off);
  const std::string path = "audio_monitor_silent.wav";
  auto made = AudioMonitor::create({MeterOptions{}, path});
  ASSERT_TRUE(made);
  EXPECT_TRUE(std::filesystem::exists(path)) << "made at the start, to fail early";
  (*made)->stop();
  EXPECT_FALSE(std::filesystem::exists(path)) << "no sound came: no empty WAV file left behind";
  EXPECT_FALSE((*made)->snapshot().dump_error.empty());
}

}  // namespace
}  // namespace j2k::audio
