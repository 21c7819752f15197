// The JPEG 2000 parts of an MPEG-2 TS (13818-1 2.6.80 J2K video descriptor, Annex S
// elementary-stream header) and the MPEG-2 CRC used by PSI sections.
#include <fmt/format.h>

#include "depacketizer/ts.hpp"

namespace j2k::depacketizer::ts {

namespace {

constexpr std::uint32_t box(char a, char b, char c, char d) {
  return static_cast<std::uint32_t>(a) << 24 | static_cast<std::uint32_t>(b) << 16 |
         static_cast<std::uint32_t>(c) << 8 | static_cast<std::uint32_t>(d);
}
constexpr std::uint32_t kElsm = box('e', 'l', 's', 'm');
constexpr std::uint32_t kFrat = box('f', 'r', 'a', 't');
constexpr std::uint32_t kBrat = box('b', 'r', 'a', 't');
constexpr std::uint32_t kFiel = box('f', 'i', 'e', 'l');
constexpr std::uint32_t kTcod = box('t', 'c', 'o', 'd');
constexpr std::uint32_t kBcol = box('b', 'c', 'o', 'l');

struct CrcTable {
  std::uint32_t v[256];
  constexpr CrcTable() : v{} {
    for (std::uint32_t i = 0; i < 256; ++i) {
      std::uint32_t c = i << 24;
      for (int k = 0; k < 8; ++k) c = (c & 0x80000000u) ? (c << 1) ^ 0x04C11DB7u : c << 1;
      v[i] = c;
    }
  }
};
constexpr CrcTable kCrc;

std::uint32_t peek_u32(const ByteReader& r) {
  return static_cast<std::uint32_t>(r.peek_u8(0)) << 24 | static_cast<std::uint32_t>(r.peek_u8(1)) << 16 |
         static_cast<std::uint32_t>(r.peek_u8(2)) << 8 | r.peek_u8(3);
}

Error short_header(const char* what) {
  return make_error(ErrorKind::need_more_data, fmt::format("elsm header cut short in {}", what));
}

}  // namespace

std::uint32_t crc32_mpeg2(Bytes data) noexcept {
  std::uint32_t crc = 0xFFFFFFFFu;
  for (std::uint8_t b : data) crc = (crc << 8) ^ kCrc.v[((crc >> 24) ^ b) & 0xFF];
  return crc;
}

std::string TimeCode::describe() const {
  return fmt::format("{:02}:{:02}:{:02}:{:02}", hours, minutes, seconds, frames);
}

Result<J2kVideoDescriptor> parse_j2k_video_descriptor(Bytes body) {
  // 2.6.80: 24 bytes in the basic form (up to the still/interlaced byte), 26 extended.
  if (body.size() < 24) return make_error(ErrorKind::corrupt, fmt::format("J2K video descriptor of {} bytes (< 24)", body.size()));
  ByteReader r(body);
  J2kVideoDescriptor d;
  const std::uint16_t first = r.u16();
  d.extended = first & 0x8000;
  d.profile_and_level = first & 0x7FFF;
  d.horizontal_size = r.u32();
  d.vertical_size = r.u32();
  d.max_bit_rate = r.u32();
  d.max_buffer_size = r.u32();
  d.den_frame_rate = r.u16();
  d.num_frame_rate = r.u16();
  if (d.extended) r.skip(1);  // stripe/block/mdm flags: JPEG XS extensions, not used here
  else d.color_specification = r.u8();
  const std::uint8_t modes = r.u8();
  d.still_mode = modes & 0x80;
  d.interlaced_video = modes & 0x40;
  if (d.extended) {
    if (!r.has(4)) return make_error(ErrorKind::corrupt, "extended J2K video descriptor cut short");
    d.colour_primaries = r.u8();
    d.transfer_characteristics = r.u8();
    d.matrix_coefficients = r.u8();
    d.video_full_range = r.u8() & 0x80;
  }
  return d;
}

void append_j2k_video_descriptor(std::vector<std::uint8_t>& out, const J2kVideoDescriptor& d) {
  ByteWriter w(out);
  w.u8(kJ2kVideoDescriptorTag);
  w.u8(24);
  w.u16(d.profile_and_level & 0x7FFF);  // extended_capability_flag = 0
  w.u32(d.horizontal_size);
  w.u32(d.vertical_size);
  w.u32(d.max_bit_rate);
  w.u32(d.max_buffer_size);
  w.u16(d.den_frame_rate);
  w.u16(d.num_frame_rate);
  w.u8(d.color_specification);
  w.u8(static_cast<std::uint8_t>((d.still_mode ? 0x80 : 0) | (d.interlaced_video ? 0x40 : 0) | 0x3F));
}

Result<ElsmHeader> parse_elsm_header(Bytes data) {
  ByteReader r(data);
  ElsmHeader h;
  if (!r.has(24)) return short_header("elsm/frat/brat");
  if (r.u32() != kElsm) return make_error(ErrorKind::corrupt, "J2K access unit does not begin with an elsm box");
  if (r.u32() != kFrat) return make_error(ErrorKind::corrupt, "elsm header: frat box missing");
  h.frat_den = r.u16();
  h.frat_num = r.u16();
  if (r.u32() != kBrat) return make_error(ErrorKind::corrupt, "elsm header: brat box missing");
  h.max_bitrate = r.u32();
  h.auf[0] = r.u32();
  if (!r.has(4)) return short_header("brat");
  // Progressive: tcod follows AUF1. Interlaced: AUF2 and a fiel box. Some progressive
  // senders write AUF2 = 0 without a fiel box (GStreamer's tsdemux tolerates it too).
  if (peek_u32(r) != kTcod) {
    h.auf[1] = r.u32();
    if (!r.has(4)) return short_header("AUF2");
    if (peek_u32(r) == kFiel) {
      r.skip(4);
      if (!r.has(2)) return short_header("fiel");
      h.fic = r.u8();
      h.fio = r.u8();
      if (h.fic != 1 && h.fic != 2) return make_error(ErrorKind::corrupt, fmt::format("elsm fiel: field count {}", h.fic));
    } else if (h.auf[1] != 0) {
      h.fic = 2;  // two codestream sizes without a fiel box: still a field pair
    }
    h.interlaced = h.fic == 2;
    if (!h.interlaced && h.auf[1] != 0)
      return make_error(ErrorKind::corrupt, "elsm header: a second codestream size for one field");
    if (h.interlaced && h.auf[1] == 0) return make_error(ErrorKind::corrupt, "elsm header: two fields, second of size 0");
  }
  if (!r.has(14)) return short_header("tcod/bcol");
  if (r.u32() != kTcod) return make_error(ErrorKind::corrupt, "elsm header: tcod box missing");
  h.time_code.hours = r.u8();
  h.time_code.minutes = r.u8();
  h.time_code.seconds = r.u8();
  h.time_code.frames = r.u8();
  if (r.u32() != kBcol) return make_error(ErrorKind::corrupt, "elsm header: bcol box missing");
  h.colour_spec = r.u8();
  r.skip(1);  // reserved, 0xFF
  if (h.auf[0] == 0) return make_error(ErrorKind::corrupt, "elsm header: first codestream of size 0");
  h.header_size = r.position();
  return h;
}

void append_elsm_header(std::vector<std::uint8_t>& out, const ElsmHeader& h) {
  ByteWriter w(out);
  w.u32(kElsm);
  w.u32(kFrat);
  w.u16(h.frat_den);
  w.u16(h.frat_num);
  w.u32(kBrat);
  w.u32(h.max_bitrate);
  w.u32(h.auf[0]);
  if (h.interlaced) {
    w.u32(h.auf[1]);
    w.u32(kFiel);
    w.u8(2);
    w.u8(h.fio);
  }
  w.u32(kTcod);
  w.u8(h.time_code.hours);
  w.u8(h.time_code.minutes);
  w.u8(h.time_code.seconds);
  w.u8(h.time_code.frames);
  w.u32(kBcol);
  w.u8(h.colour_spec);
  w.u8(0xFF);
}

ColourCoding colour_from_spec(std::uint8_t spec) noexcept {
  switch (spec) {
    case 1: return ColourCoding::rgb;           // sRGB
    case 2: return ColourCoding::ycbcr_bt601;
    case 3: return ColourCoding::ycbcr_bt709;
    case 6: return ColourCoding::ycbcr_bt2020;
    case 7: return ColourCoding::ycbcr_bt2020;  // ST 2084 (PQ) uses BT.2020 colour
    default: return ColourCoding::unknown;       // 4 CIELUV, 5 XYZ: not shown as YCbCr
  }
}

PictureDescriptor picture_descriptor(const std::optional<J2kVideoDescriptor>& descriptor,
                                     const std::optional<ElsmHeader>& elsm) {
  PictureDescriptor p;
  std::uint8_t spec = 0;
  bool interlaced = false;
  if (descriptor) {
    interlaced = descriptor->interlaced_video;
    p.stored_width = descriptor->horizontal_size;
    p.stored_height = descriptor->vertical_size;
    p.sample_rate_num = descriptor->num_frame_rate;
    p.sample_rate_den = descriptor->den_frame_rate;
    spec = descriptor->color_specification;
    if (descriptor->extended && descriptor->video_full_range) p.colour_range = 1;
  }
  if (elsm) {
    // The per-unit header is the fresher word on rate, colour and interlace.
    interlaced = elsm->interlaced;
    if (elsm->frat_den) {
      p.sample_rate_num = elsm->frat_num;
      p.sample_rate_den = elsm->frat_den;
    }
    if (elsm->colour_spec) spec = elsm->colour_spec;
    // 15444-3 fiel box: field order 6 = the field holding the top line is stored second.
    if (interlaced) p.field_dominance = elsm->fio == 6 ? 2 : 1;
  }
  p.frame_layout = interlaced ? 1 : 0;
  // The descriptor's vertical_size is the frame's; MXF's StoredHeight is the field's.
  if (interlaced) p.stored_height /= 2;
  p.coding = colour_from_spec(spec);
  if (spec == 7) p.transfer = TransferFunction::pq;  // SMPTE ST 2084
  if (descriptor && descriptor->extended) {
    // H.273 code points: transfer 16 PQ, 18 HLG; primaries / matrix 9 BT.2020.
    if (descriptor->transfer_characteristics == 16) p.transfer = TransferFunction::pq;
    if (descriptor->transfer_characteristics == 18) p.transfer = TransferFunction::hlg;
    if (p.coding == ColourCoding::unknown && descriptor->matrix_coefficients == 9) p.coding = ColourCoding::ycbcr_bt2020;
  }
  return p;
}

}  // namespace j2k::depacketizer::ts
