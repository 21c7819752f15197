// What the tools say to a user (issue 10): exit statuses, --version, arguments refused with a
// one-line reason, waiting for a sender, labelled statistics, what goes to stdout and stderr.
#include <gtest/gtest.h>

#include <unistd.h>

#include <nlohmann/json.hpp>
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

#include "process.hpp"

using namespace j2k;
using j2k::test::bin;
using j2k::test::run;
using nlohmann::json;

namespace {

const std::string kCache = std::string(" --cache-dir ") + J2K_TEST_CACHE_DIR;
// j2kplay without a display runs headless: these tests never open a window.
const std::string kNoDisplay = "env -u DISPLAY -u WAYLAND_DISPLAY -u QT_QPA_PLATFORM ";

std::vector<std::string> tools() {
  std::vector<std::string> t{"j2kprobe", "j2kdecode", "j2ksend"};
  if (J2K_HAVE_PLAYER) t.push_back("j2kplay");
  return t;
}

bool has(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

}  // namespace

// Item 1: --version everywhere; CLI11's own statuses (105, 106, 109) are now 2.
TEST(ExitStatus, EveryToolHasVersionAndAnswersArgumentErrorsWithTwo) {
  for (const auto& tool : tools()) {
    auto v = run(bin(tool) + " --version", tool + ".version");
    EXPECT_EQ(v.exit_code, 0) << tool << v.err;
    EXPECT_TRUE(has(v.out, tool + " 0.")) << v.out;
    EXPECT_TRUE(has(v.out, "Qt ")) << v.out;
    EXPECT_TRUE(has(v.out, "OpenJPEG ")) << v.out;
    EXPECT_TRUE(has(v.out, "CUDA")) << v.out;

    // (With the required argument present: a missing one is reported first.)
    const std::string required = tool == "j2kprobe" ? " rtp://239.1.1.1:5004" : tool == "j2kdecode" ? " /dev/null" : "";
    auto unknown = run(bin(tool) + required + " --no-such-option", tool + ".unknown");
    EXPECT_EQ(unknown.exit_code, 2) << tool;
    EXPECT_TRUE(has(unknown.err, "--no-such-option")) << unknown.err;

    auto help = run(bin(tool) + " --help", tool + ".help");
    EXPECT_EQ(help.exit_code, 0) << tool;
    EXPECT_TRUE(has(help.out, "Exit status:\n  0  ")) << help.out;
    EXPECT_TRUE(has(help.out, "  2  bad arguments")) << help.out;
  }
  auto no_url = run(bin("j2kprobe"), "probe.nourl");
  EXPECT_EQ(no_url.exit_code, 2);
  EXPECT_TRUE(has(no_url.err, "url is required")) << no_url.err;
  auto missing = run(bin("j2kdecode") + " /nonexistent.j2c", "decode.missing");
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_TRUE(has(missing.err, "does not exist")) << missing.err;
  auto directory = run(bin("j2kdecode") + " /tmp", "decode.directory");
  EXPECT_EQ(directory.exit_code, 2);
  EXPECT_TRUE(has(directory.err, "directory")) << directory.err;
}

// Item 2: each accepted silently before; now an error with a one-line reason, status 2.
TEST(BadArguments, RefusedWithAOneLineReason) {
  struct Case {
    std::string command, reason;
  };
  std::vector<Case> cases{
      {bin("j2kprobe") + " 'rtp://239.1.1.1:5004?iface=127.0.0.1' --log-level bogus", "--log-level: bogus not in"},
      {bin("j2kprobe") + " 'rtp://239.1.1.1:5004?ifcae=127.0.0.1'", "did you mean 'iface'?"},
      {bin("j2ksend") + " --to 'rtp://239.1.1.1:5004?ifcae=127.0.0.1'", "did you mean 'iface'?"},
      {bin("j2kprobe") + " 'rtp://239.1.1.1:5004' --backend cuda --gpu off", "cannot be combined with --gpu off"},
      {bin("j2kdecode") + " /dev/null --backend openjpeg --gpu on", "cannot be combined with --gpu on"},
      {bin("j2kprobe") + " 'rtp://239.1.1.1:5004' --timeout 0", "--timeout: 0 must be more than 0"},
      // Review 2026-11-25: event lines broke the JSON summary on stdout.
      {bin("j2kprobe") + " 'rtp://239.1.1.1:5004' --events - --json", "--events - and --json both write to stdout"},
      {bin("j2kprobe") + " 'rtp://239.1.1.1:5004' --events-limit none", "give --events FILE as well"},
      // Review 2026-11-28: a missing capture file was status 1, a missing SDP file status 2.
      {bin("j2kprobe") + " 'pcap:/nonexistent/cap.pcapng?port=5004'", "capture '/nonexistent/cap.pcapng' does not exist"},
      // Review 2026-11-28 (second): empty files and status 0.
      {bin("j2kprobe") + " 'rtp://239.1.1.1:5004' --no-decode --checksums c.json", "--checksums writes decoded frames"},
      {bin("j2kprobe") + " 'rtp://239.1.1.1:5004' --no-decode --dump-raw r.yuv", "--dump-raw writes decoded frames"},
      // Review 2026-11-25: these crashed the sender (std::length_error, SIGFPE).
      {bin("j2ksend") + " --to 'rtp://239.1.1.1:5004' --bitrate nan", "--bitrate 'nan' is not a rate"},
      {bin("j2ksend") + " --to 'rtp://239.1.1.1:5004' --fps 0.001", "--fps '0.001' is not a frame rate from 1 to 1000"},
      {bin("j2ksend") + " --to 'rtp://239.1.1.1:5004' --hdr pq --bits 8", "--hdr needs --bits 10 or 12"},
      // Review 2026-11-25: said only after the frames were encoded (8 s at 1080, minutes at 4K).
      {bin("j2ksend") + " --to 'rtp://239.1.1.1:5004' --pattern --size 1920x1080 --no-cache --fec 10", "--fec '10' is not LxD"},
      {bin("j2ksend") + " --to 'rtp://239.1.1.1:5004' --pattern --size 1920x1080 --no-cache --format ts --dual-codestream",
       "--format ts carries one codestream"},
      {bin("j2ksend") + " --to 'rtp://239.1.1.1:5004?iface=bogus0' --pattern --size 1920x1080 --no-cache",
       "interface 'bogus0' is neither an IPv4 address nor an interface with one"},
      // Review 2026-11-25 (second): said after the whole decode, with status 1.
      {bin("j2kdecode") + " " + J2K_SOURCE_DIR + "/fuzz/decoder/corpus/seed_422.j2k -o out.tif",
       "unknown output extension '.tif' (use .pgx, .pgm, .ppm, .png or .raw)"},
  };
  if (J2K_HAVE_PLAYER) {
    cases.push_back({kNoDisplay + bin("j2kplay") + " --demo --quit-after -1", "--quit-after: -1 must be at least 0"});
    cases.push_back({kNoDisplay + bin("j2kplay") + " --demo rtp://239.1.1.1:5004", "give either --demo or a URL"});
    cases.push_back({kNoDisplay + bin("j2kplay") + " --headless 'pcap:/nonexistent/cap.pcapng?port=5004'",
                     "capture '/nonexistent/cap.pcapng' does not exist"});
    cases.push_back({kNoDisplay + bin("j2kplay") + " --demo --headless --screenshot shot.png --quit-after 1",
                     "--screenshot saves the window: it cannot be combined with --headless"});
  }
  int i = 0;
  for (const auto& c : cases) {
    auto r = run(c.command, "badarg" + std::to_string(i++));
    EXPECT_EQ(r.exit_code, 2) << c.command << "\n" << r.err;
    EXPECT_TRUE(has(r.err, c.reason)) << c.command << "\n" << r.err;
    // One line, and nothing started (no demo sender, no receiver).
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << c.command << "\n" << r.err;
  }
}

// Item 3: a size of the right form but out of range says so, before anything starts.
TEST(Messages, OutOfRangeSizesAreNotCalledMalformed) {
  auto send = run(bin("j2ksend") + " --size 13x7", "size.range");
  EXPECT_EQ(send.exit_code, 2);
  EXPECT_TRUE(has(send.err, "--size 13x7 is out of range")) << send.err;
  EXPECT_FALSE(has(send.err, "is not WxH")) << send.err;
  if (!J2K_HAVE_PLAYER) GTEST_SKIP() << "built without the player";
  // A window size is checked before the demo sender starts (no "demo: sending" line).
  auto play = run("QT_QPA_PLATFORM=offscreen " + bin("j2kplay") + " --demo --window-size 100000x5", "window.range");
  EXPECT_EQ(play.exit_code, 2);
  EXPECT_TRUE(has(play.err, "--window-size 100000x5 is out of range")) << play.err;
  EXPECT_FALSE(has(play.err, "demo: sending")) << play.err;
}

// Item 10: the first packet may come later than --timeout (a sender still encoding); the
// silence timeout applies only once a stream was seen. And item 12: no statistics lines
// before the first packet; every periodic line labels its totals.
TEST(Waiting, FirstPacketLaterThanTheTimeoutIsStillReceived) {
  const std::string url = "'rtp://239.10.30.1:5020?iface=127.0.0.1'";
  test::CommandResult probe;
  std::thread rx([&] { probe = run(bin("j2kprobe") + " " + url + " --json --timeout 1 --wait 60", "late.probe"); });
  // The condition under test: the receiver has been waiting longer than --timeout when the
  // first packet comes. (Waiting for its "waiting" line first makes the interval real.)
  for (int i = 0; i < 600 && !has(test::slurp("late.probe.err"), "waiting up to 60 s"); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  auto tx = run(bin("j2ksend") + " --to " + url + " --size 160x96 --fps 25 --pattern --lossless --frames 50" + kCache,
                "late.send");
  rx.join();
  ASSERT_EQ(tx.exit_code, 0) << tx.err;
  ASSERT_EQ(probe.exit_code, 0) << probe.err;
  auto summary = json::parse(probe.out);
  EXPECT_EQ(summary["frames"]["complete"], 50);
  EXPECT_TRUE(has(probe.err, "stream stopped: no packets for 1 s")) << probe.err;
  // Statistics lines: none before the first packet (so none at "t=   0s" while waiting), and
  // totals after "total:".
  std::regex line_re("t=\\s*\\d+s  pkts .*/s  frames .*/s .* total: lost \\d+, incomplete \\d+");
  std::size_t lines = 0;
  std::istringstream err(probe.err);
  for (std::string line; std::getline(err, line);)
    if (line.rfind("t=", 0) == 0) {
      ++lines;
      EXPECT_TRUE(std::regex_search(line, line_re)) << line;
    }
  EXPECT_LE(lines, 4u) << probe.err;  // 2 s of stream, not the 1.5 s of waiting before it
  // Item 6: the rate is over the stream's own time, not the wait nor the closing silence:
  // 50 frames at 25 fps are 2 s of stream.
  EXPECT_NEAR(summary["stream"]["stream_duration_s"].get<double>(), 2.0, 0.01);
  std::smatch m;
  ASSERT_TRUE(std::regex_search(tx.out, m, std::regex("(\\d+) packets, (\\d+) bytes"))) << tx.out;
  // The sender's bytes include the 12-byte RTP header of each packet; the receiver counts payload.
  const double payload = std::stod(m[2]) - 12.0 * std::stod(m[1]);
  EXPECT_NEAR(summary["stream"]["bitrate_mbps"].get<double>(), payload * 8e-6 / 2.0, payload * 8e-6 / 2.0 * 0.01);
}

TEST(Waiting, NoFirstPacketWithinWaitIsStatusThreeWithoutStatisticsLines) {
  auto r = run(bin("j2kprobe") + " 'rtp://239.10.30.2:5022?iface=127.0.0.1' --wait 1 --timeout 10", "nowait");
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_TRUE(has(r.err, "after 1 s")) << r.err;
  EXPECT_FALSE(has(r.err, "t=")) << r.err;
}

// Item 12: j2kdecode without -o says what it decoded.
TEST(Decode, WithoutOutputSaysWhatItDecoded) {
  auto r = run(bin("j2kdecode") + " " + J2K_SOURCE_DIR + "/fuzz/decoder/corpus/seed_422.j2k", "decode.noout");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(std::regex_search(r.out, std::regex("seed_422.j2k: \\d+x\\d+, \\d components? \\d+-bit .*decoded in [0-9.]+ ms")))
      << r.out;
}

// Review 2026-11-25: j2ksend --manifest to a path it cannot write said nothing and exited 0.
TEST(Sender, AManifestThatCannotBeWrittenFailsBeforeTheRun) {
  auto r = run(bin("j2ksend") + " --to rtp://127.0.0.1:9 --pattern --size 64x64 --frames 3 --no-cache "
                                "--manifest /nonexistent-dir/m.json",
               "send.manifest");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("cannot write the --manifest file '/nonexistent-dir/m.json'"), std::string::npos) << r.err;
  EXPECT_EQ(r.out.find("sent "), std::string::npos) << "nothing was sent";
}

// Review 2026-11-29: `j2ksend --hdr pq`, as the README shows it, was refused: --bits is 8
// unless given, and BT.2100 has no 8-bit form. Without --bits, HDR is 10 bits.
TEST(Sender, HdrWithoutBitsIsTenBits) {
  auto r = run(bin("j2ksend") + " --to rtp://127.0.0.1:9 --pattern --size 64x64 --frames 2 --no-cache --hdr pq", "send.hdr");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("64x64 10-bit"), std::string::npos) << r.err;
}

// Review 2026-11-29: a PNG of a digital cinema codestream (Rsiz 3-7, three components) showed
// its X'Y'Z' as R'G'B' (green, the wrong gamma), though j2kdecode's PNG is "as the player shows
// the picture" and the player converts X'Y'Z'. The same codestream with Rsiz 0 is R'G'B'.
TEST(Decode, APngOfADigitalCinemaCodestreamIsConvertedFromXyz) {
  auto cs = test::slurp(std::string(J2K_SOURCE_DIR) + "/fuzz/decoder/corpus/seed_1.j2k");
  ASSERT_GT(cs.size(), 8u);
  ASSERT_EQ(static_cast<unsigned char>(cs[2]), 0xFF);
  ASSERT_EQ(static_cast<unsigned char>(cs[3]), 0x51);  // SIZ; Rsiz at bytes 6 and 7
  cs[6] = 0;
  cs[7] = 0;
  std::ofstream("decode.plain.j2c", std::ios::binary) << cs;
  cs[7] = 3;  // 2K digital cinema
  std::ofstream("decode.cinema.j2c", std::ios::binary) << cs;
  auto plain = run(bin("j2kdecode") + " decode.plain.j2c -o decode.plain.png", "decode.plain");
  auto cinema = run(bin("j2kdecode") + " decode.cinema.j2c -o decode.cinema.png", "decode.cinema");
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  ASSERT_EQ(cinema.exit_code, 0) << cinema.err;
  EXPECT_NE(test::slurp("decode.plain.png"), test::slurp("decode.cinema.png")) << "X'Y'Z' converted, not shown as R'G'B'";
}

// Review 2026-11-29: a small output on a full disk exited 0: the stream's loss shows only at
// close, which nobody checked (PNG through QImage::save, which said yes).
TEST(Decode, AnOutputThatCannotBeWrittenOutIsAnError) {
  const std::string input = std::string(J2K_SOURCE_DIR) + "/fuzz/decoder/corpus/seed_1.j2k";
  for (const char* ext : {".pgm", ".ppm", ".raw", ".png"}) {
    const std::string out = std::string("decode.full") + ext;
    std::remove(out.c_str());
    ASSERT_EQ(::symlink("/dev/full", out.c_str()), 0);
    auto r = run(bin("j2kdecode") + " " + input + " -o " + out, std::string("decode.full") + ext);
    EXPECT_EQ(r.exit_code, 1) << ext << ": " << r.err;
    std::remove(out.c_str());
  }
}

// Review 2026-11-29: a PPM of components of different depths (8/10/8) said maxval 1023 and
// wrote the 8-bit ones unscaled, 4x too dark, with status 0. Refused now, with what to write.
TEST(Decode, APpmOfComponentsOfDifferentDepthsIsRefused) {
  auto cs = test::slurp(std::string(J2K_SOURCE_DIR) + "/fuzz/decoder/corpus/seed_1.j2k");
  ASSERT_GT(cs.size(), 50u);
  ASSERT_EQ(static_cast<unsigned char>(cs[45]), 7u);  // component 1's Ssiz: 8-bit unsigned
  cs[45] = 9;                                          // 10-bit
  std::ofstream("decode.mixed.j2c", std::ios::binary) << cs;
  auto r = run(bin("j2kdecode") + " decode.mixed.j2c -o decode.mixed.ppm", "decode.mixed");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("one bit depth (these are 8, 10 and 8 bits)"), std::string::npos) << r.err;
  auto pgx = run(bin("j2kdecode") + " decode.mixed.j2c -o decode.mixed.pgx", "decode.mixed.pgx");
  EXPECT_EQ(pgx.exit_code, 0) << pgx.err;
}

// Review 2026-11-25: j2kdecode /dev/zero read until the memory ran out (2 GB in 5 s and on).
TEST(Decode, AnInputThatNeverEndsIsRefusedAtTheMemoryLimit) {
  auto r = run("ulimit -v 4000000; " + bin("j2kdecode") + " /dev/zero --max-memory 16", "decode.zero");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("is larger than a codestream --max-memory (16 MiB) can decode (4 MiB)"), std::string::npos) << r.err;
}

// "The README's CLI sections match --help": every option a tool's --help lists is named in
// that tool's README section (or, for the common ones, in "Every tool").
TEST(Readme, EveryOptionInTheHelpIsInTheToolsSection) {
  const std::string readme = test::slurp(std::string(J2K_SOURCE_DIR) + "/README.md");
  auto section = [&](const std::string& heading) {
    const auto start = readme.find("\n### " + heading);
    if (start == std::string::npos) return std::string();
    const auto end = readme.find("\n#", start + 1);
    return readme.substr(start, end == std::string::npos ? std::string::npos : end - start);
  };
  const std::string common = section("Every tool");
  ASSERT_FALSE(common.empty());
  EXPECT_TRUE(has(common, "| 2 | bad arguments")) << "the README's exit status table";
  for (const auto& tool : tools()) {
    const std::string own = section("`" + tool);
    ASSERT_FALSE(own.empty()) << tool;
    auto help = run(bin(tool) + " --help", tool + ".readme");
    std::istringstream lines(help.out);
    std::size_t options = 0;
    for (std::string line; std::getline(lines, line);) {
      const auto first = line.find_first_not_of(' ');
      if (first == std::string::npos || first == 0 || line[first] != '-') continue;  // option lines only
      const std::string names = line.substr(first, line.find(' ', first) - first);
      static const std::regex option_name("--[a-z][a-z0-9-]*");
      for (std::sregex_iterator it(names.begin(), names.end(), option_name), end; it != end; ++it) {
        ++options;
        const std::regex named("`" + it->str() + "[` =]");  // written as `--opt`, `--opt VALUE` or `--opt=…`
        EXPECT_TRUE(std::regex_search(own, named) || std::regex_search(common, named))
            << tool << " " << it->str() << " is in --help but not in the README";
      }
    }
    EXPECT_GT(options, 3u) << help.out;
  }
}
