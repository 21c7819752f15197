#include "pipeline/codestream_levels.hpp"

#include <algorithm>

#include "syntax/locate.hpp"
#include "syntax/markers.hpp"
#include "syntax/parameters.hpp"
#include "syntax/segments.hpp"

namespace j2k::pipeline {

std::optional<int> fewest_decomposition_levels(Bytes data) {
  auto cs = syntax::locate_codestream(data);
  if (!cs) return std::nullopt;
  auto header = syntax::read_main_header(*cs);
  if (!header) return std::nullopt;
  auto siz = syntax::read_siz(header->siz.body);
  if (!siz) return std::nullopt;
  std::optional<int> fewest;
  const auto consider = [&](const syntax::Segment& seg) {
    std::optional<int> levels;
    if (seg.marker == syntax::marker::COD) {
      if (auto cod = syntax::read_cod(seg.body)) levels = cod->component.levels;
    } else if (seg.marker == syntax::marker::COC) {
      if (auto coc = syntax::read_coc(seg.body, siz->components.size())) levels = coc->value.levels;
    }
    if (levels) fewest = std::min(fewest.value_or(*levels), *levels);
  };
  for (const auto& seg : header->segments) consider(seg);
  if (!fewest) return std::nullopt;  // COD is required in the main header (A.4.1)
  // The tile-parts, each from its SOT to its SOD; Psot gives the next one's start.
  std::size_t at = header->length;
  while (at < cs->size()) {
    ByteReader r(cs->subspan(at));
    auto sot = syntax::read_sot(r);
    if (!sot) break;
    const std::size_t end = sot->length == 0 ? cs->size() : std::min(cs->size(), at + sot->length);
    auto part = syntax::read_tile_part_header(*cs, at + r.position(), end);
    if (!part) break;
    for (const auto& seg : part->segments) consider(seg);
    if (sot->length == 0) break;
    at += sot->length;
  }
  return fewest;
}

}  // namespace j2k::pipeline
