#include "weft/doc/permission.h"

#include <gtest/gtest.h>

#include <map>
#include <utility>

namespace weft::doc {
namespace {

using P = MemoryPermission;
using O = MemoryOp;
using D = PermissionDecision;

// The expected table, written out pair by pair so a change to the one table
// in permission.cc must be made here too, on purpose.
const std::map<std::pair<P, O>, D>& expected() {
  static const std::map<std::pair<P, O>, D> table = {
      {{P::kReadOnly, O::kRead}, D::kAllowed},
      {{P::kReadOnly, O::kAppend}, D::kDenied},
      {{P::kReadOnly, O::kOverwrite}, D::kDenied},
      {{P::kReadOnly, O::kDelete}, D::kDenied},
      {{P::kPartner, O::kRead}, D::kAllowed},
      {{P::kPartner, O::kAppend}, D::kNeedsApproval},
      {{P::kPartner, O::kOverwrite}, D::kNeedsApproval},
      {{P::kPartner, O::kDelete}, D::kNeedsApproval},
      {{P::kHuman, O::kRead}, D::kAllowed},
      {{P::kHuman, O::kAppend}, D::kNeedsApproval},
      {{P::kHuman, O::kOverwrite}, D::kNeedsApproval},
      {{P::kHuman, O::kDelete}, D::kNeedsApproval},
      {{P::kAppend, O::kRead}, D::kAllowed},
      {{P::kAppend, O::kAppend}, D::kAllowed},
      {{P::kAppend, O::kOverwrite}, D::kDenied},
      {{P::kAppend, O::kDelete}, D::kDenied},
      {{P::kReadWrite, O::kRead}, D::kAllowed},
      {{P::kReadWrite, O::kAppend}, D::kAllowed},
      {{P::kReadWrite, O::kOverwrite}, D::kAllowed},
      {{P::kReadWrite, O::kDelete}, D::kDenied},
      {{P::kAdmin, O::kRead}, D::kAllowed},
      {{P::kAdmin, O::kAppend}, D::kAllowed},
      {{P::kAdmin, O::kOverwrite}, D::kAllowed},
      {{P::kAdmin, O::kDelete}, D::kAllowed},
  };
  return table;
}

class PermissionPairTest : public ::testing::TestWithParam<std::pair<P, O>> {};

TEST_P(PermissionPairTest, DecisionAndStatusMatchTable) {
  auto [perm, op] = GetParam();
  D want = expected().at({perm, op});
  EXPECT_EQ(permission_decision(perm, op), want);
  Status s = check_permission(perm, op, "notes");
  switch (want) {
    case D::kAllowed:
      EXPECT_TRUE(s.ok()) << s;
      EXPECT_FALSE(is_needs_approval(s));
      break;
    case D::kNeedsApproval:
      EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition) << s;
      EXPECT_TRUE(is_needs_approval(s)) << s;
      EXPECT_NE(s.message().find("'notes'"), std::string_view::npos) << s;
      EXPECT_NE(s.message().find("approved"), std::string_view::npos) << s;
      break;
    case D::kDenied:
      EXPECT_EQ(s.code(), StatusCode::kPermissionDenied) << s;
      EXPECT_FALSE(is_needs_approval(s));
      EXPECT_NE(s.message().find("'notes'"), std::string_view::npos) << s;
      EXPECT_NE(s.message().find(memory_op_name(op)), std::string_view::npos) << s;
      break;
  }
}

std::vector<std::pair<P, O>> all_pairs() {
  std::vector<std::pair<P, O>> out;
  for (P p : kAllPermissions) {
    for (O o : kAllOps) out.push_back({p, o});
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(AllPairs, PermissionPairTest, ::testing::ValuesIn(all_pairs()),
                         [](const auto& info) {
                           return std::string(memory_permission_name(info.param.first)) + "_" +
                                  std::string(memory_op_name(info.param.second));
                         });

TEST(PermissionTest, TableCoversEveryPair) { EXPECT_EQ(expected().size(), 24u); }

TEST(PermissionTest, PartnerAndHumanApprovalNamesWhoApproves) {
  Status partner = check_permission(P::kPartner, O::kOverwrite, "cfg");
  Status human = check_permission(P::kHuman, O::kOverwrite, "cfg");
  EXPECT_NE(partner.message().find("partner"), std::string_view::npos) << partner;
  EXPECT_NE(human.message().find("human"), std::string_view::npos) << human;
}

TEST(PermissionTest, NamesRoundTripAndAliasesParse) {
  for (P p : kAllPermissions) {
    auto parsed = parse_memory_permission(memory_permission_name(p));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, p);
  }
  EXPECT_EQ(*parse_memory_permission("ReadOnly"), P::kReadOnly);
  EXPECT_EQ(*parse_memory_permission("read-write"), P::kReadWrite);
  EXPECT_EQ(*parse_memory_permission("ADMIN"), P::kAdmin);
  auto bad = parse_memory_permission("superuser");
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("superuser"), std::string_view::npos);
}

TEST(PermissionTest, OutOfEnumValuesAreDenied) {
  EXPECT_EQ(permission_decision(static_cast<P>(42), O::kRead), D::kDenied);
  EXPECT_EQ(permission_decision(P::kAdmin, static_cast<O>(9)), D::kDenied);
}

}  // namespace
}  // namespace weft::doc
