#pragma once
// JPEG 2000 marker codes (ISO/IEC 15444-1 A.1, Tables A.1 and A.2) and what kind of marker each is.
#include <cstdint>

namespace j2k::syntax {

/// Marker codes, 15444-1 Table A.2 (CAP from 15444-15 A.3).
namespace marker {
constexpr std::uint16_t SOC = 0xFF4F;  ///< start of codestream
constexpr std::uint16_t CAP = 0xFF50;  ///< extended capabilities (Part 15, HTJ2K)
constexpr std::uint16_t SIZ = 0xFF51;
constexpr std::uint16_t COD = 0xFF52;
constexpr std::uint16_t COC = 0xFF53;
constexpr std::uint16_t TLM = 0xFF55;
constexpr std::uint16_t PLM = 0xFF57;
constexpr std::uint16_t PLT = 0xFF58;
constexpr std::uint16_t QCD = 0xFF5C;
constexpr std::uint16_t QCC = 0xFF5D;
constexpr std::uint16_t RGN = 0xFF5E;
constexpr std::uint16_t POC = 0xFF5F;
constexpr std::uint16_t PPM = 0xFF60;
constexpr std::uint16_t PPT = 0xFF61;
constexpr std::uint16_t CRG = 0xFF63;
constexpr std::uint16_t COM = 0xFF64;
constexpr std::uint16_t SOT = 0xFF90;
constexpr std::uint16_t SOP = 0xFF91;
constexpr std::uint16_t EPH = 0xFF92;
constexpr std::uint16_t SOD = 0xFF93;
constexpr std::uint16_t EOC = 0xFFD9;
}  // namespace marker

/// A two-byte value that can be a marker at all: FF followed by 30..FF. Codes FF00..FF2F are
/// reserved and never begin a marker (15444-1 Table A.1); inside headers they mean corrupt data.
constexpr bool is_marker(std::uint16_t code) noexcept { return (code >> 8) == 0xFF && (code & 0xFF) >= 0x30; }

/// FF30..FF3F are reserved "for definition as markers only": they carry no marker segment, and a
/// decoder skips them as two-byte markers (15444-1 A.1.4 and Table A.1).
constexpr bool is_reserved_parameterless(std::uint16_t code) noexcept { return code >= 0xFF30 && code <= 0xFF3F; }

/// Markers that stand alone, with no Lmar and no parameters: SOC, SOD, EOC, EPH (A.4, A.8.2) and
/// the reserved FF30..FF3F. Every other marker is followed by a 16-bit length that counts itself.
constexpr bool has_segment(std::uint16_t code) noexcept {
  return !(code == marker::SOC || code == marker::SOD || code == marker::EOC || code == marker::EPH ||
           is_reserved_parameterless(code));
}

}  // namespace j2k::syntax
