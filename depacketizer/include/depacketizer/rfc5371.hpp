#pragma once
// RTP payload format for JPEG 2000 video (RFC 5371).
//
//    0                   1                   2                   3
//    0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//   +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//   |tp |MHF|mh_id|T|     priority  |           tile number         |
//   +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//   |    reserved   |             fragment offset                   |
//   +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//
// tp: 0 progressive frame, 1 first field, 2 second field. MHF: 0 no main header, 1 a
// fragment of it, 2 its last fragment, 3 all of it. Fragment offset: where the payload's
// first byte sits in this codestream (from SOC). M marks the last packet of a frame/field.
#include <cstdint>
#include <optional>
#include <vector>

#include "depacketizer/payload.hpp"

namespace j2k::depacketizer {

struct Rfc5371Header {
  int tp = 0;
  int mhf = 0;
  int mh_id = 0;
  bool tile_invalid = false;
  int priority = 0;
  int tile = 0;
  std::uint32_t fragment_offset = 0;
};

/// Parses the 8-byte payload header; `body` is what follows it.
Result<Rfc5371Header> parse_rfc5371_header(Bytes payload, Bytes& body);

/// Writes the 8-byte payload header (for the sender).
void append_rfc5371_header(std::vector<std::uint8_t>& out, const Rfc5371Header& h);

class Rfc5371Depacketizer final : public PayloadDepacketizer {
 public:
  /// A codestream's buffer may reach kOffsetSlack + kOffsetFactor × the bytes received for
  /// it: holes from loss fit (half of the packets lost still leaves room), while a lone
  /// fragment at offset 0xFFFFF0 cannot make us zero-fill 16 MiB.
  static constexpr std::uint64_t kOffsetSlack = 1u << 20;
  static constexpr std::uint64_t kOffsetFactor = 4;
  /// Separate runs of received bytes kept per codestream: fragments may come in any order of
  /// offsets (a sender repeating the main header, or not sending in offset order) and join
  /// up; beyond this many runs the codestream is taken as damaged (its runs are kept as they
  /// are), so that fragments placed one byte apart cannot make the list grow with every packet.
  static constexpr std::size_t kMaxHoles = 1024;
  /// Longest a unit may stay open (arrival of its first fragment to now): a frame is one
  /// frame period of packets, seconds on a very slow link; a timestamp that never ends (no
  /// M bit, no next timestamp) is handed on incomplete at this age (units_capped), and its
  /// later fragments make a unit of their own.
  static constexpr std::chrono::milliseconds kMaxUnitAge{10000};
  explicit Rfc5371Depacketizer(Sink sink, std::size_t max_codestream_bytes = 64u << 20);
  void push(const RtpPacket& packet, bool loss_before, std::chrono::steady_clock::time_point arrival) override;
  void flush() override;
  PayloadCounters payload_counters() const override { return counters_; }
  const std::optional<PictureDescriptor>& descriptor() const override { return no_descriptor_; }

 private:
  /// One codestream (frame or field) being assembled from fragments.
  struct Assembly {
    std::vector<std::uint8_t> bytes;
    std::uint64_t received = 0;    // payload bytes received (memory may follow this, not offsets)
    std::vector<std::pair<std::uint64_t, std::uint64_t>> runs;  // [begin, end) received, sorted, apart
    bool damaged = false;
    bool started = false;
    bool ended = false;            // saw M
  };
  void finish_unit();
  Assembly& field(int tp) { return tp == 2 ? second_ : first_; }

  Sink sink_;
  std::size_t max_bytes_;
  PayloadCounters counters_;
  std::optional<PictureDescriptor> no_descriptor_;
  /// Records [begin, end) as received (joining runs it touches); false when the list is full.
  static bool add_run(Assembly& a, std::uint64_t begin, std::uint64_t end);
  Assembly first_, second_;      // tp 0/1, tp 2
  bool interlaced_ = false;      // a packet of this unit said it is a field (tp 1 or 2)
  bool active_ = false;
  std::uint32_t timestamp_ = 0;
  std::chrono::steady_clock::time_point first_arrival_{}, last_arrival_{};
  std::uint64_t next_index_ = 0;
};

}  // namespace j2k::depacketizer
