#pragma once
#include "decoder/decoder.hpp"

namespace j2k::decoder {

/// The OpenJPEG (libopenjp2) backend: reference and fallback.
Decoder* make_openjpeg_decoder(const DecodeLimits& limits);

}  // namespace j2k::decoder
