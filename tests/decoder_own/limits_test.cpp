// What a codestream's header may ask of the decoder (issue 9 item 1): limits on the samples
// and memory of a whole frame, checked before anything is allocated; structures that follow
// the packets actually present; no exception out of Decoder::decode.
#include <gtest/gtest.h>

#include <string>

#include "decoder/decoder.hpp"
#include "decoder/own_decoder.hpp"
#include "synthetic_codestream.hpp"

namespace j2k::decoder {
namespace {

using test::SyntheticCodestream;

Result<PlanarImage> decode_with(Backend backend, const std::vector<std::uint8_t>& cs, const DecodeLimits& limits = {}) {
  auto dec = make_decoder(backend, limits);
  EXPECT_TRUE(dec.ok());
  if (!dec.ok()) return dec.error();
  return (*dec)->decode(cs, {});
}

class BothBackends : public ::testing::TestWithParam<Backend> {};

// 16384 components of 480x480: the pixel limit counts the picture once, so this passed it
// and build_tile set up ~230 000 coefficients per component until std::bad_alloc.
TEST_P(BothBackends, SixteenThousandComponentsAreRefusedBeforeAllocating) {
  SyntheticCodestream s;
  s.width = s.height = 480;
  s.components = 16384;
  auto image = decode_with(GetParam(), s.bytes());
  ASSERT_FALSE(image.ok());
  EXPECT_EQ(image.error().kind, ErrorKind::limit) << image.error().message;
  EXPECT_NE(image.error().message.find("16384 components"), std::string::npos) << image.error().message;
}

// 16384x16384x3 declared in about a hundred bytes (it took the probe to 3.2 GB).
TEST_P(BothBackends, HugePictureInAHundredBytesIsRefused) {
  SyntheticCodestream s;
  s.width = s.height = 16384;
  s.components = 3;
  const auto bytes = s.bytes();
  ASSERT_LT(bytes.size(), 160u);
  auto image = decode_with(GetParam(), bytes);
  ASSERT_FALSE(image.ok());
  EXPECT_EQ(image.error().kind, ErrorKind::limit) << image.error().message;
}

TEST_P(BothBackends, MemoryLimitIsCheckedBeforeDecoding) {
  SyntheticCodestream s;
  s.width = s.height = 1024;
  s.components = 3;
  DecodeLimits small;
  small.max_memory = 8LL << 20;  // 3 Msamples need ~36 MiB
  auto image = decode_with(GetParam(), s.bytes(), small);
  ASSERT_FALSE(image.ok());
  EXPECT_EQ(image.error().kind, ErrorKind::limit);
  EXPECT_NE(image.error().message.find("memory limit"), std::string::npos) << image.error().message;
  // The same codestream within the default limits decodes.
  EXPECT_TRUE(decode_with(GetParam(), s.bytes()).ok());
}

// Review 2026-11-25: --reduce 70 shifted a 64-bit value by 70 (undefined behaviour, seen by
// UBSan) while the frame's size was worked out, before the levels were checked.
TEST(DecodeLimits, AReductionPastAnyCodestreamsLevelsIsRefusedFirst) {
  SyntheticCodestream s;
  s.width = s.height = 64;
  auto dec = make_decoder(Backend::own);
  ASSERT_TRUE(dec.ok());
  for (int reduce : {33, 64, 70, 1000}) {
    DecodeOptions options;
    options.reduce = reduce;
    auto image = (*dec)->decode(s.bytes(), options);
    ASSERT_FALSE(image.ok()) << reduce;
    EXPECT_EQ(image.error().kind, ErrorKind::unsupported);
    EXPECT_NE(image.error().message.find("decomposition levels a codestream can have"), std::string::npos)
        << image.error().message;
  }
}

INSTANTIATE_TEST_SUITE_P(DecodeLimits, BothBackends, ::testing::Values(Backend::own, Backend::openjpeg),
                         [](const auto& param_info) { return std::string(to_string(param_info.param)); });

// 4x4 code-blocks over a 1024x1024 picture declare 65536 code-blocks and their tag trees;
// one empty packet carries nothing, so none of them may be created: the decode accounts
// for the frame buffers and the precinct bookkeeping only.
TEST(DecodeLimits, CodeBlocksFollowThePacketsNotTheHeader) {
  SyntheticCodestream s;
  s.width = s.height = 1024;
  s.levels = 0;
  s.xcb = s.ycb = 2;
  const long long samples = 1024LL * 1024;
  auto dec = make_decoder(Backend::own);
  ASSERT_TRUE(dec.ok());
  auto image = (*dec)->decode(s.bytes(), {});
  ASSERT_TRUE(image.ok()) << image.error().message;
  const auto used = (*dec)->last_stats().memory_bytes;
  EXPECT_GE(used, static_cast<std::uint64_t>(samples * 8));      // at least coefficients + output
  EXPECT_LT(used, static_cast<std::uint64_t>(samples * 16 + 4096));  // and no code-block
  // Nothing was coded: every sample is the DC level (8-bit unsigned: 128).
  for (std::int32_t v : image->planes[0].samples) ASSERT_EQ(v, 128);

  // The same header with a small memory limit that the frame fits but 65536 code-blocks
  // would not: decodes, because the code-blocks are never made.
  DecodeLimits tight;
  tight.max_memory = samples * 16 + (1 << 20);
  auto dec2 = make_decoder(Backend::own, tight);
  ASSERT_TRUE(dec2.ok());
  EXPECT_TRUE((*dec2)->decode(s.bytes(), {}).ok());
}

// A packet that does reach a precinct of 65536 declared code-blocks makes them, and they
// are charged before they are allocated.
TEST(DecodeLimits, CodeBlocksThatPacketsReachAreChargedFirst) {
  SyntheticCodestream s;
  s.width = s.height = 1024;
  s.levels = 0;
  s.xcb = s.ycb = 2;
  s.body = {0x80, 0x00};  // non-empty packet; no code-block included (inclusion tag tree: 0)
  const long long samples = 1024LL * 1024;
  DecodeLimits tight;
  tight.max_memory = samples * 16 + (1 << 20);
  auto dec = make_decoder(Backend::own, tight);
  ASSERT_TRUE(dec.ok());
  auto image = (*dec)->decode(s.bytes(), {});
  ASSERT_FALSE(image.ok());
  EXPECT_EQ(image.error().kind, ErrorKind::limit);
  EXPECT_NE(image.error().message.find("code-blocks"), std::string::npos) << image.error().message;
  // With room for them, the same stream decodes and the accounting shows them.
  auto roomy = make_decoder(Backend::own);
  ASSERT_TRUE(roomy.ok());
  ASSERT_TRUE((*roomy)->decode(s.bytes(), {}).ok());
  EXPECT_GT((*roomy)->last_stats().memory_bytes, static_cast<std::uint64_t>(samples * 16 + 65536LL * 64));
}

TEST(DecodeLimits, CoefficientDecoderRefusesToo) {
  SyntheticCodestream s;
  s.width = s.height = 16384;
  s.components = 3;
  CoefficientDecoder dec;
  auto frame = dec.decode(s.bytes(), {});
  ASSERT_FALSE(frame.ok());
  EXPECT_EQ(frame.error().kind, ErrorKind::limit);
}

}  // namespace
}  // namespace j2k::decoder
