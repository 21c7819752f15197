#include "depacketizer/payload_probe.hpp"

#include "depacketizer/mxf.hpp"
#include "depacketizer/rfc5371.hpp"

namespace j2k::depacketizer {

PayloadLook probe_payload(Bytes payload) {
  // MXF: a whole KLV header with a key we classify (the 4-byte UL prefix plus a known label).
  if (auto klv = parse_klv_header(payload); klv.ok() && classify_key(klv->key) != KlvKind::unknown) return PayloadLook::mxf;
  // RFC 5371: the packet that starts a codestream carries SOC then SIZ at offset 0.
  Bytes body;
  if (auto h = parse_rfc5371_header(payload, body); h.ok() && h->fragment_offset == 0 && body.size() >= 4 &&
                                                     body[0] == 0xFF && body[1] == 0x4F && body[2] == 0xFF && body[3] == 0x51)
    return PayloadLook::rfc5371;
  // MPEG-2 TS (SMPTE ST 2022-2): whole 188-byte packets, each starting with 0x47.
  if (payload.size() >= 188 && payload.size() % 188 == 0) {
    bool all = true;
    for (std::size_t i = 0; i < payload.size() && all; i += 188) all = payload[i] == 0x47;
    if (all) return PayloadLook::ts;
  }
  return PayloadLook::none;
}

const char* describe(PayloadLook look) noexcept {
  switch (look) {
    case PayloadLook::mxf: return "MXF (RFC 6597 KLVs)";
    case PayloadLook::rfc5371: return "RFC 5371 (JPEG 2000 codestream fragments)";
    case PayloadLook::ts: return "MPEG-2 TS (VSF TR-01, SMPTE ST 2022-2)";
    case PayloadLook::none: break;
  }
  return "nothing known";
}

PayloadLook look_of(PayloadFormat format) noexcept {
  switch (format) {
    case PayloadFormat::rfc5371: return PayloadLook::rfc5371;
    case PayloadFormat::ts: return PayloadLook::ts;
    case PayloadFormat::mxf: break;
  }
  return PayloadLook::mxf;
}

std::optional<PayloadFormat> format_of(PayloadLook look) noexcept {
  if (look == PayloadLook::mxf) return PayloadFormat::mxf;
  if (look == PayloadLook::rfc5371) return PayloadFormat::rfc5371;
  if (look == PayloadLook::ts) return PayloadFormat::ts;
  return std::nullopt;
}

const char* to_string(PayloadFormat format) noexcept {
  return format == PayloadFormat::rfc5371 ? "rfc5371" : format == PayloadFormat::ts ? "ts" : "mxf";
}

}  // namespace j2k::depacketizer
