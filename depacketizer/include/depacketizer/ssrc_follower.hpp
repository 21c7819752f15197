#pragma once
// Which RTP stream the ST 2022-7 merge and the ST 2022-1 FEC decoder follow, and when a run
// of packets that do not fit says the sender started again (new SSRC or new numbers).
#include <chrono>
#include <cstdint>
#include <optional>
#include <vector>

namespace j2k::depacketizer {

/// Packets that agree with each other: sequence numbers going up one at a time (or two: one
/// packet lost). A copy (the other path) or a number a little behind the newest (reordering)
/// neither counts nor breaks the run; anything else starts a new run. Confirms a new SSRC or a new place in the number
/// space before the state of the old one is given up.
class SequenceRun {
 public:
  static constexpr int kReorder = 16;  ///< this far behind the run's newest: tolerated
  static constexpr int kMaxStep = 2;   ///< this far ahead of the run's newest: a step of it
  /// Adds a packet; returns the run's length in packets in sequence (this one included).
  int add(std::uint16_t sequence) noexcept;
  void clear() noexcept { length_ = 0; }
  int length() const noexcept { return length_; }

 private:
  int length_ = 0;
  std::uint16_t newest_ = 0;
};

/// Packets in sequence that confirm a restart (an SSRC change, or new sequence numbers): a
/// restart costs about this many packets; one stray packet, or a few, never moves anything.
constexpr int kRestartRun = 8;

/// Which SSRC the merge (and the FEC decoder) follows: the first one seen, until another one
/// sends kRestartRun packets in sequence while the followed one is silent (no packet of it
/// among them and, when arrival times are given, none for `quiet`). The quiet time keeps a
/// second, busier stream on the same group from displacing a followed one that pauses
/// between frames; it matches the RTP session's, which decides what is shown.
class SsrcFollower {
 public:
  enum class Verdict {
    followed,  ///< the followed SSRC
    changed,   ///< a new SSRC is followed from this packet on (also the very first packet)
    foreign,   ///< another SSRC: count it and drop it
  };
  explicit SsrcFollower(std::chrono::microseconds quiet = std::chrono::milliseconds(100)) : quiet_(quiet) {}

  Verdict accept(std::uint32_t ssrc, std::uint16_t sequence,
                 std::optional<std::chrono::steady_clock::time_point> arrival = std::nullopt);
  std::optional<std::uint32_t> followed() const noexcept { return followed_; }
  /// Forgets the followed SSRC: the next packet's is followed.
  void reset() noexcept;
  /// Follows `ssrc` from now on, decided upstream (the session for the merge, the merge for
  /// the FEC decoder behind it): no other SSRC takes over by itself until reset().
  void follow(std::uint32_t ssrc) noexcept;

 private:
  struct Challenger {
    std::uint32_t ssrc = 0;
    SequenceRun run;
  };
  static constexpr std::size_t kChallengers = 4;  // other SSRCs tracked at once (shortest run evicted)

  std::chrono::microseconds quiet_;
  std::optional<std::uint32_t> followed_;
  std::optional<std::chrono::steady_clock::time_point> followed_last_;  // newest arrival of the followed SSRC
  std::vector<Challenger> challengers_;  // at most kChallengers
  bool pinned_ = false;                   // follow() decided it: challengers never take over
};

}  // namespace j2k::depacketizer
