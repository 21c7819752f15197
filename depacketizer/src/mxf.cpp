#include "depacketizer/mxf.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace j2k::depacketizer {

namespace {

bool has_prefix(const Ul& key) { return std::equal(std::begin(kUlPrefix), std::end(kUlPrefix), key.begin()); }

/// Compares bytes [from, to) of two labels.
bool same(const Ul& key, std::initializer_list<std::uint8_t> expect, std::size_t from) {
  std::size_t i = from;
  for (std::uint8_t b : expect) {
    if (key[i] != b) return false;
    ++i;
  }
  return true;
}

}  // namespace

Result<KlvHeader> parse_klv_header(Bytes data) {
  if (data.size() < 17) return make_error(ErrorKind::need_more_data, "KLV header cut short");
  KlvHeader h;
  std::copy_n(data.begin(), 16, h.key.begin());
  if (!has_prefix(h.key)) return make_error(ErrorKind::corrupt, "KLV key does not start with 06 0E 2B 34");
  std::uint8_t first = data[16];
  if (first < 0x80) {
    h.length = first;
    h.header_size = 17;
    return h;
  }
  std::size_t n = first & 0x7F;
  // BER long form: 1..8 length bytes (SMPTE 336 6.3.2); 0x80 (indefinite) is not allowed in MXF.
  if (n == 0 || n > 8) return make_error(ErrorKind::corrupt, fmt::format("invalid BER length form 0x{:02X}", first));
  if (data.size() < 17 + n) return make_error(ErrorKind::need_more_data, "KLV length cut short");
  for (std::size_t i = 0; i < n; ++i) h.length = h.length << 8 | data[17 + i];
  h.header_size = 17 + n;
  return h;
}

void append_ber_length(std::vector<std::uint8_t>& out, std::uint64_t length) {
  int n = 3;
  while (n < 8 && (length >> (8 * n)) != 0) ++n;
  out.push_back(static_cast<std::uint8_t>(0x80 | n));
  for (int i = n - 1; i >= 0; --i) out.push_back(static_cast<std::uint8_t>(length >> (8 * i)));
}

const char* to_string(KlvKind kind) noexcept {
  switch (kind) {
    case KlvKind::header_partition: return "header partition";
    case KlvKind::body_partition: return "body partition";
    case KlvKind::footer_partition: return "footer partition";
    case KlvKind::primer_pack: return "primer pack";
    case KlvKind::cdci_descriptor: return "CDCI descriptor";
    case KlvKind::rgba_descriptor: return "RGBA descriptor";
    case KlvKind::j2k_subdescriptor: return "JPEG 2000 sub-descriptor";
    case KlvKind::other_metadata: return "header metadata";
    case KlvKind::index_segment: return "index table segment";
    case KlvKind::system_item: return "system item";
    case KlvKind::picture_element: return "picture element";
    case KlvKind::fill: return "fill";
    case KlvKind::sound_descriptor: return "sound descriptor";
    case KlvKind::sound_element: return "sound element";
    case KlvKind::unknown: return "unknown";
  }
  return "?";
}

KlvKind classify_key(const Ul& k) noexcept {
  if (!has_prefix(k)) return KlvKind::unknown;
  // Fill item: 06 0E 2B 34 01 01 01 vv 03 01 02 10 01 00 00 00
  if (same(k, {0x01, 0x01, 0x01}, 4) && same(k, {0x03, 0x01, 0x02, 0x10, 0x01}, 8)) return KlvKind::fill;
  // Essence elements: 06 0E 2B 34 01 02 01 vv 0D 01 03 01 15 cc 08 nn (picture, ST 422)
  if (same(k, {0x01, 0x02, 0x01}, 4) && same(k, {0x0D, 0x01, 0x03, 0x01, 0x15}, 8) && (k[14] == 0x08 || k[14] == 0x09))
    return KlvKind::picture_element;
  // ... 16 cc tt nn: a sound element (ST 382), whatever its wrapping.
  if (same(k, {0x01, 0x02, 0x01}, 4) && same(k, {0x0D, 0x01, 0x03, 0x01, 0x16}, 8)) return KlvKind::sound_element;
  // System item (ST 385): 06 0E 2B 34 02 xx 01 vv 0D 01 03 01 04 01 01 00 — any set/pack coding byte
  if (k[4] == 0x02 && same(k, {0x0D, 0x01, 0x03, 0x01, 0x04, 0x01}, 8)) return KlvKind::system_item;
  if (k[4] == 0x02 && k[5] == 0x05 && same(k, {0x0D, 0x01, 0x02, 0x01, 0x01}, 8)) {
    // Partition packs (kk = 02 header, 03 body, 04 footer) and the primer pack (05 01).
    switch (k[13]) {
      case 0x02: return KlvKind::header_partition;
      case 0x03: return KlvKind::body_partition;
      case 0x04: return KlvKind::footer_partition;
      case 0x05: return KlvKind::primer_pack;
      default: return KlvKind::unknown;
    }
  }
  if (k[4] == 0x02 && k[5] == 0x53 && same(k, {0x0D, 0x01, 0x02, 0x01, 0x01, 0x10}, 8)) return KlvKind::index_segment;
  if (k[4] == 0x02 && k[5] == 0x53 && same(k, {0x0D, 0x01, 0x01, 0x01, 0x01, 0x01}, 8)) {
    switch (k[14]) {
      case 0x28: return KlvKind::cdci_descriptor;
      case 0x29: return KlvKind::rgba_descriptor;
      case 0x5A: return KlvKind::j2k_subdescriptor;
      case 0x42: case 0x47: case 0x48: return KlvKind::sound_descriptor;
      default: return KlvKind::other_metadata;
    }
  }
  return KlvKind::unknown;
}

PictureElementId picture_element_id(const Ul& key) noexcept {
  PictureElementId id;
  id.count = std::max<int>(1, key[13]);
  id.number = std::max<int>(1, key[15]);
  id.clip_wrapped = key[14] == 0x09;
  return id;
}

SoundElementId sound_element_id(const Ul& key) noexcept {
  SoundElementId id;
  id.count = std::max<int>(1, key[13]);
  id.type = key[14];
  id.number = key[15];
  return id;
}

bool PictureDescriptor::full_range() const noexcept {
  if (colour_range == 0 && white_level == 0) return rgba;
  if (component_depth == 0) return false;
  const std::uint32_t max_code = (1u << std::min<std::uint32_t>(component_depth, 31)) - 1;
  return black_level == 0 && (white_level == max_code || colour_range == max_code + 1);
}

std::string PictureDescriptor::describe() const {
  // Say only what the descriptor gives: a missing item is named as missing, not shown as 0.
  std::string out = fmt::format("{}x{}", stored_width, stored_height);
  if (display_width && display_height && (display_width != stored_width || display_height != stored_height))
    out += fmt::format(" (display {}x{})", display_width, display_height);
  switch (frame_layout) {
    case 0: out += " progressive"; break;
    case 1: out += " separate fields"; break;
    case 2: out += " single field"; break;
    case 3: out += " mixed fields"; break;
    case 4: out += " segmented frame"; break;
    default: break;
  }
  if (rgba) out += " RGB";
  else if (horizontal_subsampling == 0) out += " (sampling not given)";  // TR-01's descriptor has none
  else out += horizontal_subsampling == 2 ? (vertical_subsampling == 2 ? " 4:2:0" : " 4:2:2")
              : horizontal_subsampling == 4 ? " 4:1:1" : " 4:4:4";
  out += component_depth ? fmt::format(" {}-bit", component_depth) : std::string(" (depth not given)");
  if (coding != ColourCoding::unknown && !(rgba && coding == ColourCoding::rgb)) out += fmt::format(" {}", to_string(coding));
  else if (!rgba) out += horizontal_subsampling > 1 ? " YCbCr (coding equations not given)"
                                                   : " (colour coding not given: RGB or YCbCr)";
  if (transfer != TransferFunction::sdr) out += fmt::format(" {}", to_string(transfer));
  out += frame_rate() > 0 ? fmt::format(" {:.3f} fps", frame_rate()) : std::string(" (rate not given)");
  return out;
}

Result<PictureDescriptor> parse_picture_descriptor(Bytes value, bool rgba) {
  PictureDescriptor d;
  d.rgba = rgba;
  ByteReader r(value);
  while (r.remaining() >= 4) {
    const std::uint16_t tag = r.u16();
    const std::uint16_t len = r.u16();
    if (!r.has(len)) return make_error(ErrorKind::corrupt, fmt::format("descriptor item 0x{:04X} longer than the set", tag));
    ByteReader item(r.bytes(len));
    auto u32_or_u8 = [&]() -> std::uint32_t {
      return len == 1 ? item.u8() : len == 2 ? item.u16() : item.u32();
    };
    switch (tag) {
      case 0x3203: d.stored_width = u32_or_u8(); break;
      case 0x3202: d.stored_height = u32_or_u8(); break;
      case 0x3209: d.display_width = u32_or_u8(); break;
      case 0x3208: d.display_height = u32_or_u8(); break;
      case 0x3401:
        // RGBA PixelLayout (ST 377-1 G.2.40): (component code, depth) byte pairs, ended by
        // a zero code. RGBA descriptors carry their depth here, not in ComponentDepth.
        while (item.remaining() >= 2) {
          const std::uint8_t code = item.u8();
          const std::uint8_t bits = item.u8();
          if (code == 0) break;
          if (d.component_depth == 0 && (code == 'R' || code == 'G' || code == 'B' || code == 'Y')) d.component_depth = bits;
        }
        break;
      case 0x320C: d.frame_layout = item.u8(); break;
      case 0x3212: d.field_dominance = item.u8(); break;
      case 0x3301: d.component_depth = u32_or_u8(); break;
      case 0x3302: d.horizontal_subsampling = u32_or_u8(); break;
      case 0x3308: d.vertical_subsampling = u32_or_u8(); break;
      case 0x3304: d.black_level = u32_or_u8(); break;
      case 0x3305: d.white_level = u32_or_u8(); break;
      case 0x3306: d.colour_range = u32_or_u8(); break;
      case 0x3001:
        d.sample_rate_num = static_cast<std::int32_t>(item.u32());
        d.sample_rate_den = static_cast<std::int32_t>(item.u32());
        break;
      case 0x321A:
        if (len == 16) {
          Bytes ul = item.bytes(16);
          // CodingEquations ULs differ in byte 13: 01 BT.601, 02 BT.709, 06 BT.2020.
          d.coding = ul[13] == 0x01 ? ColourCoding::ycbcr_bt601
                     : ul[13] == 0x02 ? ColourCoding::ycbcr_bt709
                     : ul[13] == 0x06 ? ColourCoding::ycbcr_bt2020
                                      : ColourCoding::unknown;
        }
        break;
      case 0x3210:
        if (len == 16) {
          Bytes ul = item.bytes(16);
          // TransferCharacteristic ULs (06 0E 2B 34 04 01 01 vv 04 01 01 01 01 xx 00 00): byte 13
          // 0A SMPTE ST 2084 (PQ), 0B BT.2100 HLG; 01 BT.470, 02 BT.709 and the rest are SDR.
          const bool node = ul[8] == 0x04 && ul[9] == 0x01 && ul[10] == 0x01 && ul[11] == 0x01 && ul[12] == 0x01;
          d.transfer = node && ul[13] == 0x0A   ? TransferFunction::pq
                       : node && ul[13] == 0x0B ? TransferFunction::hlg
                                                : TransferFunction::sdr;
        }
        break;
      case 0x3004:
        if (len == 16) d.wrapping = item.bytes(16)[14];
        break;
      default: break;  // other and dynamic tags are not needed to play the stream
    }
  }
  // Plausibility (the values steer the decoder's limits and the display, so an absurd one
  // must not be believed): sizes within what a JPEG 2000 video stream uses, depth within
  // Ssiz's 38 bits, a frame rate a receiver can be fed.
  auto implausible = [](std::string what) { return make_error(ErrorKind::limit, "implausible " + what); };
  constexpr std::uint32_t kMaxSide = 16384;
  if (d.stored_width > kMaxSide || d.stored_height > kMaxSide || d.display_width > kMaxSide || d.display_height > kMaxSide)
    return implausible(fmt::format("size {}x{} (at most {} a side)", d.stored_width, d.stored_height, kMaxSide));
  if (d.component_depth > 38) return implausible(fmt::format("component depth {} bits (at most 38)", d.component_depth));
  if (d.sample_rate_num < 0 || d.sample_rate_den < 0 || d.frame_rate() > 1000.0)
    return implausible(fmt::format("frame rate {}/{} (at most 1000 frames/s)", d.sample_rate_num, d.sample_rate_den));
  auto sub_ok = [](std::uint32_t v) { return v == 0 || v == 1 || v == 2 || v == 4; };
  if (!sub_ok(d.horizontal_subsampling) || !sub_ok(d.vertical_subsampling))
    return implausible(fmt::format("subsampling {}x{}", d.horizontal_subsampling, d.vertical_subsampling));
  if (d.frame_layout > 4) return implausible(fmt::format("frame layout {}", d.frame_layout));
  if (d.field_dominance > 2) return implausible(fmt::format("field dominance {}", d.field_dominance));
  if (rgba && d.coding == ColourCoding::unknown) d.coding = ColourCoding::rgb;
  return d;
}

}  // namespace j2k::depacketizer
