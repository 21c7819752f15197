#include "decoder/decoder.hpp"

#include <fmt/format.h>

#include "decoder/own_decoder.hpp"
#include "openjpeg_backend.hpp"

namespace j2k::decoder {

const char* to_string(Backend backend) noexcept {
  switch (backend) {
    case Backend::own: return "own";
    case Backend::openjpeg: return "openjpeg";
  }
  return "?";
}

std::optional<Backend> parse_backend(const std::string& name) {
  if (name == "own") return Backend::own;
  if (name == "openjpeg" || name == "opj") return Backend::openjpeg;
  return std::nullopt;
}

Result<std::unique_ptr<Decoder>> make_decoder(Backend backend, const DecodeLimits& limits) {
  switch (backend) {
    case Backend::openjpeg: return std::unique_ptr<Decoder>(make_openjpeg_decoder(limits));
    case Backend::own: return make_own_decoder(limits);
  }
  return make_error(ErrorKind::unsupported, "unknown decoder backend");
}

}  // namespace j2k::decoder
