// End to end over loopback multicast: j2ksend → j2kprobe, and what happens with bad input.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <iostream>
#include <map>
#include <set>
#include <random>
#include <thread>

#include "net/udp_sender.hpp"
#include "stream_run.hpp"

using namespace j2k;
using j2k::test::bin;
using j2k::test::run;
using nlohmann::json;

using j2k::test::kCache;
using Loopback = j2k::test::LoopbackStream;

TEST_F(Loopback, LosslessEveryFrameArrivesAndDecodesBitExact) {
  ASSERT_NO_FATAL_FAILURE(stream(
      "239.10.20.1:5004", "--json --wait 60 --timeout 60 --duration 30 --frames 75 --no-drop",
      "--size 320x180 --fps 25 --bits 10 --lossless --loop-frames 25 --frames 75", "lossless", kManifestAndChecksums));
  EXPECT_EQ(summary["packets"]["lost"], 0);
  EXPECT_EQ(summary["packets"]["received"], sent["packets"]);
  EXPECT_EQ(summary["frames"]["complete"], 75);
  EXPECT_EQ(summary["frames"]["incomplete"], 0);
  EXPECT_EQ(summary["frames"]["decoded"], 75);
  EXPECT_EQ(summary["stream"]["width"], 320);
  EXPECT_EQ(summary["stream"]["height"], 180);
  EXPECT_EQ(summary["stream"]["fps"], 25.0);
  // Every decoded frame equals the frame the sender encoded, in order.
  ASSERT_EQ(decoded.size(), sent["sent"].size());
  for (std::size_t i = 0; i < sent["sent"].size(); ++i) {
    EXPECT_EQ(decoded[i]["checksum"], sent["sent"][i]["checksum"]) << i;
    EXPECT_EQ(decoded[i]["rtp_timestamp"], sent["sent"][i]["rtp_timestamp"]) << i;
  }
  EXPECT_NE(streamed.tx.out.find("sent 75 frames"), std::string::npos) << streamed.tx.out;
}

TEST_F(Loopback, TilePartsPerComponentEveryFrameDecodesBitExact) {
  // j2ksend --tile-parts: one tile-part per component, which the receiver's tier-2 reads one
  // per thread; every frame still equals what the sender encoded.
  ASSERT_NO_FATAL_FAILURE(stream(
      "239.10.20.12:5028", "--json --wait 60 --timeout 60 --duration 30 --frames 50 --no-drop --threads 2",
      "--size 320x180 --fps 25 --bits 10 --lossless --tile-parts --loop-frames 25 --frames 50", "tile_parts",
      kManifestAndChecksums));
  EXPECT_EQ(summary["frames"]["complete"], 50);
  EXPECT_EQ(summary["frames"]["decoded"], 50);
  ASSERT_EQ(decoded.size(), sent["sent"].size());
  for (std::size_t i = 0; i < sent["sent"].size(); ++i) EXPECT_EQ(decoded[i]["checksum"], sent["sent"][i]["checksum"]) << i;
}

TEST_F(Loopback, LossyRealPhotographStreamAt50fps) {
  ASSERT_NO_FATAL_FAILURE(stream(
      "239.10.20.2:5006", "--json --wait 60 --timeout 60 --duration 30 --frames 100",
      "--size 640x360 --fps 50 --bitrate 20M --loop-frames 50 --frames 100", "lossy"));
  EXPECT_EQ(summary["packets"]["lost"], 0);
  EXPECT_EQ(summary["frames"]["complete"], 100);
  EXPECT_EQ(summary["stream"]["format"], "640x360 4:2:2 8-bit, progressive, MXF (RFC 6597)");  // issue 10 item 12
  EXPECT_EQ(summary["stream"]["picture"], "640x360 4:2:2 8-bit");
  EXPECT_NEAR(summary["stream"]["fps"].get<double>(), 50.0, 0.01);
  // Decoding may fall behind on a loaded 2-core machine; what is not decoded is accounted for.
  const auto& f = summary["frames"];
  EXPECT_EQ(f["decoded"].get<int>() + f["dropped_decoder_behind"].get<int>() + f["dropped_late"].get<int>() +
                f["decode_failed"].get<int>(),
            100);
  EXPECT_GT(f["decoded"].get<int>(), 0);
  EXPECT_EQ(f["decode_failed"], 0);
}

TEST(BadInput, WrongUrlIsAUsageErrorWithExample) {
  auto r = run(bin("j2kprobe") + " 'http://nowhere:80'", "badurl");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("rtp://239.1.1.1:5004"), std::string::npos) << r.err;
  auto r2 = run(bin("j2kprobe") + " 'rtp://239.1.1.1:99999'", "badport");
  EXPECT_EQ(r2.exit_code, 2);
  auto r3 = run(bin("j2ksend") + " --size 12x", "badsize");
  EXPECT_EQ(r3.exit_code, 2);
  EXPECT_NE(r3.err.find("WxH"), std::string::npos) << r3.err;
  auto r4 = run(bin("j2ksend") + " --image /nonexistent.png --frames 1", "badimage");
  EXPECT_EQ(r4.exit_code, 2);
  EXPECT_NE(r4.err.find("does not exist"), std::string::npos) << r4.err;
}

TEST(BadInput, NoSenderTimesOutWithAHint) {
  auto r = run(bin("j2kprobe") + " 'rtp://239.10.20.3:5008?iface=127.0.0.1' --wait 1", "nosender");
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("no packets on 239.10.20.3:5008 via 127.0.0.1 after 1 s"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("is the sender running"), std::string::npos) << r.err;
}

// Review 2026-11-29: without ?iface= the kernel's routes choose where a group is joined (on a
// laptop, often the Wi-Fi, not the cable to the video network), and nothing said which: the
// join is now logged with the interface, and the no-packets message names it and the others.
TEST(BadInput, NoSenderOnAGroupJoinedWithoutAnInterfaceNamesTheInterfaces) {
  auto r = run(bin("j2kprobe") + " 'rtp://239.10.20.29:5290' --wait 1", "nosender_noiface");  // no other test's
  if (r.exit_code == 1 && r.err.find("cannot join") != std::string::npos)
    GTEST_SKIP() << "this machine has no route for multicast: " << r.err;
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("joining 239.10.20.29 on "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("pick one with ?iface="), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("127.0.0.1"), std::string::npos) << "the loopback interface is listed\n" << r.err;
}

TEST(BadInput, GarbageDatagramsAreCountedAndSurvived) {
  const std::string url = "'rtp://239.10.20.4:5010?iface=127.0.0.1'";
  test::BackgroundReceiver rx(bin("j2kprobe") + " " + url + " --json --duration 2 --timeout 5", "garbage.probe");
  ASSERT_TRUE(rx.wait_listening());
  auto tx = net::UdpSender::open({"239.10.20.4", 5010, "127.0.0.1", 1, 8 << 20, ""});
  ASSERT_TRUE(tx.ok()) << tx.error().message;
  std::mt19937 rng(1234);
  int sent = 0;
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(2500);
  while (std::chrono::steady_clock::now() < until) {
    std::vector<std::uint8_t> junk(rng() % 2000);
    for (auto& b : junk) b = static_cast<std::uint8_t>(rng());
    if (sent % 2 == 0 && junk.size() > 20) junk[0] = 0x80;  // passes the RTP version check
    if (sent % 7 == 0 && junk.size() > 40) {                 // even an MXF key prefix
      junk[12] = 0x06; junk[13] = 0x0E; junk[14] = 0x2B; junk[15] = 0x34;
    }
    (*tx)->send(junk);
    ++sent;
    if (sent % 50 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  const auto probe = rx.join();
  ASSERT_EQ(probe.exit_code, 0) << probe.err;
  auto summary = json::parse(probe.out);
  EXPECT_GT(summary["packets"]["malformed"].get<int>() + summary["packets"]["foreign_ssrc"].get<int>(), 100);
  EXPECT_EQ(summary["frames"]["decoded"], 0);
}

TEST_F(Loopback, ImpairedStreamCountersMatchTheSenderAndIntactFramesDecodeExactly) {
  ASSERT_NO_FATAL_FAILURE(stream(
      "239.10.20.5:5012", "--json --wait 60 --timeout 60 --duration 30 --frames 150 --no-drop",
      "--pattern --size 480x270 --fps 50 --lossless --mtu 400 --loop-frames 50 "
      "--frames 150 --loss 0.01 --reorder 8 --reorder-prob 0.01 --duplicate 0.01 --seed 7", "impaired",
      kManifestAndChecksums));
  ASSERT_GT(sent["dropped"].get<int>(), 0);
  ASSERT_GT(sent["duplicated"].get<int>(), 0);
  ASSERT_GT(sent["reordered"].get<int>(), 0);
  // Receiver counters equal what the sender did.
  EXPECT_EQ(summary["packets"]["lost"], sent["dropped"]);
  EXPECT_EQ(summary["packets"]["duplicate"], sent["duplicated"]);
  EXPECT_EQ(summary["packets"]["recovered_by_reorder"], sent["reordered"]);
  EXPECT_EQ(summary["packets"]["late"], 0);
  EXPECT_EQ(summary["packets"]["received"].get<long long>() + summary["packets"]["lost"].get<long long>() +
                summary["packets"]["duplicate"].get<long long>() - sent["duplicated"].get<long long>(),
            sent["packets"].get<long long>() + sent["dropped"].get<long long>() - sent["duplicated"].get<long long>());
  // Frames: a frame that lost a packet of its picture is flagged incomplete and not decoded
  // (a lost packet of header metadata or of the system item leaves the picture intact, so
  // the sender's count is an upper bound). Every frame decoded is bit-exact, and every frame
  // that lost nothing was decoded.
  int damaged = 0;
  std::map<std::uint32_t, std::pair<std::string, bool>> expected;
  for (const auto& f : sent["sent"]) {
    damaged += f["damaged"].get<bool>();
    expected[f["rtp_timestamp"].get<std::uint32_t>()] = {f["checksum"].get<std::string>(), f["damaged"].get<bool>()};
  }
  const int incomplete = summary["frames"]["incomplete"].get<int>();
  EXPECT_GT(incomplete, 0);
  EXPECT_LE(incomplete, damaged);
  EXPECT_EQ(summary["frames"]["complete"].get<int>() + incomplete, 150);
  EXPECT_EQ(decoded.size(), static_cast<std::size_t>(150 - incomplete));
  std::set<std::uint32_t> seen;
  for (const auto& d : decoded) {
    const auto ts = d["rtp_timestamp"].get<std::uint32_t>();
    auto it = expected.find(ts);
    ASSERT_NE(it, expected.end());
    EXPECT_EQ(d["checksum"], it->second.first);
    seen.insert(ts);
  }
  for (const auto& [ts, e] : expected) {
    if (!e.second) {
      EXPECT_TRUE(seen.count(ts)) << "an intact frame was not decoded";
    }
  }
}

TEST_F(Loopback, Interlaced1080DualCodestreamLosslessEveryFrameIdentical) {
  // 1080i: two field codestreams per frame, each as separate luma and chroma codestreams
  // (four per frame) that the receiver merges and weaves.
  ASSERT_NO_FATAL_FAILURE(stream(
      "239.10.20.6:5014", "--json --wait 90 --timeout 90 --duration 60 --frames 100 --no-drop",
      "--pattern --size 1920x1080 --fps 25 --bits 10 --lossless --interlaced I1 "
      "--dual-codestream --loop-frames 10 --frames 100", "i1080", kManifestAndChecksums));
  EXPECT_EQ(summary["packets"]["lost"], 0);
  EXPECT_EQ(summary["frames"]["complete"], 100);
  EXPECT_EQ(summary["frames"]["merged_luma_chroma"], 100);
  EXPECT_EQ(summary["stream"]["format"], "1920x1080 4:2:2 10-bit, separate fields, MXF (RFC 6597)");
  EXPECT_EQ(summary["stream"]["descriptor"]["frame_layout"], "separate fields");  // named, not the raw code
  EXPECT_EQ(summary["stream"]["descriptor"]["stored_height"], 540);
  ASSERT_EQ(decoded.size(), 100u);
  for (std::size_t i = 0; i < 100; ++i) EXPECT_EQ(decoded[i]["checksum"], sent["sent"][i]["checksum"]) << i;
}

TEST_F(Loopback, Interlaced1080At150MbitEveryFrameArrivesWhole) {
  // The contribution-link rate: a real photograph at 150 Mbit/s, I2 (both fields in one KLV),
  // separate luma/chroma codestreams; reception and reassembly only (decoding is measured elsewhere).
  ASSERT_NO_FATAL_FAILURE(stream(
      "239.10.20.7:5016", "--json --wait 120 --timeout 120 --duration 90 --frames 1500 --no-decode",
      "--size 1920x1080 --fps 25 --bits 10 --bitrate 150M --interlaced I2 "
      "--dual-codestream --loop-frames 25 --frames 1500", "i150"));
  EXPECT_EQ(summary["packets"]["lost"], 0);
  EXPECT_EQ(summary["packets"]["dropped_in_receiver"], 0);
  EXPECT_EQ(summary["frames"]["complete"], 1500);  // 60 s of 1080i50
  EXPECT_EQ(summary["frames"]["incomplete"], 0);
  EXPECT_EQ(summary["frames"]["merged_luma_chroma"], 1500);
  EXPECT_EQ(summary["frames"]["unusable"], 0);
  EXPECT_GT(summary["stream"]["bitrate_mbps"].get<double>(), 120.0);
}

TEST_F(Loopback, LooseMxfByteStreamWithLossResynchronisesAndStaysExact) {
  // KLVs cut at the MTU with no regard for their boundaries (several per packet, units
  // starting mid-packet); after a loss the receiver waits for a packet that starts a KLV.
  ASSERT_NO_FATAL_FAILURE(stream(
      "239.10.20.8:5018", "--json --wait 60 --timeout 60 --duration 30 --frames 100 --no-drop",
      "--format mxf-stream --mtu 700 --pattern --size 480x270 --fps 50 "
      "--lossless --loop-frames 50 --frames 100 --loss 0.01 --seed 5", "loose", kManifestAndChecksums));
  EXPECT_EQ(summary["packets"]["lost"], sent["dropped"]);
  EXPECT_GT(summary["frames"]["incomplete"].get<int>(), 0);
  EXPECT_EQ(summary["frames"]["complete"].get<int>() + summary["frames"]["incomplete"].get<int>(), 100);
  EXPECT_EQ(decoded.size(), summary["frames"]["complete"].get<std::size_t>());
  std::map<std::uint32_t, std::string> expected;
  for (const auto& f : sent["sent"]) expected[f["rtp_timestamp"].get<std::uint32_t>()] = f["checksum"].get<std::string>();
  for (const auto& d : decoded) EXPECT_EQ(d["checksum"], expected.at(d["rtp_timestamp"].get<std::uint32_t>()));
}

TEST_F(Loopback, SourceSpecificMulticastAcceptsOnlyTheNamedSender) {
  // The sender sends from 127.0.0.2 (loopback owns 127/8); a receiver joined for that source
  // gets the stream, one joined for another source gets nothing.
  const std::string group = "239.10.20.9:5022";
  j2k::test::BackgroundReceiver a(bin("j2kprobe") + " 'rtp://" + group + "?iface=127.0.0.1&source=127.0.0.2' --json --timeout 30 --frames 20", "ssm.right");
  j2k::test::BackgroundReceiver b(bin("j2kprobe") + " 'rtp://" + group + "?iface=127.0.0.1&source=127.0.0.3' --json --wait 4", "ssm.wrong");
  ASSERT_TRUE(a.wait_listening());
  ASSERT_TRUE(b.wait_listening());
  auto tx = run(bin("j2ksend") + " --to 'rtp://" + group + "?iface=127.0.0.1&bind=127.0.0.2' --pattern --size 160x90 --fps 25 "
                    "--loop-frames 5 --frames 20" + kCache,
                "ssm.send");
  const auto right = a.join();
  const auto wrong = b.join();
  ASSERT_EQ(tx.exit_code, 0) << tx.err;
  ASSERT_EQ(right.exit_code, 0) << right.err;
  EXPECT_EQ(json::parse(right.out)["frames"]["complete"], 20);
  EXPECT_EQ(wrong.exit_code, 3) << "a receiver joined for another source must see no packets";
  EXPECT_NE(wrong.err.find("from 127.0.0.3"), std::string::npos) << wrong.err;
}

TEST_F(Loopback, IncompleteFramesCanBeDecodedResiliently) {
  // --incomplete decode: a frame whose codestream lost its tail still decodes (the own
  // decoder's resilient mode uses what arrived); nothing fails, nothing crashes.
  ASSERT_NO_FATAL_FAILURE(stream(
      "239.10.20.10:5024", "--json --wait 60 --timeout 60 --frames 100 --no-drop --incomplete decode",
      "--size 480x270 --fps 50 --bitrate 20M --loop-frames 20 --frames 100 "
      "--loss 0.01 --seed 9", "resilient"));
  const auto& f = summary["frames"];
  EXPECT_GT(f["incomplete"].get<int>(), 0);
  EXPECT_EQ(f["decoded"].get<int>() + f["decode_failed"].get<int>(), 100);
  EXPECT_GE(f["decoded"].get<int>(), f["complete"].get<int>());  // the intact ones at least, usually all
}

TEST_F(Loopback, DegradationEngagesOnAStreamFasterThanTheDecoderAndFramesAreDeliveredInOrder) {
  // Issue 12 item 2: one decoding thread for 1080i at 150 Mbit/s is far below the stream's
  // 25 frames/s on any machine (about 90 ms of CPU a frame at full resolution here). The probe
  // decodes at a lower resolution instead of dropping: degradation engages, every frame is
  // handed on in order, decoded or counted, and a frame is dropped only when it would have
  // been late, never because a queue was full. (Given the CPU the degraded level needs, about
  // half a core here, every frame is decoded: bench/RESULTS.md, issue 12; a test cannot
  // promise that on a machine shared with other work, so it is not asserted here.)
  ASSERT_NO_FATAL_FAILURE(stream(
      "239.10.20.11:5026", "--json --wait 120 --timeout 120 --duration 90 --frames 100 --workers 1 --threads 1",
      "--size 1920x1080 --fps 25 --bits 10 --bitrate 150M --interlaced I2 "
      "--dual-codestream --loop-frames 25 --frames 100", "degrade", kChecksums));
  const auto& f = summary["frames"];
  EXPECT_EQ(f["complete"].get<int>(), 100);
  EXPECT_GT(f["degraded"].get<int>(), 0) << streamed.probe.err;
  EXPECT_EQ(f["decode_failed"].get<int>(), 0) << streamed.probe.err;
  const int dropped = f["dropped_late"].get<int>() + f["dropped_decoder_behind"].get<int>();
  EXPECT_EQ(f["decoded"].get<int>() + dropped, 100) << "every frame is accounted for";
  // Dropped when late, not because the queue overflowed: that takes one frame outlasting the
  // queue (16 frames, 0.64 s at 25 frames/s; a sender behind its schedule sends a few at once),
  // which happens only when the machine stalls the decoder, as a CI machine busy with other
  // tests can. Such a stall shows in decode_ms_max, far above the ~90 ms a full frame costs.
  const double longest = f["decode_ms_max"].get<double>();
  const double period_ms = 40.0;
  if (f["dropped_decoder_behind"].get<int>() > 0) {
    EXPECT_GT(longest, 4 * period_ms) << "the queue overflowed without a stall of the decoder\n" << streamed.probe.err;
    std::cerr << "queue overflowed: " << f["dropped_decoder_behind"] << " frames; the longest decode took " << longest << " ms\n";
  }
  EXPECT_EQ(summary["decoders"]["queue_frames"].get<int>(), 16);
  EXPECT_GT(longest, 0.0);
  EXPECT_LE(dropped, 50) << "degradation, not dropping, keeps the decoder up\n" << streamed.probe.err;
  EXPECT_EQ(summary["decoders"]["workers"].get<int>(), 1);
  EXPECT_EQ(summary["decoders"]["threads"].get<int>(), 1);
  EXPECT_EQ(summary["stream"]["format"], "1920x1080 4:2:2 10-bit, separate fields, MXF (RFC 6597)")
      << "the stream's format, not the degraded picture's";
  EXPECT_GT(summary["latency"]["receive_to_decoded_ms"]["p99"].get<double>(), 0.0);
  // In order: timestamps one frame (3600 ticks at 25 fps) apart, or whole frames apart where
  // frames were dropped, and no more missing than were counted dropped.
  ASSERT_EQ(decoded.size(), f["decoded"].get<std::size_t>());
  int missing = 0;
  for (std::size_t i = 1; i < decoded.size(); ++i) {
    const std::uint32_t step = decoded[i]["rtp_timestamp"].get<std::uint32_t>() - decoded[i - 1]["rtp_timestamp"].get<std::uint32_t>();
    EXPECT_TRUE(step > 0 && step % 3600 == 0 && step <= 3600u * 100) << "frame " << i << ": step " << step
                                                                     << " (serial-number arithmetic: the timestamp may wrap)";
    missing += static_cast<int>(step / 3600) - 1;
  }
  EXPECT_LE(missing, dropped);
}
