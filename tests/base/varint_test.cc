#include "weft/base/varint.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <limits>

namespace weft {
namespace {

TEST(VarintTest, KnownEncodings) {
  std::string out;
  put_uvarint(out, 0);
  put_uvarint(out, 127);
  put_uvarint(out, 128);
  put_uvarint(out, 300);
  EXPECT_EQ(out, std::string("\x00\x7f\x80\x01\xac\x02", 6));
}

TEST(VarintTest, MaxValueTakesTenBytes) {
  std::string out;
  put_uvarint(out, std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(out.size(), 10u);
  ByteReader r(out);
  EXPECT_EQ(*r.read_uvarint(), std::numeric_limits<uint64_t>::max());
  EXPECT_TRUE(r.at_end());
}

TEST(VarintTest, TruncatedIsDataLoss) {
  ByteReader r(std::string_view("\x80\x80", 2));
  EXPECT_EQ(r.read_uvarint().status().code(), StatusCode::kDataLoss);
}

TEST(VarintTest, OverlongIsDataLoss) {
  std::string bytes(11, '\x80');
  bytes.back() = '\x01';
  ByteReader r(bytes);
  EXPECT_EQ(r.read_uvarint().status().code(), StatusCode::kDataLoss);
}

TEST(VarintTest, TenthByteOverflowIsDataLoss) {
  std::string bytes(9, '\xff');
  bytes += '\x02';  // bit 64 set
  ByteReader r(bytes);
  EXPECT_EQ(r.read_uvarint().status().code(), StatusCode::kDataLoss);
}

TEST(ByteReaderTest, LengthPrefixBeyondInputIsDataLoss) {
  std::string out;
  put_uvarint(out, 1000);
  out += "abc";
  ByteReader r(out);
  EXPECT_EQ(r.read_bytes().status().code(), StatusCode::kDataLoss);
}

TEST(ByteReaderTest, ReadCountEnforcesLimit) {
  std::string out;
  put_uvarint(out, 50);
  ByteReader r(out);
  Result<uint64_t> n = r.read_count(10, "change count");
  ASSERT_FALSE(n.ok());
  EXPECT_NE(n.status().message().find("change count"), std::string_view::npos);
}

TEST(ByteReaderTest, FixedWidthRoundTrip) {
  std::string out;
  put_fixed32(out, 0xDEADBEEF);
  put_fixed64(out, 0x0123456789ABCDEFULL);
  put_bytes(out, "hello");
  ByteReader r(out);
  EXPECT_EQ(*r.read_fixed32(), 0xDEADBEEFu);
  EXPECT_EQ(*r.read_fixed64(), 0x0123456789ABCDEFULL);
  EXPECT_EQ(*r.read_bytes(), "hello");
  EXPECT_TRUE(r.at_end());
  EXPECT_FALSE(r.read_u8().ok());
}

RC_GTEST_PROP(VarintProperty, UnsignedRoundTrips, (uint64_t v)) {
  std::string out;
  put_uvarint(out, v);
  ByteReader r(out);
  RC_ASSERT(*r.read_uvarint() == v);
  RC_ASSERT(r.at_end());
}

RC_GTEST_PROP(VarintProperty, SignedRoundTrips, (int64_t v)) {
  std::string out;
  put_svarint(out, v);
  ByteReader r(out);
  RC_ASSERT(*r.read_svarint() == v);
  RC_ASSERT(zigzag_decode(zigzag_encode(v)) == v);
}

RC_GTEST_PROP(VarintProperty, RandomBytesNeverCrash, (std::string bytes)) {
  ByteReader r(bytes);
  while (!r.at_end()) {
    if (!r.read_uvarint().ok()) break;
  }
  RC_SUCCEED();
}

}  // namespace
}  // namespace weft
