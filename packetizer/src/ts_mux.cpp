#include "packetizer/ts_mux.hpp"

#include <algorithm>
#include <optional>

namespace j2k::packetizer {

namespace ts = depacketizer::ts;

namespace {

// Long-form PSI section (13818-1 2.4.4.4): table_id, flags + section_length, then the body
// given, version 0, current, section 0 of 0, and the CRC_32.
std::vector<std::uint8_t> section(std::uint8_t table_id, std::uint16_t id, const std::vector<std::uint8_t>& body) {
  std::vector<std::uint8_t> s;
  ByteWriter w(s);
  const std::size_t length = 5 + body.size() + 4;  // after the length field
  w.u8(table_id);
  w.u16(static_cast<std::uint16_t>(0xB000 | length));  // syntax 1, '0', reserved '11'
  w.u16(id);
  w.u8(0xC1);  // reserved '11', version 0, current_next 1
  w.u8(0);
  w.u8(0);
  w.bytes(body);
  w.u32(ts::crc32_mpeg2(s));
  return s;
}

void header(std::vector<std::uint8_t>& out, bool unit_start, std::uint16_t pid, int afc, std::uint8_t& cc) {
  out.push_back(ts::kSyncByte);
  out.push_back(static_cast<std::uint8_t>((unit_start ? 0x40 : 0) | (pid >> 8)));
  out.push_back(static_cast<std::uint8_t>(pid));
  out.push_back(static_cast<std::uint8_t>(afc << 4 | (cc & 0x0F)));
  if (afc & 1) cc = static_cast<std::uint8_t>((cc + 1) & 0x0F);  // 2.4.3.3: only packets with payload count
}

}  // namespace

std::vector<std::uint8_t> TsMuxer::pat() const {
  std::vector<std::uint8_t> body;
  ByteWriter w(body);
  w.u16(config_.program_number);
  w.u16(static_cast<std::uint16_t>(0xE000 | config_.pmt_pid));
  return section(0x00, 1, body);
}

std::vector<std::uint8_t> TsMuxer::pmt() const {
  std::vector<std::uint8_t> body;
  ByteWriter w(body);
  w.u16(static_cast<std::uint16_t>(0xE000 | config_.video_pid));  // PCR_PID
  w.u16(0xF000);                                                   // program_info_length 0
  std::vector<std::uint8_t> descriptor;
  ts::append_j2k_video_descriptor(descriptor, config_.descriptor);
  w.u8(ts::kStreamTypeJ2k);
  w.u16(static_cast<std::uint16_t>(0xE000 | config_.video_pid));
  w.u16(static_cast<std::uint16_t>(0xF000 | descriptor.size()));
  w.bytes(descriptor);
  if (config_.audio_pid) {
    // SMPTE ST 302M: PES private data, registration descriptor "BSSD".
    w.u8(ts::kStreamTypePrivatePes);
    w.u16(static_cast<std::uint16_t>(0xE000 | *config_.audio_pid));
    w.u16(0xF000 | 6);
    w.u8(ts::kRegistrationDescriptorTag);
    w.u8(4);
    w.u32(ts::kFormatIdBssd);
  }
  return section(0x02, config_.program_number, body);
}

void TsMuxer::put_section(std::uint16_t pid, std::uint8_t& cc, const std::vector<std::uint8_t>& s,
                          std::vector<std::uint8_t>& out) {
  // Our sections fit one packet: pointer_field 0, the section, 0xFF stuffing.
  const std::size_t start = out.size();
  header(out, true, pid, 1, cc);
  out.push_back(0);
  out.insert(out.end(), s.begin(), s.end());
  out.resize(start + ts::kPacketSize, 0xFF);
}

namespace {

/// A PES packet (13818-1 2.4.3.6) of private stream 1 with a PTS and the data-alignment flag.
std::vector<std::uint8_t> pes_packet(std::uint64_t pts, Bytes data) {
  std::vector<std::uint8_t> pes;
  ByteWriter w(pes);
  w.u8(0);
  w.u8(0);
  w.u8(1);
  w.u8(ts::kPrivateStream1);
  const std::size_t after_length = 3 + 5 + data.size();
  w.u16(after_length <= 0xFFFF ? static_cast<std::uint16_t>(after_length) : 0);  // 0: unbounded (2.4.3.7)
  w.u8(0x84);  // '10', not scrambled, data_alignment_indicator
  w.u8(0x80);  // PTS only
  w.u8(5);
  const std::uint64_t p = pts & ((1ull << 33) - 1);
  w.u8(static_cast<std::uint8_t>(0x21 | ((p >> 29) & 0x0E)));
  w.u16(static_cast<std::uint16_t>(((p >> 14) & 0xFFFE) | 1));
  w.u16(static_cast<std::uint16_t>(((p << 1) & 0xFFFE) | 1));
  w.bytes(data);
  return pes;
}

/// Cuts a PES into TS packets of `pid`: a PCR (`pcr_base`, when given) in the adaptation field
/// of the first packet and of every `pcr_every`-th after it, each PCR's place in `out` added to
/// `pcr_at`; stuffing in the last packet's.
void put_pes(std::uint16_t pid, std::uint8_t& cc, const std::vector<std::uint8_t>& pes, std::optional<std::uint64_t> pcr_base,
             std::vector<std::uint8_t>& out, std::size_t pcr_every = 0, std::vector<std::size_t>* pcr_at = nullptr) {
  std::size_t at = 0;
  bool first = true;
  for (std::size_t index = 0; at < pes.size(); ++index) {
    const std::size_t left = pes.size() - at;
    const bool pcr = pcr_base && (first || (pcr_every > 0 && index % pcr_every == 0));
    std::size_t af = pcr ? 8 : 0;  // length byte + flags + 6 PCR bytes
    std::size_t room = ts::kPacketSize - 4 - af;
    if (left < room) af += room - left, room = left;
    header(out, first, pid, af ? 3 : 1, cc);
    if (af) {
      out.push_back(static_cast<std::uint8_t>(af - 1));
      if (af > 1) {
        out.push_back(pcr ? 0x10 : 0x00);
        std::size_t used = 2;
        if (pcr) {
          if (pcr_at) pcr_at->push_back(out.size());
          out.resize(out.size() + 6);
          write_pcr(out.data() + out.size() - 6, *pcr_base * 300);
          used += 6;
        }
        out.resize(out.size() + (af - used), 0xFF);
      }
    }
    out.insert(out.end(), pes.begin() + static_cast<std::ptrdiff_t>(at), pes.begin() + static_cast<std::ptrdiff_t>(at + room));
    at += room;
    first = false;
  }
}

}  // namespace

void write_pcr(std::uint8_t* at, std::uint64_t pcr_27mhz) {
  const std::uint64_t base = (pcr_27mhz / 300) & ((1ull << 33) - 1);
  const auto ext = static_cast<std::uint32_t>(pcr_27mhz % 300);
  at[0] = static_cast<std::uint8_t>(base >> 25);
  at[1] = static_cast<std::uint8_t>(base >> 17);
  at[2] = static_cast<std::uint8_t>(base >> 9);
  at[3] = static_cast<std::uint8_t>(base >> 1);
  at[4] = static_cast<std::uint8_t>((base & 1) << 7 | 0x7E | ext >> 8);  // 6 reserved bits, extension bit 8
  at[5] = static_cast<std::uint8_t>(ext);
}

void TsMuxer::mux_frame(const std::vector<Bytes>& codestreams, std::uint64_t pts, const ts::TimeCode& time_code,
                        std::vector<std::uint8_t>& out, std::size_t pcr_every, std::vector<std::size_t>* pcr_at) {
  // PSI before every frame: a receiver that joins late waits at most one frame.
  put_section(ts::kPatPid, cc_pat_, pat(), out);
  put_section(config_.pmt_pid, cc_pmt_, pmt(), out);

  // PES: elsm header then the codestream(s).
  ts::ElsmHeader elsm;
  elsm.frat_den = config_.descriptor.den_frame_rate;
  elsm.frat_num = config_.descriptor.num_frame_rate;
  elsm.max_bitrate = config_.descriptor.max_bit_rate;
  elsm.interlaced = codestreams.size() == 2;
  elsm.fic = elsm.interlaced ? 2 : 1;
  elsm.fio = elsm.interlaced ? config_.field_order : 0;
  elsm.auf[0] = codestreams.empty() ? 0 : static_cast<std::uint32_t>(codestreams[0].size());
  elsm.auf[1] = elsm.interlaced ? static_cast<std::uint32_t>(codestreams[1].size()) : 0;
  elsm.time_code = time_code;
  elsm.colour_spec = config_.descriptor.color_specification;
  std::vector<std::uint8_t> data;
  ts::append_elsm_header(data, elsm);
  for (Bytes c : codestreams) data.insert(data.end(), c.begin(), c.end());
  const std::uint64_t pcr_base = pts > config_.pcr_lead_90khz ? pts - config_.pcr_lead_90khz : 0;
  put_pes(config_.video_pid, cc_video_, pes_packet(pts, data), pcr_base, out, pcr_every, pcr_at);
}

void TsMuxer::mux_audio(const depacketizer::AudioBlock& block, std::uint64_t pts, std::vector<std::uint8_t>& out) {
  if (!config_.audio_pid) return;
  // One PES per ST 302M packet, whose size field has 16 bits: a frame's sound beyond it (8
  // channels of 24 bits below ~20 fps) goes in several, each with the PTS of its first sample.
  const std::size_t most = depacketizer::s302m_max_frames(block.format);
  const std::size_t frames = block.frames(), channels = static_cast<std::size_t>(block.format.channels);
  std::size_t first = 0;
  do {
    depacketizer::AudioBlock piece;
    piece.format = block.format;
    const std::size_t n = std::min(most, frames - first);
    piece.samples.assign(block.samples.begin() + static_cast<std::ptrdiff_t>(first * channels),
                         block.samples.begin() + static_cast<std::ptrdiff_t>((first + n) * channels));
    const auto rate = static_cast<std::uint64_t>(std::max(block.format.sample_rate, 1));
    const std::uint64_t at = pts + (static_cast<std::uint64_t>(first) * 90000 + rate / 2) / rate;
    put_pes(*config_.audio_pid, cc_audio_, pes_packet(at, depacketizer::encode_s302m(piece, first)), std::nullopt, out);
    first += most;
  } while (first < frames);
}

void RtpMp2tPacketizer::packetize(Bytes ts, std::uint32_t timestamp, std::vector<std::vector<std::uint8_t>>& out) {
  constexpr std::size_t kPerDatagram = 7 * ts::kPacketSize;
  for (std::size_t at = 0; at < ts.size(); at += kPerDatagram) {
    const std::size_t n = std::min(kPerDatagram, ts.size() - at);
    std::vector<std::uint8_t> p;
    p.reserve(12 + n);
    ByteWriter w(p);
    w.u8(0x80);
    w.u8(33);  // MP2T (RFC 3551)
    w.u16(sequence_++);
    w.u32(timestamp);
    w.u32(ssrc_);
    w.bytes(ts.subspan(at, n));
    out.push_back(std::move(p));
  }
}

}  // namespace j2k::packetizer
