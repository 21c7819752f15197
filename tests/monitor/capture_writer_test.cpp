// Captures written by CaptureWriter open in libpcap (as Wireshark reads them) with the
// datagrams, addresses, ports and times they were recorded with; the ring keeps two files.
#include <gtest/gtest.h>

#include <pcap/pcap.h>

#include <filesystem>
#include <thread>

#include "file_size_limit.hpp"
#include "net/capture_writer.hpp"

namespace j2k::net {
namespace {

struct Read {
  std::vector<std::vector<std::uint8_t>> payloads;
  std::vector<std::uint16_t> dst_ports;
  std::vector<std::uint32_t> dst_addresses;
  std::vector<long> usec;
};

Read read_capture(const std::string& path) {
  char err[PCAP_ERRBUF_SIZE];
  pcap_t* p = pcap_open_offline(path.c_str(), err);
  EXPECT_NE(p, nullptr) << err;
  Read r;
  if (!p) return r;
  EXPECT_EQ(pcap_datalink(p), DLT_EN10MB);
  pcap_pkthdr* h = nullptr;
  const u_char* data = nullptr;
  while (pcap_next_ex(p, &h, &data) == 1) {
    EXPECT_GE(h->caplen, 42u);
    const u_char* ip = data + 14;
    const u_char* udp = ip + 20;
    r.dst_addresses.push_back(static_cast<std::uint32_t>(ip[16] << 24 | ip[17] << 16 | ip[18] << 8 | ip[19]));
    r.dst_ports.push_back(static_cast<std::uint16_t>(udp[2] << 8 | udp[3]));
    r.payloads.emplace_back(udp + 8, data + h->caplen);
    r.usec.push_back(h->ts.tv_usec);
  }
  pcap_close(p);
  return r;
}

TEST(CaptureWriter, WiresharkReadableWithAddressesPortsAndTimes) {
  const auto path = (std::filesystem::temp_directory_path() / "j2k_capture_test.pcapng").string();
  const auto t = std::chrono::system_clock::time_point{} + std::chrono::seconds(1700000000) + std::chrono::microseconds(123456);
  {
    auto w = CaptureWriter::open(path);
    ASSERT_TRUE(w) << w.error().message;
    for (int i = 0; i < 50; ++i) {
      std::vector<std::uint8_t> payload(static_cast<std::size_t>(i * 7 + 1), static_cast<std::uint8_t>(i));
      (*w)->record(payload, t, 0x7F000001, 40000, 0xEF010101, static_cast<std::uint16_t>(i % 2 ? 5006 : 5004));
    }
    (*w)->close();
    EXPECT_EQ((*w)->written(), 50u);
    EXPECT_EQ((*w)->dropped(), 0u);
  }
  const Read r = read_capture(path);
  ASSERT_EQ(r.payloads.size(), 50u);
  for (int i = 0; i < 50; ++i) {
    EXPECT_EQ(r.payloads[i].size(), static_cast<std::size_t>(i * 7 + 1));
    EXPECT_EQ(r.payloads[i].front(), static_cast<std::uint8_t>(i));
    EXPECT_EQ(r.dst_ports[i], i % 2 ? 5006 : 5004);
    EXPECT_EQ(r.dst_addresses[i], 0xEF010101u);
    EXPECT_EQ(r.usec[i], 123456);
  }
  std::filesystem::remove(path);
}

TEST(CaptureWriter, AFullDiskCountsEveryDatagramDroppedNotWritten) {
  // stdio buffers the writes, so a full disk only shows when the buffer is flushed: every
  // datagram used to count as written, and the flush's failure was ignored.
  auto w = CaptureWriter::open("/dev/full");
  ASSERT_TRUE(w) << w.error().message;
  const auto t = std::chrono::system_clock::now();
  for (int i = 0; i < 1000; ++i) {
    std::vector<std::uint8_t> payload(1300, static_cast<std::uint8_t>(i));
    (*w)->record(payload, t, 0x7F000001, 40000, 0xEF010101, 5004);
  }
  (*w)->close();
  EXPECT_EQ((*w)->written(), 0u);
  EXPECT_EQ((*w)->dropped(), 1000u);
}

/// Waits (up to a minute) until `done` holds.
template <typename Done>
bool wait_until(Done done) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::minutes(1);
  while (!done()) {
    if (std::chrono::steady_clock::now() > end) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

TEST(CaptureWriter, ACaptureWrittenThroughAFullDiskReadsToItsEnd) {
  // A flush that met a full disk half-way through a block left the block torn. Once space
  // came back, the next blocks were written after the tear and counted written, but
  // Wireshark and libpcap stop reading at a torn block: the rest of the capture was lost.
  const auto path = (std::filesystem::temp_directory_path() / "j2k_capture_full_disk.pcapng").string();
  std::filesystem::remove(path);
  const auto t = std::chrono::system_clock::now();
  std::vector<std::uint8_t> payload(1000, 0xAB);
  {
    test::FileSizeLimit disk(150'000);
    auto w = CaptureWriter::open(path);
    ASSERT_TRUE(w) << w.error().message;
    for (int i = 0; i < 400; ++i) {
      payload[0] = static_cast<std::uint8_t>(i);
      (*w)->record(payload, t, 0x7F000001, 40000, 0xEF010101, 5004);
    }
    ASSERT_TRUE(wait_until([&] { return (*w)->written() + (*w)->dropped() == 400; }));
    EXPECT_GT((*w)->dropped(), 0u);
    disk.set(RLIM_INFINITY);  // space again
    for (int i = 0; i < 10; ++i) {
      payload[0] = 0xEE;
      payload[1] = static_cast<std::uint8_t>(i);
      (*w)->record(payload, t, 0x7F000001, 40000, 0xEF010101, 5004);
    }
    (*w)->close();
    const Read r = read_capture(path);
    EXPECT_EQ(r.payloads.size(), (*w)->written());
    ASSERT_FALSE(r.payloads.empty());
    EXPECT_EQ(r.payloads.back()[0], 0xEE);
    EXPECT_EQ(r.payloads.back()[1], 9);
  }
  std::filesystem::remove(path);
}

TEST(CaptureWriter, ACaptureOfNothingIsAValidEmptyCapture) {
  // Review 2026-11-25: with the header written only before the first datagrams, a capture
  // that received nothing (or not yet) was 0 bytes, which libpcap and Wireshark refuse.
  const auto path = (std::filesystem::temp_directory_path() / "j2k_capture_empty.pcapng").string();
  {
    auto w = CaptureWriter::open(path);
    ASSERT_TRUE(w) << w.error().message;
    EXPECT_GT(std::filesystem::file_size(path), 0u) << "the header is on disk at once";
    (*w)->close();
  }
  char err[PCAP_ERRBUF_SIZE];
  pcap_t* p = pcap_open_offline(path.c_str(), err);
  ASSERT_NE(p, nullptr) << err;
  pcap_close(p);
  std::filesystem::remove(path);
}

TEST(CaptureWriter, SizeLimitKeepsARingOfTwoFiles) {
  const auto dir = std::filesystem::temp_directory_path() / "j2k_capture_ring";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const auto path = (dir / "ring.pcapng").string();
  auto limit = parse_capture_limit("100kB");
  ASSERT_TRUE(limit);
  {
    auto w = CaptureWriter::open(path, *limit);
    ASSERT_TRUE(w);
    std::vector<std::uint8_t> payload(1000, 0xAB);
    for (int i = 0; i < 400; ++i) {
      payload[0] = static_cast<std::uint8_t>(i);
      (*w)->record(payload, std::chrono::system_clock::now(), 0x7F000001, 1, 0x7F000001, 5004);
    }
    (*w)->close();
    EXPECT_EQ((*w)->written() + (*w)->dropped(), 400u);
    EXPECT_GE((*w)->rotations(), 3u);
  }
  const auto older = (dir / "ring.1.pcapng").string();
  ASSERT_TRUE(std::filesystem::exists(older));
  EXPECT_LE(std::filesystem::file_size(path), 52'000u);
  EXPECT_LE(std::filesystem::file_size(older), 52'000u);
  // Both files are whole captures, and the newest holds the last datagram.
  const Read newest = read_capture(path), previous = read_capture(older);
  ASSERT_FALSE(newest.payloads.empty());
  ASSERT_FALSE(previous.payloads.empty());
  EXPECT_EQ(newest.payloads.back()[0], static_cast<std::uint8_t>(399));
  std::filesystem::remove_all(dir);
}

TEST(CaptureLimit, SizesAndTimes) {
  EXPECT_EQ(parse_capture_limit("1GB")->max_bytes, 1'000'000'000u);
  EXPECT_DOUBLE_EQ(parse_capture_limit("10min")->max_seconds, 600);
  EXPECT_DOUBLE_EQ(parse_capture_limit("30s")->max_seconds, 30);
  EXPECT_FALSE(parse_capture_limit("10 parsecs"));
  EXPECT_FALSE(parse_capture_limit("1kB"));  // too small to hold anything useful
  EXPECT_FALSE(parse_capture_limit("-5MB"));
}

}  // namespace
}  // namespace j2k::net
