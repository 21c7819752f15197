#pragma once
// Puts RTP packets back in sequence order before depacketizing.
//
// A packet that arrives ahead of a gap waits (in a fixed ring of preallocated slots, no
// allocation per packet) until the gap fills — a reordered packet, recovered — or until
// the window is exceeded in packets or in time, when the missing ones are declared lost
// and the waiting packets are released. A packet that arrives after its gap was declared
// lost is "late" and dropped: the frame it belonged to has moved on.
#include <chrono>
#include <cstdint>
#include <functional>
#include <vector>

#include "core/byte_reader.hpp"

namespace j2k::depacketizer {

struct ReorderConfig {
  std::uint32_t max_packets = 64;                   ///< window depth in packets (≥ 1)
  std::chrono::microseconds max_delay{20000};       ///< longest a packet waits for a gap to fill
  std::size_t max_packet_bytes = 9216;
  /// Adaptive window: the depth in packets grows (up to `adaptive_max_packets`) instead of
  /// declaring a gap lost when it overflows, and the session raises the delay with the
  /// measured jitter and with packets that came late (up to `adaptive_max_delay`).
  /// `max_packets` and `max_delay` stay the floor.
  bool adaptive = true;
  std::uint32_t adaptive_max_packets = 1024;
  std::chrono::microseconds adaptive_max_delay{250000};
};

struct ReorderCounters {
  std::uint64_t released = 0;    ///< packets handed on in order
  std::uint64_t recovered = 0;   ///< arrived out of order, put back in order in time
  std::uint64_t lost = 0;        ///< declared missing (still missing: late ones are not subtracted)
  std::uint64_t late = 0;        ///< arrived after being declared lost
  std::uint64_t overflow = 0;    ///< packets too large for a slot
};

class RtpReorderBuffer {
 public:
  /// `loss_before`: packets are missing between the previous released packet and this one.
  using Release = std::function<void(Bytes packet, std::uint64_t extended_sequence, bool loss_before,
                                     std::chrono::steady_clock::time_point arrival)>;

  RtpReorderBuffer(ReorderConfig config, Release release);

  /// Offers a packet with its extended sequence number (from RtpSequenceTracker; the tracker
  /// has already dropped duplicates and strays).
  /// `from_network` false: a packet rebuilt here (FEC), which fills its gap but was not
  /// reordered by the network (not counted `recovered`).
  void push(Bytes packet, std::uint64_t extended_sequence, std::chrono::steady_clock::time_point arrival,
            bool from_network = true);
  /// Releases what has waited longer than max_delay (call when idle, e.g. every few ms).
  void tick(std::chrono::steady_clock::time_point now);
  /// Releases everything (end of input), declaring the gaps lost.
  void flush();
  /// Forgets all state (stream restart): what waits is released first.
  void reset();

  const ReorderCounters& counters() const noexcept { return counters_; }
  std::size_t waiting() const noexcept { return waiting_; }
  /// Missing sequence numbers behind waiting packets, not yet declared lost: they may still
  /// arrive (reordered), so a live loss count should not show them yet.
  std::uint32_t undecided() const noexcept;
  /// The delay in force (adaptive windows change it; never below the configured one).
  std::chrono::microseconds delay() const noexcept { return delay_; }
  void set_delay(std::chrono::microseconds delay) noexcept;
  std::uint32_t depth() const noexcept { return static_cast<std::uint32_t>(slots_.size()); }

 private:
  struct Slot {
    bool used = false;
    std::uint64_t sequence = 0;
    std::chrono::steady_clock::time_point arrival{};
    std::vector<std::uint8_t> data;
  };
  Slot& slot(std::uint64_t seq) { return slots_[seq % slots_.size()]; }
  void release_ready();
  void skip_to_oldest_waiting();
  void grow(std::size_t slots);

  ReorderConfig config_;
  std::chrono::microseconds delay_;
  Release release_;
  std::vector<Slot> slots_;
  bool started_ = false;
  std::uint64_t next_ = 0;       // next sequence to release (extended: 64 bits, never wraps)
  std::size_t waiting_ = 0;
  bool pending_loss_ = false;    // a gap was skipped: the next released packet carries loss_before
  ReorderCounters counters_;
};

}  // namespace j2k::depacketizer
