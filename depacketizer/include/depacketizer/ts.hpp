#pragma once
// MPEG-2 transport stream (ISO/IEC 13818-1) carrying JPEG 2000 video as VSF TR-01 does:
// PAT → PMT → one elementary stream of stream_type 0x21 with the J2K video descriptor
// (tag 0x32, 13818-1 2.6.80), one access unit per PES, each beginning with the `elsm`
// elementary-stream header (13818-1 Annex S) and then one codestream (progressive) or two
// (the fields of an interlaced frame).
//
// TS packet (2.4.3.2), 188 bytes:
//   +--------+---+---+---+-------------+----+----+----+---------------------------------+
//   | 0x47   |TEI|PUSI|pri|  PID (13)  |TSC |AFC | CC | [adaptation field] [payload]    |
//   +--------+---+---+---+-------------+----+----+----+---------------------------------+
//   AFC: 01 payload only, 10 adaptation only, 11 both; CC counts packets with payload per PID.
//
// Everything here is untrusted input: section lengths, PES lengths, descriptor lengths and
// elsm sizes are checked against what remains; memory is bounded by configuration.
#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/byte_reader.hpp"
#include "core/result.hpp"
#include "depacketizer/mxf.hpp"

namespace j2k::depacketizer::ts {

constexpr std::size_t kPacketSize = 188;
constexpr std::uint8_t kSyncByte = 0x47;
constexpr std::uint16_t kPatPid = 0x0000;
constexpr std::uint16_t kNullPid = 0x1FFF;
constexpr std::uint8_t kStreamTypeJ2k = 0x21;       ///< 13818-1 Table 2-34: JPEG 2000 video
constexpr std::uint8_t kJ2kVideoDescriptorTag = 0x32;
constexpr std::uint8_t kPrivateStream1 = 0xBD;      ///< stream_id TR-01 senders use for J2K PES
/// SMPTE ST 302M LPCM: PES private data (stream_type 0x06) on a PID whose PMT entry carries a
/// registration descriptor (tag 0x05) with format_identifier "BSSD"; stream_id 0xBD.
constexpr std::uint8_t kStreamTypePrivatePes = 0x06;
constexpr std::uint8_t kRegistrationDescriptorTag = 0x05;
constexpr std::uint32_t kFormatIdBssd = 0x42535344;  ///< "BSSD"
/// The largest 302M PES followed: a second of 8 channels of 24 bits (7 bytes a pair) is
/// 1.3 MB; a frame's worth is far less. A longer PES is cut there and counted.
constexpr std::size_t kMaxAudioPesBytes = 2u << 20;

/// CRC-32/MPEG-2 (13818-1 Annex A: polynomial 0x04C11DB7, initial 0xFFFFFFFF, no reflection,
/// no final XOR). Over a whole section including its CRC field the result is 0.
std::uint32_t crc32_mpeg2(Bytes data) noexcept;

/// J2K video descriptor (13818-1 2.6.80). The extended form (first bit set) carries colour
/// primaries etc. instead of color_specification.
struct J2kVideoDescriptor {
  bool extended = false;
  std::uint16_t profile_and_level = 0;
  std::uint32_t horizontal_size = 0, vertical_size = 0;
  std::uint32_t max_bit_rate = 0, max_buffer_size = 0;
  std::uint16_t den_frame_rate = 0, num_frame_rate = 0;
  std::uint8_t color_specification = 0;  ///< 1 sRGB, 2 BT.601, 3 BT.709, 4 CIELUV, 5 XYZ, 6 BT.2020, 7 ST 2084
  bool still_mode = false;
  bool interlaced_video = false;
  std::uint8_t colour_primaries = 0, transfer_characteristics = 0, matrix_coefficients = 0;  ///< extended only
  bool video_full_range = false;                                                              ///< extended only
};
/// `body`: the descriptor's bytes after tag and length.
Result<J2kVideoDescriptor> parse_j2k_video_descriptor(Bytes body);
/// Appends tag, length and the non-extended body (the form TR-01 receivers expect).
void append_j2k_video_descriptor(std::vector<std::uint8_t>& out, const J2kVideoDescriptor& d);

/// Time code from the `tcod` box: hours, minutes, seconds, frames (binary, not BCD).
struct TimeCode {
  std::uint8_t hours = 0, minutes = 0, seconds = 0, frames = 0;
  std::string describe() const;  ///< "HH:MM:SS:FF"
  bool operator==(const TimeCode&) const = default;
};

/// The elementary-stream header before the codestream(s) of a J2K access unit (13818-1
/// Annex S, TR-01): boxes elsm, frat, brat, [fiel], tcod, bcol.
///
///   'elsm' 'frat' den u16 num u16 'brat' MaxBr u32 AUF1 u32 [AUF2 u32]
///   ['fiel' Fic u8 Fio u8] 'tcod' HH MM SS FF 'bcol' colour u8 0xFF
///
/// 38 bytes progressive, 48 interlaced. Some progressive senders write AUF2 = 0 anyway.
struct ElsmHeader {
  std::uint16_t frat_den = 0;
  std::uint16_t frat_num = 0;
  std::uint32_t max_bitrate = 0;
  std::uint32_t auf[2] = {0, 0};  ///< codestream sizes (AUF2 = 0 when progressive)
  bool interlaced = false;        ///< a fiel box with Fic = 2
  std::uint8_t fic = 1;           ///< field count
  std::uint8_t fio = 0;           ///< field order (15444-3 fiel box: 1 top field first, 6 bottom first)
  TimeCode time_code;
  std::uint8_t colour_spec = 0;   ///< as J2kVideoDescriptor::color_specification
  std::size_t header_size = 0;    ///< bytes before the first codestream
};
/// Parses the header at the start of a PES payload. need_more_data when cut short.
Result<ElsmHeader> parse_elsm_header(Bytes data);
/// Writes the header (interlaced when `h.interlaced`: AUF2 and a fiel box).
void append_elsm_header(std::vector<std::uint8_t>& out, const ElsmHeader& h);

/// What TS statistics a receiver reports.
struct PidInfo {
  std::uint16_t pid = 0;
  int stream_type = -1;          ///< from the PMT; -1 = PSI or not listed
  std::string kind;              ///< "PAT", "PMT", "video", "audio", "data", "null", "unlisted"
  std::uint64_t packets = 0;
  std::uint64_t continuity_errors = 0;
};

struct TsCounters {
  std::uint64_t packets = 0;               ///< 188-byte packets seen
  std::uint64_t sync_errors = 0;           ///< packets not starting with 0x47, or a cut tail
  std::uint64_t transport_errors = 0;      ///< TEI set: the link says the packet is damaged
  std::uint64_t continuity_errors = 0;     ///< CC jumps (2.4.3.3), or the same CC on other content
  std::uint64_t duplicates = 0;            ///< a packet repeated, same CC and content (discarded)
  std::uint64_t adaptation_malformed = 0;  ///< adaptation_field_length past the packet
  std::uint64_t section_crc_errors = 0;
  std::uint64_t section_malformed = 0;     ///< bad lengths, PMT pointing at reserved PIDs, …
  std::uint64_t pes_malformed = 0;         ///< no start code, header length past the data
  std::uint64_t pes_length_mismatch = 0;   ///< PES_packet_length disagrees with what arrived
  std::uint64_t pes_oversize = 0;          ///< larger than the configured bound (dropped)
  std::uint64_t elsm_malformed = 0;        ///< J2K access unit without a valid elsm header
  std::uint64_t waiting_for_pmt = 0;       ///< video-looking packets dropped before a PMT named them
  std::uint64_t units_complete = 0;
  std::uint64_t units_incomplete = 0;
  std::uint64_t units_headless = 0;        ///< of those, units whose PES start was lost (counted from their other packets)
  std::uint64_t pmt_updates = 0;
  std::uint64_t audio_pes = 0;             ///< ST 302M PES packets handed on (whole or damaged)
  std::uint64_t audio_pes_oversize = 0;    ///< longer than kMaxAudioPesBytes (dropped)
};

/// A PES packet's header fields a receiver uses and its data (13818-1 2.4.3.6).
struct PesView {
  std::uint16_t declared_length = 0;  ///< PES_packet_length (0: unbounded)
  std::optional<std::uint64_t> pts;
  Bytes data;                         ///< PES_packet_data_bytes
};
/// Reads a PES packet from its start code (need_more_data while its header is cut short).
Result<PesView> parse_pes(Bytes pes);

/// One ST 302M PES out of the demultiplexer: its data (the 302M header and the sample
/// pairs), its PTS, and whether it arrived whole.
struct AudioPes {
  std::vector<std::uint8_t> data;
  std::optional<std::uint64_t> pts;
  bool complete = true;
  std::string problem;  ///< why not complete
  std::uint16_t pid = 0;
};

/// One J2K access unit out of the demultiplexer.
struct AccessUnit {
  std::vector<std::vector<std::uint8_t>> codestreams;  ///< one, or two fields (temporal order)
  bool complete = true;
  std::uint64_t missing_bytes = 0;  ///< AUF sizes minus what arrived (lower bound)
  std::string problem;              ///< why incomplete, for the log
  std::optional<ElsmHeader> elsm;
  std::optional<J2kVideoDescriptor> descriptor;  ///< from the PMT, when seen
  std::optional<std::uint64_t> pts;  ///< 33-bit, 90 kHz
  std::optional<std::uint64_t> pcr;  ///< 27 MHz, the last PCR of the program before this unit
  std::uint16_t pid = 0;
};

struct DemuxConfig {
  std::size_t max_pes_bytes = 64u << 20;  ///< one access unit at most (memory bound)
};

/// Demultiplexes a TS into J2K access units. Single-threaded: call from one thread.
class TsDemux {
 public:
  using Sink = std::function<void(AccessUnit&&)>;
  using AudioSink = std::function<void(AudioPes&&)>;
  explicit TsDemux(Sink sink, DemuxConfig config = {});
  /// The first ST 302M stream of the video's program goes here (ts_audio.cpp); without a
  /// sink its packets are only counted.
  void set_audio_sink(AudioSink sink) { audio_sink_ = std::move(sink); }

  /// Feeds bytes that should be whole 188-byte packets (an RTP/MP2T payload or a UDP
  /// datagram). `loss_before`: packets may be missing before these (RTP sequence gap).
  void push(Bytes packets, bool loss_before = false);
  /// Feeds one packet (exactly 188 bytes; otherwise counted as a sync error).
  void push_packet(Bytes packet);
  /// Emits a J2K unit still being assembled (end of input, or of a sender); continuity
  /// counters are counted afresh after it.
  void flush();

  const TsCounters& counters() const noexcept { return counters_; }
  /// Every PID seen, with its stream type once a PMT listed it (sorted by PID).
  std::vector<PidInfo> pids() const;
  std::optional<std::uint16_t> video_pid() const noexcept { return video_pid_; }
  std::optional<std::uint16_t> audio_pid() const noexcept { return audio_pid_; }
  const std::optional<J2kVideoDescriptor>& descriptor() const noexcept { return descriptor_; }
  std::optional<std::uint64_t> last_pcr() const noexcept { return pcr_; }

 private:
  struct PidState {
    std::uint64_t packets = 0;
    std::uint64_t continuity_errors = 0;
    int last_cc = -1;        // -1: none yet
    bool discontinuity_pending = false;  // signalled in a packet without payload
    std::array<std::uint8_t, 188> last{};  // the last packet with payload (a duplicate is identical)
  };
  struct SectionBuffer {
    std::vector<std::uint8_t> bytes;
    bool active = false;
  };
  struct Pes {
    std::vector<std::uint8_t> bytes;  // the whole PES packet from its start code
    bool active = false;
    bool damaged = false;
    std::string problem;
  };

  bool check_continuity(std::uint16_t pid, PidState& st, int cc, bool has_payload, bool discontinuity, Bytes packet);
  void handle_section_payload(std::uint16_t pid, bool unit_start, Bytes payload);
  void handle_section(std::uint16_t pid, Bytes section);
  void handle_pat(Bytes section);
  void handle_pmt(std::uint16_t pid, Bytes section);
  void handle_video_payload(bool unit_start, Bytes payload);
  /// Emits the unit when its elsm sizes say all bytes are in.
  void maybe_finish_early();
  void finish_pes();
  /// A unit whose PES start was lost (its other packets came): handed on incomplete, with no
  /// bytes and the PTS the stream's step gives it, so that it is counted like any frame.
  void emit_headless();
  // ST 302M sound (ts_audio.cpp).
  void follow_audio(std::optional<std::uint16_t> pid);
  void handle_audio_payload(bool unit_start, Bytes payload);
  void finish_audio_pes();

  Sink sink_;
  AudioSink audio_sink_;
  std::optional<std::uint16_t> audio_pid_;
  Pes audio_pes_;
  DemuxConfig config_;
  TsCounters counters_;
  std::map<std::uint16_t, PidState> pid_state_;   // at most 8192 entries (13-bit PIDs)
  std::map<std::uint16_t, std::uint8_t> stream_types_;  // PID → stream_type from PMTs
  std::map<std::uint16_t, SectionBuffer> sections_;     // PSI PIDs being reassembled
  std::map<std::uint16_t, std::uint16_t> pmt_pids_;     // PMT PID → program_number
  std::map<std::uint16_t, std::uint16_t> pat_building_;  // the PAT being read, section by section (bounded as pmt_pids_)
  std::map<std::uint16_t, int> pmt_versions_;           // PMT PID → version_number last seen
  std::optional<std::uint16_t> video_pid_;
  std::optional<std::uint16_t> pcr_pid_;
  std::optional<std::uint16_t> video_program_pmt_;       // PMT PID that named the video
  std::optional<J2kVideoDescriptor> descriptor_;
  std::optional<std::uint64_t> pcr_;
  Pes pes_;
  // The last video PES's buffer, emptied, for the next one: its capacity kept (grown from
  // nothing for every frame, a 4K frame's bytes took a dozen reallocations and fresh pages
  // each time, most of the depacketizer's work). Kept up to kKeptPesBytes.
  std::vector<std::uint8_t> spare_pes_;
  static constexpr std::size_t kKeptPesBytes = 16u << 20;
  bool seen_unit_start_ = false;             // a video PES began (before it, joining mid-unit is no loss)
  bool headless_ = false;                    // packets of a unit whose start was lost came
  bool video_gap_ = false;                   // video packets went missing since the last unit start
  std::optional<std::uint64_t> last_pts_;    // of the last video unit
  std::optional<std::uint64_t> pts_step_;    // between the last two units that had one
};

/// True when `datagram` looks like plain TS (not RTP): 0x47 at every 188-byte step and a
/// length that is a multiple of 188.
bool looks_like_ts(Bytes datagram) noexcept;

/// The colour coding a color_specification names.
ColourCoding colour_from_spec(std::uint8_t spec) noexcept;

/// The picture descriptor the rest of the pipeline uses, from what the TS said.
PictureDescriptor picture_descriptor(const std::optional<J2kVideoDescriptor>& descriptor,
                                     const std::optional<ElsmHeader>& elsm);

}  // namespace j2k::depacketizer::ts
