// The operator's view end to end (issue 14): the event log lists exactly the gaps the sender
// made, the metrics endpoint answers during a run, a capture written by j2kprobe replays to
// the same counters, and --alarm turns an unhealthy stream into exit status 4.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "stream_run.hpp"

using j2k::test::bin;
using nlohmann::json;

namespace {

using j2k::test::kCache;
const std::string kEncode = "--pattern --size 160x90 --fps 25 --lossless --loop-frames 5 --mtu 300";

/// Each test first encodes (into the test cache) what it sends, so that the sender starts at
/// once and the probe's silence timeout only ends the stream.
class Operator : public j2k::test::LoopbackStream {
 protected:
  void SetUp() override {
    const std::string tag = std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) + ".warm";
    auto r = j2k::test::run(bin("j2ksend") + " --to rtp://127.0.0.1:9 --frames 1 --no-rtcp " + kEncode + kCache, tag);
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
};

std::vector<json> json_lines(const std::string& path) {
  std::vector<json> out;
  std::istringstream in(j2k::test::slurp(path));
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) out.push_back(json::parse(line));
  return out;
}

}  // namespace

TEST_F(Operator, EventLogListsExactlyTheGapsTheSenderMade) {
  ASSERT_NO_FATAL_FAILURE(stream("239.10.41.1:5110", "--json --timeout 5 --no-decode --events events.jsonl",
                                 kEncode + " --frames 60 --loss 0.02 --seed 11", "events", kManifest));
  std::set<int> dropped;
  for (const auto& s : sent["impaired_packets"]["dropped"]) dropped.insert(s.get<int>());
  ASSERT_GT(dropped.size(), 3u);
  std::set<int> reported;
  std::size_t gap_events = 0;
  for (const auto& e : json_lines("events.jsonl")) {
    EXPECT_TRUE(e.contains("time") && e.contains("event") && e.contains("message")) << e.dump();
    if (e["event"] != "sequence_gap") continue;
    ++gap_events;
    EXPECT_TRUE(e.contains("rtp_timestamp")) << e.dump();
    const int first = e["first_missing"].get<int>(), last = e["last_missing"].get<int>();
    const int count = e["count"].get<int>();
    for (int k = 0; k < count; ++k) reported.insert((first + k) & 0xFFFF);
    EXPECT_EQ((first + count - 1) & 0xFFFF, last) << e.dump();
  }
  EXPECT_GT(gap_events, 0u);
  EXPECT_EQ(reported, dropped) << "the event log's gaps are exactly the packets the sender dropped";
  EXPECT_EQ(summary["packets"]["lost"].get<std::size_t>(), dropped.size());
  EXPECT_GE(summary["events"]["count"].get<int>(), static_cast<int>(gap_events));
  EXPECT_GE(summary["history"].size(), 1u);
  // Review 2026-11-25 (fourth): without --events-limit the file grew without bound (~190 kB
  // a minute under a sender hopping SSRCs, ~0.5 GB a day on a link losing a packet a frame):
  // a monitor's event log file is a ring of 1 GB unless told otherwise.
  EXPECT_EQ(summary["events"]["limit_bytes"].get<std::uint64_t>(), 1'000'000'000u) << summary["events"].dump();
  // Review 2026-11-29: a frame whose system item was lost came complete, its time code
  // silently missing. Each such frame is said, and only frames that lost packets are.
  std::set<std::uint32_t> lossy;
  for (const auto& f : sent["sent"])
    if (f["dropped"].get<int>() > 0) lossy.insert(f["rtp_timestamp"].get<std::uint32_t>());
  int missing = 0;
  for (const auto& e : json_lines("events.jsonl")) {
    if (e["event"] != "time_code") continue;
    EXPECT_EQ(e["kind"], "missing") << "every frame came: the time code never jumps\n" << e.dump();
    EXPECT_TRUE(lossy.contains(e["rtp_timestamp"].get<std::uint32_t>())) << e.dump();
    ++missing;
  }
  EXPECT_GE(summary["time_code"]["frames_without"].get<int>(), missing);
  EXPECT_EQ(summary["time_code"]["frames_out_of_sequence"], 0);
}

TEST_F(Operator, MetricsAreScrapedDuringARunAndAlarmsSetTheExitStatus) {
  if (std::system("command -v curl >/dev/null 2>&1") != 0) GTEST_SKIP() << "curl not installed";
  const std::string url = "'rtp://239.10.41.2:5112?iface=127.0.0.1'";
  // A fixed port in this test's own range: the probe serves it while the sender runs.
  j2k::test::BackgroundReceiver rx(bin("j2kprobe") + " " + url + " --json --timeout 5 --no-decode "
                                       "--metrics 127.0.0.1:19412 --alarm loss=0.1%,freeze=off,black=off,signal=off",
                                   "metrics.probe");
  ASSERT_TRUE(rx.wait_listening());
  std::thread tx([&] {
    (void)j2k::test::run(bin("j2ksend") + " --to " + url + " " + kEncode + " --frames 100 --loss 0.03 --seed 5" + kCache,
                         "metrics.send");
  });
  // Scrape while packets flow (the probe publishes once a second).
  std::string body;
  for (int i = 0; i < 100 && body.find("j2k_packets_received_total") == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // polling the endpoint, not a timing assumption
    body = j2k::test::run("curl -s --max-time 2 http://127.0.0.1:19412/metrics", "metrics.curl").out;
  }
  tx.join();
  auto probe = rx.join();
  ASSERT_NE(body.find("# TYPE j2k_packets_received_total counter"), std::string::npos) << body;
  EXPECT_NE(body.find("j2k_packets_received_total{url=\"rtp://239.10.41.2:5112?iface=127.0.0.1\"}"), std::string::npos) << body;
  EXPECT_EQ(probe.exit_code, 4) << "3 % loss against a 0.1 % threshold: the loss alarm fired\n" << probe.err;
  EXPECT_GE(json::parse(probe.out)["alarms"]["raised"].get<int>(), 1);
}

// Review 2026-11-25: with --alarm, every clean stream that ended made j2kprobe exit 4: the
// --timeout wait after its last packet (3 s by default) raised no signal and freeze (2 s).
TEST_F(Operator, AStreamThatEndsCleanlyIsNotAnAlarm) {
  ASSERT_NO_FATAL_FAILURE(stream("239.10.41.6:5120", "--json --timeout 4 --alarm loss=50% --events end-events.jsonl --events-limit none",
                                 kEncode + " --frames 50", "clean-end"));  // asserts exit status 0
  EXPECT_GE(summary["alarms"]["raised"].get<int>(), 1) << "the silence at the end still raised no signal";
  EXPECT_EQ(summary["alarms"]["raised_at_stream_end"], summary["alarms"]["raised"]);
  EXPECT_EQ(summary["events"]["limit_bytes"].get<std::uint64_t>(), 0u) << "--events-limit none: no limit";
  bool signal_lost = false;
  for (const auto& e : json_lines("end-events.jsonl")) {
    if (e["event"] != "signal_lost") continue;
    signal_lost = true;
    // Dated when the packets stopped, before the look that saw it (review 2026-11-28).
    ASSERT_TRUE(e.contains("began")) << e.dump();
    EXPECT_LT(e["began"].get<std::string>(), e["time"].get<std::string>()) << e.dump();
    EXPECT_NE(e["message"].get<std::string>().find("no packets since"), std::string::npos) << e.dump();
  }
  EXPECT_TRUE(signal_lost) << "the event log still says when the signal went";
}

TEST_F(Operator, ACaptureWrittenByTheProbeReplaysToTheSameCounters) {
  ASSERT_NO_FATAL_FAILURE(stream("239.10.41.3:5114", "--json --timeout 5 --capture op-capture.pcapng",
                                 kEncode + " --frames 40 --loss 0.02 --seed 9 --no-rtcp", "capture"));
  const auto& live = summary;
  EXPECT_GT(live["capture"]["datagrams"].get<int>(), 100);
  EXPECT_EQ(live["capture"]["dropped"], 0);
  auto replay = j2k::test::run(bin("j2kprobe") + " 'pcap:op-capture.pcapng?port=5114' --json", "capture.replay");
  ASSERT_EQ(replay.exit_code, 0) << replay.err;
  const auto again = json::parse(replay.out);
  for (const char* key : {"received", "lost", "duplicate"})
    EXPECT_EQ(again["packets"][key], live["packets"][key]) << key;
  for (const char* key : {"complete", "incomplete", "decoded"}) EXPECT_EQ(again["frames"][key], live["frames"][key]) << key;

  // Under a file size limit (ulimit -f: 100 blocks, 50-100 kB) the capture of the replay
  // fills it: the probe used to be ended by SIGXFSZ. It now counts what was not written and
  // leaves a capture that reads to its end.
  auto limited = j2k::test::run("ulimit -f 100; " + bin("j2kprobe") +
                                    " 'pcap:op-capture.pcapng?port=5114' --json --capture op-limited.pcapng",
                                "capture.limited");
  ASSERT_EQ(limited.exit_code, 0) << limited.err;
  const auto cut = json::parse(limited.out);
  EXPECT_GT(cut["capture"]["dropped"].get<int>(), 0);
  auto reread = j2k::test::run(bin("j2kprobe") + " 'pcap:op-limited.pcapng?port=5114' --json", "capture.reread");
  ASSERT_EQ(reread.exit_code, 0) << reread.err;
  EXPECT_EQ(json::parse(reread.out)["packets"]["received"], cut["capture"]["datagrams"]);
}

// Review 2026-11-28: --capture ("every datagram received, all sockets") left out the
// sender's RTCP reports (read from their own socket) and wrote nothing once --frames was
// reached, though the probe went on reading until it stopped.
TEST_F(Operator, ACaptureHoldsTheSendersReportsOnTheirOwnPort) {
  ASSERT_NO_FATAL_FAILURE(stream("239.10.41.8:5128", "--json --timeout 5 --frames 40 --capture op-rtcp.pcapng",
                                 kEncode + " --frames 60", "capture-rtcp"));
  const auto& live = summary;
  const int reports = live["rtcp"]["sender_reports"].get<int>();
  EXPECT_GE(reports, 2) << "one after the first frame, one a second";
  EXPECT_GE(live["capture"]["datagrams"].get<int>(), live["packets"]["received"].get<int>() + reports);
  // The replay of a port the capture lacks lists those it holds: the data's and the reports'.
  auto ports = j2k::test::run(bin("j2kprobe") + " 'pcap:op-rtcp.pcapng?port=9' --json", "capture-rtcp.ports");
  EXPECT_EQ(ports.exit_code, 3) << ports.err;
  EXPECT_NE(ports.err.find("UDP destination ports in the capture: 5128 ("), std::string::npos) << ports.err;
  EXPECT_NE(ports.err.find(", 5129 ("), std::string::npos) << "the RTCP port\n" << ports.err;
  // The replay reads the reports in their place among the data (they were not replayed).
  auto replay = j2k::test::run(bin("j2kprobe") + " 'pcap:op-rtcp.pcapng?port=5128' --json --frames 40", "capture-rtcp.replay");
  ASSERT_EQ(replay.exit_code, 0) << replay.err;
  const auto again = json::parse(replay.out);
  EXPECT_EQ(again["frames"]["decoded"], 40);
  EXPECT_EQ(again["rtcp"]["sender_reports"], reports);
  EXPECT_EQ(again["packets"]["received"], live["packets"]["received"]);
}

// Review 2026-11-28: a clean capture replayed with loop=1 and stopped as a new pass began
// read the last pass's final report (BYE after N packets) against the new pass's numbers:
// hundreds of packets "lost at the end", a loss alarm, exit status 4. And packets.datagrams
// counted what the fast replay read ahead (pass after pass) after the frame limit: 516 or
// 19 580 datagrams for 190 or 1052 packets received, different on every run.
TEST_F(Operator, ALoopedCaptureOfACleanStreamIsClean) {
  ASSERT_NO_FATAL_FAILURE(stream("239.10.41.9:5132", "--json --timeout 3 --capture op-loop.pcapng", kEncode + " --frames 20",
                                 "capture-loop"));
  ASSERT_EQ(summary["frames"]["complete"], 20);
  ASSERT_EQ(summary["rtcp"]["bye"], true);
  for (const int frames : {40, 60, 10}) {
    auto r = j2k::test::run(bin("j2kprobe") + " 'pcap:op-loop.pcapng?port=5132&loop=1' --json --alarm loss=1% --frames " +
                                std::to_string(frames),
                            "capture-loop.replay");
    EXPECT_EQ(r.exit_code, 0) << frames << " frames\n" << r.err;
    const auto j = json::parse(r.out);
    EXPECT_EQ(j["packets"]["lost"], 0) << frames;
    EXPECT_EQ(j["rtcp"]["packets_lost_at_end"], 0) << frames;
    EXPECT_EQ(j["frames"]["complete"], frames);
    EXPECT_EQ(j["packets"]["datagrams"], j["packets"]["received"]) << frames << ": no loss, no duplicates: one each";
    // Review 2026-11-29: each new pass read as the time code "going back 20 frames".
    EXPECT_EQ(j["time_code"]["frames_out_of_sequence"], 0) << frames;
    EXPECT_EQ(j["time_code"]["frames_without"], 0) << frames;
    // Review 2026-11-29: the followed sender's own count kept the unit past --frames (61 for 60).
    int per_sender = 0;
    for (const auto& e : j["ssrcs"]) per_sender += e["frames_complete"].get<int>();
    EXPECT_EQ(per_sender, frames) << j["ssrcs"].dump();
  }
}

// Review 2026-11-29: the part of a second before --frames, --duration or Ctrl-C stopped the
// probe on a live stream never reached the alarms (a capture's end did). A run shorter than a
// second is all in that part: its losses raised nothing, and the status was 0.
TEST_F(Operator, LossesInTheLastPartOfASecondRaiseTheAlarm) {
  const std::string url = "'rtp://239.10.41.10:5134?iface=127.0.0.1'";
  auto [probe, tx] = j2k::test::run_receiver_and_sender(
      bin("j2kprobe") + " " + url + " --json --timeout 5 --no-decode --frames 20 --alarm loss=0.1%",
      bin("j2ksend") + " --to " + url + " --pattern --size 160x90 --fps 50 --lossless --loop-frames 5 --mtu 300 " +
          "--frames 60 --loss 0.05 --seed 3" + kCache,
      "last-part");
  ASSERT_EQ(tx.exit_code, 0) << tx.err;
  const auto j = json::parse(probe.out);
  ASSERT_GT(j["packets"]["lost"].get<int>(), 0) << "the first 20 frames (0.4 s) lost packets";
  EXPECT_EQ(probe.exit_code, 4) << "the loss alarm fired\n" << probe.err;
  EXPECT_GE(j["alarms"]["raised"].get<int>(), 1) << j["alarms"].dump();
}

// Review 2026-11-25: --dump-raw, --checksums and --dump-audio on a full disk: the probe said
// nothing (or logged one line) and exited 0, the JSON claiming the sound was written.
TEST_F(Operator, OutputsThatCannotBeWrittenMakeTheStatusOne) {
  const std::string url = "'rtp://239.10.41.7:5122?iface=127.0.0.1'";
  j2k::test::BackgroundReceiver rx(bin("j2kprobe") + " " + url +
                                       " --json --timeout 3 --dump-raw /dev/full --checksums /dev/full --dump-audio /dev/full",
                                   "fulldisk.probe");
  ASSERT_TRUE(rx.wait_listening());
  auto tx = j2k::test::run(bin("j2ksend") + " --to " + url + " " + kEncode + " --frames 50 --audio tone" + kCache, "fulldisk.send");
  ASSERT_EQ(tx.exit_code, 0) << tx.err;
  auto probe = rx.join();
  EXPECT_EQ(probe.exit_code, 1) << probe.err;
  EXPECT_NE(probe.err.find("writing --dump-raw file '/dev/full' failed"), std::string::npos) << probe.err;
  EXPECT_NE(probe.err.find("writing --checksums file '/dev/full' failed"), std::string::npos) << probe.err;
  const auto out = json::parse(probe.out);
  EXPECT_EQ(out["audio"]["dump"]["failed"], true) << out["audio"].dump();
  EXPECT_TRUE(out["audio"]["dump"].contains("error"));
}

// Review 2026-11-25 (second): --dump's files were not checked either (truncated files, status
// 0). Under a file size limit of 64 blocks (32 or 64 kB: the probe's own log fits) every
// codestream of a lossless 1280x720 photograph (~1.5 MB) is cut.
TEST_F(Operator, DumpFilesThatCannotBeWrittenMakeTheStatusOne) {
  const std::string url = "'rtp://239.10.41.8:5124?iface=127.0.0.1'";
  std::filesystem::remove_all("op-dump");
  j2k::test::BackgroundReceiver rx("ulimit -f 64; " + bin("j2kprobe") + " " + url + " --json --timeout 3 --dump op-dump",
                                   "dumpfull.probe");
  ASSERT_TRUE(rx.wait_listening());
  auto tx = j2k::test::run(bin("j2ksend") + " --to " + url +
                               " --size 1280x720 --fps 25 --lossless --loop-frames 1 --frames 2" + kCache,
                           "dumpfull.send");
  ASSERT_EQ(tx.exit_code, 0) << tx.err;
  auto probe = rx.join();
  EXPECT_EQ(probe.exit_code, 1) << probe.err;
  EXPECT_NE(probe.err.find("writing --dump file 'op-dump/frame_000000.j2c' failed"), std::string::npos) << probe.err;
}

// Review 2026-11-25 (second): --events - on a stdout that refuses it (a full disk) said nothing.
TEST_F(Operator, AnEventLogOnAFullStdoutIsSaid) {
  const std::string url = "'rtp://239.10.41.9:5126?iface=127.0.0.1'";
  j2k::test::BackgroundReceiver rx("sh -c \"" + bin("j2kprobe") + " " + url + " --timeout 2 --no-decode --events - > /dev/full\"",
                                   "eventsfull.probe");
  ASSERT_TRUE(rx.wait_listening());
  auto tx = j2k::test::run(bin("j2ksend") + " --to " + url + " " + kEncode + " --frames 30 --loss 0.05 --seed 3" + kCache,
                           "eventsfull.send");
  ASSERT_EQ(tx.exit_code, 0) << tx.err;
  auto probe = rx.join();
  EXPECT_NE(probe.err.find("writing the event log to stdout failed"), std::string::npos) << probe.err;
}

// Issue 14 item 6: j2ksend --sdp writes what j2kprobe sdp:FILE receives.
TEST_F(Operator, AnSdpWrittenByTheSenderIsReceivedByTheProbe) {
  // The sender writes the description first; the probe joins from it.
  auto w = j2k::test::run(bin("j2ksend") + " --to 'rtp://239.10.41.4:5116?iface=127.0.0.1' --format rfc5371 " + kEncode +
                              " --frames 1 --no-rtcp --sdp op-stream.sdp" + kCache,
                          "sdp.write");
  ASSERT_EQ(w.exit_code, 0) << w.err;
  ASSERT_NO_FATAL_FAILURE(j2k::test::receive_stream(
      bin("j2kprobe") + " 'sdp:op-stream.sdp?iface=127.0.0.1' --json --timeout 5 --frames 20",
      bin("j2ksend") + " --to 'rtp://239.10.41.4:5116?iface=127.0.0.1' --format rfc5371 " + kEncode + " --frames 20" + kCache,
      "sdp", streamed));
  EXPECT_EQ(summary["frames"]["decoded"], 20);
  EXPECT_EQ(summary["stream"]["transport"], "rfc5371");
  EXPECT_EQ(summary["stream"]["payload_format"], "rfc5371");
  const std::string format = summary["stream"]["format"];
  EXPECT_TRUE(format.ends_with(", RFC 5371")) << format;
}

// Issue 14 item 8: the MXF system item's time code reaches the summary and the per-frame list.
TEST_F(Operator, TimeCodeFromTheSystemItemIsReported) {
  ASSERT_NO_FATAL_FAILURE(stream("239.10.41.5:5118", "--json --timeout 5 --frames 30", kEncode + " --frames 30", "tc", kChecksums));
  EXPECT_EQ(summary["stream"]["time_code"], "00:00:01:04");  // frame 29 at 25 fps
  ASSERT_EQ(decoded.size(), 30u);
  EXPECT_EQ(decoded[0]["time_code"], "00:00:00:00");
  EXPECT_EQ(decoded[26]["time_code"], "00:00:01:01");
  // It runs on, frame by frame: nothing to say of it.
  EXPECT_EQ(summary["time_code"]["frames_out_of_sequence"], 0);
  EXPECT_EQ(summary["time_code"]["frames_without"], 0);
}
