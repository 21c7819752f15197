// The reorder-buffer and pcap-reader fuzz harnesses as ordinary tests: the committed corpora
// plus deterministic mutations of valid inputs (a reordering, lossy, stalling packet run; a
// small capture with Ethernet, VLAN, fragment and cut frames).
#include <gtest/gtest.h>

#include "fuzz_replay.hpp"
#include "net/pcap_replay.hpp"

using namespace j2k::test::fuzz;

// Each harness source is compiled into its own object with a renamed entry point.
extern "C" int fuzz_rtp_reorder(const std::uint8_t* data, std::size_t size);
extern "C" int fuzz_pcap_reader(const std::uint8_t* data, std::size_t size);


namespace {

Input reorder_seed() {
  Input in = {0x80 | 16, 20};  // adaptive, 16 packets, 21 ms
  auto push = [&](std::uint16_t seq, std::uint8_t step) {
    in.insert(in.end(), {0, static_cast<std::uint8_t>(seq >> 8), static_cast<std::uint8_t>(seq), step});
  };
  for (std::uint16_t s = 65500; s != 20; ++s) {
    if (s % 17 == 3) continue;            // lost
    if (s % 11 == 0) push(static_cast<std::uint16_t>(s + 2), 1);  // early
    push(s, 2);
    if (s % 29 == 0) in.insert(in.end(), {3, 0, 0, 30});  // a stall: the timeout path
  }
  in.insert(in.end(), {4, 0, 0, 0, 5, 0, 0, 1, 0, 0, 100, 1, 5, 10, 0, 2});
  return in;
}

void le32(Input& o, std::uint32_t v) { for (int i = 0; i < 4; ++i) o.push_back(static_cast<std::uint8_t>(v >> (8 * i))); }
void le16(Input& o, std::uint16_t v) { for (int i = 0; i < 2; ++i) o.push_back(static_cast<std::uint8_t>(v >> (8 * i))); }

/// A classic little-endian pcap with Ethernet frames: UDP, UDP in a VLAN, a fragment, a cut frame.
Input pcap_seed() {
  Input o;
  le32(o, 0xA1B2C3D4); le16(o, 2); le16(o, 4); le32(o, 0); le32(o, 0); le32(o, 65535); le32(o, 1);
  auto frame = [&](bool vlan, bool fragment, std::size_t payload, std::size_t cut) {
    Input f(12, 0x02);
    if (vlan) f.insert(f.end(), {0x81, 0x00, 0x00, 0x05});
    f.insert(f.end(), {0x08, 0x00});
    const auto total = static_cast<std::uint16_t>(20 + 8 + payload);
    f.insert(f.end(), {0x45, 0, static_cast<std::uint8_t>(total >> 8), static_cast<std::uint8_t>(total), 0, 1,
                       static_cast<std::uint8_t>(fragment ? 0x20 : 0), 0, 64, 17, 0, 0, 127, 0, 0, 1, 239, 1, 1, 1});
    const auto ulen = static_cast<std::uint16_t>(8 + payload);
    f.insert(f.end(), {0x13, 0x88, 0x13, 0x8C, static_cast<std::uint8_t>(ulen >> 8), static_cast<std::uint8_t>(ulen), 0, 0});
    for (std::size_t i = 0; i < payload; ++i) f.push_back(static_cast<std::uint8_t>(i));
    const std::size_t caplen = f.size() - cut;
    le32(o, 1); le32(o, 0); le32(o, static_cast<std::uint32_t>(caplen)); le32(o, static_cast<std::uint32_t>(f.size()));
    o.insert(o.end(), f.begin(), f.begin() + static_cast<std::ptrdiff_t>(caplen));
  };
  frame(false, false, 40, 0);
  frame(true, false, 30, 0);
  frame(false, true, 20, 0);
  frame(false, false, 60, 25);
  return o;
}

}  // namespace

TEST(ReorderFuzzReplay, CorpusAndMutations) {
  replay(fuzz_rtp_reorder, "rtp_reorder", {{"reorder_seed.bin", reorder_seed()}}, {.rounds = 2000, .seed = 31});
}

TEST(PcapReaderFuzzReplay, CorpusAndMutations) {
  const Input base = pcap_seed();
  // The seed itself reads as built: two datagrams (one in a VLAN), a fragment, a cut frame.
  const auto scan = j2k::net::scan_capture(base);
  EXPECT_TRUE(scan.opened);
  EXPECT_EQ(scan.frames, 4u);
  EXPECT_EQ(scan.udp, 2u);
  EXPECT_EQ(scan.fragments, 1u);
  EXPECT_EQ(scan.truncated, 1u);
  replay(fuzz_pcap_reader, "pcap_reader", {{"four_frames.pcap", base}}, {.rounds = 3000, .seed = 32});
}
