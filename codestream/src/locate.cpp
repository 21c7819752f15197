#include "syntax/locate.hpp"

#include <algorithm>

#include "syntax/markers.hpp"
#include "syntax/segments.hpp"

namespace j2k::syntax {

namespace {

constexpr std::uint8_t kSignature[12] = {0, 0, 0, 0x0C, 'j', 'P', ' ', ' ', 0x0D, 0x0A, 0x87, 0x0A};
constexpr std::uint32_t kCodestreamBox = 0x6A703263;  // 'jp2c'
constexpr std::uint32_t kHeaderBox = 0x6A703268;      // 'jp2h'
constexpr std::uint32_t kColourBox = 0x636F6C72;      // 'colr'

Error corrupt(std::string what) { return make_error(ErrorKind::corrupt, std::move(what)); }

int ceil_div(long long a, long long b) { return static_cast<int>((a + b - 1) / b); }

}  // namespace

bool is_jp2(Bytes data) noexcept {
  return data.size() >= sizeof kSignature && std::equal(std::begin(kSignature), std::end(kSignature), data.begin());
}

namespace {

/// One box's header (I.4): LBox (4), TBox (4), [XLBox (8)]; `contents` is what LBox says
/// follows (LBox 0: to the end), which may run past what `r` holds.
struct BoxHeader {
  std::uint32_t type = 0;
  std::uint64_t contents = 0;
};

Result<BoxHeader> read_box_header(ByteReader& r) {
  std::uint64_t length = r.u32();
  BoxHeader box;
  box.type = r.u32();
  std::uint64_t header = 8;
  if (length == 1) {
    length = r.u64();
    header = 16;
  }
  if (r.failed()) return corrupt("JP2 box header is truncated");
  if (length != 0 && length < header) return corrupt("JP2 box shorter than its own header");
  box.contents = length == 0 ? r.remaining() : length - header;
  return box;
}

}  // namespace

Result<Bytes> locate_codestream(Bytes data) {
  if (data.size() >= 2 && data[0] == 0xFF && data[1] == 0x4F) return data;
  if (!is_jp2(data)) return corrupt("neither a JPEG 2000 codestream (no SOC marker FF4F) nor a JP2 file");
  ByteReader r(data);
  while (r.remaining() >= 8) {
    auto header = read_box_header(r);
    if (!header) return header.error();
    // A codestream box cut short (a file whose end was lost) is handed on as it is: the
    // codestream's own parser says it is truncated (resilient decoding keeps what came,
    // strict decoding refuses it), as for a raw codestream cut at the same place.
    const bool codestream = header->type == kCodestreamBox;
    if (header->contents > r.remaining() && !codestream) return corrupt("JP2 box length runs past the end of the file");
    Bytes box = r.bytes(static_cast<std::size_t>(std::min<std::uint64_t>(header->contents, r.remaining())));
    if (codestream) {
      if (box.size() < 2 || box[0] != 0xFF || box[1] != 0x4F) return corrupt("JP2 codestream box does not start with SOC");
      return box;
    }
  }
  return corrupt("JP2 file has no contiguous codestream box (jp2c)");
}

std::optional<Jp2Colour> jp2_colour(Bytes data) {
  if (!is_jp2(data)) return std::nullopt;
  // Walks the boxes of `r` until `want`; its contents, or nothing (not there, or damaged).
  auto find_box = [](ByteReader& r, std::uint32_t want) -> std::optional<Bytes> {
    while (r.remaining() >= 8) {
      auto header = read_box_header(r);
      if (!header || header->contents > r.remaining()) return std::nullopt;
      Bytes box = r.bytes(static_cast<std::size_t>(header->contents));
      if (header->type == want) return box;
      if (header->type == kCodestreamBox) return std::nullopt;  // the header comes before the codestream
    }
    return std::nullopt;
  };
  ByteReader file(data);
  auto header = find_box(file, kHeaderBox);
  if (!header) return std::nullopt;
  ByteReader boxes(*header);
  auto colr = find_box(boxes, kColourBox);
  if (!colr) return std::nullopt;
  ByteReader c(*colr);
  const std::uint8_t method = c.u8();
  c.skip(2);  // precedence, approximation
  const std::uint32_t enumcs = c.u32();
  if (c.failed() || method != 1) return std::nullopt;
  switch (enumcs) {
    case 16: return Jp2Colour{ColourCoding::rgb, true};
    case 17: return Jp2Colour{ColourCoding::grey, true};
    case 18: return Jp2Colour{ColourCoding::ycbcr_bt601, true};
    default: return std::nullopt;
  }
}

Result<PlanarImage> read_geometry(Bytes data, const PictureLimits& limits) {
  auto located = locate_codestream(data);
  if (!located) return located.error();
  // SOC then SIZ (A.4.1), nothing more: the rest of the main header is not needed here.
  ByteReader r(*located);
  if (r.u16() != marker::SOC) return corrupt("no SOC marker at the start of the codestream");
  if (r.peek_u16() != marker::SIZ) return corrupt("SIZ must follow SOC");
  auto seg = read_segment(r);
  if (!seg) return corrupt("SIZ marker segment is truncated");
  auto siz = read_siz(seg->body);
  if (!siz) return siz.error();
  if (Status st = check_limits(*siz, limits); !st) return st.error();
  PlanarImage shape;
  shape.width = static_cast<int>(siz->x1 - siz->x0);
  shape.height = static_cast<int>(siz->y1 - siz->y0);
  for (const ComponentSiz& c : siz->components) {
    Plane p;
    p.precision = c.precision;
    p.is_signed = c.is_signed;
    p.dx = c.dx;
    p.dy = c.dy;
    // B-2: a component's extent on its own grid.
    p.width = ceil_div(siz->x1, c.dx) - ceil_div(siz->x0, c.dx);
    p.height = ceil_div(siz->y1, c.dy) - ceil_div(siz->y0, c.dy);
    shape.planes.push_back(p);
  }
  return shape;
}

bool declares_digital_cinema(Bytes data) {
  auto cs = locate_codestream(data);
  if (!cs) return false;
  auto header = read_main_header(*cs);
  if (!header) return false;
  auto siz = read_siz(header->siz.body);
  return siz && is_digital_cinema(siz->rsiz) && siz->components.size() == 3;
}

}  // namespace j2k::syntax
