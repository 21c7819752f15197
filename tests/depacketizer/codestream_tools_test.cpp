// Splitting and luma+chroma merging, checked by decoding with OpenJPEG: the merged codestream
// must decode to exactly the planes the two sources decode to.
#include <gtest/gtest.h>

#include <map>

#include "decoder/decoder.hpp"
#include "packetizer/openjpeg_encoder.hpp"
#include "depacketizer/codestream_tools.hpp"
#include "test_images.hpp"

using namespace j2k;
using namespace j2k::depacketizer;

namespace {

PlanarImage planes(const PlanarImage& src, std::size_t first, std::size_t count) {
  PlanarImage out;
  out.colour = ColourCoding::grey;
  for (std::size_t i = first; i < first + count; ++i) {
    Plane p = src.planes[i];
    p.dx = p.dy = 1;
    out.planes.push_back(std::move(p));
  }
  out.width = out.planes[0].width;
  out.height = out.planes[0].height;
  return out;
}

PlanarImage decode(Bytes cs) {
  auto dec = decoder::make_decoder(decoder::Backend::openjpeg);
  auto img = (*dec)->decode(cs, {});
  EXPECT_TRUE(img.ok()) << img.error().message;
  return img.ok() ? std::move(img).value() : PlanarImage{};
}

struct MergeCase {
  const char* name;
  packetizer::Progression luma_progression;
  packetizer::Progression chroma_progression;
  bool lossless;
  int layers;
  int precinct_log2;
  bool sop, eph;
  int chroma_dy;  ///< 1 = 4:2:2, 2 = 4:2:0
  int tile;
  int chroma_layers = 0;  ///< 0 = as many as the luma
  int width = 203, height = 117;  // odd sizes on purpose
};

std::uint32_t be32(Bytes b, std::size_t at) {
  return std::uint32_t{b[at]} << 24 | std::uint32_t{b[at + 1]} << 16 | std::uint32_t{b[at + 2]} << 8 | b[at + 3];
}

/// Nsop values of the SOP marker segments in each tile's tile-part bodies, in codestream order,
/// found by walking the main header and the SOT/Psot chain (FF 91 cannot occur in coded data).
std::map<int, std::vector<int>> sop_numbers(Bytes cs) {
  std::map<int, std::vector<int>> out;
  std::size_t at = 2;  // after SOC
  while (at + 4 <= cs.size() && !(cs[at] == 0xFF && cs[at + 1] == 0x90)) at += 2 + (cs[at + 2] << 8 | cs[at + 3]);
  while (at + 12 <= cs.size() && cs[at] == 0xFF && cs[at + 1] == 0x90) {
    const int tile = cs[at + 4] << 8 | cs[at + 5];
    const std::uint32_t psot = be32(cs, at + 6);
    EXPECT_NE(psot, 0u);
    if (psot == 0 || at + psot > cs.size()) break;
    std::size_t p = at + 12;
    while (p + 4 <= at + psot && !(cs[p] == 0xFF && cs[p + 1] == 0x93)) p += 2 + (cs[p + 2] << 8 | cs[p + 3]);
    for (p += 2; p + 6 <= at + psot; ++p)
      if (cs[p] == 0xFF && cs[p + 1] == 0x91) out[tile].push_back(cs[p + 4] << 8 | cs[p + 5]);
    at += psot;
  }
  return out;
}

class LumaChromaMerge : public ::testing::TestWithParam<MergeCase> {};

}  // namespace

TEST_P(LumaChromaMerge, MergedDecodesToTheSourcesPlanes) {
  const MergeCase& c = GetParam();
  PlanarImage photo = test::photo_ycbcr(c.width, c.height, 10, 2);
  if (c.chroma_dy == 2) {
    for (int k = 1; k < 3; ++k) {  // 4:2:0: drop every other chroma row
      Plane& p = photo.planes[k];
      Plane half = p;
      half.height = (p.height + 1) / 2;
      half.dy = 2;
      half.samples.resize(static_cast<std::size_t>(half.width) * half.height);
      for (int y = 0; y < half.height; ++y)
        std::copy_n(&p.samples[static_cast<std::size_t>(2 * y) * p.width], p.width, &half.samples[static_cast<std::size_t>(y) * p.width]);
      p = std::move(half);
    }
  }
  packetizer::EncodeParams ep;
  ep.lossless = c.lossless;
  ep.target_bytes = 6000;
  ep.layers = c.layers;
  ep.precinct_log2 = c.precinct_log2;
  ep.sop = c.sop;
  ep.eph = c.eph;
  ep.tile = c.tile;
  ep.resolutions = 4;
  ep.progression = c.luma_progression;
  auto y = packetizer::encode_openjpeg(planes(photo, 0, 1), ep);
  ASSERT_TRUE(y.ok()) << y.error().message;
  ep.progression = c.chroma_progression;
  ep.resolutions = 3;  // different level counts on purpose
  ep.target_bytes = 3000;
  ep.layers = c.chroma_layers ? c.chroma_layers : c.layers;
  if (c.tile) {
    ep.tile = c.tile / 2;  // chroma tiles cover the same picture area
    ep.tile_height = c.tile / c.chroma_dy;
  }
  auto cbcr = packetizer::encode_openjpeg(planes(photo, 1, 2), ep);
  ASSERT_TRUE(cbcr.ok()) << cbcr.error().message;
  const packetizer::EncodeParams chroma_params = ep;

  auto merged = merge_luma_chroma(*y, *cbcr);
  ASSERT_TRUE(merged.ok()) << merged.error().message;
  PlanarImage expect_y = decode(*y), expect_c = decode(*cbcr), got = decode(*merged);
  ASSERT_EQ(got.planes.size(), 3u);
  EXPECT_EQ(got.planes[0].samples, expect_y.planes[0].samples);
  EXPECT_EQ(got.planes[1].samples, expect_c.planes[0].samples);
  EXPECT_EQ(got.planes[2].samples, expect_c.planes[1].samples);
  EXPECT_EQ(got.planes[1].dx, 2);
  EXPECT_EQ(got.planes[1].dy, c.chroma_dy);
  if (c.lossless) {
    EXPECT_EQ(got.planes[0].samples, photo.planes[0].samples);
    EXPECT_EQ(got.planes[1].samples, photo.planes[1].samples);
    EXPECT_EQ(got.planes[2].samples, photo.planes[2].samples);
  }
  if (c.sop) {
    // Packets per tile, independently of the merger's precinct arithmetic: OpenJPEG encodes every
    // packet of every layer, so encoding both sources with the merged layer count gives, tile by
    // tile, as many SOPs as the merged codestream must hold; and Nsop must run 0, 1, 2, … per tile.
    const int layers = std::max(c.layers, c.chroma_layers ? c.chroma_layers : c.layers);
    packetizer::EncodeParams ey = ep, ec = chroma_params;
    ey.progression = c.luma_progression;
    ey.resolutions = 4;
    ey.target_bytes = 6000;
    ey.tile = c.tile;
    ey.tile_height = 0;
    ey.layers = ec.layers = layers;
    auto y_all = packetizer::encode_openjpeg(planes(photo, 0, 1), ey);
    auto c_all = packetizer::encode_openjpeg(planes(photo, 1, 2), ec);
    ASSERT_TRUE(y_all.ok() && c_all.ok());
    const auto sy = sop_numbers(*y_all), sc = sop_numbers(*c_all), sm = sop_numbers(*merged);
    ASSERT_EQ(sm.size(), sy.size());
    for (const auto& [tile, numbers] : sm) {
      EXPECT_EQ(numbers.size(), sy.at(tile).size() + sc.at(tile).size()) << "tile " << tile;
      for (std::size_t i = 0; i < numbers.size(); ++i) ASSERT_EQ(numbers[i], static_cast<int>(i % 65536)) << "tile " << tile;
    }
  }
}

using P = packetizer::Progression;
INSTANTIATE_TEST_SUITE_P(
    Cases, LumaChromaMerge,
    ::testing::Values(MergeCase{"cprl_lossless", P::CPRL, P::CPRL, true, 1, 0, false, false, 1, 0},
                      MergeCase{"lrcp_lossy", P::LRCP, P::LRCP, false, 1, 0, false, false, 1, 0},
                      MergeCase{"rlcp_rpcl_layers", P::RLCP, P::RPCL, false, 3, 0, false, false, 1, 0},
                      MergeCase{"pcrl_precincts", P::PCRL, P::PCRL, false, 2, 5, false, false, 1, 0},
                      MergeCase{"lrcp_cprl_sop_eph", P::LRCP, P::CPRL, true, 2, 0, true, true, 1, 0},
                      MergeCase{"rpcl_420", P::RPCL, P::RPCL, false, 1, 6, false, true, 2, 0},
                      MergeCase{"tiles_lrcp", P::LRCP, P::LRCP, true, 1, 0, true, false, 1, 64},
                      // Unequal layer counts: the source with fewer layers is padded with empty packets.
                      MergeCase{"layers_y3_c1_lrcp_lossless", P::LRCP, P::LRCP, true, 3, 0, false, false, 1, 0, 1},
                      MergeCase{"layers_y1_c2_rlcp_lossy", P::RLCP, P::LRCP, false, 1, 0, false, false, 1, 0, 2},
                      MergeCase{"layers_y3_c1_precincts_sop_eph", P::RPCL, P::PCRL, false, 3, 5, true, true, 1, 0, 1},
                      MergeCase{"layers_y1_c2_precincts_sop_eph_lossless", P::PCRL, P::RPCL, true, 1, 4, true, true, 1, 0, 2},
                      MergeCase{"layers_y1_c2_420_tiles_sop", P::LRCP, P::RPCL, true, 1, 5, true, false, 2, 64, 2},
                      MergeCase{"layers_y3_c1_420_tiles_eph_lossy", P::RLCP, P::LRCP, false, 3, 4, false, true, 2, 64, 1},
                      MergeCase{"layers_cprl_y1_c2_lossless", P::CPRL, P::CPRL, true, 1, 0, true, true, 1, 0, 2},
                      MergeCase{"layers_cprl_y3_c1_tiles_lossy", P::CPRL, P::CPRL, false, 3, 5, true, false, 2, 64, 1},
                      MergeCase{"layers_cprl_rpcl_y2_c4_tiles_sop", P::CPRL, P::RPCL, false, 2, 0, true, false, 1, 64, 4},
                      // Tiles of 100: the last tile row (100..102) has empty lowest resolutions, in
                      // luma (NL 3) and in 4:2:0 chroma (NL 2): no precincts there, no packets.
                      MergeCase{"layers_y1_c3_empty_resolutions_sop", P::LRCP, P::LRCP, true, 1, 4, true, true, 2, 100, 3, 203, 102},
                      MergeCase{"layers_y2_c1_empty_resolutions_sop", P::RPCL, P::CPRL, true, 2, 0, true, false, 2, 100, 1, 203, 102}),
    [](const auto& param_info) { return std::string(param_info.param.name); });

TEST(LumaChromaMerge, RefusesMismatchesWithReasons) {
  PlanarImage photo = test::photo_ycbcr(64, 48, 8, 2);
  packetizer::EncodeParams ep;
  ep.lossless = true;
  auto y = packetizer::encode_openjpeg(planes(photo, 0, 1), ep);
  ep.layers = 2;  // unequal layer counts are merged (padding), unequal SOP use is not
  ep.sop = true;
  auto c = packetizer::encode_openjpeg(planes(photo, 1, 2), ep);
  ASSERT_TRUE(y.ok() && c.ok());
  auto m = merge_luma_chroma(*y, *c);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().kind, ErrorKind::unsupported);
  EXPECT_NE(m.error().message.find("SOP/EPH"), std::string::npos) << m.error().message;
  auto swapped = merge_luma_chroma(*c, *y);  // Csiz 2 then 1
  ASSERT_FALSE(swapped.ok());
  EXPECT_NE(swapped.error().message.find("Csiz"), std::string::npos) << swapped.error().message;
  std::vector<std::uint8_t> junk(100, 0xFF);
  EXPECT_FALSE(merge_luma_chroma(junk, *c).ok());
}

TEST(LumaChromaMerge, RefusesPackedPacketHeaders) {
  PlanarImage photo = test::photo_ycbcr(64, 48, 8, 2);
  packetizer::EncodeParams ep;
  ep.lossless = true;
  auto y = packetizer::encode_openjpeg(planes(photo, 0, 1), ep);
  ep.layers = 2;
  auto c = packetizer::encode_openjpeg(planes(photo, 1, 2), ep);
  ASSERT_TRUE(y.ok() && c.ok());
  ASSERT_TRUE(merge_luma_chroma(*y, *c).ok());
  // A PPT segment (Zppt 0, one header byte) after the SOT of the chroma's only tile-part.
  std::vector<std::uint8_t> with_ppt = *c;
  std::size_t at = 2;
  while (!(with_ppt[at] == 0xFF && with_ppt[at + 1] == 0x90)) at += 2 + (with_ppt[at + 2] << 8 | with_ppt[at + 3]);
  const std::uint8_t ppt[] = {0xFF, 0x61, 0x00, 0x04, 0x00, 0x00};
  with_ppt.insert(with_ppt.begin() + static_cast<std::ptrdiff_t>(at + 12), std::begin(ppt), std::end(ppt));
  const std::uint32_t psot = be32(with_ppt, at + 6) + sizeof ppt;
  for (int i = 0; i < 4; ++i) with_ppt[at + 6 + i] = static_cast<std::uint8_t>(psot >> (24 - 8 * i));
  auto m = merge_luma_chroma(*y, with_ppt);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().kind, ErrorKind::unsupported);
  EXPECT_NE(m.error().message.find("PPT"), std::string::npos) << m.error().message;
}

TEST(SplitCodestreams, SplitsByWalkingMarkersNotBySearchingSoc) {
  PlanarImage photo = test::photo_ycbcr(96, 64, 8, 2);
  packetizer::EncodeParams ep;
  ep.lossless = true;
  auto a = packetizer::encode_openjpeg(photo, ep);
  auto b = packetizer::encode_openjpeg(test::photo_ycbcr(96, 64, 8, 2, 100, 100), ep);
  ASSERT_TRUE(a.ok() && b.ok());
  std::vector<std::uint8_t> both(16, 0xAB);  // a vendor prefix
  both.insert(both.end(), a->begin(), a->end());
  both.insert(both.end(), b->begin(), b->end());
  both.insert(both.end(), 7, 0);  // zero padding
  auto parts = split_codestreams(both);
  ASSERT_TRUE(parts.ok()) << parts.error().message;
  ASSERT_EQ(parts->size(), 2u);
  EXPECT_TRUE(std::equal((*parts)[0].begin(), (*parts)[0].end(), a->begin(), a->end()));
  EXPECT_TRUE(std::equal((*parts)[1].begin(), (*parts)[1].end(), b->begin(), b->end()));
  EXPECT_EQ(*component_count((*parts)[0]), 3);
  // Truncations and garbage give errors, never a crash.
  for (std::size_t cut = 0; cut < both.size(); cut += 97) {
    auto r = split_codestreams(Bytes(both).first(cut));
    (void)r;
  }
}
