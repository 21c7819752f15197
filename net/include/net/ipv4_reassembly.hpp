#pragma once
// IPv4 fragment reassembly for capture replay (RFC 791 §3.2, RFC 815's hole bookkeeping in
// its simplest form). A live socket gets datagrams larger than the link's MTU whole from the
// kernel; a capture of the same link holds their fragments, which are put back together here
// so that the replay sees what the socket saw.
//
// Bounded whatever the capture holds: at most kSlots datagrams in progress (64 KiB each, the
// largest an IPv4 datagram can be), the oldest given up when a new one needs a slot, and a
// datagram in progress for longer than kMaxAge (capture time) given up too. Given up means
// counted, never an unbounded wait.
#include <array>
#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace j2k::net {

/// One fragment as parse_captured_frame finds it (addresses in host order).
struct Ipv4Fragment {
  std::uint32_t source = 0, destination = 0;
  std::uint16_t id = 0;
  std::uint8_t protocol = 0;
  std::uint32_t offset = 0;  ///< bytes (the header's 13-bit field times 8)
  bool more = false;         ///< MF: more fragments follow
  std::span<const std::uint8_t> data;  ///< the fragment's part of the IP payload
};

struct ReassemblyCounters {
  std::uint64_t fragments = 0;    ///< fragments taken in
  std::uint64_t datagrams = 0;    ///< datagrams put back together
  std::uint64_t given_up = 0;     ///< datagrams whose missing fragments never came (evicted or too old)
  std::uint64_t malformed = 0;    ///< fragments that cannot be part of a datagram (beyond 64 KiB, misaligned, conflicting ends, past the end, overlapping others)
  std::uint64_t duplicates = 0;   ///< fragments received twice, the same bytes (dropped)
};

class Ipv4Reassembler {
 public:
  static constexpr std::size_t kSlots = 16;
  static constexpr std::size_t kMaxDatagram = 65535 - 20;  ///< the IP payload of the largest datagram
  static constexpr std::chrono::seconds kMaxAge{2};

  /// Takes a fragment seen at `time` (the capture's clock). When it completes its datagram,
  /// returns the whole IP payload (valid until the next call); otherwise nothing.
  std::optional<std::span<const std::uint8_t>> add(const Ipv4Fragment& fragment, std::chrono::nanoseconds time);
  const ReassemblyCounters& counters() const noexcept { return counters_; }
  /// Datagrams in progress now (for tests).
  std::size_t in_progress() const noexcept;
  /// The end of the capture: what is still in progress will never complete (counted given up).
  void give_up_all() noexcept;

 private:
  static constexpr std::size_t kUnits = (kMaxDatagram + 7) / 8;  // fragment offsets are in 8-byte units
  struct Slot {
    bool used = false;
    std::uint32_t source = 0, destination = 0;
    std::uint16_t id = 0;
    std::uint8_t protocol = 0;
    std::chrono::nanoseconds first{};
    std::uint32_t length = 0;  ///< the datagram's payload length once its last fragment came (0: not yet)
    std::uint32_t covered = 0;  ///< 8-byte units received
    std::uint32_t max_end = 0;  ///< the furthest end of any fragment taken
    std::vector<std::uint64_t> have;  ///< one bit per 8-byte unit
    std::vector<std::uint8_t> bytes;  ///< kMaxDatagram, made on first use and kept
  };
  Slot& slot_for(const Ipv4Fragment& f, std::chrono::nanoseconds time);
  void give_up_older_than(std::chrono::nanoseconds time);

  std::array<Slot, kSlots> slots_{};
  std::vector<std::uint8_t> done_;  ///< the last datagram completed
  ReassemblyCounters counters_;
};

}  // namespace j2k::net
