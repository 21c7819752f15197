// Time code from an MXF system item, as FFmpeg 5.1 writes it (-timecode 10:20:30:12).
#include <gtest/gtest.h>

#include "depacketizer/timecode.hpp"
#include "hex.hpp"

namespace j2k::depacketizer {
namespace {

using test::hex;

TEST(TimeCode, FromAnFfmpegSystemItem) {
  const auto v = hex("58040000000000" "060e2b34040101070d010301020c0100" "0000000000000000000000000000000000"
                     "8112302010000000000000000000000000");
  ASSERT_EQ(v.size(), 57u);
  auto tc = system_item_timecode(v);
  ASSERT_TRUE(tc);
  EXPECT_EQ(tc->to_string(), "10:20:30:12");
  EXPECT_FALSE(tc->drop_frame);
}

TEST(TimeCode, DropFrameAndBadDigits) {
  auto df = parse_smpte12m(hex("49595923"));
  ASSERT_TRUE(df);
  EXPECT_EQ(df->to_string(), "23:59:59;09");
  EXPECT_FALSE(parse_smpte12m(hex("1A302010")));  // frames digit A
  EXPECT_FALSE(parse_smpte12m(hex("12603010")));  // 60 seconds
  EXPECT_FALSE(parse_smpte12m(hex("123020")));    // cut short
}

TEST(TimeCode, SystemItemsWithoutOrWithCutStamps) {
  EXPECT_FALSE(system_item_timecode(hex("48040000000000")));  // no user stamp flag
  EXPECT_FALSE(system_item_timecode(hex("58040000000000060e2b34")));  // cut inside the label
  EXPECT_FALSE(system_item_timecode({}));
}

}  // namespace
}  // namespace j2k::depacketizer
