#include "packetizer/mxf_writer.hpp"

#include "depacketizer/mxf.hpp"

namespace j2k::packetizer {

// The KLV/wire-format vocabulary (keys, BER lengths, payload headers) is the depacketizer's;
// the sender writes what the receiver reads.
using namespace j2k::depacketizer;

namespace {

using Writer = ByteWriter<KlvBytes>;

constexpr Ul kOp1a = {0x06, 0x0E, 0x2B, 0x34, 0x04, 0x01, 0x01, 0x01, 0x0D, 0x01, 0x02, 0x01, 0x01, 0x01, 0x09, 0x00};
// JPEG 2000 picture essence, frame-wrapped (ST 422 legacy label, as FFmpeg and GStreamer write it).
constexpr Ul kJ2kFrameWrapped = {0x06, 0x0E, 0x2B, 0x34, 0x04, 0x01, 0x01, 0x07,
                                 0x0D, 0x01, 0x03, 0x01, 0x02, 0x0C, 0x01, 0x00};
// JPEG 2000 picture coding: Part 1 (broadcast profile unspecified).
constexpr Ul kJ2kCoding = {0x06, 0x0E, 0x2B, 0x34, 0x04, 0x01, 0x01, 0x07,
                           0x04, 0x01, 0x02, 0x02, 0x03, 0x01, 0x01, 0x7F};

Ul coding_equations(ColourCoding c) {
  Ul ul = {0x06, 0x0E, 0x2B, 0x34, 0x04, 0x01, 0x01, 0x01, 0x04, 0x01, 0x01, 0x01, 0x02, 0x02, 0x00, 0x00};
  if (c == ColourCoding::ycbcr_bt601) ul[13] = 0x01;
  if (c == ColourCoding::ycbcr_bt2020) { ul[7] = 0x0D; ul[13] = 0x06; }
  return ul;
}

KlvBytes klv(const Ul& key, const KlvBytes& value) {
  KlvBytes out(key.begin(), key.end());
  append_ber_length(out, value.size());
  out.insert(out.end(), value.begin(), value.end());
  return out;
}

void item(Writer& w, std::uint16_t tag, std::uint16_t len) { w.u16(tag); w.u16(len); }
void item_u32(Writer& w, std::uint16_t tag, std::uint32_t v) { item(w, tag, 4); w.u32(v); }
void item_u8(Writer& w, std::uint16_t tag, std::uint8_t v) { item(w, tag, 1); w.u8(v); }
void item_ul(Writer& w, std::uint16_t tag, const Ul& ul) { item(w, tag, 16); w.bytes(ul); }

}  // namespace

KlvBytes mxf_partition_pack(bool header, std::uint64_t this_partition, std::uint64_t header_byte_count) {
  Ul key = {0x06, 0x0E, 0x2B, 0x34, 0x02, 0x05, 0x01, 0x01, 0x0D, 0x01, 0x02, 0x01, 0x01, 0x02, 0x01, 0x00};
  key[13] = header ? 0x02 : 0x03;  // header or body partition
  key[14] = 0x01;                  // open and incomplete: a live stream never closes
  KlvBytes v;
  Writer w(v);
  w.u16(1);                 // major version
  w.u16(3);                 // minor version
  w.u32(1);                 // KAG size
  w.u64(this_partition);
  w.u64(0);                 // previous partition
  w.u64(0);                 // footer partition (unknown while live)
  w.u64(header_byte_count);
  w.u64(0);                 // index byte count
  w.u32(0);                 // index SID
  w.u64(0);                 // body offset
  w.u32(1);                 // body SID
  w.bytes(kOp1a);
  w.u32(1);                 // essence containers: batch of one UL
  w.u32(16);
  w.bytes(kJ2kFrameWrapped);
  return klv(key, v);
}

KlvBytes mxf_primer_pack() {
  // Every tag we write is a static local tag, so the primer needs no dynamic entries.
  const Ul key = {0x06, 0x0E, 0x2B, 0x34, 0x02, 0x05, 0x01, 0x01, 0x0D, 0x01, 0x02, 0x01, 0x01, 0x05, 0x01, 0x00};
  KlvBytes v;
  Writer w(v);
  w.u32(0);
  w.u32(18);
  return klv(key, v);
}

KlvBytes mxf_cdci_descriptor(const MxfPictureParams& p) {
  const Ul key = {0x06, 0x0E, 0x2B, 0x34, 0x02, 0x53, 0x01, 0x01, 0x0D, 0x01, 0x01, 0x01, 0x01, 0x01, 0x28, 0x00};
  KlvBytes v;
  Writer w(v);
  item(w, 0x3C0A, 16);  // instance UID
  for (int i = 0; i < 16; ++i) w.u8(static_cast<std::uint8_t>(0xA0 + i));
  item(w, 0x3001, 8);   // sample rate
  w.u32(static_cast<std::uint32_t>(p.rate_num));
  w.u32(static_cast<std::uint32_t>(p.rate_den));
  item_ul(w, 0x3004, kJ2kFrameWrapped);
  item_ul(w, 0x3201, kJ2kCoding);
  item_u32(w, 0x3203, p.width);
  item_u32(w, 0x3202, p.height);
  item_u8(w, 0x320C, static_cast<std::uint8_t>(p.frame_layout));
  if (p.frame_layout == 1) item_u8(w, 0x3212, static_cast<std::uint8_t>(p.field_dominance));
  item_u32(w, 0x3301, p.depth);
  item_u32(w, 0x3302, p.chroma_dx);
  item_u32(w, 0x3308, p.chroma_dy);
  const std::uint32_t max_code = (1u << p.depth) - 1;
  const std::uint32_t scale = 1u << (p.depth - 8);
  item_u32(w, 0x3304, p.full_range ? 0 : 16 * scale);
  item_u32(w, 0x3305, p.full_range ? max_code : 235 * scale);
  // ColorRange: the colour-difference levels, 16..240 at 8 bits (225), 64..960 at 10 (897).
  item_u32(w, 0x3306, p.full_range ? max_code + 1 : 224 * scale + 1);
  item_ul(w, 0x321A, coding_equations(p.coding));
  if (p.transfer != TransferFunction::sdr) {
    // TransferCharacteristic: SMPTE ST 2084 (PQ) or BT.2100 HLG (written only for HDR).
    Ul tc = {0x06, 0x0E, 0x2B, 0x34, 0x04, 0x01, 0x01, 0x0D, 0x04, 0x01, 0x01, 0x01, 0x01, 0x0A, 0x00, 0x00};
    if (p.transfer == TransferFunction::hlg) tc[13] = 0x0B;
    item_ul(w, 0x3210, tc);
  }
  return klv(key, v);
}

KlvBytes mxf_system_item(std::uint16_t continuity, const std::optional<depacketizer::TimeCode>& time_code,
                         double frame_rate) {
  const Ul key = {0x06, 0x0E, 0x2B, 0x34, 0x02, 0x05, 0x01, 0x01, 0x0D, 0x01, 0x03, 0x01, 0x04, 0x01, 0x01, 0x00};
  KlvBytes v;
  Writer w(v);
  // System metadata bitmap: SMPTE label field (0x40), user date/time stamp valid (0x10) when
  // there is a time code, picture item present (0x08).
  w.u8(time_code ? 0x58 : 0x48);
  w.u8(0x00);        // content package rate (not stated)
  w.u8(0x00);        // content package type
  w.u16(0x0000);     // channel handle
  w.u16(continuity); // continuity count
  for (int i = 0; i < 16; ++i) w.u8(0);  // SMPTE universal label (none)
  if (time_code) {
    for (int i = 0; i < 17; ++i) w.u8(0);  // creation date/time stamp (not valid)
    w.u8(0x81);  // user date/time stamp: SMPTE 12M time code
    for (std::uint8_t b : depacketizer::smpte12m_bytes(*time_code, frame_rate)) w.u8(b);
    for (int i = 0; i < 12; ++i) w.u8(0);  // binary groups and padding
  }
  return klv(key, v);
}

KlvBytes mxf_picture_element(Bytes codestream, int count, int number) {
  Ul key = {0x06, 0x0E, 0x2B, 0x34, 0x01, 0x02, 0x01, 0x01, 0x0D, 0x01, 0x03, 0x01, 0x15, 0x01, 0x08, 0x01};
  key[13] = static_cast<std::uint8_t>(count);
  key[15] = static_cast<std::uint8_t>(number);
  KlvBytes out(key.begin(), key.end());
  append_ber_length(out, codestream.size());
  out.insert(out.end(), codestream.begin(), codestream.end());
  return out;
}

KlvBytes mxf_sound_descriptor(const depacketizer::AudioFormat& format, std::int32_t rate_num, std::int32_t rate_den) {
  const Ul key = {0x06, 0x0E, 0x2B, 0x34, 0x02, 0x53, 0x01, 0x01, 0x0D, 0x01, 0x01, 0x01, 0x01, 0x01, 0x48, 0x00};
  // BWF frame-wrapped sound in the generic container (ST 382).
  constexpr Ul kBwfFrameWrapped = {0x06, 0x0E, 0x2B, 0x34, 0x04, 0x01, 0x01, 0x01,
                                   0x0D, 0x01, 0x03, 0x01, 0x02, 0x06, 0x01, 0x00};
  KlvBytes v;
  Writer w(v);
  item(w, 0x3C0A, 16);  // instance UID
  for (int i = 0; i < 16; ++i) w.u8(static_cast<std::uint8_t>(0xB0 + i));
  item_ul(w, 0x3004, kBwfFrameWrapped);
  const auto items = depacketizer::sound_descriptor_items(format, rate_num, rate_den);
  w.bytes(items);
  return klv(key, v);
}

KlvBytes mxf_sound_element(const depacketizer::AudioBlock& block, int count, int number) {
  Ul key = {0x06, 0x0E, 0x2B, 0x34, 0x01, 0x02, 0x01, 0x01, 0x0D, 0x01, 0x03, 0x01, 0x16, 0x01, 0x01, 0x01};
  key[13] = static_cast<std::uint8_t>(count);
  key[15] = static_cast<std::uint8_t>(number);
  return klv(key, depacketizer::encode_pcm_element(block));
}

}  // namespace j2k::packetizer
