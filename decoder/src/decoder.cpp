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

Result<Bytes> locate_codestream(Bytes data) {
  if (data.size() >= 2 && data[0] == 0xFF && data[1] == 0x4F) return data;
  // JP2: a sequence of boxes (15444-1 Annex I): LBox (4), TBox (4), [XLBox (8)], contents.
  static constexpr std::uint8_t kSignature[12] = {0, 0, 0, 0x0C, 'j', 'P', ' ', ' ', 0x0D, 0x0A, 0x87, 0x0A};
  if (data.size() < 12 || !std::equal(std::begin(kSignature), std::end(kSignature), data.begin()))
    return make_error(ErrorKind::corrupt, "neither a JPEG 2000 codestream (no SOC marker FF4F) nor a JP2 file");
  ByteReader r(data);
  while (r.remaining() >= 8) {
    std::uint64_t length = r.u32();
    std::uint32_t type = r.u32();
    std::size_t header = 8;
    if (length == 1) {
      length = r.u64();
      header = 16;
    }
    if (r.failed()) break;
    std::size_t contents = length == 0 ? r.remaining()  // box runs to the end of the file
                                       : (length < header ? SIZE_MAX : static_cast<std::size_t>(length - header));
    if (contents > r.remaining()) return make_error(ErrorKind::corrupt, "JP2 box length runs past the end of the file");
    Bytes box = r.bytes(contents);
    if (type == 0x6A703263) return box;  // 'jp2c'
  }
  return make_error(ErrorKind::corrupt, "JP2 file has no contiguous codestream box (jp2c)");
}

}  // namespace j2k::decoder
