// MPEG-2 TS demultiplexer for TR-01 J2K video: packets, PSI sections (PAT, PMT), PES.
#include <algorithm>

#include <fmt/format.h>

#include "core/log.hpp"
#include "depacketizer/ts.hpp"

namespace j2k::depacketizer::ts {

namespace {

constexpr std::size_t kMaxSectionBytes = 1024;  // 2.4.4.11: PAT/PMT section_length ≤ 1021 (+3)
constexpr std::size_t kMaxPrograms = 1024;

const char* kind_of_stream_type(std::uint8_t st) {
  switch (st) {
    case 0x01: case 0x02: case 0x10: case 0x1B: case 0x20: case 0x21: case 0x24: case 0x32: case 0x33:
      return "video";
    case 0x03: case 0x04: case 0x0F: case 0x11: case 0x1C: case 0x81: case 0x87:
      return "audio";
    default:
      return "data";
  }
}

// A PID that may carry a PMT or an elementary stream (2.4.3.3 Table 2-3: 0x0000–0x000F
// are reserved for tables, 0x1FFF is the null packet).
bool assignable_pid(std::uint16_t pid) { return pid >= 0x0010 && pid < kNullPid; }

// Stream ids without the optional PES header (2.4.3.7).
bool has_optional_pes_header(std::uint8_t stream_id) {
  switch (stream_id) {
    case 0xBC: case 0xBE: case 0xBF: case 0xF0: case 0xF1: case 0xF2: case 0xF8: case 0xFF:
      return false;
    default:
      return stream_id >= 0xBD;
  }
}

}  // namespace

bool looks_like_ts(Bytes datagram) noexcept {
  if (datagram.empty() || datagram.size() % kPacketSize != 0) return false;
  for (std::size_t i = 0; i < datagram.size(); i += kPacketSize)
    if (datagram[i] != kSyncByte) return false;
  return true;
}

TsDemux::TsDemux(Sink sink, DemuxConfig config) : sink_(std::move(sink)), config_(config) {}

void TsDemux::push(Bytes packets, bool loss_before) {
  if (loss_before && pes_.active) {
    // Packets went missing between datagrams: the PES in progress cannot be trusted whole
    // even if the continuity counters happen to line up (a multiple of 16 packets lost).
    pes_.damaged = true;
    if (pes_.problem.empty()) pes_.problem = "packets lost in transport";
  }
  if (loss_before && audio_pes_.active) {
    audio_pes_.damaged = true;
    if (audio_pes_.problem.empty()) audio_pes_.problem = "packets lost in transport";
  }
  if (loss_before) {
    for (auto& [pid, sb] : sections_) sb = SectionBuffer{};
    video_gap_ = true;
  }
  std::size_t pos = 0;
  while (pos + kPacketSize <= packets.size()) {
    push_packet(packets.subspan(pos, kPacketSize));
    pos += kPacketSize;
  }
  if (pos != packets.size()) ++counters_.sync_errors;  // a cut tail: not a whole packet
}

bool TsDemux::check_continuity(std::uint16_t pid, PidState& st, int cc, bool has_payload, bool discontinuity,
                               Bytes packet) {
  // 2.4.3.3: continuity_counter increments with each packet with payload of a PID; it
  // does not when there is no payload. A duplicate (same CC, same content) may follow.
  // discontinuity_indicator (2.4.3.5) permits a jump, also when it comes in a packet
  // without payload (an adaptation field only, e.g. with the PCR): at the next with one.
  if (pid == kNullPid) return true;
  if (!has_payload) {
    st.discontinuity_pending |= discontinuity;
    return true;
  }
  const bool fresh = st.last_cc < 0 || discontinuity || st.discontinuity_pending;
  if (!fresh && cc == st.last_cc && std::equal(packet.begin(), packet.end(), st.last.begin())) {
    ++counters_.duplicates;
    return false;  // discard the repeat (and any further identical copy)
  }
  const bool in_sequence = fresh || cc == ((st.last_cc + 1) & 0x0F);
  st.last_cc = cc;
  st.discontinuity_pending = false;
  std::copy(packet.begin(), packet.end(), st.last.begin());
  if (in_sequence) return true;
  // A jump, or the same counter on other content (16 packets lost, or corruption): packets
  // are missing before this one.
  ++st.continuity_errors;
  ++counters_.continuity_errors;
  if (video_pid_ && pid == *video_pid_) video_gap_ = true;
  if (video_pid_ && pid == *video_pid_ && pes_.active) {
    pes_.damaged = true;
    if (pes_.problem.empty()) pes_.problem = "continuity counter jump";
  }
  if (audio_pid_ && pid == *audio_pid_ && audio_pes_.active) {
    audio_pes_.damaged = true;
    if (audio_pes_.problem.empty()) audio_pes_.problem = "continuity counter jump";
  }
  if (auto it = sections_.find(pid); it != sections_.end()) it->second = SectionBuffer{};
  return true;  // the packet itself is fine; what came before it is missing
}

void TsDemux::push_packet(Bytes packet) {
  if (packet.size() != kPacketSize || packet[0] != kSyncByte) {
    ++counters_.sync_errors;
    return;
  }
  ++counters_.packets;
  ByteReader r(packet);
  r.skip(1);
  const std::uint16_t b12 = r.u16();
  const bool tei = b12 & 0x8000;
  const bool unit_start = b12 & 0x4000;
  const std::uint16_t pid = b12 & 0x1FFF;
  const std::uint8_t b3 = r.u8();
  const int afc = (b3 >> 4) & 3;
  const int cc = b3 & 0x0F;
  PidState& st = pid_state_[pid];
  ++st.packets;
  if (tei) {
    // Transport error indicator: a lower layer saw uncorrectable errors; nothing in it is
    // reliable (not even the PID), so it only counts.
    ++counters_.transport_errors;
    return;
  }
  if (afc == 0) return;  // reserved value: discard (2.4.3.3)
  bool discontinuity = false;
  if (afc & 2) {
    // Adaptation field (2.4.3.4): length, flags, optional PCR …
    const std::uint8_t length = r.u8();
    const std::size_t limit = (afc == 2) ? 183 : 182;
    if (length > limit) {
      ++counters_.adaptation_malformed;
      return;
    }
    Bytes field = r.bytes(length);
    if (length > 0) {
      const std::uint8_t flags = field[0];
      discontinuity = flags & 0x80;
      if ((flags & 0x10) && length >= 7 && pcr_pid_ && pid == *pcr_pid_) {
        const std::uint64_t base = static_cast<std::uint64_t>(field[1]) << 25 | static_cast<std::uint64_t>(field[2]) << 17 |
                                   static_cast<std::uint64_t>(field[3]) << 9 | static_cast<std::uint64_t>(field[4]) << 1 |
                                   field[5] >> 7;
        const std::uint64_t ext = static_cast<std::uint64_t>(field[5] & 1) << 8 | field[6];
        pcr_ = base * 300 + ext;  // 2.4.3.5: 27 MHz
      }
    }
  }
  const bool has_payload = afc & 1;
  if (!check_continuity(pid, st, cc, has_payload, discontinuity, packet)) return;
  if (!has_payload || pid == kNullPid) return;
  Bytes payload = r.rest();
  if (pid == kPatPid || pmt_pids_.count(pid)) {
    handle_section_payload(pid, unit_start, payload);
  } else if (video_pid_ && pid == *video_pid_) {
    handle_video_payload(unit_start, payload);
  } else if (audio_pid_ && pid == *audio_pid_) {
    handle_audio_payload(unit_start, payload);
  } else if (!video_pid_) {
    ++counters_.waiting_for_pmt;
  }
}

void TsDemux::handle_section_payload(std::uint16_t pid, bool unit_start, Bytes payload) {
  SectionBuffer& sb = sections_[pid];
  ByteReader r(payload);
  auto drain = [&] {
    // Whole sections at the front of the buffer go to handle_section (2.4.4: sections may
    // span packets and several may share one; 0xFF after a section starts stuffing).
    while (sb.active && sb.bytes.size() >= 3) {
      if (sb.bytes[0] == 0xFF) {
        sb = SectionBuffer{};
        return;
      }
      const std::size_t length = (static_cast<std::size_t>(sb.bytes[1] & 0x0F) << 8 | sb.bytes[2]) + 3;
      if (length > kMaxSectionBytes) {
        ++counters_.section_malformed;
        sb = SectionBuffer{};
        return;
      }
      if (sb.bytes.size() < length) return;
      handle_section(pid, Bytes(sb.bytes.data(), length));
      sb.bytes.erase(sb.bytes.begin(), sb.bytes.begin() + static_cast<std::ptrdiff_t>(length));
    }
  };
  Bytes data = payload;
  if (unit_start) {
    const std::uint8_t pointer = r.u8();
    if (pointer > r.remaining()) {
      ++counters_.section_malformed;
      sb = SectionBuffer{};
      return;
    }
    Bytes tail = r.bytes(pointer);
    if (sb.active) {
      sb.bytes.insert(sb.bytes.end(), tail.begin(), tail.end());
      drain();
      if (sb.active && !sb.bytes.empty()) ++counters_.section_malformed;  // did not end where the pointer said
    }
    sb = SectionBuffer{};
    sb.active = true;
    data = r.rest();
  } else if (!sb.active) {
    return;  // a section's continuation without its start: wait for the next start
  }
  if (sb.bytes.size() + data.size() > kMaxSectionBytes + kPacketSize) {
    ++counters_.section_malformed;
    sb = SectionBuffer{};
    return;
  }
  sb.bytes.insert(sb.bytes.end(), data.begin(), data.end());
  drain();
}

void TsDemux::handle_section(std::uint16_t pid, Bytes section) {
  // Long-form section (2.4.4.4): table_id, '1' '0' '11' section_length(12), …, CRC_32.
  if (section.size() < 12 || !(section[1] & 0x80)) {
    ++counters_.section_malformed;
    return;
  }
  if (crc32_mpeg2(section) != 0) {
    ++counters_.section_crc_errors;
    return;
  }
  const std::uint8_t table_id = section[0];
  if (pid == kPatPid && table_id == 0x00) handle_pat(section);
  else if (pid != kPatPid && table_id == 0x02) handle_pmt(pid, section);
}

void TsDemux::handle_pat(Bytes section) {
  ByteReader r(section);
  r.skip(3);
  r.skip(2);  // transport_stream_id
  const std::uint8_t version = r.u8();
  if (!(version & 1)) return;  // current_next_indicator = 0: not yet valid
  const std::uint8_t section_number = r.u8();
  const std::uint8_t last_section_number = r.u8();
  Bytes entries = r.bytes(r.remaining() - 4);
  if (entries.size() % 4 != 0) {
    ++counters_.section_malformed;
    return;
  }
  // A PAT may come in several sections: the programs are those of all of them, taken once its
  // last section is in (the video's PMT in section 1 is not "gone" after section 0).
  if (section_number == 0) pat_building_.clear();
  ByteReader e(entries);
  while (!e.empty()) {
    const std::uint16_t program = e.u16();
    const std::uint16_t pmt_pid = e.u16() & 0x1FFF;
    if (program == 0) continue;  // network PID (NIT), not a program
    if (!assignable_pid(pmt_pid) || pat_building_.size() >= kMaxPrograms) {
      ++counters_.section_malformed;
      continue;
    }
    pat_building_[pmt_pid] = program;
  }
  if (section_number < last_section_number) return;
  pmt_pids_ = pat_building_;
  // The program whose PMT named the video left the PAT: forget the video.
  if (video_program_pmt_ && !pmt_pids_.count(*video_program_pmt_)) {
    finish_pes();
    headless_ = seen_unit_start_ = false;
    video_pid_.reset();
    video_program_pmt_.reset();
    pcr_pid_.reset();
    descriptor_.reset();
    follow_audio(std::nullopt);
  }
}

void TsDemux::handle_pmt(std::uint16_t pid, Bytes section) {
  // 2.4.4.9: program_number, version, section numbers, PCR_PID, program_info_length,
  // descriptors, then per stream: stream_type, elementary_PID, ES_info_length, descriptors.
  ByteReader r(section);
  r.skip(3);
  r.skip(2);  // program_number
  const std::uint8_t version_byte = r.u8();
  if (!(version_byte & 1)) return;
  r.skip(2);  // section_number, last_section_number (a PMT has one section)
  const std::uint16_t pcr_pid = r.u16() & 0x1FFF;
  const std::uint16_t program_info_length = r.u16() & 0x0FFF;
  const std::size_t body_end = section.size() - 4;
  if (r.position() + program_info_length > body_end) {
    ++counters_.section_malformed;
    return;
  }
  r.skip(program_info_length);
  struct Es {
    std::uint8_t type;
    std::uint16_t pid;
    std::optional<J2kVideoDescriptor> descriptor;
    bool bssd = false;  // registration descriptor "BSSD": SMPTE ST 302M
  };
  std::vector<Es> streams;
  while (r.position() + 5 <= body_end) {
    Es es{};
    es.type = r.u8();
    es.pid = r.u16() & 0x1FFF;
    const std::uint16_t info_length = r.u16() & 0x0FFF;
    if (r.position() + info_length > body_end) {
      ++counters_.section_malformed;
      return;
    }
    ByteReader d(r.bytes(info_length));
    while (d.remaining() >= 2) {
      const std::uint8_t tag = d.u8();
      const std::uint8_t length = d.u8();
      if (length > d.remaining()) {
        ++counters_.section_malformed;
        break;
      }
      Bytes body = d.bytes(length);
      if (tag == kRegistrationDescriptorTag && length >= 4)
        es.bssd = (static_cast<std::uint32_t>(body[0]) << 24 | static_cast<std::uint32_t>(body[1]) << 16 |
                   static_cast<std::uint32_t>(body[2]) << 8 | body[3]) == kFormatIdBssd;
      if (tag == kJ2kVideoDescriptorTag && es.type == kStreamTypeJ2k) {
        if (auto desc = parse_j2k_video_descriptor(body)) es.descriptor = *desc;
        else ++counters_.section_malformed;
      }
    }
    // An elementary stream on a reserved PID, the null PID, or on a PMT's own PID is a
    // PMT "pointing anywhere": ignored and counted.
    if (!assignable_pid(es.pid) || pmt_pids_.count(es.pid)) {
      ++counters_.section_malformed;
      continue;
    }
    streams.push_back(es);
  }
  if (r.position() != body_end) ++counters_.section_malformed;  // trailing bytes that are no stream entry

  const int version = (version_byte >> 1) & 0x1F;
  auto [vit, inserted] = pmt_versions_.try_emplace(pid, version);
  if (!inserted && vit->second != version) {
    ++counters_.pmt_updates;
    vit->second = version;
  }
  for (const Es& es : streams) stream_types_[es.pid] = es.type;

  // Follow the first J2K stream of the first program that has one; a later PMT of the
  // same program may move it.
  if (video_program_pmt_ && *video_program_pmt_ != pid) return;
  auto j2k = std::find_if(streams.begin(), streams.end(), [](const Es& es) { return es.type == kStreamTypeJ2k; });
  if (j2k == streams.end()) {
    if (video_program_pmt_) {
      finish_pes();
      headless_ = seen_unit_start_ = false;
      video_pid_.reset();
      video_program_pmt_.reset();
      pcr_pid_.reset();
      descriptor_.reset();
      follow_audio(std::nullopt);
    }
    return;
  }
  if (video_pid_ && *video_pid_ != j2k->pid) {
    finish_pes();
    logger("depacketizer")->info("TS: J2K video moved from PID {} to {}", *video_pid_, j2k->pid);
  } else if (!video_pid_) {
    logger("depacketizer")->info("TS: J2K video on PID {} (program {}, PMT PID {})", j2k->pid, pmt_pids_[pid], pid);
  }
  video_pid_ = j2k->pid;
  video_program_pmt_ = pid;
  pcr_pid_ = pcr_pid == kNullPid ? std::nullopt : std::optional<std::uint16_t>(pcr_pid);
  if (j2k->descriptor) descriptor_ = j2k->descriptor;
  // The program's first ST 302M stream is its sound.
  auto sound = std::find_if(streams.begin(), streams.end(),
                            [&](const Es& es) { return es.type == kStreamTypePrivatePes && es.bssd && es.pid != j2k->pid; });
  follow_audio(sound == streams.end() ? std::nullopt : std::optional<std::uint16_t>(sound->pid));
}

void TsDemux::handle_video_payload(bool unit_start, Bytes payload) {
  if (unit_start) {
    if (pes_.active) finish_pes();
    if (headless_) emit_headless();
    pes_ = Pes{};
    pes_.bytes = std::move(spare_pes_);
    spare_pes_ = {};
    pes_.active = true;
    seen_unit_start_ = true;
    video_gap_ = false;
  } else if (!pes_.active) {
    // After a PES ended (early, or dropped at the bound) its other packets may follow; after
    // packets went missing, these are a PES whose start was lost: a frame lost, unless we
    // joined the stream in its middle.
    if (seen_unit_start_ && video_gap_) headless_ = true;
    return;
  }
  if (pes_.bytes.size() + payload.size() > config_.max_pes_bytes) {
    ++counters_.pes_oversize;
    pes_.damaged = true;
    pes_.problem = fmt::format("access unit larger than {} bytes", config_.max_pes_bytes);
    pes_.bytes.clear();
    pes_.bytes.shrink_to_fit();
    finish_pes();
    return;
  }
  pes_.bytes.insert(pes_.bytes.end(), payload.begin(), payload.end());
  maybe_finish_early();
}

Result<PesView> parse_pes(Bytes pes) {
  ByteReader r(pes);
  if (!r.has(9)) return make_error(ErrorKind::need_more_data, "PES header cut short");
  if (r.u24() != 0x000001) return make_error(ErrorKind::corrupt, "PES without start code");
  const std::uint8_t stream_id = r.u8();
  PesView v;
  v.declared_length = r.u16();
  if (!has_optional_pes_header(stream_id))
    return make_error(ErrorKind::corrupt, fmt::format("PES stream_id 0x{:02X} cannot carry J2K video or ST 302M sound", stream_id));
  const std::uint8_t flags1 = r.u8();
  if ((flags1 & 0xC0) != 0x80) return make_error(ErrorKind::corrupt, "PES optional header without its '10' marker");
  if (flags1 & 0x30) return make_error(ErrorKind::unsupported, "scrambled PES");
  const std::uint8_t flags2 = r.u8();
  const std::uint8_t header_length = r.u8();
  // The length counts from after itself: the two flag bytes, the header length and its data
  // come first. A shorter one is a lie to refuse here, before anyone trims by it.
  if (v.declared_length != 0 && v.declared_length < 3u + header_length)
    return make_error(ErrorKind::corrupt, fmt::format("PES_packet_length {} is shorter than its own header ({} bytes)",
                                                      v.declared_length, 3u + header_length));
  if (!r.has(header_length)) return make_error(ErrorKind::need_more_data, "PES header data cut short");
  Bytes optional = r.bytes(header_length);
  if (flags2 & 0x80) {
    // 2.4.3.7: '001x' PTS[32..30] marker PTS[29..15] marker PTS[14..0] marker.
    if (optional.size() < 5) return make_error(ErrorKind::corrupt, "PES PTS flag without room for a PTS");
    v.pts = static_cast<std::uint64_t>((optional[0] >> 1) & 7) << 30 | static_cast<std::uint64_t>(optional[1]) << 22 |
            static_cast<std::uint64_t>(optional[2] >> 1) << 15 | static_cast<std::uint64_t>(optional[3]) << 7 |
            optional[4] >> 1;
  }
  v.data = r.rest();
  return v;
}


void TsDemux::maybe_finish_early() {
  // A unit is whole once the elsm sizes are covered (or the declared PES length): emit it
  // then rather than at the next unit start, which is a frame later.
  auto view = parse_pes(pes_.bytes);
  if (!view) return;
  if (view->declared_length != 0 && pes_.bytes.size() >= 6u + view->declared_length) {
    finish_pes();
    return;
  }
  auto elsm = parse_elsm_header(view->data);
  if (!elsm) return;
  const std::uint64_t need = elsm->header_size + static_cast<std::uint64_t>(elsm->auf[0]) + elsm->auf[1];
  if (view->data.size() >= need) finish_pes();
}

void TsDemux::finish_pes() {
  if (!pes_.active) return;
  Pes pes = std::move(pes_);
  pes_ = Pes{};
  AccessUnit unit;
  unit.pid = video_pid_.value_or(0);
  unit.pcr = pcr_;
  unit.descriptor = descriptor_;
  unit.complete = !pes.damaged;
  unit.problem = pes.problem;
  auto incomplete = [&](std::string why) {
    unit.complete = false;
    if (unit.problem.empty()) unit.problem = std::move(why);
  };
  auto view = parse_pes(pes.bytes);
  if (!view) {
    if (!pes.damaged) ++counters_.pes_malformed;
    incomplete(view.error().message);
  } else {
    unit.pts = view->pts;
    Bytes data = view->data;
    if (view->declared_length != 0) {
      const std::size_t declared_end = 6u + view->declared_length;
      if (pes.bytes.size() != declared_end) {
        // A lying (or cut) PES_packet_length: counted; the elsm sizes decide what the
        // codestreams are, so a length that is merely wrong does not cost the frame.
        ++counters_.pes_length_mismatch;
      }
    }
    auto elsm = parse_elsm_header(data);
    if (!elsm) {
      if (!pes.damaged) ++counters_.elsm_malformed;
      incomplete(elsm.error().message);
    } else {
      unit.elsm = *elsm;
      const std::uint64_t total = static_cast<std::uint64_t>(elsm->auf[0]) + elsm->auf[1];
      if (total > config_.max_pes_bytes) {
        ++counters_.elsm_malformed;
        incomplete(fmt::format("elsm sizes {} + {} exceed the {}-byte bound", elsm->auf[0], elsm->auf[1],
                               config_.max_pes_bytes));
      } else {
        Bytes body = data.subspan(elsm->header_size);
        const int fields = elsm->interlaced ? 2 : 1;
        std::size_t at = 0;
        for (int f = 0; f < fields; ++f) {
          const std::size_t want = elsm->auf[f];
          const std::size_t have = std::min(want, body.size() - at);
          unit.codestreams.emplace_back(body.begin() + static_cast<std::ptrdiff_t>(at),
                                        body.begin() + static_cast<std::ptrdiff_t>(at + have));
          at += have;
          if (have < want) {
            unit.missing_bytes += want - have;
            incomplete(fmt::format("access unit cut short: {} of {} bytes", at, total));
          }
        }
      }
    }
  }
  if (unit.pts) {
    if (last_pts_) {
      const std::uint64_t step = (*unit.pts - *last_pts_) & ((1ull << 33) - 1);  // 33-bit PTS
      if (step > 0 && step < 90000) pts_step_ = step;
    }
    last_pts_ = unit.pts;
  }
  if (unit.complete) ++counters_.units_complete;
  else ++counters_.units_incomplete;
  sink_(std::move(unit));
  // Its bytes were copied into the unit: the buffer serves the next PES.
  pes.bytes.clear();
  if (pes.bytes.capacity() <= kKeptPesBytes) spare_pes_ = std::move(pes.bytes);
}

void TsDemux::emit_headless() {
  headless_ = false;
  AccessUnit unit;
  unit.pid = video_pid_.value_or(0);
  unit.pcr = pcr_;
  unit.descriptor = descriptor_;
  unit.complete = false;
  unit.problem = "the start of the access unit (its PES header) was lost";
  if (last_pts_ && pts_step_) {
    unit.pts = (*last_pts_ + *pts_step_) & ((1ull << 33) - 1);
    last_pts_ = unit.pts;
  }
  ++counters_.units_incomplete;
  ++counters_.units_headless;
  sink_(std::move(unit));
}

void TsDemux::flush() {
  if (headless_) emit_headless();
  finish_pes();
  finish_audio_pes();
  // What comes after a flush (a sender that started again, under a new SSRC) counts its
  // continuity afresh: its counters begin anew, not where the old sender's stopped.
  for (auto& [pid, st] : pid_state_) {
    st.last_cc = -1;
    st.discontinuity_pending = false;
  }
}

std::vector<PidInfo> TsDemux::pids() const {
  std::vector<PidInfo> out;
  out.reserve(pid_state_.size());
  for (const auto& [pid, st] : pid_state_) {
    PidInfo info;
    info.pid = pid;
    info.packets = st.packets;
    info.continuity_errors = st.continuity_errors;
    if (pid == kPatPid) info.kind = "PAT";
    else if (pmt_pids_.count(pid)) info.kind = "PMT";
    else if (audio_pid_ && pid == *audio_pid_) {
      info.stream_type = kStreamTypePrivatePes;
      info.kind = "audio";  // ST 302M
    }
    else if (pid == kNullPid) info.kind = "null";
    else if (auto it = stream_types_.find(pid); it != stream_types_.end()) {
      info.stream_type = it->second;
      info.kind = kind_of_stream_type(it->second);
    } else info.kind = "unlisted";
    out.push_back(std::move(info));
  }
  return out;
}

}  // namespace j2k::depacketizer::ts
