// The OpenJPEG backend and encoder wrapper: round trips on real photograph content.
#include <gtest/gtest.h>

#include "decoder/decoder.hpp"
#include "packetizer/openjpeg_encoder.hpp"
#include "test_images.hpp"

using namespace j2k;
using namespace j2k::decoder;
using namespace j2k::packetizer;

TEST(OpenJpegBackend, LosslessRoundTripIsBitExact422) {
  PlanarImage src = test::photo_ycbcr(192, 108, 10, 2);
  EncodeParams params;
  params.lossless = true;
  auto cs = encode_openjpeg(src, params);
  ASSERT_TRUE(cs.ok()) << cs.error().message;
  auto dec = make_decoder(Backend::openjpeg);
  ASSERT_TRUE(dec.ok());
  auto out = (*dec)->decode(*cs, {});
  ASSERT_TRUE(out.ok()) << out.error().message;
  ASSERT_EQ(out->planes.size(), 3u);
  EXPECT_EQ(out->planes[1].dx, 2);
  EXPECT_EQ(out->planes[1].width, 96);
  EXPECT_EQ(checksum(*out), checksum(src));
}

TEST(OpenJpegBackend, LossyHitsTargetSizeAndStaysClose) {
  PlanarImage src = test::photo_ycbcr(256, 144, 8, 2);
  EncodeParams params;
  params.target_bytes = 8000;
  auto cs = encode_openjpeg(src, params);
  ASSERT_TRUE(cs.ok()) << cs.error().message;
  EXPECT_LE(cs->size(), 8000u + 512);
  EXPECT_GE(cs->size(), 4000u);
  auto dec = make_decoder(Backend::openjpeg);
  auto out = (*dec)->decode(*cs, {});
  ASSERT_TRUE(out.ok());
  double err = 0;
  for (std::size_t i = 0; i < src.planes[0].samples.size(); ++i)
    err += std::abs(src.planes[0].samples[i] - out->planes[0].samples[i]);
  EXPECT_LT(err / src.planes[0].samples.size(), 6.0);  // mean abs error on luma at ~12:1
}

TEST(OpenJpegBackend, ReduceHalvesEachDimension) {
  PlanarImage src = test::photo_ycbcr(200, 100, 8, 1);
  EncodeParams params;
  params.lossless = true;
  auto cs = encode_openjpeg(src, params);
  ASSERT_TRUE(cs.ok());
  auto dec = make_decoder(Backend::openjpeg);
  DecodeOptions opt;
  opt.reduce = 1;
  auto out = (*dec)->decode(*cs, opt);
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_EQ(out->width, 100);
  EXPECT_EQ(out->planes[0].width, 100);
  EXPECT_EQ(out->planes[0].height, 50);
}

TEST(OpenJpegBackend, GarbageAndTruncationGiveErrorsNotCrashes) {
  auto dec = make_decoder(Backend::openjpeg);
  std::vector<std::uint8_t> garbage(1000, 0xAB);
  EXPECT_FALSE((*dec)->decode(garbage, {}).ok());
  PlanarImage src = test::photo_ycbcr(128, 64, 8, 2);
  auto cs = encode_openjpeg(src, EncodeParams{});
  ASSERT_TRUE(cs.ok());
  DecodeOptions strict;
  strict.strict = true;
  for (std::size_t cut : {2u, 10u, 60u, 200u}) {
    std::vector<std::uint8_t> part(cs->begin(), cs->begin() + std::min(cut, cs->size()));
    EXPECT_FALSE((*dec)->decode(part, strict).ok()) << cut;
  }
}

TEST(LocateCodestream, FindsJp2cBoxAndRejectsOthers) {
  std::vector<std::uint8_t> jp2 = {0, 0, 0, 0x0C, 'j', 'P', ' ', ' ', 0x0D, 0x0A, 0x87, 0x0A,
                                   0, 0, 0, 12, 'j', 'p', '2', 'c', 0xFF, 0x4F, 0xFF, 0xD9};
  auto cs = locate_codestream(jp2);
  ASSERT_TRUE(cs.ok());
  EXPECT_EQ(cs->size(), 4u);
  EXPECT_EQ((*cs)[1], 0x4F);
  jp2[15] = 200;  // box longer than the file
  EXPECT_FALSE(locate_codestream(jp2).ok());
  std::vector<std::uint8_t> junk = {1, 2, 3};
  EXPECT_FALSE(locate_codestream(junk).ok());
}
