// Capture files: link-layer parsing, and j2kprobe replaying pcap and pcapng captures.
#include <gtest/gtest.h>
#include <pcap/pcap.h>

#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "../e2e/process.hpp"
#include "packetizer/openjpeg_encoder.hpp"
#include "packetizer/mxf_writer.hpp"
#include "packetizer/rtp_packetizer.hpp"
#include "net/pcap_replay.hpp"
#include "test_images.hpp"

using namespace j2k;

namespace {

/// Ethernet + IPv4 + UDP around a payload (checksums zero: not checked by receivers of captures).
std::vector<std::uint8_t> frame_around(const std::vector<std::uint8_t>& payload, std::uint16_t port, bool vlan = false,
                                       std::uint16_t fragment = 0) {
  std::vector<std::uint8_t> f(12, 0x02);
  ByteWriter w(f);
  if (vlan) { w.u16(0x8100); w.u16(42); }
  w.u16(0x0800);
  w.u8(0x45); w.u8(0); w.u16(static_cast<std::uint16_t>(20 + 8 + payload.size()));
  w.u16(1); w.u16(fragment); w.u8(64); w.u8(17); w.u16(0);
  w.u32(0x0A000001); w.u32(0xEF010101);
  w.u16(40000); w.u16(port); w.u16(static_cast<std::uint16_t>(8 + payload.size())); w.u16(0);
  w.bytes(payload);
  return f;
}

struct Stream {
  std::vector<std::vector<std::uint8_t>> packets;
  std::vector<std::uint64_t> checksums;
};

Stream make_stream(int frames) {
  Stream s;
  packetizer::RtpPacketizer packetizer(0xABCD, 96, 65500, 1200);
  packetizer::MxfPictureParams mp;
  mp.width = 96; mp.height = 64; mp.depth = 10;
  packetizer::EncodeParams ep;
  ep.lossless = true;
  for (int f = 0; f < frames; ++f) {
    PlanarImage img = test::photo_ycbcr(96, 64, 10, 2, 600 + 13 * f, 400 + 7 * f);
    auto cs = packetizer::encode_openjpeg(img, ep);
    EXPECT_TRUE(cs.ok());
    s.checksums.push_back(checksum(img));
    const auto ts = static_cast<std::uint32_t>(f * 3600);
    if (f == 0) {
      packetizer.packetize(packetizer::mxf_partition_pack(true, 0, 0), ts, s.packets);
      packetizer.packetize(packetizer::mxf_cdci_descriptor(mp), ts, s.packets);
    }
    packetizer.packetize(packetizer::mxf_picture_element(*cs), ts, s.packets);
  }
  return s;
}

void write_pcap(const std::string& path, const Stream& s, std::uint16_t port) {
  pcap_t* dead = pcap_open_dead(DLT_EN10MB, 65535);
  pcap_dumper_t* dump = pcap_dump_open(dead, path.c_str());
  ASSERT_NE(dump, nullptr);
  int i = 0;
  auto put = [&](const std::vector<std::uint8_t>& frame) {
    pcap_pkthdr h{};
    h.ts.tv_sec = 1700000000 + i / 1000;
    h.ts.tv_usec = (i % 1000) * 1000;
    h.caplen = h.len = static_cast<bpf_u_int32>(frame.size());
    pcap_dump(reinterpret_cast<u_char*>(dump), &h, frame.data());
    ++i;
  };
  for (const auto& p : s.packets) {
    put(frame_around(p, port, i % 3 == 0));
    if (i % 5 == 0) put(frame_around(p, port + 1));  // other traffic in the capture
  }
  pcap_dump_close(dump);
  pcap_close(dead);
}

/// pcapng by hand (libpcap reads it but cannot write it): SHB, IDB, then one EPB per frame.
void write_pcapng(const std::string& path, const Stream& s, std::uint16_t port) {
  std::vector<std::uint8_t> out;
  auto le32 = [&](std::uint32_t v) { for (int k = 0; k < 4; ++k) out.push_back(static_cast<std::uint8_t>(v >> (8 * k))); };
  auto le16 = [&](std::uint16_t v) { out.push_back(static_cast<std::uint8_t>(v)); out.push_back(static_cast<std::uint8_t>(v >> 8)); };
  le32(0x0A0D0D0A); le32(28); le32(0x1A2B3C4D); le16(1); le16(0); le32(0xFFFFFFFF); le32(0xFFFFFFFF); le32(28);
  le32(1); le32(20); le16(DLT_EN10MB); le16(0); le32(65535); le32(20);
  std::uint64_t t = 1700000000ull * 1000000;
  for (const auto& p : s.packets) {
    auto frame = frame_around(p, port);
    const std::uint32_t padded = static_cast<std::uint32_t>((frame.size() + 3) & ~std::size_t{3});
    const std::uint32_t total = 32 + padded;
    le32(6); le32(total); le32(0); le32(static_cast<std::uint32_t>(t >> 32)); le32(static_cast<std::uint32_t>(t));
    le32(static_cast<std::uint32_t>(frame.size())); le32(static_cast<std::uint32_t>(frame.size()));
    out.insert(out.end(), frame.begin(), frame.end());
    out.resize(out.size() + (padded - frame.size()), 0);
    le32(total);
    t += 500;
  }
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(out.data()), static_cast<std::streamsize>(out.size()));
}

}  // namespace

TEST(CapturedFrame, ParsesEthernetVlanAndRejectsFragmentsAndRunts) {
  std::vector<std::uint8_t> payload = {1, 2, 3, 4, 5};
  net::UdpDatagramView v;  // views into the frame: keep each frame alive while it is looked at
  const auto plain = frame_around(payload, 5004);
  EXPECT_EQ(net::parse_captured_frame(DLT_EN10MB, plain, v), net::FrameVerdict::udp);
  EXPECT_EQ(v.destination_port, 5004);
  EXPECT_EQ(v.payload.size(), 5u);
  EXPECT_EQ(v.destination, 0xEF010101u);
  const auto tagged = frame_around(payload, 5004, true);
  EXPECT_EQ(net::parse_captured_frame(DLT_EN10MB, tagged, v), net::FrameVerdict::udp);
  EXPECT_EQ(v.payload[4], 5);
  const auto fragment = frame_around(payload, 5004, false, 0x2000);
  EXPECT_EQ(net::parse_captured_frame(DLT_EN10MB, fragment, v), net::FrameVerdict::fragment);
  auto cut = frame_around(payload, 5004);
  cut.resize(30);
  EXPECT_EQ(net::parse_captured_frame(DLT_EN10MB, cut, v), net::FrameVerdict::truncated);
  auto tcp = frame_around(payload, 5004);
  tcp[14 + 9] = 6;
  EXPECT_EQ(net::parse_captured_frame(DLT_EN10MB, tcp, v), net::FrameVerdict::not_udp);
  for (std::size_t n = 0; n < 60; ++n) {  // every prefix is handled without reading past it
    std::vector<std::uint8_t> prefix(tcp.begin(), tcp.begin() + static_cast<std::ptrdiff_t>(std::min(n, tcp.size())));
    (void)net::parse_captured_frame(DLT_EN10MB, prefix, v);
  }
}

class PcapReplayProbe : public ::testing::TestWithParam<bool> {};

TEST_P(PcapReplayProbe, EveryFrameOfTheCaptureDecodesBitExact) {
  const bool ng = GetParam();
  Stream s = make_stream(12);
  const std::string file = ng ? "replay.pcapng" : "replay.pcap";
  if (ng) write_pcapng(file, s, 5004);
  else write_pcap(file, s, 5004);
  auto r = test::run(test::bin("j2kprobe") + " 'pcap:" + file + "?port=5004' --json --checksums " + file + ".json",
                     file + ".probe");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto summary = nlohmann::json::parse(r.out);
  EXPECT_EQ(summary["packets"]["received"], s.packets.size());
  EXPECT_EQ(summary["packets"]["lost"], 0);
  EXPECT_EQ(summary["frames"]["complete"], 12);
  EXPECT_EQ(summary["frames"]["decoded"], 12);
  auto decoded = nlohmann::json::parse(test::slurp(file + ".json"))["decoded"];
  ASSERT_EQ(decoded.size(), 12u);
  for (int i = 0; i < 12; ++i) EXPECT_EQ(decoded[i]["checksum"], fmt::format("{:016x}", s.checksums[i])) << i;
}

INSTANTIATE_TEST_SUITE_P(Formats, PcapReplayProbe, ::testing::Values(false, true),
                         [](const auto& param_info) { return std::string(param_info.param ? "pcapng" : "pcap"); });

TEST(PcapReplayProbe, MissingOrBogusFileIsAClearError) {
  auto r = test::run(test::bin("j2kprobe") + " 'pcap:/nonexistent.pcap?port=5004'", "nopcap");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("cannot open capture"), std::string::npos) << r.err;
  std::ofstream("bogus.pcap") << "this is not a capture";
  auto r2 = test::run(test::bin("j2kprobe") + " 'pcap:bogus.pcap?port=5004'", "bogus");
  EXPECT_EQ(r2.exit_code, 1);
}
