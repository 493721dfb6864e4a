// GrepOptions::threads: a host grep with N threads returns exactly what the
// single-threaded scan returns (same matches, same order) for any
// max_matches, glob and pattern; cancellation stops it. (The sandbox hands
// GrepOptions to its host filesystem unchanged.) Run under TSan too
// (scripts/build.sh tsan weft_fs_tests).
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <thread>

#include "support/test_support.h"
#include "weft/fs/filesystem.h"

namespace weft::fs {
namespace {

namespace stdfs = std::filesystem;

void expect_same(const std::vector<GrepMatch>& a, const std::vector<GrepMatch>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].path, b[i].path) << i;
    EXPECT_EQ(a[i].line_number, b[i].line_number) << i;
    EXPECT_EQ(a[i].line_content, b[i].line_content) << i;
    EXPECT_EQ(a[i].match_start, b[i].match_start) << i;
    EXPECT_EQ(a[i].match_end, b[i].match_end) << i;
  }
}

// 40 directories (some nested) × 30 files; about one file in 7 holds NEEDLE,
// some several times; a few binary and .git files that grep skips.
class GrepThreads : public ::testing::Test {
 protected:
  // Built by the first SetUp (RapidCheck's fixture properties run SetUp per
  // case but not SetUpTestSuite), removed after each suite.
  static void build_tree() {
    root_ = new weft::testing::TempDir();
    state_ = new weft::testing::TempDir();
    for (int d = 0; d < 40; ++d) {
      stdfs::path dir = root_->path() / ("d" + std::to_string(d));
      if (d % 5 == 0) dir /= "nested";
      stdfs::create_directories(dir);
      for (int f = 0; f < 30; ++f) {
        std::ofstream out(dir / ("f" + std::to_string(f) + (f % 3 ? ".rs" : ".txt")));
        for (int l = 0; l < 20; ++l) {
          out << "line " << l << " of " << d << "/" << f;
          if ((d * 30 + f) % 7 == 0 && l % (1 + f % 4) == 0) out << " NEEDLE here";
          out << "\n";
        }
        if (f == 29) out << std::string("NEEDLE\0binary", 13);
      }
    }
    stdfs::create_directories(root_->path() / ".git");
    std::ofstream(root_->path() / ".git" / "config") << "NEEDLE in git\n";
  }
  static void TearDownTestSuite() {
    delete root_;
    delete state_;
    root_ = state_ = nullptr;
  }
  void SetUp() override {
    if (!root_) build_tree();
    HostOptions o;
    o.git_dir = (state_->path() / "snapshots.git").string();
    auto fs = make_host_filesystem(root_->path().string(), o);
    ASSERT_TRUE(fs.ok()) << fs.status();
    fs_ = std::move(*fs);
  }
  Result<std::vector<GrepMatch>> grep(std::string_view pattern, std::optional<std::string> glob,
                                      std::optional<int64_t> max, int threads,
                                      std::string_view base = ".") {
    GrepOptions o{std::move(glob), max, nullptr};
    o.threads = threads;
    return fs_->grep(pattern, base, o);
  }
  static weft::testing::TempDir* root_;
  static weft::testing::TempDir* state_;
  std::unique_ptr<Filesystem> fs_;
};
weft::testing::TempDir* GrepThreads::root_ = nullptr;
weft::testing::TempDir* GrepThreads::state_ = nullptr;

TEST_F(GrepThreads, SameResultsForAnyThreadCount) {
  auto one = grep("NEEDLE", std::nullopt, std::nullopt, 1);
  ASSERT_TRUE(one.ok()) << one.status();
  ASSERT_GT(one->size(), 100u);  // the tree has plenty to find
  for (int threads : {0, 2, 3, 8}) {
    auto many = grep("NEEDLE", std::nullopt, std::nullopt, threads);
    ASSERT_TRUE(many.ok()) << many.status();
    expect_same(*one, *many);
  }
}

TEST_F(GrepThreads, MaxMatchesCutsAtTheSameMatch) {
  for (int64_t max : {1, 2, 7, 50, 99, 250}) {
    auto one = grep("NEE+DLE", std::nullopt, max, 1);
    auto four = grep("NEE+DLE", std::nullopt, max, 4);
    ASSERT_TRUE(one.ok() && four.ok());
    EXPECT_EQ(one->size(), static_cast<size_t>(max));
    expect_same(*one, *four);
  }
}

TEST_F(GrepThreads, GlobAndBaseAreHonoured) {
  auto one = grep("line 3 ", std::string("*.txt"), std::nullopt, 1, "d10");
  auto two = grep("line 3 ", std::string("*.txt"), std::nullopt, 2, "d10");
  ASSERT_TRUE(one.ok() && two.ok());
  ASSERT_FALSE(one->empty());
  for (const GrepMatch& m : *two) EXPECT_EQ(m.path.substr(m.path.size() - 4), ".txt");
  expect_same(*one, *two);
}

TEST_F(GrepThreads, ASetFlagCancels) {
  std::atomic<bool> cancel{true};
  GrepOptions o{std::nullopt, std::nullopt, &cancel};
  o.threads = 4;
  EXPECT_EQ(fs_->grep("NEEDLE", ".", o).status().code(), StatusCode::kCancelled);
}

TEST_F(GrepThreads, CancellingWhileScanningStopsOrFinishesCleanly) {
  for (int i = 0; i < 20; ++i) {
    std::atomic<bool> cancel{false};
    GrepOptions o{std::nullopt, std::nullopt, &cancel};
    o.threads = 3;
    std::thread setter([&] {
      std::this_thread::sleep_for(std::chrono::microseconds(200 * i));
      cancel = true;
    });
    auto r = fs_->grep("NEEDLE", ".", o);
    setter.join();
    if (!r.ok()) EXPECT_EQ(r.status().code(), StatusCode::kCancelled) << r.status();
  }
}

TEST_F(GrepThreads, OneFileBaseIsSearchedTheSame) {
  auto one = grep("NEEDLE", std::nullopt, std::nullopt, 1, "d0/nested/f0.txt");
  auto two = grep("NEEDLE", std::nullopt, std::nullopt, 2, "d0/nested/f0.txt");
  ASSERT_TRUE(one.ok() && two.ok());
  ASSERT_FALSE(one->empty());
  expect_same(*one, *two);
}

RC_GTEST_FIXTURE_PROP(GrepThreads, AnyMaxAndThreadCountAgree, ()) {
  const int64_t max = *rc::gen::inRange<int64_t>(1, 400);
  const int threads = *rc::gen::inRange(2, 9);
  const bool use_glob = *rc::gen::arbitrary<bool>();
  std::optional<std::string> glob;
  if (use_glob) glob = "*.rs";
  auto one = grep("NEEDLE|line 1[0-9]", glob, max, 1);
  auto many = grep("NEEDLE|line 1[0-9]", glob, max, threads);
  RC_ASSERT(one.ok() && many.ok());
  RC_ASSERT(one->size() == many->size());
  for (size_t i = 0; i < one->size(); ++i) {
    RC_ASSERT((*one)[i].path == (*many)[i].path);
    RC_ASSERT((*one)[i].line_number == (*many)[i].line_number);
  }
}

}  // namespace
}  // namespace weft::fs
