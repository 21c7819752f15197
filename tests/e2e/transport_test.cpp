// Issue 13 end to end: VSF TR-01 (JPEG 2000 in MPEG-2 TS over RTP, SMPTE ST 2022-2) from and to
// GStreamer and FFmpeg, ST 2022-1 FEC recovery and ST 2022-7 two-path merge with j2ksend's
// impairments. Peers that are not installed skip their test with a message.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <regex>
#include <thread>

#include "stream_run.hpp"

using j2k::test::bin;
using j2k::test::run;
using nlohmann::json;

namespace {

bool have(const char* tool) { return std::system((std::string("command -v ") + tool + " >/dev/null 2>&1").c_str()) == 0; }

bool have_gst_element(const char* element) {
  return have("gst-inspect-1.0") &&
         std::system((std::string("gst-inspect-1.0 --exists ") + element + " >/dev/null 2>&1").c_str()) == 0;
}

/// Waits until something listens on UDP `port` (the receiver is up), instead of sleeping a guess.
bool wait_for_udp_port(int port) {
  const std::string cmd = "ss -Hlun 'sport = :" + std::to_string(port) + "' 2>/dev/null | grep -q .";
  for (int i = 0; i < 400; ++i) {
    if (std::system(cmd.c_str()) == 0) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  return false;
}

/// Starts `receiver` in the background, waits for its socket(s), runs `sender`, waits for the receiver.
std::pair<j2k::test::CommandResult, j2k::test::CommandResult> receive_and_send(const std::string& receiver, const std::vector<int>& ports,
                                                                              const std::string& sender, const std::string& tag) {
  j2k::test::CommandResult rx_result, tx_result;
  std::thread rx([&] { rx_result = run(receiver, tag + ".probe"); });
  bool up = true;
  for (int p : ports) up = up && wait_for_udp_port(p);
  if (up) tx_result = run(sender, tag + ".send");
  else tx_result.err = "receiver never opened its socket";
  rx.join();
  return {rx_result, tx_result};
}

/// receive_and_send, then the checks every such test starts with (expect_both_succeeded). Call
/// it inside ASSERT_NO_FATAL_FAILURE.
void receive_stream(const std::string& receiver, const std::vector<int>& ports, const std::string& sender, const std::string& tag,
                    j2k::test::StreamRun& run) {
  std::tie(run.probe, run.tx) = receive_and_send(receiver, ports, sender, tag);
  j2k::test::expect_both_succeeded(run);
}

std::uint64_t number_after(const std::string& text, const std::string& label) {
  std::smatch m;
  if (std::regex_search(text, m, std::regex(label + " (\\d+)"))) return std::stoull(m[1]);
  return ~0ull;
}

const std::string kGstSource =
    "videotestsrc num-buffers=25 pattern=smpte horizontal-speed=4 ! video/x-raw,width=720,height=576,format=Y42B,framerate=25/1 ! "
    "openjpegenc ! jpeg2000parse ! image/x-jpc,alignment=frame";

/// GStreamer's own path through its TS demuxer and decoder, on the same deterministic stream as
/// kGstSource sends: TAG.gst.yuv. Call it inside ASSERT_NO_FATAL_FAILURE.
void decode_like_gstreamer(const std::string& tag) {
  auto ref = run("gst-launch-1.0 -q " + kGstSource +
                     " ! mpegtsmux ! tsdemux ! jpeg2000parse ! openjpegdec ! video/x-raw,format=Y42B ! filesink location=" + tag + ".gst.yuv",
                 tag + ".ref");
  ASSERT_EQ(ref.exit_code, 0) << ref.err;
}

}  // namespace

TEST(Tr01Interop, GStreamerTsOverRtpDecodesLikeGStreamer) {
  if (!have("gst-launch-1.0") || !have_gst_element("mpegtsmux") || !have_gst_element("rtpmp2tpay"))
    GTEST_SKIP() << "GStreamer with mpegtsmux and rtpmp2tpay not installed (gstreamer1.0-plugins-bad, -good)";
  const int port = 5140;
  const std::string tag = "tr01_gst";
  j2k::test::StreamRun stream;
  ASSERT_NO_FATAL_FAILURE(receive_stream(
      bin("j2kprobe") + " 'rtp://127.0.0.1:" + std::to_string(port) + "?format=ts' --frames 25 --timeout 10 --json --no-drop --dump-raw " +
          tag + ".ours.yuv",
      {port}, "gst-launch-1.0 -q " + kGstSource + " ! mpegtsmux alignment=7 ! rtpmp2tpay ! udpsink host=127.0.0.1 port=" + std::to_string(port),
      tag, stream));
  ASSERT_NO_FATAL_FAILURE(decode_like_gstreamer(tag));
  const auto& summary = stream.summary;
  EXPECT_EQ(summary["stream"]["transport"], "ts");
  EXPECT_EQ(summary["packets"]["lost"], 0);
  EXPECT_EQ(summary["frames"]["complete"], 25);
  EXPECT_EQ(summary["frames"]["decoded"], 25);
  EXPECT_EQ(summary["ts"]["continuity_errors"], 0);
  // Every TS counter is in the JSON (four were counted and never shown).
  for (const char* key : {"duplicates", "adaptation_malformed", "pes_oversize", "waiting_for_pmt", "audio_pes_oversize"})
    EXPECT_EQ(summary["ts"].value(key, -1), 0) << key;
  EXPECT_GE(summary["ts"]["pids"].size(), 3u);  // PAT, PMT, video
  EXPECT_EQ(summary["stream"]["descriptor"]["frame_rate"], 25.0);
  const auto ours = j2k::test::slurp(tag + ".ours.yuv"), theirs = j2k::test::slurp(tag + ".gst.yuv");
  EXPECT_EQ(theirs.size(), 25u * 720 * 576 * 2);
  EXPECT_EQ(ours.size(), theirs.size());
  EXPECT_TRUE(ours == theirs) << "decoded frames differ from GStreamer's decode";
}

TEST(Tr01Interop, GStreamer2022_1FecRecoversLossOnTheMediaStream) {
  if (!have("gst-launch-1.0") || !have_gst_element("rtpst2022-1-fecenc") || !have_gst_element("mpegtsmux"))
    GTEST_SKIP() << "GStreamer with rtpst2022-1-fecenc and mpegtsmux not installed";
  const int port = 5150;
  const std::string tag = "tr01_gst_fec";
  const std::string p = std::to_string(port);
  // The media leaves the FEC encoder, then loses packets; the FEC streams arrive whole.
  j2k::test::StreamRun stream;
  ASSERT_NO_FATAL_FAILURE(receive_stream(
      bin("j2kprobe") + " 'rtp://127.0.0.1:" + p + "?format=ts&fec=1' --frames 25 --timeout 10 --json --no-drop --dump-raw " + tag + ".ours.yuv",
      {port, port + 2, port + 4},
      "gst-launch-1.0 -q " + kGstSource +
          " ! mpegtsmux alignment=7 ! rtpmp2tpay ssrc=0 ! rtpst2022-1-fecenc name=fec columns=5 rows=5 "
          "fec.src ! identity drop-probability=0.01 ! udpsink host=127.0.0.1 port=" + p +
          " fec.fec_0 ! udpsink async=false host=127.0.0.1 port=" + std::to_string(port + 2) +
          " fec.fec_1 ! udpsink async=false host=127.0.0.1 port=" + std::to_string(port + 4),
      tag, stream));
  ASSERT_NO_FATAL_FAILURE(decode_like_gstreamer(tag));
  const auto& summary = stream.summary;
  EXPECT_GT(summary["fec"]["packets"].get<int>(), 0) << "no FEC packets arrived";
  EXPECT_EQ(summary["packets"]["lost"], 0);
  EXPECT_EQ(summary["frames"]["complete"], 25);
  EXPECT_EQ(j2k::test::slurp(tag + ".ours.yuv"), j2k::test::slurp(tag + ".gst.yuv"));
}

TEST(Tr01Interop, J2ksendTsIsReadByGStreamerAndFfprobe) {
  if (!have("gst-launch-1.0") || !have_gst_element("rtpmp2tdepay") || !have_gst_element("tsdemux"))
    GTEST_SKIP() << "GStreamer with rtpmp2tdepay and tsdemux not installed";
  const int port = 5160, port2 = 5165;
  const std::string tag = "tr01_j2ksend_gst";
  std::filesystem::remove(tag + ".ts");
  const std::string caps = "application/x-rtp,media=video,clock-rate=90000,encoding-name=MP2T,payload=33";
  // GStreamer captures the RTP/MP2T stream to a TS file (ended by SIGINT with -e: EOS, file
  // closed); j2kprobe receives the identical copy j2ksend sends to --to2.
  j2k::test::CommandResult gst, probe;
  std::thread gst_rx([&] {
    gst = run("sh -c 'gst-launch-1.0 -q -e udpsrc port=" + std::to_string(port) + " caps=\"" + caps +
                  "\" ! rtpmp2tdepay ! filesink location=" + tag + ".ts & echo $! > " + tag + ".pid; wait $!'",
              tag + ".capture");
  });
  std::thread our_rx([&] {
    probe = run(bin("j2kprobe") + " 'rtp://127.0.0.1:" + std::to_string(port2) +
                    "?format=ts' --frames 20 --timeout 10 --json --no-drop -q --dump-raw " + tag + ".ours.yuv",
                tag + ".probe");
  });
  const bool up = wait_for_udp_port(port) && wait_for_udp_port(port2);
  j2k::test::CommandResult tx;
  if (up)
    tx = run(bin("j2ksend") + " --to rtp://127.0.0.1:" + std::to_string(port) + " --to2 rtp://127.0.0.1:" + std::to_string(port2) +
                 " --format ts --size 320x240 --fps 25 --frames 20 --lossless --pattern --no-cache",
             tag + ".send");
  our_rx.join();
  (void)run("kill -INT $(cat " + tag + ".pid)", tag + ".kill");
  gst_rx.join();
  ASSERT_TRUE(up) << "a receiver never opened its socket";
  ASSERT_EQ(tx.exit_code, 0) << tx.err;
  ASSERT_EQ(gst.exit_code, 0) << gst.err;
  ASSERT_EQ(probe.exit_code, 0) << probe.err;
  // GStreamer's demuxer and decoder read every frame, and decode them as we do.
  auto dec = run("gst-launch-1.0 -q filesrc location=" + tag + ".ts ! tsdemux ! jpeg2000parse ! openjpegdec ! "
                 "video/x-raw,format=Y42B ! filesink location=" + tag + ".gst.yuv",
                 tag + ".gstdec");
  ASSERT_EQ(dec.exit_code, 0) << dec.err;
  const auto theirs = j2k::test::slurp(tag + ".gst.yuv"), ours = j2k::test::slurp(tag + ".ours.yuv");
  EXPECT_EQ(theirs.size(), 20u * 320 * 240 * 2) << "GStreamer did not decode all 20 frames";
  EXPECT_TRUE(ours == theirs) << "GStreamer's decode differs from ours";
  if (!have("ffprobe")) GTEST_SKIP() << "ffprobe not installed: the GStreamer part passed";
  auto fp = run("ffprobe -v error -show_entries stream=codec_name,width,height -of json " + tag + ".ts", tag + ".ffprobe");
  ASSERT_EQ(fp.exit_code, 0) << fp.err;
  auto j = json::parse(fp.out);
  ASSERT_FALSE(j["streams"].empty());
  EXPECT_EQ(j["streams"][0]["codec_name"], "jpeg2000");
  EXPECT_EQ(j["streams"][0]["width"], 320);
  EXPECT_EQ(j["streams"][0]["height"], 240);
  // FFmpeg 5.1 decodes a frame of it (it joins a J2K stream's PES into one packet, for
  // GStreamer's TR-01 TS just the same, so only the first picture comes out).
  auto ff = run("ffmpeg -v error -y -i " + tag + ".ts -frames:v 1 -f rawvideo -pix_fmt yuv422p " + tag + ".ff.yuv", tag + ".ffmpeg");
  ASSERT_EQ(ff.exit_code, 0) << ff.err;
  const auto ffd = j2k::test::slurp(tag + ".ff.yuv");
  ASSERT_EQ(ffd.size(), 320u * 240 * 2);
  EXPECT_TRUE(ffd == theirs.substr(0, ffd.size())) << "FFmpeg's decode of the first frame differs";
}

// Issue 13 item 5: without format= in the URL the payload decides, TS included.
TEST(Tr01Detection, TsWithoutFormatInTheUrlIsDetectedAndPlayed) {
  const int port = 5180;
  const std::string p = std::to_string(port);
  j2k::test::StreamRun stream;
  ASSERT_NO_FATAL_FAILURE(receive_stream(
      bin("j2kprobe") + " 'rtp://127.0.0.1:" + p + "' --frames 30 --timeout 10 --json --no-drop -q", {port},
      bin("j2ksend") + " --to rtp://127.0.0.1:" + p + " --format ts --size 320x240 --fps 50 --frames 30 --bitrate 20M "
                       "--pattern --no-cache",
      "tr01_detect", stream));
  const auto& s = stream.summary;
  EXPECT_EQ(s["frames"]["decoded"], 30);
  EXPECT_EQ(s["stream"]["transport"], "ts");
  EXPECT_EQ(s["stream"]["transport_detected"], true);
  EXPECT_NE(stream.probe.err.find("MPEG-2 TS"), std::string::npos) << "the decision is logged\n" << stream.probe.err;
}

TEST(Tr01Fec, TenByTenFecWithOnePercentLossDeliversEveryFrame) {
  const int port = 5170;
  const std::string tag = "tr01_fec";
  const std::string p = std::to_string(port);
  j2k::test::StreamRun stream;
  ASSERT_NO_FATAL_FAILURE(receive_stream(
      bin("j2kprobe") + " 'rtp://127.0.0.1:" + p + "?format=ts&fec=1' --frames 100 --timeout 10 --json --no-drop -q --capture " +
          tag + ".pcapng",
      {port, port + 2, port + 4},
      bin("j2ksend") + " --to rtp://127.0.0.1:" + p + " --format ts --fec 10x10 --loss 0.01 --seed 7 --size 320x240 --fps 50 "
                       "--frames 100 --bitrate 20M --pattern --no-cache",
      tag, stream));
  const auto dropped = number_after(stream.tx.out, "dropped");
  ASSERT_NE(dropped, ~0ull) << stream.tx.out;
  ASSERT_GT(dropped, 0u) << "the sender dropped nothing: the test would prove nothing";
  const auto& s = stream.summary;
  EXPECT_EQ(s["packets"]["lost"], 0);
  EXPECT_EQ(s["packets"]["recovered_by_fec"].get<std::uint64_t>(), dropped);
  EXPECT_EQ(s["frames"]["complete"], 100);
  EXPECT_EQ(s["frames"]["incomplete"], 0);
  EXPECT_EQ(s["frames"]["decoded"], 100);
  EXPECT_EQ(s["fec"]["columns"], 10);
  EXPECT_EQ(s["fec"]["rows"], 10);
  // Review 2026-11-28: a capture of the link replays with its FEC (fec=1 on the pcap: URL; it
  // was refused, and the capture's FEC datagrams never read), and without it shows the loss.
  auto with_fec = j2k::test::run(bin("j2kprobe") + " 'pcap:" + tag + ".pcapng?port=" + p + "&format=ts&fec=1' --json -q",
                                 tag + ".replay");
  ASSERT_EQ(with_fec.exit_code, 0) << with_fec.err;
  const auto r = json::parse(with_fec.out);
  EXPECT_EQ(r["packets"]["lost"], 0);
  EXPECT_EQ(r["packets"]["recovered_by_fec"].get<std::uint64_t>(), dropped);
  EXPECT_EQ(r["frames"]["decoded"], 100);
  EXPECT_EQ(r["packets"]["received"], s["packets"]["received"]);
  auto without = j2k::test::run(bin("j2kprobe") + " 'pcap:" + tag + ".pcapng?port=" + p + "&format=ts' --json -q",
                                tag + ".replay-nofec");
  ASSERT_EQ(without.exit_code, 0) << without.err;
  EXPECT_EQ(json::parse(without.out)["packets"]["lost"].get<std::uint64_t>(), dropped);
}

// Review 2026-11-29: j2ksend sent a frame's FEC after the whole frame, so in a frame of more
// than ~500 packets (143 Mbit/s at 25 fps) the FEC of its first packets came more than the
// receiver's FEC window (512 packets) after them and was refused: most of each large frame
// had no FEC. Now each row's FEC follows the row and the columns' FEC is spread over the next
// matrix (ST 2022-1's order). Frames here: ~880 packets each (lossless 1080).
TEST(Tr01Fec, FramesLargerThanTheFecWindowKeepTheirFec) {
  const int port = 5280;
  const std::string tag = "tr01_fec_large";
  const std::string p = std::to_string(port);
  j2k::test::StreamRun stream;
  ASSERT_NO_FATAL_FAILURE(receive_stream(
      bin("j2kprobe") + " 'rtp://127.0.0.1:" + p + "?format=ts&fec=1' --frames 10 --timeout 20 --json --no-decode -q",
      {port, port + 2, port + 4},
      bin("j2ksend") + " --to rtp://127.0.0.1:" + p + " --format ts --fec 10x10 --loss 0.005 --seed 5 --size 1920x1080 --fps 2 "
                       "--frames 10 --lossless --loop-frames 2 --cache-dir " + std::string(J2K_TEST_CACHE_DIR),
      tag, stream));
  const auto packets = number_after(stream.tx.out, "frames,");
  const auto dropped = number_after(stream.tx.out, "dropped");
  ASSERT_NE(dropped, ~0ull) << stream.tx.out;
  ASSERT_GT(dropped, 10u) << "the sender dropped too little for the test to prove anything";
  const auto& s = stream.summary;
  EXPECT_GT(s["packets"]["received"].get<std::uint64_t>(), 8000u) << "frames of ~880 packets: " << packets;
  EXPECT_EQ(s["packets"]["lost"], 0);
  EXPECT_EQ(s["packets"]["recovered_by_fec"].get<std::uint64_t>(), dropped);
  EXPECT_EQ(s["frames"]["complete"], 10);
}

namespace {

struct SeamlessRun {
  json summary;
  std::uint64_t dropped1 = 0, dropped2 = 0, both = 0;
};

/// j2ksend to two paths with 5 % independent loss on each (optionally with 10×10 FEC),
/// j2kprobe on both URLs.
SeamlessRun seamless(int port, int port2, bool fec, const std::string& tag) {
  SeamlessRun r;
  const std::string query = fec ? "?format=ts&fec=1" : "?format=ts";
  std::vector<int> ports{port, port2};
  if (fec) ports.insert(ports.end(), {port + 2, port + 4});
  auto [probe, tx] = receive_and_send(
      bin("j2kprobe") + " 'rtp://127.0.0.1:" + std::to_string(port) + query + "' rtp://127.0.0.1:" + std::to_string(port2) +
          " --frames 100 --timeout 4 --json --no-drop -q",
      ports,
      bin("j2ksend") + " --to rtp://127.0.0.1:" + std::to_string(port) + " --to2 rtp://127.0.0.1:" + std::to_string(port2) +
          (fec ? " --fec 10x10" : "") +
          " --format ts --loss 0.05 --loss2 0.05 --seed 11 --size 320x240 --fps 50 --frames 100 --bitrate 20M --pattern --no-cache",
      tag);
  EXPECT_EQ(tx.exit_code, 0) << tx.err;
  EXPECT_EQ(probe.exit_code, 0) << probe.err;
  r.dropped1 = number_after(tx.out, "dropped");
  r.dropped2 = number_after(tx.out, "path 2: dropped");
  r.both = number_after(tx.out, "on both paths");
  EXPECT_NE(r.both, ~0ull) << tx.out;
  if (probe.exit_code == 0) r.summary = json::parse(probe.out);
  return r;
}

}  // namespace

TEST(Tr01Seamless, TwoPathsWithFivePercentLossEachLoseOnlyWhatBothPathsLost) {
  const auto r = seamless(5180, 5190, false, "tr01_2022_7");
  ASSERT_FALSE(r.summary.is_null());
  ASSERT_GT(r.dropped1, 0u);
  ASSERT_GT(r.dropped2, 0u);
  const auto& s = r.summary;
  // After the merge only packets lost on both paths are missing; each path's own counters
  // equal what the sender dropped on it.
  EXPECT_EQ(s["packets"]["lost"].get<std::uint64_t>(), r.both);
  ASSERT_EQ(s["paths"].size(), 2u);
  EXPECT_EQ(s["paths"][0]["packets"]["lost"].get<std::uint64_t>(), r.dropped1);
  EXPECT_EQ(s["paths"][1]["packets"]["lost"].get<std::uint64_t>(), r.dropped2);
  EXPECT_EQ(s["paths"][0]["packets"]["late"], 0);
  EXPECT_EQ(s["paths"][1]["packets"]["late"], 0);
  EXPECT_GE(s["frames"]["complete"].get<std::uint64_t>() + r.both, 100u);
}

TEST(Tr01Seamless, TwoPathsWithFivePercentLossEachAndFecDeliverEveryFrame) {
  // Coinciding losses (about 0.25 % of packets) are what 2022-1 FEC on the merged stream is for.
  const auto r = seamless(5200, 5210, true, "tr01_2022_7_fec");
  ASSERT_FALSE(r.summary.is_null());
  ASSERT_GT(r.both, 0u) << "no coinciding loss: the FEC part proves nothing with this seed";
  const auto& s = r.summary;
  EXPECT_EQ(s["packets"]["lost"], 0);
  // At least the coinciding losses. On a loaded machine a path can lag past the FEC: FEC then
  // rebuilds a packet one path lost before the other path's copy comes (4 for 3 seen once in
  // CI, 2026-11-29). Said in the closing note as open: FEC behind the merge does not wait for
  // the paths' skew.
  EXPECT_GE(s["packets"]["recovered_by_fec"].get<std::uint64_t>(), r.both);
  EXPECT_LE(s["packets"]["recovered_by_fec"].get<std::uint64_t>(), r.dropped1 + r.dropped2);
  EXPECT_EQ(s["frames"]["complete"], 100);
  EXPECT_EQ(s["frames"]["incomplete"], 0);
  EXPECT_EQ(s["frames"]["decoded"], 100);
  ASSERT_EQ(s["paths"].size(), 2u);
  EXPECT_EQ(s["paths"][0]["packets"]["lost"].get<std::uint64_t>(), r.dropped1);
  EXPECT_EQ(s["paths"][1]["packets"]["lost"].get<std::uint64_t>(), r.dropped2);
}

// Review (2026-11-25): fec=1 on the second path's URL was ignored (its FEC ports were never
// joined): with path 1 dead, its FEC went with it. Path 1 here has no FEC in its URL and
// loses 5 %; path 2 loses 5 % and brings the FEC: the coinciding losses are rebuilt.
TEST(Tr01Seamless, TheSecondPathsFecIsJoinedWhenItsUrlAsksForIt) {
  const int port = 5240, port2 = 5250;
  auto [probe, tx] = receive_and_send(
      bin("j2kprobe") + " 'rtp://127.0.0.1:" + std::to_string(port) + "?format=ts' 'rtp://127.0.0.1:" +
          std::to_string(port2) + "?format=ts&fec=1' --frames 100 --timeout 4 --json --no-drop -q",
      {port, port2, port2 + 2, port2 + 4},
      bin("j2ksend") + " --to rtp://127.0.0.1:" + std::to_string(port) + " --to2 rtp://127.0.0.1:" + std::to_string(port2) +
          " --fec 10x10 --format ts --loss 0.05 --loss2 0.05 --seed 11 --size 320x240 --fps 50 --frames 100 --bitrate 20M"
          " --pattern --no-cache",
      "tr01_2022_7_fec_on_path2");
  ASSERT_EQ(tx.exit_code, 0) << tx.err;
  ASSERT_EQ(probe.exit_code, 0) << probe.err;
  const std::uint64_t both = number_after(tx.out, "on both paths");
  ASSERT_GT(both, 0u) << tx.out;
  const auto s = json::parse(probe.out);
  EXPECT_EQ(s["packets"]["lost"], 0);
  EXPECT_EQ(s["packets"]["recovered_by_fec"].get<std::uint64_t>(), both);
  EXPECT_EQ(s["frames"]["complete"], 100);
}

// Review 2026-11-28: --loss2 alone (a failing second path, the case 2022-7 is for) was
// ignored: the sender impaired path 2 only when path 1 was impaired too. And the manifest
// did not list path 2's drops nor say what a merging receiver loses.
TEST(Tr01Seamless, LossOnTheSecondPathAloneIsSentCountedAndListed) {
  const int port = 5260, port2 = 5270;
  auto [probe, tx] = receive_and_send(
      bin("j2kprobe") + " 'rtp://127.0.0.1:" + std::to_string(port) + "?format=ts' rtp://127.0.0.1:" + std::to_string(port2) +
          " --frames 60 --timeout 4 --json --no-drop -q",
      {port, port2},
      bin("j2ksend") + " --to rtp://127.0.0.1:" + std::to_string(port) + " --to2 rtp://127.0.0.1:" + std::to_string(port2) +
          " --format ts --loss2 0.05 --seed 5 --size 320x240 --fps 50 --frames 60 --bitrate 20M --pattern --no-cache"
          " --manifest tr01_path2_loss.json",
      "tr01_path2_loss");
  ASSERT_EQ(tx.exit_code, 0) << tx.err;
  ASSERT_EQ(probe.exit_code, 0) << probe.err;
  const std::uint64_t dropped2 = number_after(tx.out, "path 2: dropped");
  ASSERT_GT(dropped2, 0u) << tx.out;
  EXPECT_EQ(number_after(tx.out, "on both paths"), 0u);
  const auto s = json::parse(probe.out);
  EXPECT_EQ(s["packets"]["lost"], 0);
  EXPECT_EQ(s["frames"]["complete"], 60);
  ASSERT_EQ(s["paths"].size(), 2u);
  EXPECT_EQ(s["paths"][1]["packets"]["lost"].get<std::uint64_t>(), dropped2);
  const auto manifest = json::parse(j2k::test::slurp("tr01_path2_loss.json"));
  EXPECT_EQ(manifest["impaired_packets"]["dropped_path2"].size(), dropped2);
  std::uint64_t per_frame = 0, both = 0;
  for (const auto& f : manifest["sent"]) {
    per_frame += f["dropped_path2"].get<std::uint64_t>();
    both += f["dropped_both"].get<std::uint64_t>();
  }
  EXPECT_EQ(per_frame, dropped2);
  EXPECT_EQ(both, 0u);
}

TEST(Tr01Seamless, AStreamThatArrivesOnlyOnPathTwoIsReceived) {
  // j2kprobe waited for its first packet, and for silence, on path 1's socket alone: with
  // path 1 dead it said "no packets" and exited 3 while path 2 delivered every frame.
  const int port = 5220, port2 = 5230;
  auto [probe, tx] = receive_and_send(
      bin("j2kprobe") + " 'rtp://127.0.0.1:" + std::to_string(port) + "?format=ts' rtp://127.0.0.1:" + std::to_string(port2) +
          " --frames 50 --wait 20 --timeout 4 --json --no-drop -q",
      {port, port2},
      // Path 1 goes to a port nobody listens on: dead from the start.
      bin("j2ksend") + " --to rtp://127.0.0.1:" + std::to_string(port + 1) + " --to2 rtp://127.0.0.1:" + std::to_string(port2) +
          " --format ts --seed 3 --size 320x240 --fps 50 --frames 50 --bitrate 20M --pattern --no-cache",
      "tr01_2022_7_path2_only");
  ASSERT_EQ(tx.exit_code, 0) << tx.err;
  ASSERT_EQ(probe.exit_code, 0) << probe.err;
  const auto s = json::parse(probe.out);
  EXPECT_EQ(s["frames"]["complete"], 50);
  EXPECT_EQ(s["packets"]["lost"], 0);
  ASSERT_EQ(s["paths"].size(), 2u);
  EXPECT_EQ(s["paths"][0]["packets"]["received"], 0);
  EXPECT_GT(s["paths"][1]["packets"]["received"].get<std::uint64_t>(), 0u);
  EXPECT_GT(s["packets"]["datagrams"].get<std::uint64_t>(), 0u);
}
