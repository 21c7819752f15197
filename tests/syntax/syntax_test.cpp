// The JPEG 2000 syntax unit (codestream/: syntax/*.hpp) and its three users: the own decoder,
// the depacketizer's codestream tools and the RFC 5371 packetizer must accept and refuse the
// same bytes. Real codestreams come from opj_compress (tests/decoder_own/corpus.hpp).
#include <gtest/gtest.h>

#include <algorithm>

#include "corpus.hpp"
#include "decoder/decoder.hpp"
#include "packetizer/openjpeg_encoder.hpp"
#include "depacketizer/codestream_tools.hpp"
#include "depacketizer/rtp_session.hpp"
#include "packetizer/rtp_j2k_packetizer.hpp"
#include "syntax/locate.hpp"
#include "syntax/markers.hpp"
#include "syntax/parameters.hpp"
#include "syntax/segments.hpp"

using namespace j2k;
using j2k::test::CorpusCase;
using j2k::test::Source;
using Stream = std::vector<std::uint8_t>;

namespace {

std::uint16_t be16(const Stream& s, std::size_t at) { return static_cast<std::uint16_t>(s[at] << 8 | s[at + 1]); }
std::uint32_t be32(const Stream& s, std::size_t at) { return std::uint32_t{be16(s, at)} << 16 | be16(s, at + 2); }
void put32(Stream& s, std::size_t at, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) s[at + static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(v >> (24 - 8 * i));
}

/// Offset of the first SOT: SOC (2) then marker segments.
std::size_t first_sot(const Stream& cs) {
  std::size_t at = 2;
  while (be16(cs, at) != syntax::marker::SOT) at += 2 + be16(cs, at + 2);
  return at;
}

Stream encode(const std::string& name, Source source, int w, int h, const std::string& args, const std::string& ext = ".j2k") {
  CorpusCase c{name, source, w, h, args, false};
  return test::encode_case(test::make_source(source, w, h), c, ext);
}

PlanarImage decode(decoder::Backend backend, Bytes cs) {
  auto dec = decoder::make_decoder(backend);
  EXPECT_TRUE(dec.ok());
  auto img = (*dec)->decode(cs, {});
  EXPECT_TRUE(img.ok()) << decoder::to_string(backend) << ": " << img.error().message;
  return img.ok() ? std::move(img).value() : PlanarImage{};
}

/// The codestream with a reserved parameterless marker (FF30..FF3F) after SIZ in the main header
/// and after the SOT segment of the first tile-part (its Psot grows by 2).
Stream with_reserved_markers(Stream cs, std::uint8_t low) {
  const std::size_t sot = first_sot(cs);
  const std::size_t psot_at = sot + 6;
  if (be32(cs, psot_at) != 0) put32(cs, psot_at, be32(cs, psot_at) + 2);
  cs.insert(cs.begin() + static_cast<std::ptrdiff_t>(sot + 12), {0xFF, low});
  const std::size_t after_siz = 4 + be16(cs, 4);
  cs.insert(cs.begin() + static_cast<std::ptrdiff_t>(after_siz), {0xFF, low});
  return cs;
}

}  // namespace

TEST(SyntaxMarkers, ReservedFF30ToFF3FStandAlone) {
  for (std::uint16_t m = 0xFF30; m <= 0xFF3F; ++m) {
    EXPECT_TRUE(syntax::is_marker(m));
    EXPECT_FALSE(syntax::has_segment(m)) << std::hex << m;
  }
  EXPECT_FALSE(syntax::is_marker(0xFF2F));
  EXPECT_FALSE(syntax::has_segment(syntax::marker::SOC));
  EXPECT_FALSE(syntax::has_segment(syntax::marker::SOD));
  EXPECT_TRUE(syntax::has_segment(syntax::marker::SIZ));
  EXPECT_TRUE(syntax::has_segment(0xFF40));  // unknown markers with a length are skipped by it
}

TEST(SyntaxSegments, MainHeaderWalkSkipsReservedMarkersAndRefusesBrokenChains) {
  const Stream cs = encode("walk", Source::grey8, 64, 48, "-n 3");
  ASSERT_FALSE(cs.empty());
  auto plain = syntax::read_main_header(cs);
  ASSERT_TRUE(plain.ok()) << plain.error().message;
  EXPECT_EQ(plain->length, first_sot(cs));
  ASSERT_NE(plain->find(syntax::marker::COD), nullptr);
  ASSERT_NE(plain->find(syntax::marker::QCD), nullptr);
  const Stream marked = with_reserved_markers(cs, 0x30);
  auto walked = syntax::read_main_header(marked);
  ASSERT_TRUE(walked.ok()) << walked.error().message;
  EXPECT_EQ(walked->length, plain->length + 2);
  ASSERT_EQ(walked->segments.size(), plain->segments.size());
  for (std::size_t i = 0; i < plain->segments.size(); ++i) {
    EXPECT_EQ(walked->segments[i].marker, plain->segments[i].marker);
    EXPECT_TRUE(std::ranges::equal(walked->segments[i].body, plain->segments[i].body));
  }
  // The packetizer's walk is the same walk.
  auto length = packetizer::main_header_length(marked);
  ASSERT_TRUE(length.ok()) << length.error().message;
  EXPECT_EQ(*length, walked->length);
  // Tile-part header: the reserved marker after SOT is skipped, SOD found.
  ByteReader r(marked);
  r.seek(walked->length);
  auto sot = syntax::read_sot(r);
  ASSERT_TRUE(sot.ok()) << sot.error().message;
  auto tile_part = syntax::read_tile_part_header(marked, r.position(), walked->length + sot->length);
  ASSERT_TRUE(tile_part.ok()) << tile_part.error().message;
  EXPECT_EQ(be16(marked, tile_part->body - 2), syntax::marker::SOD);

  // Broken chains: every one is an error, never a read outside the data.
  Stream bad = cs;
  bad[4] = 0xFF;  // Lsiz beyond the data
  EXPECT_FALSE(syntax::read_main_header(bad).ok());
  bad = cs;
  bad[2] = 0xFF, bad[3] = 0x52;  // COD where SIZ must be
  EXPECT_FALSE(syntax::read_main_header(bad).ok());
  bad = cs;
  const std::size_t after_siz = 4 + be16(cs, 4);
  bad[after_siz + 2] = 0, bad[after_siz + 3] = 1;  // Lmar 1 < 2
  EXPECT_FALSE(syntax::read_main_header(bad).ok());
  bad = cs;
  bad.insert(bad.begin() + static_cast<std::ptrdiff_t>(after_siz), {0xFF, 0x2F});  // not a marker
  EXPECT_FALSE(syntax::read_main_header(bad).ok());
  bad = cs;
  bad.insert(bad.begin() + static_cast<std::ptrdiff_t>(after_siz), {0xFF, 0x93});  // SOD in the main header
  EXPECT_FALSE(syntax::read_main_header(bad).ok());
  for (std::size_t cut = 0; cut < first_sot(cs) + 1; ++cut)
    EXPECT_FALSE(syntax::read_main_header(Bytes(cs).first(cut)).ok()) << "cut at " << cut;
}

/// Every parameter segment opj_compress writes reads and writes back to the same bytes.
TEST(SyntaxParameters, ReadersAndWritersRoundTripRealHeaders) {
  const std::vector<std::pair<Source, std::string>> cases = {
      {Source::rgb8, "-n 4 -r 20,5 -c [64,64],[32,32] -SOP -EPH -p RPCL"},
      {Source::ycc422_10, "-n 3 -I -b 32,16 -t 64,32 -POC T1=0,0,1,4,3,CPRL/T1=0,0,2,4,3,LRCP -TLM"},
      {Source::grey12, "-n 5 -M 63 -PLT"},
      {Source::signed12, "-n 2"},
  };
  int n = 0;
  for (const auto& [source, args] : cases) {
    const Stream cs = encode("params" + std::to_string(n++), source, 96, 64, args);
    ASSERT_FALSE(cs.empty()) << args;
    auto header = syntax::read_main_header(cs);
    ASSERT_TRUE(header.ok()) << header.error().message;
    auto siz = syntax::read_siz(header->siz.body);
    ASSERT_TRUE(siz.ok()) << siz.error().message;
    const std::size_t csiz = siz->components.size();
    auto same = [&](const syntax::Segment& seg, const syntax::Out& written) {
      syntax::Out original;
      EXPECT_TRUE(syntax::write_segment(original, seg.marker, seg.body).ok());
      EXPECT_EQ(written, original) << std::hex << "marker " << seg.marker << " in " << args;
    };
    // Reads the segment, writes the value back (`components`: Csiz, for the pairs that take it): the same bytes.
    auto round_trip = [&](const syntax::Segment& seg, auto read, auto write, auto... components) {
      auto v = read(seg.body, components...);
      ASSERT_TRUE(v.ok()) << v.error().message;
      syntax::Out written;
      ASSERT_TRUE(write(written, *v, components...).ok());
      same(seg, written);
    };
    ASSERT_NO_FATAL_FAILURE(round_trip(header->siz, syntax::read_siz, syntax::write_siz));
    // The main header's segments and those of every tile-part header (opj_compress puts POC there).
    std::vector<syntax::Segment> segments = header->segments;
    ByteReader chain(cs);
    chain.seek(header->length);
    while (chain.remaining() >= 2 && chain.peek_u16() == syntax::marker::SOT) {
      const std::size_t start = chain.position();
      auto sot = syntax::read_sot(chain);
      ASSERT_TRUE(sot.ok()) << sot.error().message;
      const std::size_t end = sot->length == 0 ? cs.size() : start + sot->length;
      auto tile_part = syntax::read_tile_part_header(cs, chain.position(), end);
      ASSERT_TRUE(tile_part.ok()) << tile_part.error().message;
      segments.insert(segments.end(), tile_part->segments.begin(), tile_part->segments.end());
      chain.seek(end);
    }
    std::vector<std::uint16_t> seen;
    for (const auto& seg : segments) {
      seen.push_back(seg.marker);
      switch (seg.marker) {
        case syntax::marker::COD: ASSERT_NO_FATAL_FAILURE(round_trip(seg, syntax::read_cod, syntax::write_cod)); break;
        case syntax::marker::COC: ASSERT_NO_FATAL_FAILURE(round_trip(seg, syntax::read_coc, syntax::write_coc, csiz)); break;
        case syntax::marker::QCD: ASSERT_NO_FATAL_FAILURE(round_trip(seg, syntax::read_qcd, syntax::write_qcd)); break;
        case syntax::marker::QCC: ASSERT_NO_FATAL_FAILURE(round_trip(seg, syntax::read_qcc, syntax::write_qcc, csiz)); break;
        case syntax::marker::POC: ASSERT_NO_FATAL_FAILURE(round_trip(seg, syntax::read_poc, syntax::write_poc, csiz)); break;
        case syntax::marker::TLM: ASSERT_NO_FATAL_FAILURE(round_trip(seg, syntax::read_tlm, syntax::write_tlm)); break;
        default: break;
      }
    }
    if (args.find("-POC") != std::string::npos) {
      EXPECT_NE(std::ranges::count(seen, syntax::marker::POC), 0) << "opj_compress wrote no POC";
      EXPECT_NE(std::ranges::count(seen, syntax::marker::TLM), 0) << "opj_compress wrote no TLM";
    }
  }
}

TEST(SyntaxParameters, TlmOfEveryFieldSizeAndRefusedValues) {
  for (int st : {0, 1, 2})
    for (int sp : {2, 4}) {
      syntax::TileLengths t;
      t.index = 3;
      t.tile_bytes = st;
      t.length_bytes = sp;
      for (std::uint16_t i = 0; i < 5; ++i) t.parts.push_back({i, static_cast<std::uint32_t>(1000 + i)});
      syntax::Out out;
      ASSERT_TRUE(syntax::write_tlm(out, t).ok());
      ByteReader r(out);
      auto seg = syntax::read_segment(r);
      ASSERT_TRUE(seg.ok());
      auto back = syntax::read_tlm(seg->body);
      ASSERT_TRUE(back.ok()) << back.error().message;
      EXPECT_EQ(back->tile_bytes, st);
      EXPECT_EQ(back->length_bytes, sp);
      ASSERT_EQ(back->parts.size(), 5u);
      for (std::size_t i = 0; i < 5; ++i) {
        EXPECT_EQ(back->parts[i].tile, i);
        EXPECT_EQ(back->parts[i].length, 1000 + i);
      }
    }
  const std::uint8_t reserved_st[] = {0, 0x30, 0, 0};  // ST = 3
  EXPECT_FALSE(syntax::read_tlm(reserved_st).ok());
  const std::uint8_t ragged[] = {0, 0x60, 0, 1, 0};  // ST 2, SP 4: 6-byte entries, 3 bytes left
  EXPECT_FALSE(syntax::read_tlm(ragged).ok());
  syntax::TileLengths wide;
  wide.length_bytes = 2;
  wide.parts.push_back({0, 70000});
  syntax::Out out;
  EXPECT_FALSE(syntax::write_tlm(out, wide).ok()) << "a length that does not fit 16 bits";
}

/// Issue 9 item 15: FF30..FF3F carry no segment (15444-1 A.1.4). Before the shared reader, the
/// decoder read a length after them ("marker FF30 runs past the end of the data (corrupt)").
/// OpenJPEG 2.5 skips one in the main header (and is compared there); in a tile-part header it
/// fails ("Marker size inconsistent with stream length"), so that case is checked against the
/// picture of the unmarked codestream only.
TEST(ReservedMarkers, InMainAndTilePartHeaderDecodeToTheSamePictureAsWithout) {
  for (std::uint8_t low : {std::uint8_t{0x30}, std::uint8_t{0x3F}}) {
    const Stream cs = encode("reserved", Source::rgb8, 128, 96, "-n 4 -t 64,64 -r 10");
    ASSERT_FALSE(cs.empty());
    const PlanarImage want = decode(decoder::Backend::own, cs);
    ASSERT_FALSE(want.empty());
    EXPECT_EQ(checksum(want), checksum(decode(decoder::Backend::openjpeg, cs)));
    // In the main header only: ours and OpenJPEG's pictures are the unmarked one.
    Stream main_only = cs;
    const std::size_t after_siz = 4 + be16(cs, 4);
    main_only.insert(main_only.begin() + static_cast<std::ptrdiff_t>(after_siz), {0xFF, low});
    EXPECT_EQ(checksum(decode(decoder::Backend::own, main_only)), checksum(want)) << "own decoder, main header";
    EXPECT_EQ(checksum(decode(decoder::Backend::openjpeg, main_only)), checksum(want)) << "OpenJPEG agrees";
    // In the main header and in a tile-part header.
    const Stream marked = with_reserved_markers(cs, low);
    EXPECT_EQ(checksum(decode(decoder::Backend::own, marked)), checksum(want)) << "own decoder, both headers";
    auto strict_dec = decoder::make_decoder(decoder::Backend::own);
    decoder::DecodeOptions strict;
    strict.strict = true;
    auto strict_img = (*strict_dec)->decode(marked, strict);
    ASSERT_TRUE(strict_img.ok()) << strict_img.error().message;
    EXPECT_EQ(checksum(*strict_img), checksum(want)) << "strict mode: nothing is damaged";
    // The depacketizer's tools take it too: split, component count, and the packetizer.
    auto parts = depacketizer::split_codestreams(marked);
    ASSERT_TRUE(parts.ok()) << parts.error().message;
    ASSERT_EQ(parts->size(), 1u);
    EXPECT_EQ((*parts)[0].size(), marked.size());
    packetizer::Rfc5371Packetizer packetizer(1, 96, 0);
    std::vector<std::vector<std::uint8_t>> packets;
    EXPECT_TRUE(packetizer.packetize(marked, 0, 0, packets).ok());
  }
}

TEST(ReservedMarkers, LumaChromaMergeSkipsThem) {
  // The 4:2:2 source's chroma planes as a 2-component codestream of their own.
  PlanarImage chroma = test::make_source(Source::ycc422_10, 64, 48);
  chroma.planes.erase(chroma.planes.begin());
  for (auto& p : chroma.planes) p.dx = 1;
  chroma.width = chroma.planes[0].width;
  chroma.height = chroma.planes[0].height;
  chroma.colour = ColourCoding::grey;
  auto cs = packetizer::encode_openjpeg(chroma, {});
  ASSERT_TRUE(cs.ok()) << cs.error().message;
  PlanarImage luma = test::make_source(Source::ycc422_10, 64, 48);
  luma.planes.resize(1);
  luma.colour = ColourCoding::grey;
  auto ys = packetizer::encode_openjpeg(luma, {});
  ASSERT_TRUE(ys.ok()) << ys.error().message;
  auto plain = depacketizer::merge_luma_chroma(*ys, *cs);
  ASSERT_TRUE(plain.ok()) << plain.error().message;
  auto marked = depacketizer::merge_luma_chroma(with_reserved_markers(*ys, 0x31), with_reserved_markers(*cs, 0x3E));
  ASSERT_TRUE(marked.ok()) << marked.error().message;
  EXPECT_EQ(*marked, *plain) << "the reserved markers carry nothing; the merge drops them";
}

// ---- JP2 (15444-1 Annex I) ----

TEST(LocateCodestream, FindsJp2cBoxAndRejectsOthers) {
  std::vector<std::uint8_t> jp2 = {0, 0, 0, 0x0C, 'j', 'P', ' ', ' ', 0x0D, 0x0A, 0x87, 0x0A,
                                   0, 0, 0, 12, 'j', 'p', '2', 'c', 0xFF, 0x4F, 0xFF, 0xD9};
  auto cs = syntax::locate_codestream(jp2);
  ASSERT_TRUE(cs.ok());
  EXPECT_EQ(cs->size(), 4u);
  EXPECT_EQ((*cs)[1], 0x4F);
  jp2[15] = 200;  // a codestream box longer than the file (its end was lost): what is there
  cs = syntax::locate_codestream(jp2);
  ASSERT_TRUE(cs.ok());
  EXPECT_EQ(cs->size(), 4u);
  jp2[19] = 'x';  // any other box longer than the file hides the codestream
  EXPECT_FALSE(syntax::locate_codestream(jp2).ok());
  std::vector<std::uint8_t> junk = {1, 2, 3};
  EXPECT_FALSE(syntax::locate_codestream(junk).ok());
}

// Review 2026-11-28: the JP2 header's colour was not read (a sYCC file was shown as if its
// Y, Cb and Cr were R, G and B). The enumerated colour of the first colr box in jp2h.
TEST(Jp2Colour, TheHeadersEnumeratedColourIsRead) {
  auto file = [](std::uint32_t enumcs, std::uint8_t method, std::uint32_t colr_length) {
    std::vector<std::uint8_t> f = {0, 0, 0, 0x0C, 'j', 'P', ' ', ' ', 0x0D, 0x0A, 0x87, 0x0A,
                                   0, 0, 0, 8 + 15, 'j', 'p', '2', 'h',
                                   0, 0, 0, static_cast<std::uint8_t>(colr_length), 'c', 'o', 'l', 'r', method, 0, 0,
                                   static_cast<std::uint8_t>(enumcs >> 24), static_cast<std::uint8_t>(enumcs >> 16),
                                   static_cast<std::uint8_t>(enumcs >> 8), static_cast<std::uint8_t>(enumcs),
                                   0, 0, 0, 12, 'j', 'p', '2', 'c', 0xFF, 0x4F, 0xFF, 0xD9};
    return f;
  };
  auto sycc = syntax::jp2_colour(file(18, 1, 15));
  ASSERT_TRUE(sycc);
  EXPECT_EQ(sycc->coding, ColourCoding::ycbcr_bt601);
  EXPECT_TRUE(sycc->full_range);
  EXPECT_EQ(syntax::jp2_colour(file(16, 1, 15))->coding, ColourCoding::rgb);
  EXPECT_EQ(syntax::jp2_colour(file(17, 1, 15))->coding, ColourCoding::grey);
  EXPECT_FALSE(syntax::jp2_colour(file(12, 1, 15))) << "CMYK: not ours to show";
  EXPECT_FALSE(syntax::jp2_colour(file(18, 2, 15))) << "an ICC profile";
  EXPECT_FALSE(syntax::jp2_colour(file(18, 1, 200))) << "a colr box longer than its header box";
  EXPECT_FALSE(syntax::jp2_colour(file(18, 1, 9))) << "a colr box too short for EnumCS";
  const std::vector<std::uint8_t> raw = {0xFF, 0x4F, 0xFF, 0x51};
  EXPECT_FALSE(syntax::jp2_colour(raw));
  auto cut = file(18, 1, 15);
  for (std::size_t n = 0; n < cut.size(); ++n) (void)syntax::jp2_colour(std::span(cut.data(), n));  // never reads past
}

/// A JP2 file written by opj_compress: its codestream box is found (with LBox, with XLBox, and
/// with LBox 0 = to the end), decodes like the same image's raw codestream, and the depacketizer
/// and packetizer take the file where they take a codestream.
TEST(LocateCodestream, OpjCompressJp2FileWorksWhereverACodestreamDoes) {
  const Stream j2k = encode("jp2_raw", Source::rgb8, 80, 56, "-n 3 -r 8");
  const Stream jp2 = encode("jp2_file", Source::rgb8, 80, 56, "-n 3 -r 8", ".jp2");
  ASSERT_FALSE(j2k.empty());
  ASSERT_FALSE(jp2.empty());
  ASSERT_TRUE(syntax::is_jp2(jp2));
  auto located = syntax::locate_codestream(jp2);
  ASSERT_TRUE(located.ok()) << located.error().message;
  EXPECT_TRUE(std::ranges::equal(*located, j2k)) << "opj_compress writes the same codestream in the jp2c box";
  EXPECT_EQ(checksum(decode(decoder::Backend::own, jp2)), checksum(decode(decoder::Backend::own, j2k)));
  auto geometry = syntax::read_geometry(jp2);
  ASSERT_TRUE(geometry.ok()) << geometry.error().message;
  EXPECT_EQ(geometry->width, 80);
  EXPECT_EQ(geometry->planes.size(), 3u);
  // The depacketizer's unit normalisation sees the codestream, not the file.
  depacketizer::CodestreamUnit unit;
  unit.codestreams.push_back(jp2);
  depacketizer::normalize_unit(unit, false);
  EXPECT_TRUE(unit.problem.empty()) << unit.problem;
  ASSERT_EQ(unit.codestreams.size(), 1u);
  EXPECT_EQ(unit.codestreams[0], j2k);
  packetizer::Rfc5371Packetizer packetizer(1, 96, 0);
  std::vector<std::vector<std::uint8_t>> packets;
  ASSERT_TRUE(packetizer.packetize(jp2, 0, 0, packets).ok());
  std::size_t carried = 0;
  for (const auto& p : packets) carried += p.size() - 20;  // RTP 12 + RFC 5371 8
  EXPECT_EQ(carried, j2k.size()) << "RFC 5371 carries the codestream, not the file";

  // The same codestream box with an XLBox (LBox 1), and as the last box with LBox 0.
  const std::size_t box = static_cast<std::size_t>(located->data() - jp2.data()) - 8;
  ASSERT_EQ(be32(jp2, box + 4), 0x6A703263u);
  Stream xl(jp2.begin(), jp2.begin() + static_cast<std::ptrdiff_t>(box));
  xl.insert(xl.end(), {0, 0, 0, 1, 'j', 'p', '2', 'c', 0, 0, 0, 0});
  const std::uint64_t xlbox = 16 + j2k.size();
  xl.insert(xl.end(), {static_cast<std::uint8_t>(xlbox >> 24), static_cast<std::uint8_t>(xlbox >> 16),
                       static_cast<std::uint8_t>(xlbox >> 8), static_cast<std::uint8_t>(xlbox)});
  xl.insert(xl.end(), j2k.begin(), j2k.end());
  auto via_xl = syntax::locate_codestream(xl);
  ASSERT_TRUE(via_xl.ok()) << via_xl.error().message;
  EXPECT_TRUE(std::ranges::equal(*via_xl, j2k));
  Stream to_end(jp2.begin(), jp2.begin() + static_cast<std::ptrdiff_t>(box));
  to_end.insert(to_end.end(), {0, 0, 0, 0, 'j', 'p', '2', 'c'});
  to_end.insert(to_end.end(), j2k.begin(), j2k.end());
  auto via_zero = syntax::locate_codestream(to_end);
  ASSERT_TRUE(via_zero.ok()) << via_zero.error().message;
  EXPECT_TRUE(std::ranges::equal(*via_zero, j2k));
  // Box lengths that lie: shorter than the header (LBox 4, XLBox 8), longer than the file.
  Stream lie = jp2;
  put32(lie, box, 4);
  EXPECT_FALSE(syntax::locate_codestream(lie).ok());
  lie = xl;
  lie[box + 15] = 8;
  lie[box + 14] = lie[box + 13] = 0;
  EXPECT_FALSE(syntax::locate_codestream(lie).ok());
  // A jp2c box longer than the file, or cut short (review 2026-11-28: refused at every cut,
  // where the same cut of the raw codestream decodes): the codestream as far as it goes,
  // which resilient decoding reads as a raw one cut at the same place and strict refuses.
  lie = jp2;
  put32(lie, box, static_cast<std::uint32_t>(jp2.size()));
  auto longer = syntax::locate_codestream(lie);
  ASSERT_TRUE(longer.ok()) << longer.error().message;
  EXPECT_TRUE(std::ranges::equal(*longer, j2k));
  lie = jp2;
  lie.resize(box + 8 + j2k.size() * 7 / 10);  // a jp2c box cut short
  auto cut = syntax::locate_codestream(lie);
  ASSERT_TRUE(cut.ok()) << cut.error().message;
  const Stream raw_cut(j2k.begin(), j2k.begin() + static_cast<std::ptrdiff_t>(j2k.size() * 7 / 10));
  EXPECT_TRUE(std::ranges::equal(*cut, raw_cut));
  EXPECT_EQ(checksum(decode(decoder::Backend::own, lie)), checksum(decode(decoder::Backend::own, raw_cut)));
  auto own = decoder::make_decoder(decoder::Backend::own);
  decoder::DecodeOptions strict;
  strict.strict = true;
  EXPECT_FALSE((*own)->decode(lie, strict).ok());
  EXPECT_FALSE(depacketizer::split_codestreams(lie).ok());
}
