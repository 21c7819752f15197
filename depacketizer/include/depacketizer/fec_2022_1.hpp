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
//
// Cost: each row or column is held once (copies of a FEC packet are refused) and counts the
// packets it still misses; a media packet only updates those counts (a pass over at most
// max_pending groups), and a group's packets are looked at only when it is created and when
// it is down to one missing (to find it and rebuild it).
//
// One media SSRC is followed (SsrcFollower, as the 2022-7 merge): packets of other SSRCs are
// counted and neither kept nor allowed to move the window; rebuilt packets carry the
// followed SSRC. A sender that starts again (a new SSRC, or a run of new sequence numbers)
// is followed after a few packets, with the window and the groups started afresh.
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <vector>

#include "core/byte_reader.hpp"
#include "core/result.hpp"
#include "depacketizer/ssrc_follower.hpp"

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
  /// Offsets/counts outside the matrix bounds, far from the media, or a copy of a row or
  /// column already held.
  std::uint64_t fec_rejected = 0;
  std::uint64_t fec_expired = 0;    ///< groups dropped with packets still missing
  /// Complete rows or columns whose recovery fields do not fit the media they name (junk or
  /// another sender's FEC); they do not change the matrix learned.
  std::uint64_t fec_mismatched = 0;
  std::uint64_t recovered = 0;      ///< media packets rebuilt
  std::uint64_t unrecoverable = 0;  ///< media packets missing from a group that expired unsolved
  std::uint64_t foreign = 0;        ///< media packets of another SSRC than the one followed (not kept)
  std::uint64_t restarts = 0;       ///< times the media stream started again (new SSRC or numbers): window reset
};

struct FecConfig {
  /// Media packets remembered for recovery; a row/column must fit (span ≤ history / 2).
  std::uint32_t history = 1024;
  std::size_t max_pending = 512;       ///< FEC groups waiting for packets (oldest dropped first)
  std::size_t max_packet_bytes = 9216;
  /// A new media SSRC is followed once the old one is this quiet (when arrival times are given).
  std::chrono::microseconds ssrc_quiet{100000};
  /// A run of packets that do not fit the window starts it afresh (a sender that restarted).
  /// Off behind an ST 2022-7 merge: there a lagging path's copies of what the other path lost
  /// arrive old and in runs, and the merge, which sees both paths, says when to start again
  /// (restart_at_next).
  bool restart_on_strays = true;
  /// Behind an ST 2022-7 merge: true while a copy of the missing packet may still come on
  /// the lagging path (PathMerger::awaited). Its rebuild waits, asked again as packets
  /// arrive, so that FEC rebuilds (and counts) only what both paths lost.
  std::function<bool(std::uint16_t sequence)> awaited;
};

/// Rebuilds lost media packets from column and row FEC. Single-threaded.
class FecDecoder {
 public:
  /// Receives each rebuilt media packet (a whole RTP datagram).
  using Recovered = std::function<void(Bytes datagram)>;
  explicit FecDecoder(Recovered recovered, FecConfig config = {});
  /// The next media packet starts the window afresh (the merge in front re-anchored).
  void restart_at_next() noexcept { start_at_next_ = true; }

  /// Every media datagram as it arrives (any order; duplicates are harmless). With `arrival`,
  /// a new SSRC takes over only after the followed one has been quiet (FecConfig::ssrc_quiet).
  void on_media(Bytes datagram, std::optional<std::chrono::steady_clock::time_point> arrival = std::nullopt);
  /// Rebuilds what waited for another copy (FecConfig::awaited) and need wait no more.
  void retry_waiting();
  /// Every FEC datagram (column or row stream) as it arrives.
  void on_fec(Bytes datagram);

  /// The source starts again (a looped capture): SSRC, numbers and groups are learned afresh.
  void reset();
  /// The end of the input: rows and columns still missing packets will not be solved; those
  /// packets are counted unrecoverable.
  void finish();
  /// The media SSRC as decided upstream (the 2022-7 merge, which already dropped the others):
  /// when it differs from the one followed, the window starts afresh at its next packet.
  void follow(std::uint32_t ssrc);

  const FecCounters& counters() const noexcept { return counters_; }
  std::size_t pending() const noexcept { return pending_.size(); }
  /// Media packet look-ups made for groups so far (the decoder's work, for tests).
  std::uint64_t lookups() const noexcept { return lookups_; }
  std::optional<std::uint32_t> ssrc() const noexcept { return follower_.followed(); }
  /// The matrix the sender uses, as learned from the FEC headers of complete rows and
  /// columns whose parity fits the media (0 until one did).
  int columns() const noexcept { return l_; }
  int rows() const noexcept { return d_; }

 private:
  struct Slot {
    std::int64_t seq = -1;       // extended sequence this slot holds now
    bool present = false;        // media packet received or recovered
    bool written_off = false;    // counted as unrecoverable
    bool rebuilt = false;        // present because FEC rebuilt it (the original may differ in its header)
    std::vector<std::uint8_t> data;
  };
  struct Group {
    std::int64_t base = 0;
    int offset = 1;
    int count = 0;
    bool row = false;
    bool marker = false;         // XOR of the marker bits (FEC packet's RTP M)
    int missing = 0;             // protected packets not present
    std::int64_t lost = -1;      // the missing one, when missing == 1
    FecHeader header;
    std::vector<std::uint8_t> body;
    std::int64_t last() const { return base + static_cast<std::int64_t>(offset) * (count - 1); }
    bool covers(std::int64_t seq) const {
      const std::int64_t k = seq - base;
      return k >= 0 && k % offset == 0 && k / offset < count;
    }
    bool same_as(const Group& o) const {
      return base == o.base && offset == o.offset && count == o.count && row == o.row;
    }
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
  /// Starts afresh at `sequence` (the first packet, or a sender that started again).
  /// `told`: on being told to follow a stream already running (follow()).
  void start_over(std::uint16_t sequence, bool told = false);
  void clear_window();
  /// Counts and finds the packets `g` misses (looks at each of its packets).
  void count_missing(Group& g);
  /// `seq` is present now: the groups covering it miss one less; groups down to one are
  /// rebuilt (which may complete others, in turn).
  void arrived(std::int64_t seq);
  /// Counts what arrived_ holds into the groups, solving as it goes.
  void drain();
  /// Rebuilds the groups missing one packet once a later packet arrived; drops complete
  /// ones. Rebuilt numbers are queued on arrived_.
  void solve_ready();
  void solve_without_waiting();  // solves as if nothing were awaited (FecConfig::awaited)
  /// Rebuilds g.lost from the group (false: the parity does not fit its packets).
  bool rebuild(const Group& g);
  /// Of a group with every packet present: do its recovery fields fit them?
  bool parity_fits(const Group& g);
  /// Takes the matrix from a complete group whose parity fits (else counts it).
  void learn_matrix(const Group& g);
  void expire_old();
  void write_off(const Group& g);

  Recovered recovered_;
  FecConfig config_;
  FecCounters counters_;
  std::vector<Slot> slots_;
  bool started_ = false;
  std::int64_t highest_ = 0;     // highest extended media sequence seen
  std::int64_t first_ = 0;       // where the window started when told to follow (groups before it: rejected)
  SsrcFollower follower_;        // the media SSRC followed
  bool final_ = false;  // finish(): nothing more comes, no rebuild waits for a copy
  std::size_t waiting_ = 0;  // groups solve_ready left because their missing packet was awaited
  bool start_at_next_ = false;   // follow() changed the SSRC: the next packet starts the window
  SequenceRun stray_;            // consecutive media packets that do not fit the window
  std::deque<Group> pending_;
  std::vector<std::int64_t> arrived_;  // numbers that became present, not yet counted in the groups
  int l_ = 0, d_ = 0;
  std::uint64_t lookups_ = 0;
  std::vector<std::uint8_t> scratch_;
};

}  // namespace j2k::depacketizer::fec
