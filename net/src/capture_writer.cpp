#include "net/capture_writer.hpp"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "core/log.hpp"

namespace j2k::net {

namespace {

// pcapng blocks are little-endian here (the byte-order magic tells readers which).
void put16(std::vector<std::uint8_t>& b, std::uint16_t v) {
  b.push_back(static_cast<std::uint8_t>(v));
  b.push_back(static_cast<std::uint8_t>(v >> 8));
}
void put32(std::vector<std::uint8_t>& b, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) b.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}
void put16be(std::vector<std::uint8_t>& b, std::uint16_t v) {
  b.push_back(static_cast<std::uint8_t>(v >> 8));
  b.push_back(static_cast<std::uint8_t>(v));
}
void put32be(std::vector<std::uint8_t>& b, std::uint32_t v) {
  for (int i = 3; i >= 0; --i) b.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}
void set32(std::vector<std::uint8_t>& b, std::size_t at, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) b[at + i] = static_cast<std::uint8_t>(v >> (8 * i));
}

/// Multicast groups map to 01:00:5E + the low 23 bits (RFC 1112); anything else gets a
/// locally administered address derived from the IPv4 address.
void put_mac(std::vector<std::uint8_t>& b, std::uint32_t ip) {
  if ((ip >> 28) == 0xE) {
    for (std::uint8_t v : {0x01, 0x00, 0x5E}) b.push_back(v);
    b.push_back(static_cast<std::uint8_t>((ip >> 16) & 0x7F));
  } else {
    b.push_back(0x02);
    b.push_back(0x00);
    b.push_back(static_cast<std::uint8_t>(ip >> 24));
    b.push_back(static_cast<std::uint8_t>(ip >> 16));
  }
  b.push_back(static_cast<std::uint8_t>(ip >> 8));
  b.push_back(static_cast<std::uint8_t>(ip));
}

std::uint16_t ipv4_checksum(const std::uint8_t* h) {
  std::uint32_t sum = 0;
  for (int i = 0; i < 20; i += 2) sum += static_cast<std::uint32_t>(h[i] << 8 | h[i + 1]);
  while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
  return static_cast<std::uint16_t>(~sum);
}

constexpr std::size_t kMaxUdpPayload = 65507;  // an IPv4 datagram's limit

}  // namespace

Result<CaptureLimit> parse_capture_limit(const std::string& text) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || !std::isfinite(v) || v <= 0)
    return make_error(ErrorKind::corrupt, fmt::format("--capture-limit '{}' is not a size (500MB, 1GB) or a time (30s, 10min, 2h)", text));
  const std::string unit(end);
  CaptureLimit limit;
  if (unit == "B") limit.max_bytes = static_cast<std::uint64_t>(v);
  else if (unit == "kB" || unit == "KB" || unit == "k") limit.max_bytes = static_cast<std::uint64_t>(v * 1e3);
  else if (unit == "MB" || unit == "M") limit.max_bytes = static_cast<std::uint64_t>(v * 1e6);
  else if (unit == "GB" || unit == "G") limit.max_bytes = static_cast<std::uint64_t>(v * 1e9);
  else if (unit == "s") limit.max_seconds = v;
  else if (unit == "min" || unit == "m") limit.max_seconds = v * 60;
  else if (unit == "h") limit.max_seconds = v * 3600;
  else
    return make_error(ErrorKind::corrupt, fmt::format("--capture-limit '{}': unit '{}' is not B, kB, MB, GB, s, min or h", text, unit));
  if (limit.max_bytes != 0 && limit.max_bytes < 64 * 1024)
    return make_error(ErrorKind::corrupt, fmt::format("--capture-limit '{}' is below 64 kB", text));
  return limit;
}

std::vector<std::uint8_t> pcapng_header() {
  std::vector<std::uint8_t> b;
  // Section Header Block: type, length, byte-order magic, version 1.0, section length unknown.
  put32(b, 0x0A0D0D0A);
  put32(b, 28);
  put32(b, 0x1A2B3C4D);
  put16(b, 1);
  put16(b, 0);
  put32(b, 0xFFFFFFFF);
  put32(b, 0xFFFFFFFF);
  put32(b, 28);
  // Interface Description Block: Ethernet, snap length 0 (no limit); default microsecond time.
  put32(b, 0x00000001);
  put32(b, 20);
  put16(b, 1);
  put16(b, 0);
  put32(b, 0);
  put32(b, 20);
  return b;
}

std::vector<std::uint8_t> pcapng_packet(const CapturedDatagram& d) {
  const std::size_t payload = std::min(d.payload.size(), kMaxUdpPayload);
  std::vector<std::uint8_t> frame;
  frame.reserve(42 + payload);
  put_mac(frame, d.destination_address);
  put_mac(frame, d.source_address);
  put16be(frame, 0x0800);
  const std::size_t ip_at = frame.size();
  frame.push_back(0x45);  // IPv4, 20-byte header
  frame.push_back(0);
  put16be(frame, static_cast<std::uint16_t>(20 + 8 + payload));
  put16be(frame, 0);       // identification
  put16be(frame, 0x4000);  // don't fragment
  frame.push_back(64);     // TTL
  frame.push_back(17);     // UDP
  put16be(frame, 0);       // checksum, below
  put32be(frame, d.source_address);
  put32be(frame, d.destination_address);
  const std::uint16_t sum = ipv4_checksum(&frame[ip_at]);
  frame[ip_at + 10] = static_cast<std::uint8_t>(sum >> 8);
  frame[ip_at + 11] = static_cast<std::uint8_t>(sum);
  put16be(frame, d.source_port);
  put16be(frame, d.destination_port);
  put16be(frame, static_cast<std::uint16_t>(8 + payload));
  put16be(frame, 0);  // no UDP checksum (allowed for IPv4)
  frame.insert(frame.end(), d.payload.begin(), d.payload.begin() + static_cast<std::ptrdiff_t>(payload));

  // Enhanced Packet Block: interface 0, 64-bit microsecond timestamp, data padded to 32 bits.
  const std::size_t padded = (frame.size() + 3) & ~std::size_t{3};
  const auto total = static_cast<std::uint32_t>(32 + padded);
  const auto us = static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::microseconds>(d.time.time_since_epoch()).count());
  std::vector<std::uint8_t> b;
  b.reserve(total);
  put32(b, 0x00000006);
  put32(b, total);
  put32(b, 0);
  put32(b, static_cast<std::uint32_t>(us >> 32));
  put32(b, static_cast<std::uint32_t>(us));
  put32(b, static_cast<std::uint32_t>(frame.size()));
  put32(b, static_cast<std::uint32_t>(frame.size()));
  b.insert(b.end(), frame.begin(), frame.end());
  b.resize(28 + padded, 0);
  put32(b, total);
  set32(b, 4, total);
  return b;
}

CaptureWriter::CaptureWriter(std::string path, CaptureLimit limit) : path_(std::move(path)), limit_(limit) {}

Result<std::unique_ptr<CaptureWriter>> CaptureWriter::open(const std::string& path, CaptureLimit limit) {
  std::unique_ptr<CaptureWriter> w(new CaptureWriter(path, limit));
  if (auto st = w->start_file(); !st) return st.error();
  w->writer_ = std::thread([raw = w.get()] { raw->write_loop(); });
  return w;
}

CaptureWriter::~CaptureWriter() { close(); }

Status CaptureWriter::start_file() {
  auto file = RecordFile::open(path_);
  if (!file) return make_error(ErrorKind::io, fmt::format("cannot write the capture '{}': {}", path_, file.error().message));
  file_ = std::move(*file);
  (void)file_.set_preamble(pcapng_header());  // a full disk: written with the first datagrams
  file_started_ = std::chrono::steady_clock::now();
  return {};
}

void CaptureWriter::record(std::span<const std::uint8_t> payload, std::chrono::system_clock::time_point time,
                           std::uint32_t source_address, std::uint16_t source_port, std::uint32_t destination_address,
                           std::uint16_t destination_port) {
  CapturedDatagram d{time, source_address, source_port, destination_address, destination_port,
                     std::vector<std::uint8_t>(payload.begin(), payload.end())};
  if (!queue_.try_push(d)) dropped_.fetch_add(1, std::memory_order_relaxed);
}

void CaptureWriter::write_loop() {
  auto log = logger("capture");
  for (;;) {
    auto d = queue_.pop_for(std::chrono::milliseconds(200));
    if (!d) {
      if (queue_.closed()) break;
      settle();
      continue;
    }
    if (!file_.is_open()) {  // the file could not be reopened after a rotation
      dropped_.fetch_add(1, std::memory_order_relaxed);
      continue;
    }
    const bool full = limit_.max_bytes && file_.size() >= limit_.max_bytes / 2;
    const bool old = limit_.max_seconds > 0 &&
                     std::chrono::duration<double>(std::chrono::steady_clock::now() - file_started_).count() >=
                         limit_.max_seconds / 2;
    if (full || old) {
      // Ring of two files, each up to half the limit: FILE.1.pcapng holds the previous one.
      settle();
      file_.close();
      std::filesystem::path previous(path_);
      previous.replace_extension();
      previous += ".1.pcapng";
      std::error_code ec;
      std::filesystem::rename(path_, previous, ec);
      if (auto st = start_file(); !st) {
        log->error("{}: capture stopped", st.error().message);
        dropped_.fetch_add(1, std::memory_order_relaxed);  // this datagram; later ones are counted above
        continue;
      }
      rotations_.fetch_add(1, std::memory_order_relaxed);
    }
    file_.append(pcapng_packet(*d));
    if (file_.pending_records() >= 256) settle();
  }
  settle();
  file_.close();
}

void CaptureWriter::settle() {
  const RecordFile::Settled s = file_.settle();
  written_.fetch_add(s.written, std::memory_order_relaxed);
  dropped_.fetch_add(s.lost, std::memory_order_relaxed);
  if (s.error && error_log_.allow())
    logger("capture")->error("writing the capture '{}' failed ({}): datagrams are dropped, and counted, until it "
                             "can be written again", path_, std::strerror(s.error));
}

void CaptureWriter::close() {
  queue_.close();
  if (writer_.joinable()) writer_.join();
}

}  // namespace j2k::net
