// Interoperability with real peers (GStreamer, FFmpeg): streams and files other software
// made must be received completely and decode identically to the peer's own decode.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <thread>

#include "process.hpp"

using j2k::test::bin;
using j2k::test::run;
using nlohmann::json;

namespace {
bool have(const char* tool) { return std::system((std::string("command -v ") + tool + " >/dev/null 2>&1").c_str()) == 0; }
}  // namespace

class GStreamerRfc5371 : public ::testing::TestWithParam<std::pair<std::string, int>> {};

TEST_P(GStreamerRfc5371, EveryFrameReceivedAndDecodedLikeGStreamer) {
  if (!have("gst-launch-1.0")) GTEST_SKIP() << "gst-launch-1.0 not installed (apt install gstreamer1.0-tools)";
  const auto [format, port] = GetParam();
  const std::string src = "videotestsrc num-buffers=25 pattern=smpte horizontal-speed=4 ! video/x-raw,width=720,height=576,format=" +
                          format + ",framerate=25/1 ! openjpegenc ! rtpj2kpay";
  const std::string tag = "gst_" + format;
  j2k::test::CommandResult probe;
  std::thread rx([&] {
    probe = run(bin("j2kprobe") + " 'rtp://127.0.0.1:" + std::to_string(port) +
                    "?format=rfc5371' --frames 25 --timeout 10 --json --dump-raw " + tag + ".ours.yuv",
                tag + ".probe");
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(700));
  auto tx = run("gst-launch-1.0 -q " + src + " ! udpsink host=127.0.0.1 port=" + std::to_string(port), tag + ".send");
  rx.join();
  ASSERT_EQ(tx.exit_code, 0) << tx.err;
  ASSERT_EQ(probe.exit_code, 0) << probe.err;
  // GStreamer's own receive path, on the same (deterministic) stream.
  auto ref = run("gst-launch-1.0 -q " + src + " ! rtpj2kdepay ! jpeg2000parse ! openjpegdec ! video/x-raw,format=" + format +
                     " ! filesink location=" + tag + ".gst.yuv",
                 tag + ".ref");
  ASSERT_EQ(ref.exit_code, 0) << ref.err;
  auto summary = json::parse(probe.out);
  EXPECT_EQ(summary["packets"]["lost"], 0);
  EXPECT_EQ(summary["frames"]["complete"], 25);
  EXPECT_EQ(summary["frames"]["decoded"], 25);
  const auto ours = j2k::test::slurp(tag + ".ours.yuv"), theirs = j2k::test::slurp(tag + ".gst.yuv");
  EXPECT_GT(theirs.size(), 0u);
  EXPECT_EQ(ours.size(), theirs.size());
  EXPECT_TRUE(ours == theirs) << "decoded frames differ from GStreamer's decode";
}

INSTANTIATE_TEST_SUITE_P(Formats, GStreamerRfc5371,
                         ::testing::Values(std::make_pair(std::string("Y42B"), 5040),
                                           std::make_pair(std::string("I422_10LE"), 5042)),
                         [](const auto& param_info) { return param_info.param.first; });
