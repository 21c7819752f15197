// FFmpeg writes JPEG 2000 frames into MXF as JP2 files by default (-c:v jpeg2000). Streamed by
// j2ksend --mxf, j2kprobe must decode every frame (issue 10 item 7,
// issue 14 item 7): the codestream is found in each frame's jp2c box.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <thread>

#include "process.hpp"

using j2k::test::bin;
using j2k::test::run;
using nlohmann::json;

namespace {

bool have(const char* tool) { return std::system((std::string("command -v ") + tool + " >/dev/null 2>&1").c_str()) == 0; }

/// Waits until the receiver's stderr says it is listening (or it has ended); true when it listens.
bool wait_for_listening(const std::string& err_file, const bool& ended) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline && !ended) {
    if (j2k::test::slurp(err_file).find("listening on") != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // polling a condition, not a delay
  }
  return false;
}

}  // namespace

TEST(FfmpegJp2Mxf, StreamedFileDecodesEveryFrame) {
  if (!have("ffmpeg")) GTEST_SKIP() << "ffmpeg not installed (apt install ffmpeg): cannot write a JP2-wrapped MXF";
  const std::string tag = "ffmpeg_jp2", file = tag + ".mxf";
  std::filesystem::remove(file);
  // The command: FFmpeg's own encoder, whose MXF frames are JP2 files.
  auto made = run("ffmpeg -y -loglevel error -f lavfi -i testsrc2=size=720x576:rate=25 -t 1 -c:v jpeg2000 -pix_fmt yuv422p " + file,
                  tag + ".make");
  ASSERT_EQ(made.exit_code, 0) << made.err;
  {  // The file really holds JP2: the signature box follows a picture element key.
    const std::string bytes = j2k::test::slurp(file);
    ASSERT_NE(bytes.find(std::string("\x00\x00\x00\x0CjP  \r\n\x87\n", 12)), std::string::npos) << "FFmpeg wrote no JP2 frames";
  }
  const int port = 5070;
  std::filesystem::remove(tag + ".probe.err");  // a previous run's "listening" line must not count
  bool ended = false;
  j2k::test::CommandResult probe;
  std::thread rx([&] {
    probe = run(bin("j2kprobe") + " 'rtp://127.0.0.1:" + std::to_string(port) + "' --frames 25 --timeout 20 --json --no-drop",
                tag + ".probe");
    ended = true;
  });
  const bool listening = wait_for_listening(tag + ".probe.err", ended);
  j2k::test::CommandResult tx;
  if (listening)
    tx = run(bin("j2ksend") + " --to 'rtp://127.0.0.1:" + std::to_string(port) + "' --mxf " + file,
             tag + ".send");
  rx.join();
  ASSERT_TRUE(listening) << probe.err;
  ASSERT_EQ(tx.exit_code, 0) << tx.err;
  ASSERT_EQ(probe.exit_code, 0) << probe.err;
  EXPECT_EQ(probe.err.find("unusable"), std::string::npos) << probe.err;
  auto summary = json::parse(probe.out);
  EXPECT_EQ(summary["packets"]["lost"], 0);
  EXPECT_EQ(summary["frames"]["complete"], 25);
  EXPECT_EQ(summary["frames"]["decoded"], 25);
  EXPECT_EQ(summary["stream"]["width"], 720);
  EXPECT_EQ(summary["stream"]["height"], 576);
}
