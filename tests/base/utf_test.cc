#include "weft/base/utf.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

namespace weft {
namespace {

// "a" (1 byte), "é" (2 bytes), "中" (3 bytes), "😀" (4 bytes, 2 UTF-16 units)
const std::string kMixed = "a\xC3\xA9\xE4\xB8\xAD\xF0\x9F\x98\x80z";

TEST(UtfTest, ValidatesWellFormedText) {
  EXPECT_TRUE(is_valid_utf8(""));
  EXPECT_TRUE(is_valid_utf8("plain ascii that is longer than eight bytes"));
  EXPECT_TRUE(is_valid_utf8(kMixed));
}

TEST(UtfTest, RejectsMalformedText) {
  EXPECT_FALSE(is_valid_utf8("\x80"));              // lone continuation
  EXPECT_FALSE(is_valid_utf8("\xC0\xAF"));          // overlong
  EXPECT_FALSE(is_valid_utf8("\xE0\x80\xAF"));      // overlong 3-byte
  EXPECT_FALSE(is_valid_utf8("\xED\xA0\x80"));      // surrogate
  EXPECT_FALSE(is_valid_utf8("\xF4\x90\x80\x80"));  // above U+10FFFF
  EXPECT_FALSE(is_valid_utf8("\xF0\x9F\x98"));      // truncated
  EXPECT_FALSE(is_valid_utf8("abcdefgh\xFF"));
  Status s = validate_utf8("ab\xFF");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("byte 2"), std::string_view::npos);
}

TEST(UtfTest, CountsEachUnit) {
  EXPECT_EQ(utf8_length_unchecked(kMixed, PosUnit::kBytes), 11u);
  EXPECT_EQ(utf8_length_unchecked(kMixed, PosUnit::kUnicode), 5u);
  EXPECT_EQ(utf8_length_unchecked(kMixed, PosUnit::kUtf16), 6u);
}

TEST(UtfTest, ConvertsPositions) {
  EXPECT_EQ(*convert_pos(kMixed, 4, PosUnit::kUnicode, PosUnit::kBytes), 10u);
  EXPECT_EQ(*convert_pos(kMixed, 4, PosUnit::kUnicode, PosUnit::kUtf16), 5u);
  EXPECT_EQ(*convert_pos(kMixed, 5, PosUnit::kUtf16, PosUnit::kUnicode), 4u);
  EXPECT_EQ(*convert_pos(kMixed, 6, PosUnit::kBytes, PosUnit::kUnicode), 3u);
  EXPECT_EQ(*convert_pos(kMixed, 11, PosUnit::kBytes, PosUnit::kUtf16), 6u);
}

TEST(UtfTest, RejectsPositionsInsideCharacters) {
  EXPECT_EQ(convert_pos(kMixed, 2, PosUnit::kBytes, PosUnit::kUnicode).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(convert_pos(kMixed, 4, PosUnit::kUtf16, PosUnit::kUnicode).status().code(),
            StatusCode::kInvalidArgument);
}

TEST(UtfTest, RejectsPositionsPastTheEnd) {
  EXPECT_EQ(convert_pos(kMixed, 6, PosUnit::kUnicode, PosUnit::kBytes).status().code(),
            StatusCode::kOutOfRange);
  EXPECT_EQ(convert_pos(kMixed, 7, PosUnit::kUtf16, PosUnit::kBytes).status().code(),
            StatusCode::kOutOfRange);
  EXPECT_EQ(convert_pos(kMixed, 12, PosUnit::kBytes, PosUnit::kBytes).status().code(),
            StatusCode::kOutOfRange);
}

TEST(UtfTest, ConvertRejectsInvalidText) {
  EXPECT_EQ(convert_pos("\xFF", 0, PosUnit::kBytes, PosUnit::kUnicode).status().code(),
            StatusCode::kInvalidArgument);
}

TEST(UtfTest, Utf16RoundTripAndUnpairedSurrogates) {
  std::u16string u16 = utf8_to_utf16_unchecked(kMixed);
  EXPECT_EQ(u16.size(), 6u);
  EXPECT_EQ(*utf16_to_utf8(u16), kMixed);
  EXPECT_FALSE(utf16_to_utf8(std::u16string(1, u'\xD800')).ok());
  EXPECT_FALSE(utf16_to_utf8(std::u16string(1, u'\xDC00')).ok());
}

// Random scalar values, weighted towards each encoded length.
rc::Gen<char32_t> scalar_gen() {
  return rc::gen::oneOf(rc::gen::inRange<char32_t>(0, 0x80), rc::gen::inRange<char32_t>(0x80, 0x800),
                        rc::gen::inRange<char32_t>(0x800, 0xD800),
                        rc::gen::inRange<char32_t>(0xE000, 0x10000),
                        rc::gen::inRange<char32_t>(0x10000, 0x110000));
}

RC_GTEST_PROP(UtfProperty, PositionsRoundTripThroughEveryUnit, ()) {
  auto cps = *rc::gen::container<std::vector<char32_t>>(scalar_gen());
  std::string text;
  for (char32_t cp : cps) append_utf8(text, cp);
  RC_ASSERT(is_valid_utf8(text));
  RC_ASSERT(count_unicode_unchecked(text) == cps.size());
  size_t pos = *rc::gen::inRange<size_t>(0, cps.size() + 1);
  size_t bytes = *convert_pos(text, pos, PosUnit::kUnicode, PosUnit::kBytes);
  size_t u16 = *convert_pos(text, pos, PosUnit::kUnicode, PosUnit::kUtf16);
  RC_ASSERT(*convert_pos(text, bytes, PosUnit::kBytes, PosUnit::kUnicode) == pos);
  RC_ASSERT(*convert_pos(text, u16, PosUnit::kUtf16, PosUnit::kUnicode) == pos);
  RC_ASSERT(byte_offset_of_unicode_unchecked(text, pos) == bytes);
}

RC_GTEST_PROP(UtfProperty, RandomBytesNeverCrash, (std::string bytes, size_t pos)) {
  for (PosUnit from : {PosUnit::kBytes, PosUnit::kUnicode, PosUnit::kUtf16}) {
    auto r = convert_pos(bytes, pos % (bytes.size() + 2), from, PosUnit::kUtf16);
    RC_ASSERT(r.ok() || !r.status().message().empty());
  }
}

}  // namespace
}  // namespace weft
