// Hostile traffic mixed into a real stream (issue 9, "must show"): j2ksend sends a real
// stream while this test sends, on the same group and port, a junk RTP stream that starts a
// second earlier (valid headers, random payloads), a valid-looking MXF stream of 255-element
// units under another SSRC, RFC 5371 fragments at absurd offsets, runts and non-RTP bytes.
// Every real frame must decode, the others must be counted and listed, and the probe's peak
// memory must stay under a stated bound.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <random>
#include <thread>

#include "net/udp_sender.hpp"
#include "process.hpp"

using namespace j2k;
using j2k::test::bin;
using nlohmann::json;

namespace {

const std::string kCache = std::string(" --cache-dir ") + J2K_TEST_CACHE_DIR;

std::vector<std::uint8_t> rtp(std::uint32_t ssrc, std::uint16_t seq, std::uint32_t ts, bool marker) {
  return {0x80, static_cast<std::uint8_t>((marker ? 0x80 : 0) | 96), static_cast<std::uint8_t>(seq >> 8),
          static_cast<std::uint8_t>(seq), static_cast<std::uint8_t>(ts >> 24), static_cast<std::uint8_t>(ts >> 16),
          static_cast<std::uint8_t>(ts >> 8), static_cast<std::uint8_t>(ts), static_cast<std::uint8_t>(ssrc >> 24),
          static_cast<std::uint8_t>(ssrc >> 16), static_cast<std::uint8_t>(ssrc >> 8), static_cast<std::uint8_t>(ssrc)};
}

bool file_contains(const std::string& path, const std::string& needle) {
  return test::slurp(path).find(needle) != std::string::npos;
}

}  // namespace

TEST(Hostile, MixedHostileTrafficEveryRealFrameDecodesAndMemoryStaysBounded) {
  constexpr long kPeakRssBoundKb = 256 * 1024;  // the stated bound (packet pool, decoders, held packets)
  if (!std::filesystem::exists("/usr/bin/time")) GTEST_SKIP() << "SKIPPED: needs GNU time (/usr/bin/time) for the peak RSS";
  const std::string url = "'rtp://239.10.20.41:5042?iface=127.0.0.1'";
  std::remove("hostile.probe.err");
  test::CommandResult probe;
  std::thread rx([&] {
    probe = test::run("/usr/bin/time -f 'peak-rss-kb %M' " + bin("j2kprobe") + " " + url +
                          " --json --timeout 60 --duration 60 --frames 50 --no-drop --log-level info",
                      "hostile.probe");
  });
  // Wait for the probe to listen (a condition, not a fixed sleep).
  for (int i = 0; i < 3000 && !file_contains("hostile.probe.err", "listening on"); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_TRUE(file_contains("hostile.probe.err", "listening on")) << test::slurp("hostile.probe.err");

  auto tx = net::UdpSender::open({"239.10.20.41", 5042, "127.0.0.1", 1, 8 << 20, ""});
  ASSERT_TRUE(tx.ok()) << tx.error().message;
  std::atomic<bool> stop{false};
  std::atomic<bool> real_started{false};
  std::uint64_t junk_sent = 0, spoofed = 0;
  std::uint32_t real_ssrc = 0;
  std::thread hostile([&] {
    std::mt19937 rng(99);
    std::uint16_t junk_seq = 1, mxf_seq = 1, rfc_seq = 1;
    const auto start = std::chrono::steady_clock::now();
    for (int round = 0; !stop.load(); ++round) {
      // Junk stream: 60 packets/s, valid RTP headers, random payloads.
      auto junk = rtp(0xBAD0BAD0, junk_seq++, static_cast<std::uint32_t>(round * 1500), round % 4 == 0);
      for (std::size_t n = 200 + rng() % 1000; n > 0; --n) junk.push_back(static_cast<std::uint8_t>(rng()));
      (*tx)->send(junk);
      ++junk_sent;
      // Runts and non-RTP bytes.
      std::vector<std::uint8_t> runt(rng() % 12, 0x80);
      (*tx)->send(runt);
      std::vector<std::uint8_t> v1 = {0x40, 96, 0, 1, 0, 0, 0, 0, 1, 2, 3, 4, 5};
      (*tx)->send(v1);
      // The valid-looking attackers start once the real stream is followed (before that,
      // a stream with a valid-looking payload would be a sender like any other).
      if (!real_started && round % 6 == 0) {
        const std::string log = test::slurp("hostile.probe.err");
        const auto at = log.find("following RTP stream SSRC 0x");
        if (at != std::string::npos) {
          real_ssrc = static_cast<std::uint32_t>(std::stoul(log.substr(at + 28, 8), nullptr, 16));
          real_started = true;
        }
      }
      if (real_started.load()) {
        // RFC 5371 fragments at offset 0xFFFFF0 (21 bytes each).
        for (int k = 0; k < 5; ++k) {
          auto far = rtp(0x5371F00D, rfc_seq++, 1234, false);
          far.insert(far.end(), {0x00, 0x00, 0x00, 0x00, 0x00, 0xFF, 0xFF, 0xF0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
          (*tx)->send(far);
        }
        // A valid-looking MXF picture element announcing 255 per unit, one timestamp for ever.
        auto mxf = rtp(0x0BAD0255, mxf_seq++, 777, false);
        mxf.insert(mxf.end(), {0x06, 0x0E, 0x2B, 0x34, 0x01, 0x02, 0x01, 0x01, 0x0D, 0x01, 0x03, 0x01, 0x15, 0xFF,
                               0x08, 0x01, 0x83, 0x10, 0x00, 0x00});
        mxf.resize(1400, 0x5A);
        (*tx)->send(mxf);
        // Spoofed packets with the real sender's SSRC: random numbers, timestamps and payloads.
        for (int k = 0; k < 40; ++k) {
          auto spoof = rtp(real_ssrc, static_cast<std::uint16_t>(rng()), static_cast<std::uint32_t>(rng()), rng() % 2);
          for (std::size_t n = 50 + rng() % 1300; n > 0; --n) spoof.push_back(static_cast<std::uint8_t>(rng()));
          (*tx)->send(spoof);
          ++spoofed;
        }
        for (int k = 0; k < 8; ++k) {
          auto cont = rtp(0x0BAD0255, mxf_seq++, 777, false);
          cont.resize(1400, 0x5A);
          (*tx)->send(cont);
        }
      }
      std::this_thread::sleep_until(start + std::chrono::microseconds(16667) * (round + 1));
    }
  });
  // The junk stream has the port to itself for a second before the real sender starts.
  std::this_thread::sleep_for(std::chrono::seconds(1));
  auto sent = test::run(bin("j2ksend") + " --to " + url + " --size 320x180 --fps 25 --lossless --loop-frames 10 "
                                          "--frames 50 --manifest hostile.tx.json" + kCache,
                        "hostile.send");
  rx.join();
  stop = true;
  hostile.join();
  ASSERT_EQ(sent.exit_code, 0) << sent.err;
  ASSERT_EQ(probe.exit_code, 0) << probe.err;
  auto summary = json::parse(probe.out);
  EXPECT_EQ(summary["frames"]["complete"], 50) << probe.err;
  EXPECT_EQ(summary["frames"]["incomplete"], 0);
  EXPECT_EQ(summary["frames"]["decoded"], 50);
  // Spoofed packets are not believed: no loss invented, none counted as the real stream's.
  // They come from another source than the real sender's: an SSRC collision (RFC 3550 8.2).
  EXPECT_EQ(summary["packets"]["lost"], 0);
  EXPECT_GT(spoofed, 0u);
  EXPECT_GT(summary["packets"]["ssrc_collisions"].get<std::uint64_t>(), spoofed / 2);
  EXPECT_GT(summary["packets"]["malformed"].get<int>(), 0);
  EXPECT_GT(summary["packets"]["foreign_ssrc"].get<std::uint64_t>(), junk_sent / 2);
  // Once the real sender said BYE and went quiet, the valid-looking MXF junk may be followed
  // and the spoofer may take the real SSRC over (the spoofed packets used to keep the ended
  // stream looking alive): neither before.
  const auto bye = probe.err.find("said BYE");
  ASSERT_NE(bye, std::string::npos) << probe.err;
  for (const char* later : {"stream changed from", "now comes from"})
    if (auto at = probe.err.find(later); at != std::string::npos) {
      EXPECT_GT(at, bye) << later << "\n" << probe.err;
    }
  EXPECT_LE(summary["ssrc_changes"].get<int>(), 1);
  EXPECT_LE(summary["source_takeovers"].get<int>(), 1);
  // The real sender's own counts: every packet it sent, no loss, its 50 frames.
  int real_entries = 0;
  for (const auto& e : summary["ssrcs"]) {
    if (e["ssrc"] == real_ssrc) {
      ++real_entries;
      EXPECT_TRUE(e["followed"].get<bool>());
      EXPECT_EQ(e["packets_received"], json::parse(test::slurp("hostile.tx.json"))["packets"]);
      EXPECT_EQ(e["packets_lost"], 0);
      EXPECT_EQ(e["frames_complete"], 50);
    } else {
      EXPECT_TRUE(e["ssrc"] == 0xBAD0BAD0u || e["ssrc"] == 0x5371F00Du || e["ssrc"] == 0x0BAD0255u) << e;
      if (e["ssrc"] != 0x0BAD0255u) {
        EXPECT_FALSE(e["followed"].get<bool>()) << e;
      }
    }
  }
  EXPECT_EQ(real_entries, 1);
  EXPECT_GE(summary["ssrcs"].size(), 3u);
  // Peak memory of the whole probe process (GNU time's maximum resident set size).
  const auto at = probe.err.find("peak-rss-kb ");
  ASSERT_NE(at, std::string::npos) << probe.err;
  const long peak_kb = std::stol(probe.err.substr(at + 12));
  std::printf("[ info ] j2kprobe peak RSS under hostile traffic: %ld KiB (bound %ld KiB)\n", peak_kb, kPeakRssBoundKb);
  EXPECT_LT(peak_kb, kPeakRssBoundKb);
}
