#pragma once
// VSF TR-01 send side: JPEG 2000 access units into an MPEG-2 transport stream (PAT, PMT with
// stream_type 0x21 and the J2K video descriptor, one PES per frame with the elsm header and a
// PTS, PCR in the video PID's adaptation field), and that TS into RTP/MP2T datagrams
// (SMPTE ST 2022-2: payload type 33, 7 TS packets per datagram).
#include <cstdint>
#include <vector>

#include "core/byte_reader.hpp"
#include <optional>

#include "depacketizer/audio.hpp"
#include "depacketizer/ts.hpp"

namespace j2k::packetizer {

struct TsMuxConfig {
  std::uint16_t program_number = 1;
  std::uint16_t pmt_pid = 0x0100;
  std::uint16_t video_pid = 0x0200;             ///< also the PCR PID
  depacketizer::ts::J2kVideoDescriptor descriptor;  ///< sizes, rate, colour, interlace
  std::uint8_t field_order = 1;                 ///< elsm fiel Fio when interlaced (1 top first, 6 bottom first)
  std::uint64_t pcr_lead_90khz = 9000;          ///< PCR runs this far ahead… behind the PTS (decoder buffer time)
  /// SMPTE ST 302M sound on this PID (listed in the PMT with a "BSSD" registration descriptor).
  std::optional<std::uint16_t> audio_pid = std::nullopt;
};

/// Writes a 27 MHz PCR into the 6 bytes of an adaptation field's PCR (13818-1 2.4.3.5: 33-bit
/// base at 90 kHz, 6 reserved bits, 9-bit extension).
void write_pcr(std::uint8_t* at, std::uint64_t pcr_27mhz);

class TsMuxer {
 public:
  explicit TsMuxer(TsMuxConfig config) : config_(config) {}

  /// Appends the TS packets of one frame: PAT and PMT, then the PES, with a PCR (PTS less
  /// pcr_lead_90khz) in its first packet and, with `pcr_every`, in every pcr_every-th after it.
  /// `pcr_at`: where each PCR's 6 bytes lie in `out` (a sender that spreads the frame's packets
  /// over time rewrites them with write_pcr to their sending times).
  /// `codestreams`: one (progressive) or two fields in temporal order.
  void mux_frame(const std::vector<Bytes>& codestreams, std::uint64_t pts_90khz,
                 const depacketizer::ts::TimeCode& time_code, std::vector<std::uint8_t>& out, std::size_t pcr_every = 0,
                 std::vector<std::size_t>* pcr_at = nullptr);

  /// Appends the TS packets of one ST 302M PES (2, 4, 6 or 8 channels of 16, 20 or 24 bits
  /// at 48 kHz) whose first sample is due at `pts_90khz`. Nothing without an audio PID.
  void mux_audio(const depacketizer::AudioBlock& block, std::uint64_t pts_90khz, std::vector<std::uint8_t>& out);

  const TsMuxConfig& config() const noexcept { return config_; }

 private:
  void put_section(std::uint16_t pid, std::uint8_t& cc, const std::vector<std::uint8_t>& section,
                   std::vector<std::uint8_t>& out);
  std::vector<std::uint8_t> pat() const;
  std::vector<std::uint8_t> pmt() const;

  TsMuxConfig config_;
  std::uint8_t cc_pat_ = 0, cc_pmt_ = 0, cc_video_ = 0, cc_audio_ = 0;
};

/// Cuts a TS into RTP/MP2T packets: up to 7 × 188 bytes each, payload type 33, the given
/// 90 kHz timestamp, M = 0 (RFC 2250 2.1).
class RtpMp2tPacketizer {
 public:
  RtpMp2tPacketizer(std::uint32_t ssrc, std::uint16_t first_sequence) : ssrc_(ssrc), sequence_(first_sequence) {}
  void packetize(Bytes ts, std::uint32_t timestamp, std::vector<std::vector<std::uint8_t>>& out);
  std::uint16_t next_sequence() const noexcept { return sequence_; }

 private:
  std::uint32_t ssrc_;
  std::uint16_t sequence_;
};

}  // namespace j2k::packetizer
