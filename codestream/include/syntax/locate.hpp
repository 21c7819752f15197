#pragma once
// Where the codestream is: a raw codestream, or a JP2 file (15444-1 Annex I) whose contiguous
// codestream box holds it, as FFmpeg writes JPEG 2000 frames into MXF by default. And the
// picture a codestream decodes to, from SOC and SIZ alone.
#include <optional>

#include "core/byte_reader.hpp"
#include "core/planar_image.hpp"
#include "core/result.hpp"
#include "syntax/parameters.hpp"

namespace j2k::syntax {

/// True when `data` begins with the JP2 signature box (I.5.1: length 12, 'jP  ', 0D 0A 87 0A).
bool is_jp2(Bytes data) noexcept;

/// A raw codestream (starts with SOC) comes back unchanged; a JP2 file gives the contents of its
/// first contiguous codestream box ('jp2c'), every box length checked against the file (I.4:
/// LBox 0 = to the end of the file, 1 = a 64-bit XLBox follows, 2..7 invalid).
Result<Bytes> locate_codestream(Bytes data);

/// The colour a JP2 file states: the first Colour Specification box ('colr', I.5.3.3) in its
/// header box ('jp2h') with the enumerated method (METH 1): EnumCS 16 sRGB -> rgb, 17 greyscale
/// -> grey, 18 sYCC -> ycbcr_bt601 (full range, IEC 61966-2-1 Amd 1). `full_range` is set for
/// sYCC. Nothing for a raw codestream, a damaged header, an ICC profile, or another space.
struct Jp2Colour {
  ColourCoding coding = ColourCoding::unknown;
  bool full_range = false;
};
std::optional<Jp2Colour> jp2_colour(Bytes data);

/// The picture a codestream (or JP2 file) decodes to, from its SOC and SIZ markers only: size,
/// components, precision, signedness and subsampling, planes sized with no samples. For callers
/// that must allocate before decoding (e.g. a device picture). `limits` as the decoders apply them.
Result<PlanarImage> read_geometry(Bytes data, const PictureLimits& limits = {});

/// Whether a codestream (or JP2 file) declares a digital cinema profile (Rsiz 3-7) with three
/// components: they are X'Y'Z' (SMPTE 428-1), whatever a wrapper says.
bool declares_digital_cinema(Bytes data);

}  // namespace j2k::syntax
