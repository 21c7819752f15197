#pragma once
// SMPTE ST 2022-7 seamless protection switching: the same RTP stream (same SSRC, sequence
// numbers and payloads) arrives over two network paths; the receiver keeps the first copy of
// each sequence number and drops the second. A copy is only useful within the skew window
// (how far one path may lag the other); later copies, and sequence numbers far from the
// stream's, are counted and dropped. Memory is a fixed window of sequence numbers.
#include <chrono>
#include <cstdint>
#include <functional>
#include <vector>

#include "core/byte_reader.hpp"
#include "depacketizer/rtp.hpp"

namespace j2k::depacketizer {

struct PathCounters {
  std::uint64_t received = 0;      ///< RTP packets that arrived on this path (valid, in the window)
  std::uint64_t lost = 0;          ///< this path's own expected − received (RFC 3550 over its packets)
  std::uint64_t used = 0;          ///< copies forwarded (this path was first)
  std::uint64_t redundant = 0;     ///< copies dropped because the other path was first
  std::uint64_t late = 0;          ///< copies behind the window or later than the skew window
  std::uint64_t out_of_window = 0; ///< sequence numbers far from the stream's (dropped)
  std::uint64_t malformed = 0;     ///< not RTP
  double skew_ms = 0;              ///< how far this path runs behind the other (smoothed; < 0: ahead)
};

struct PathMergeConfig {
  std::uint32_t window = 4096;                       ///< sequence numbers remembered (power of two not required)
  std::chrono::microseconds max_skew{150000};        ///< a second copy later than this is "late"
};

class PathMerger {
 public:
  using Output = std::function<void(Bytes datagram, std::chrono::steady_clock::time_point arrival)>;
  static constexpr int kPaths = 2;

  PathMerger(Output output, PathMergeConfig config = {});

  /// One datagram from path 0 or 1, in arrival order. Forwards it at once when it is the
  /// first copy of its sequence number (the session's reorder buffer puts order back).
  void push(int path, Bytes datagram, std::chrono::steady_clock::time_point arrival);

  PathCounters counters(int path) const;
  std::uint64_t forwarded() const noexcept { return forwarded_; }

 private:
  struct Slot {
    std::int64_t seq = -1;
    int first_path = -1;
    std::chrono::steady_clock::time_point first_arrival{};
  };
  struct Path {
    PathCounters c;
    RtpSequenceTracker tracker;
    int stray_run = 0;               // consecutive out-of-window packets
    std::int64_t stray_last = -1;    // last of them (16-bit), to see a consistent new run
  };
  Slot& slot(std::int64_t seq) { return slots_[static_cast<std::size_t>(seq % static_cast<std::int64_t>(slots_.size()))]; }
  void restart(std::int64_t seq);

  Output output_;
  PathMergeConfig config_;
  std::vector<Slot> slots_;
  Path paths_[kPaths];
  bool started_ = false;
  std::int64_t highest_ = 0;
  std::uint64_t forwarded_ = 0;
};

}  // namespace j2k::depacketizer
