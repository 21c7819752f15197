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

namespace {

/// The picture of a PNG as 8-bit RGB, read by FFmpeg.
std::string png_rgb(const std::string& png, const std::string& tag) {
  const std::string raw = tag + ".rgb";
  auto r = run("ffmpeg -y -loglevel error -i " + png + " -f rawvideo -pix_fmt rgb24 " + raw, tag + ".torgb");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return j2k::test::slurp(raw);
}

struct Difference {
  double mean = 0;
  int max = 0;
};
Difference compare(const std::string& a, const std::string& b) {
  Difference d;
  if (a.size() != b.size() || a.empty()) return {1e9, 255};
  double sum = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const int e = std::abs(static_cast<unsigned char>(a[i]) - static_cast<unsigned char>(b[i]));
    sum += e;
    d.max = std::max(d.max, e);
  }
  d.mean = sum / static_cast<double>(a.size());
  return d;
}

}  // namespace

// Review 2026-11-28: `j2kdecode frame.jp2 -o frame.png` of a YCbCr JP2 (FFmpeg's JPEG 2000
// frames say sYCC in their colour box) wrote the Y, Cb and Cr components as R, G and B (4:4:4:
// mean error 36 against opj_decompress), or the luma alone, grey (4:2:2). The preview is the
// picture as shown: the JP2's colour honoured, chroma upsampled, turned into RGB.
TEST(Jp2Colour, APngOfAnSyccJp2IsItsColourPicture) {
  if (!have("ffmpeg") || !have("opj_decompress")) GTEST_SKIP() << "ffmpeg and opj_decompress needed";
  const std::string photo = std::string(J2K_MEDIA_DIR) + "/flower.png";
  for (const std::string sampling : {"yuv444p", "yuv422p"}) {
    const std::string tag = "sycc_" + sampling, jp2 = tag + ".jp2";
    auto made = run("ffmpeg -y -loglevel error -i " + photo + " -vf scale=320:240 -frames 1 -pix_fmt " + sampling +
                        " -c:v jpeg2000 -pred 1 " + jp2,
                    tag + ".make");
    ASSERT_EQ(made.exit_code, 0) << made.err;
    auto ref = run("opj_decompress -i " + jp2 + " -o " + tag + ".ref.png", tag + ".ref");
    ASSERT_EQ(ref.exit_code, 0) << ref.err;
    const std::string want = png_rgb(tag + ".ref.png", tag + ".ref");
    for (const std::string backend : {"own", "openjpeg"}) {
      auto ours = run(bin("j2kdecode") + " " + jp2 + " --backend " + backend + " -o " + tag + "." + backend + ".png",
                      tag + "." + backend);
      ASSERT_EQ(ours.exit_code, 0) << ours.err;
      const Difference d = compare(png_rgb(tag + "." + backend + ".png", tag + "." + backend), want);
      if (sampling == "yuv444p") {
        // The same conversion (full-range BT.601), rounding apart.
        EXPECT_LE(d.max, 1) << backend << " mean " << d.mean;
      } else {
        // opj_decompress repeats each chroma sample; we interpolate (as the player does):
        // edges differ, the picture does not.
        EXPECT_LT(d.mean, 3.0) << backend << " max " << d.max;
      }
    }
  }
}
