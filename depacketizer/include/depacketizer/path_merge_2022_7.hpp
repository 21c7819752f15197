#pragma once
// SMPTE ST 2022-7 seamless protection switching: the same RTP stream (same SSRC, sequence
// numbers and payloads) arrives over two network paths; the receiver keeps the first copy of
// each sequence number and drops the second. A copy is only useful within the skew window
// (how far one path may lag the other); later copies, and sequence numbers far from the
// stream's, are counted and dropped. Memory is a fixed window of sequence numbers.
//
// One SSRC is followed (SsrcFollower): packets of others are counted and dropped, so that a
// stray sender can neither take a sequence number nor move the window. A sender that starts
// again (a new SSRC, or new sequence numbers anywhere in the 16-bit space) is followed once
// its packets persist: the merge re-anchors on them (restarts()).
#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "core/byte_reader.hpp"
#include "core/log.hpp"
#include "depacketizer/rtp.hpp"
#include "depacketizer/ssrc_follower.hpp"

namespace j2k::depacketizer {

/// Each packet of a path counts once: malformed, foreign, late, out_of_window, used or redundant.
struct PathCounters {
  std::uint64_t received = 0;      ///< RTP packets that arrived on this path (valid, in the window)
  /// Numbers of the merged stream this path did not bring within the skew window (decided
  /// max_skew after the number's first copy, or after it was known missing on both paths).
  std::uint64_t lost = 0;
  std::uint64_t outages = 0;       ///< times it brought nothing for PathMergeConfig::down_after while the other did
  bool down = false;               ///< in such an outage now
  std::uint64_t used = 0;          ///< copies forwarded (this path was first)
  std::uint64_t redundant = 0;     ///< copies dropped because the other path was first
  std::uint64_t late = 0;          ///< copies behind the window or later than the skew window
  /// Sequence numbers far from the stream's, or a number already taken by a different packet
  /// (another RTP timestamp): dropped until a run of them shows that the sender restarted.
  std::uint64_t out_of_window = 0;
  std::uint64_t foreign = 0;       ///< packets of another SSRC than the one followed (dropped)
  std::uint64_t malformed = 0;     ///< not RTP
  double skew_ms = 0;              ///< how far this path runs behind the other (smoothed; < 0: ahead)
};

struct PathMergeConfig {
  std::uint32_t window = 4096;                       ///< sequence numbers remembered (power of two not required)
  std::chrono::microseconds max_skew{150000};        ///< a second copy later than this is "late"
  std::chrono::microseconds ssrc_quiet{100000};      ///< a new SSRC is followed once the old one is this quiet
  /// A run of packets that do not fit the window re-anchors it only once no packet of either
  /// path has fitted for this long: a path lagging the other by more than the window delivers
  /// such runs too (a socket is read up to 64 datagrams at a time), while the other path's
  /// packets still fit.
  std::chrono::microseconds stray_quiet{20000};
  /// A path that brings nothing for this long while the other one does is down (said once,
  /// and again when it is back).
  std::chrono::microseconds down_after{1000000};
};

/// A path went down or came back (for the operator's event log).
struct PathEvent {
  int path = 0;
  bool down = false;
  std::uint64_t lost = 0;  ///< back: the numbers between its last packet before and its first after
  std::chrono::steady_clock::duration length{};  ///< back: how long it was down
};

class PathMerger {
 public:
  /// `timing`: false when the copy came from the path that runs behind the other (it stands in
  /// for one the leading path lost; its arrival is no sample of the network's jitter).
  using Output = std::function<void(Bytes datagram, std::chrono::steady_clock::time_point arrival, bool timing)>;
  static constexpr int kPaths = 2;

  using Events = std::function<void(const PathEvent&)>;
  PathMerger(Output output, PathMergeConfig config = {}, Events events = {});

  /// One datagram from path 0 or 1, in arrival order. Forwards it at once when it is the
  /// first copy of its sequence number (the session's reorder buffer puts order back).
  void push(int path, Bytes datagram, std::chrono::steady_clock::time_point arrival);
  /// The source starts again (a looped capture): the SSRC and the sequence numbers are
  /// learned afresh; the counts are kept.
  void reset();
  /// The end of the input: every number seen is decided (each path's loss counted).
  void finish();
  /// A packet of the followed stream that ST 2022-1 FEC rebuilt (handed on by the caller):
  /// it takes its number, so that a path's copy arriving later is redundant, not a first.
  void claim(Bytes datagram, std::chrono::steady_clock::time_point arrival);
  /// May a copy of `sequence` (of the followed stream) still come? It is missing from both
  /// paths, neither path is down, and it has been known missing for less than `wait` (the
  /// paths' skew): FEC behind the merge holds its rebuild until then.
  bool awaited(std::uint16_t sequence, std::chrono::steady_clock::time_point now,
               std::chrono::steady_clock::duration wait) const;

  PathCounters counters(int path) const;
  std::uint64_t forwarded() const noexcept { return forwarded_; }
  /// Times the merge re-anchored on a sender that started again (new SSRC or new numbers).
  std::uint64_t restarts() const noexcept { return restarts_; }
  std::optional<std::uint32_t> ssrc() const noexcept { return follower_.followed(); }
  /// Merge the stream of `ssrc` from its next packet on (the session chose it by its payload;
  /// packets of other SSRCs are handed on unmerged).
  void follow(std::uint32_t ssrc);

 private:
  static constexpr int kRebuilt = kPaths;    // Slot::first_path of a number FEC rebuilt
  static constexpr double kLagging = 1.0;    // ms: a path this far behind the other lags it
  static constexpr int kNone = -1;           // Slot::first_path of a number known only as missing
  struct Slot {
    std::int64_t seq = -1;
    std::uint8_t seen = 0;        // bit p: path p brought a copy
    int first_path = kNone;
    std::uint32_t timestamp = 0;  // RTP timestamp of the first copy: a copy has the same
    std::chrono::steady_clock::time_point first_arrival{};
  };
  struct Path {
    PathCounters c;
    RtpSequenceTracker tracker;  // its unique packets (received)
    std::optional<std::chrono::steady_clock::time_point> last;  // its newest packet's arrival
    std::chrono::steady_clock::time_point down_since{};  // its last packet before it went down
    std::optional<std::int64_t> last_seq;                // its highest number (merge's extended numbers)
  };
  /// Decides the numbers whose copies have had max_skew to come.
  void decide(std::chrono::steady_clock::time_point now);
  /// Decides every number up to `last` as it stands (it leaves the window, or the run ends).
  void decide_through(std::int64_t last);
  /// Path p brought a packet at `now`: is the other one down?
  void watch_paths(int p, std::chrono::steady_clock::time_point now);
  Slot& slot(std::int64_t seq) { return slots_[static_cast<std::size_t>(seq % static_cast<std::int64_t>(slots_.size()))]; }
  const Slot& slot(std::int64_t seq) const {
    return slots_[static_cast<std::size_t>(seq % static_cast<std::int64_t>(slots_.size()))];
  }
  void restart(std::uint16_t sequence);

  Output output_;
  PathMergeConfig config_;
  std::vector<Slot> slots_;
  Path paths_[kPaths];
  SsrcFollower follower_;
  SequenceRun stray_;  // consecutive packets that do not fit the stream (both paths)
  std::optional<std::chrono::steady_clock::time_point> last_fit_;  // arrival of the last packet that fitted
  bool started_ = false;
  bool restart_at_next_ = false;  // follow() switched streams: the next packet re-anchors
  /// Other SSRCs' packets go on unmerged, each (SSRC, number) once: the last ones handed on.
  bool foreign_seen(std::uint32_t ssrc, std::uint16_t sequence);
  std::array<std::uint64_t, 256> foreign_recent_{};
  std::size_t foreign_next_ = 0;
  std::int64_t highest_ = 0;
  std::int64_t decided_ = 0;  // numbers up to this one are counted in the paths' loss
  std::optional<std::chrono::steady_clock::time_point> first_packet_;  // of the followed stream
  Events events_;
  std::uint64_t forwarded_ = 0;
  std::uint64_t restarts_ = 0;
  RateLimiter restart_log_;  // restarts are counted; a sender forcing them must not flood the log
};

}  // namespace j2k::depacketizer
