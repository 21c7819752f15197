#include "decoder/decoder.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <vector>

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

bool met_damage(const DecodeStats& s) noexcept {
  return s.truncated || s.tiles_missing > 0 || s.damaged_tile_parts > 0 || s.damaged_packets > 0 ||
         s.damaged_codeblocks > 0;
}

std::string describe_damage(const DecodeStats& s) {
  // "1 packet", "2 packets"
  auto count = [](std::uint64_t n, const char* one, const char* many) { return fmt::format("{} {}", n, n == 1 ? one : many); };
  std::vector<std::string> what;
  if (s.truncated) what.emplace_back("the codestream ends early");
  if (s.tiles_missing) what.push_back(fmt::format("{} of {} missing (mid-grey)", s.tiles_missing, count(s.tiles, "tile", "tiles")));
  if (s.damaged_tile_parts)
    what.push_back(count(s.damaged_tile_parts, "tile-part", "tile-parts") + " unreadable or missing");
  if (s.damaged_packets) what.push_back(count(s.damaged_packets, "packet", "packets") + " cut short or unreadable");
  if (s.damaged_codeblocks) what.push_back(count(s.damaged_codeblocks, "code-block", "code-blocks") + " zeroed");
  return fmt::format("{}", fmt::join(what, "; "));
}

}  // namespace j2k::decoder
