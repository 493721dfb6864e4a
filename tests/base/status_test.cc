#include "weft/base/status.h"

#include <gtest/gtest.h>

#include <memory>

namespace weft {
namespace {

TEST(StatusTest, DefaultIsOk) {
  Status s;
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kOk);
  EXPECT_EQ(s.to_string(), "ok");
}

TEST(StatusTest, ErrorCarriesCodeAndMessage) {
  Status s = not_found("block 'x' does not exist");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_EQ(s.message(), "block 'x' does not exist");
  EXPECT_EQ(s.to_string(), "not found: block 'x' does not exist");
}

TEST(StatusTest, OkCodeIgnoresMessage) {
  Status s(StatusCode::kOk, "ignored");
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.message(), "");
}

TEST(StatusTest, CopyIsDeep) {
  Status a = data_loss("bad");
  Status b = a;
  EXPECT_EQ(a, b);
  a = Status();
  EXPECT_EQ(b.code(), StatusCode::kDataLoss);
}

TEST(StatusTest, WithContextPrefixesMessage) {
  EXPECT_EQ(invalid_argument("bad pos").with_context("text.insert").to_string(),
            "invalid argument: text.insert: bad pos");
  EXPECT_TRUE(Status().with_context("x").ok());
}

TEST(StatusTest, EveryCodeHasAName) {
  for (int c : {0, 1, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 100, 101}) {
    EXPECT_NE(status_code_name(static_cast<StatusCode>(c)), "unknown") << c;
  }
  EXPECT_EQ(status_code_name(StatusCode::kUnknown), "unknown");
  EXPECT_EQ(status_code_name(static_cast<StatusCode>(77)), "unknown");
}

Result<int> half(int x) {
  if (x % 2) return invalid_argument("odd");
  return x / 2;
}

Result<int> quarter(int x) {
  WEFT_ASSIGN_OR_RETURN(int h, half(x));
  WEFT_ASSIGN_OR_RETURN(int q, half(h));
  return q;
}

Status check_even(int x) {
  WEFT_RETURN_IF_ERROR(half(x).status());
  return Status();
}

TEST(ResultTest, ValueAndError) {
  Result<int> ok = half(8);
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(*ok, 4);
  Result<int> bad = half(3);
  EXPECT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.value_or(-1), -1);
}

TEST(ResultTest, MacrosPropagate) {
  EXPECT_EQ(*quarter(8), 2);
  EXPECT_EQ(quarter(6).status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(check_even(2).ok());
  EXPECT_FALSE(check_even(1).ok());
}

TEST(ResultTest, OkStatusWithoutValueBecomesInternal) {
  Result<int> r{Status()};
  EXPECT_EQ(r.status().code(), StatusCode::kInternal);
}

TEST(ResultTest, MoveOnlyValue) {
  Result<std::unique_ptr<int>> r = std::make_unique<int>(7);
  ASSERT_TRUE(r.ok());
  std::unique_ptr<int> p = std::move(r).value();
  EXPECT_EQ(*p, 7);
}

}  // namespace
}  // namespace weft
