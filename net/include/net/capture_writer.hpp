#pragma once
// `--capture FILE.pcapng`: records received datagrams as a capture that Wireshark and our
// own `pcap:` replay open.
//
// Each datagram is written as an Ethernet/IPv4/UDP frame (link type 1) with its receive
// time, its real source address and port, and the address and port it was received on,
// so that a capture of several sockets (two paths, FEC ports) keeps them apart.
//
// The socket thread never waits for the disk: `record` copies the datagram into a bounded
// queue (dropped and counted when full) and a writer thread owns the file. With a limit
// (`max_bytes` or `max_seconds`), the capture is a ring of two files: when the current
// file reaches the limit it is renamed FILE.1.pcapng (replacing the older one) and a new
// FILE starts, so the last one to two limits' worth of traffic is always on disk.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "core/bounded_queue.hpp"
#include "core/log.hpp"
#include "core/record_file.hpp"
#include "core/result.hpp"

namespace j2k::net {

struct CaptureLimit {
  std::uint64_t max_bytes = 0;  ///< 0: no size limit
  double max_seconds = 0;       ///< 0: no time limit
};

/// "1GB", "500MB", "10min", "30s", "2h" -> a limit; errors say what is accepted.
Result<CaptureLimit> parse_capture_limit(const std::string& text);

/// One datagram as captured.
struct CapturedDatagram {
  std::chrono::system_clock::time_point time{};
  std::uint32_t source_address = 0;       ///< IPv4, host order
  std::uint16_t source_port = 0;
  std::uint32_t destination_address = 0;  ///< the group or local address received on
  std::uint16_t destination_port = 0;
  std::vector<std::uint8_t> payload;
};

/// The pcapng bytes of a capture: section header, interface description (Ethernet,
/// microsecond timestamps) and one enhanced packet block per datagram (for tests and the writer).
std::vector<std::uint8_t> pcapng_header();
std::vector<std::uint8_t> pcapng_packet(const CapturedDatagram& d);

class CaptureWriter {
 public:
  static Result<std::unique_ptr<CaptureWriter>> open(const std::string& path, CaptureLimit limit = {});
  ~CaptureWriter();
  CaptureWriter(const CaptureWriter&) = delete;
  CaptureWriter& operator=(const CaptureWriter&) = delete;

  /// Any thread; never blocks (a full queue drops the datagram and counts it).
  void record(std::span<const std::uint8_t> payload, std::chrono::system_clock::time_point time,
              std::uint32_t source_address, std::uint16_t source_port, std::uint32_t destination_address,
              std::uint16_t destination_port);
  std::uint64_t written() const noexcept { return written_.load(); }
  std::uint64_t dropped() const noexcept { return dropped_.load(); }
  std::uint64_t rotations() const noexcept { return rotations_.load(); }
  /// Writes what is queued and closes the file (also done by the destructor).
  void close();

 private:
  CaptureWriter(std::string path, CaptureLimit limit);
  Status start_file();
  void write_loop();
  /// Writes the buffered blocks; they count as written when the file takes them and as
  /// dropped when it does not (a full disk: the file is cut back to the last whole block).
  void settle();

  const std::string path_;
  const CaptureLimit limit_;
  BoundedQueue<CapturedDatagram> queue_{8192};
  RecordFile file_;                      // owned by the writer thread after open()
  std::chrono::steady_clock::time_point file_started_{};
  RateLimiter error_log_;
  std::thread writer_;
  std::atomic<std::uint64_t> written_{0}, dropped_{0}, rotations_{0};
};

}  // namespace j2k::net
