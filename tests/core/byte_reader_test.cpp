#include "core/byte_reader.hpp"

#include <gtest/gtest.h>

#include <vector>

using j2k::ByteReader;

TEST(ByteReader, ReadsBigEndianIntegers) {
  std::vector<std::uint8_t> data{0x12, 0x34, 0x56, 0x78, 0x9A, 0xBC, 0xDE};
  ByteReader r(data);
  EXPECT_EQ(r.u8(), 0x12);
  EXPECT_EQ(r.u16(), 0x3456);
  EXPECT_EQ(r.u32(), 0x789ABCDEu);
  EXPECT_FALSE(r.failed());
  EXPECT_TRUE(r.empty());
}

TEST(ByteReader, ReadPastEndIsStickyAndReturnsZero) {
  std::vector<std::uint8_t> data{0xFF, 0x4F, 0xFF};
  ByteReader r(data);
  EXPECT_EQ(r.u16(), 0xFF4F);
  EXPECT_EQ(r.u16(), 0u);  // only one byte left
  EXPECT_TRUE(r.failed());
  EXPECT_EQ(r.u8(), 0u);   // still failed, never reads outside the span
  EXPECT_TRUE(r.failed());
}

TEST(ByteReader, BytesAndSkipAreBounded) {
  std::vector<std::uint8_t> data(10, 7);
  ByteReader r(data);
  EXPECT_EQ(r.bytes(4).size(), 4u);
  r.skip(6);
  EXPECT_FALSE(r.failed());
  EXPECT_TRUE(r.bytes(1).empty());
  EXPECT_TRUE(r.failed());
}

TEST(ByteWriter, RoundTripsThroughReader) {
  std::vector<std::uint8_t> out;
  j2k::ByteWriter w(out);
  w.u16(0xFF51);
  w.u32(1920);
  w.u64(0x0102030405060708ull);
  ByteReader r(out);
  EXPECT_EQ(r.u16(), 0xFF51);
  EXPECT_EQ(r.u32(), 1920u);
  EXPECT_EQ(r.u64(), 0x0102030405060708ull);
  EXPECT_FALSE(r.failed());
}
