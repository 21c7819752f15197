#pragma once
// What an RTP payload looks like, from its first bytes: the evidence a session needs before
// it follows a stream (a valid RTP header alone is 12 bytes anyone can forge) and before it
// decides, or checks, the payload format.
#include <optional>

#include "core/byte_reader.hpp"
#include "depacketizer/payload.hpp"

namespace j2k::depacketizer {

enum class PayloadLook {
  none,     ///< nothing recognisable at the start (a continuation, or junk)
  mxf,      ///< begins with a KLV whose key we know (RFC 6597, SMPTE 336 / 377-1)
  rfc5371,  ///< RFC 5371 header at fragment offset 0 followed by SOC and SIZ (15444-1 A.4.1, A.5.1)
  ts,       ///< whole MPEG-2 transport stream packets (188 bytes, sync byte 0x47): TR-01
};

/// Only strong signs count: a random payload matches with probability below 2^-32.
PayloadLook probe_payload(Bytes payload);

/// "MXF (RFC 6597)", "RFC 5371 (JPEG 2000 codestream fragments)", "MPEG-2 TS", "nothing known".
const char* describe(PayloadLook look) noexcept;

/// The look a format's streams show at the start of a unit (mxf → mxf, rfc5371 → rfc5371).
PayloadLook look_of(PayloadFormat format) noexcept;
/// The format a look implies, if we can play it.
std::optional<PayloadFormat> format_of(PayloadLook look) noexcept;

const char* to_string(PayloadFormat format) noexcept;

}  // namespace j2k::depacketizer
