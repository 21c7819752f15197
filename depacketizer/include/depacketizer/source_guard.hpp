#pragma once
// RFC 3550 8.2: one SSRC used by two senders at once (two encoders configured alike on one
// group, a test sender left running beside the real one). Their packets would interleave in
// one sequence space: invented losses, duplicates and broken frames, with nothing to say why.
//
// Per receive socket (channel), each SSRC keeps the source transport address (IPv4 address
// and UDP port) it came from first. Its packets from another source are a collision: counted,
// said once per source, and dropped. When the first source has been quiet for `quiet` (a
// failover to a backup encoder with the same settings, a sender restarted on a new port), the
// new source takes over from its next packet (counted and said). Depacketizer thread only.
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/byte_reader.hpp"

namespace j2k::depacketizer {

struct SourceGuardCounters {
  std::uint64_t collisions = 0;  ///< packets of an SSRC from a second source while the first sent (dropped)
  std::uint64_t takeovers = 0;   ///< times a second source took an SSRC over after the first went quiet
};

class SourceGuard {
 public:
  using Clock = std::chrono::steady_clock;
  enum class Verdict {
    pass,       ///< the SSRC's source (or not RTP, or the source unknown)
    collision,  ///< another source sends this SSRC while its source does: drop it
    takeover,   ///< another source, the first one quiet: it is the SSRC's source from now on
  };
  struct Source {
    std::uint32_t address = 0;  ///< IPv4, host order
    std::uint16_t port = 0;
    bool operator==(const Source&) const = default;
  };
  /// What a verdict other than pass was about (for the event and the log line).
  struct Finding {
    std::uint32_t ssrc = 0;
    Source kept, other;  ///< the SSRC's source and the one that also sent it (takeover: old, new)
    bool first_time = false;  ///< a collision to say (a new colliding source; at most once a second per SSRC)
  };

  explicit SourceGuard(std::chrono::microseconds quiet = std::chrono::milliseconds(100)) : quiet_(quiet) {}

  /// One datagram of socket `channel` from `from` (address 0: unknown, always passes).
  Verdict accept(int channel, Bytes datagram, Source from, Clock::time_point arrival);
  /// The last non-pass verdict's details.
  const Finding& finding() const noexcept { return finding_; }
  const SourceGuardCounters& counters() const noexcept { return counters_; }
  /// The source starts again (a looped capture): sources are learned afresh.
  void reset() noexcept { entries_.clear(); }

  static constexpr std::size_t kMaxEntries = 64;  ///< (channel, SSRC) pairs remembered (least recent evicted)

 private:
  struct Entry {
    int channel = 0;
    std::uint32_t ssrc = 0;
    Source source;
    Clock::time_point last{};         // newest packet from `source`
    std::optional<Source> said;       // the colliding source last said (said again only when it changes)
    Clock::time_point said_at{};
  };

  std::chrono::microseconds quiet_;
  std::vector<Entry> entries_;
  Finding finding_;
  SourceGuardCounters counters_;
};

/// "10.0.0.5:5004".
std::string to_string(const SourceGuard::Source& s);

}  // namespace j2k::depacketizer
