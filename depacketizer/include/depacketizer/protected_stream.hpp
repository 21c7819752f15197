#pragma once
// The front of a receive session for protected links: media on one or two paths (SMPTE
// ST 2022-7: merged by sequence number) and, optionally, column and row FEC (SMPTE ST 2022-1:
// lost media rebuilt by XOR), ahead of the RtpSession. Runs on the session's thread (it owns
// the merger and the decoder); a copy of the counters is published for other threads.
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>

#include "depacketizer/fec_2022_1.hpp"
#include "depacketizer/path_merge_2022_7.hpp"
#include "depacketizer/rtp_session.hpp"

namespace j2k::depacketizer {

/// Where a datagram came from (net::Packet::channel).
/// kControl: the sender's RTCP (its own socket live; from a capture, in the data's order).
enum Channel : int { kMediaPath1 = 0, kMediaPath2 = 1, kFecColumn = 2, kFecRow = 3, kControl = 4 };

struct ProtectionConfig {
  bool two_paths = false;  ///< ST 2022-7
  bool fec = false;        ///< ST 2022-1
  PathMergeConfig merge;
  fec::FecConfig fec_config;
  /// A path went down or came back (session thread; must not block).
  std::function<void(const SessionEvent&)> on_event;
};

struct ProtectionSnapshot {
  bool two_paths = false;
  bool fec = false;
  PathCounters paths[PathMerger::kPaths];
  std::uint64_t merge_restarts = 0;  ///< times the 2022-7 merge re-anchored on a restarted sender
  fec::FecCounters fec_counters;
  int fec_columns = 0, fec_rows = 0;
};

class ProtectedStream {
 public:
  ProtectedStream(RtpSession& session, ProtectionConfig config);

  /// One datagram from any channel. Without protection, media go straight to the session.
  void on_datagram(int channel, Bytes datagram, std::chrono::steady_clock::time_point arrival);
  ProtectionSnapshot snapshot() const;  ///< thread-safe
  /// The source started again (net::Packet::restart: a looped capture): the session's
  /// sequence space begins afresh, and the merge's and the FEC decoder's (SSRC and numbers
  /// learned again; counts kept).
  void restart();
  /// The end of the input: FEC gives up what it still waits for (counted), then the session
  /// hands on what it holds (RtpSession::flush).
  void flush();
  /// The end of the input for the paths' counts: every number seen is decided (a path's
  /// loss to the last one), without handing anything on.
  void finish_paths();

 private:
  void to_session(Bytes datagram, std::chrono::steady_clock::time_point arrival, bool timing = true);
  void on_path_event(const PathEvent& e);
  RateLimiter path_log_;
  void publish();

  RtpSession& session_;
  ProtectionConfig config_;
  std::optional<PathMerger> merger_;
  std::uint64_t merge_restarts_seen_ = 0;  // the merge's restarts the FEC decoder was told of
  std::optional<fec::FecDecoder> fec_;
  std::chrono::steady_clock::time_point now_{};
  std::chrono::milliseconds copy_wait_{5};  // how long the lagging path's copy of a gap may take
  mutable std::mutex mutex_;  // guards published_
  ProtectionSnapshot published_;
};

/// The reorder window a session needs so that FEC can rebuild a packet before the window
/// gives up on it: a whole column of a large matrix (and its FEC) may arrive first.
ReorderConfig reorder_for_fec(ReorderConfig base);
/// The reorder window a session behind an ST 2022-7 merge needs: room for the packets that
/// come while a gap waits for the lagging path's copy (the merge's skew window at up to
/// 1 Gbit/s of 1400-byte packets: ~13 000).
ReorderConfig reorder_for_paths(ReorderConfig base, std::chrono::microseconds max_skew);

}  // namespace j2k::depacketizer
