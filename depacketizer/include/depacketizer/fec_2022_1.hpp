#pragma once
// SMPTE ST 2022-1 forward error correction (after RFC 2733): XOR parity over an L × D matrix
// of media packets. Column FEC (port+2) protects SNBase + k·L, k < D; row FEC (port+4)
// protects SNBase … SNBase + L − 1. One missing packet of a row or column is rebuilt by XOR;
// rows and columns are retried until no more progress (a recovered packet may complete
// another row or column).
//
// FEC header, after the FEC packet's 12-byte RTP header (2022-1 8.1):
//    0                   1                   2                   3
//    0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//   +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//   |      SNBase low bits          |        Length Recovery        |
//   +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//   |E| PT recovery |                    Mask                       |
//   +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//   |                          TS recovery                          |
//   +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//   |N|D|type |index|    Offset     |      NA       |SNBase ext bits|
//   +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
// D: 0 column, 1 row. Offset: L for a column, 1 for a row. NA: packets protected (D for a
// column, L for a row). The FEC payload is the XOR of the protected packets' RTP payloads
// (zero-padded to the longest); the FEC packet's own RTP header carries the XOR of their
// marker bits (as GStreamer's rtpst2022-1-fecenc writes it).
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <vector>

#include "core/byte_reader.hpp"
#include "core/result.hpp"

namespace j2k::depacketizer::fec {

struct FecHeader {
  std::uint16_t sn_base_low = 0;
  std::uint16_t length_recovery = 0;
  bool extension = true;   ///< E: 1 in 2022-1
  std::uint8_t pt_recovery = 0;
  std::uint32_t mask = 0;  ///< 0 in 2022-1
  std::uint32_t ts_recovery = 0;
  bool n = false;
  bool row = false;        ///< D bit
  std::uint8_t type = 0;   ///< 0 = XOR
  std::uint8_t index = 0;
  std::uint8_t offset = 0;
  std::uint8_t na = 0;
  std::uint8_t sn_base_ext = 0;
};
constexpr std::size_t kFecHeaderSize = 16;

/// Parses the 16-byte FEC header at the start of an FEC packet's RTP payload; `body` is the
/// XORed payload after it. Rejects what 2022-1 does not allow (type ≠ XOR, row FEC with an
/// offset other than 1, NA or offset 0).
Result<FecHeader> parse_fec_header(Bytes payload, Bytes& body);
void append_fec_header(std::vector<std::uint8_t>& out, const FecHeader& h);

struct FecCounters {
  std::uint64_t fec_packets = 0;    ///< FEC packets received (column + row)
  std::uint64_t fec_malformed = 0;  ///< not RTP, bad FEC header, recovered length past the payload
  std::uint64_t fec_rejected = 0;   ///< offsets/counts outside the matrix bounds, far from the media
  std::uint64_t fec_expired = 0;    ///< groups dropped with packets still missing
  std::uint64_t recovered = 0;      ///< media packets rebuilt
  std::uint64_t unrecoverable = 0;  ///< media packets missing from a group that expired unsolved
};

struct FecConfig {
  /// Media packets remembered for recovery; a row/column must fit (span ≤ history / 2).
  std::uint32_t history = 1024;
  std::size_t max_pending = 512;       ///< FEC groups waiting for packets (oldest dropped first)
  std::size_t max_packet_bytes = 9216;
};

/// Rebuilds lost media packets from column and row FEC. Single-threaded.
class FecDecoder {
 public:
  /// Receives each rebuilt media packet (a whole RTP datagram).
  using Recovered = std::function<void(Bytes datagram)>;
  explicit FecDecoder(Recovered recovered, FecConfig config = {});

  /// Every media datagram as it arrives (any order; duplicates are harmless).
  void on_media(Bytes datagram);
  /// Every FEC datagram (column or row stream) as it arrives.
  void on_fec(Bytes datagram);

  const FecCounters& counters() const noexcept { return counters_; }
  std::size_t pending() const noexcept { return pending_.size(); }
  /// The matrix the sender uses, as learned from the FEC headers (0 until seen).
  int columns() const noexcept { return l_; }
  int rows() const noexcept { return d_; }

 private:
  struct Slot {
    std::int64_t seq = -1;       // extended sequence this slot holds now
    bool present = false;        // media packet received or recovered
    bool written_off = false;    // counted as unrecoverable
    std::vector<std::uint8_t> data;
  };
  struct Group {
    std::int64_t base = 0;
    int offset = 1;
    int count = 0;
    bool marker = false;         // XOR of the marker bits (FEC packet's RTP M)
    FecHeader header;
    std::vector<std::uint8_t> body;
    std::int64_t last() const { return base + static_cast<std::int64_t>(offset) * (count - 1); }
  };

  /// Callers pass seq ≥ 0 (checked: negative numbers lie before the stream's first packet).
  Slot& slot(std::int64_t seq) { return slots_[index(seq)]; }
  std::size_t index(std::int64_t seq) const {
    const auto n = static_cast<std::int64_t>(slots_.size());
    return static_cast<std::size_t>(((seq % n) + n) % n);
  }
  bool have(std::int64_t seq) const;
  std::int64_t extend(std::uint16_t seq) const;
  void advance_to(std::int64_t seq);
  void store(std::int64_t seq, Bytes datagram);
  /// Tries to solve one group: true when it is finished (solved or nothing to do).
  bool try_group(Group& g);
  void retry_all();
  void expire_old();
  void write_off(const Group& g);

  Recovered recovered_;
  FecConfig config_;
  FecCounters counters_;
  std::vector<Slot> slots_;
  bool started_ = false;
  std::int64_t highest_ = 0;     // highest extended media sequence seen
  std::uint32_t ssrc_ = 0;
  std::deque<Group> pending_;
  int l_ = 0, d_ = 0;
  std::vector<std::uint8_t> scratch_;
};

}  // namespace j2k::depacketizer::fec
