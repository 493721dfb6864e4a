// The escape corpus: every way out of the root we could think of, against
// every disk backend (Host with openat2, Host with the O_NOFOLLOW walk,
// Sandbox). Each attempt must fail with a clear error, and the directory
// outside the root must be byte-for-byte unchanged afterwards.
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <map>
#include <thread>

#include "backends.h"

namespace weft::fs::testing {
namespace {

namespace stdfs = std::filesystem;

std::map<std::string, std::string> snapshot_tree(const stdfs::path& dir) {
  std::map<std::string, std::string> out;
  for (auto& e : stdfs::recursive_directory_iterator(dir)) {
    std::string rel = stdfs::relative(e.path(), dir).string();
    out[rel] = e.is_regular_file() ? weft::testing::read_file(e.path()) : "<dir>";
  }
  return out;
}

template <typename B>
class Escape : public FsTest<B> {
 protected:
  void SetUp() override {
    FsTest<B>::SetUp();
    outside_ = outside_dir_.path();
    { std::ofstream(outside_ / "secret.txt") << "SECRET"; }
    stdfs::create_directories(outside_ / "sub");
    { std::ofstream(outside_ / "sub" / "inner.txt") << "SECRET inner"; }
    root_ = stdfs::path(this->fs().root());
    before_ = snapshot_tree(outside_);
  }
  void TearDown() override {
    EXPECT_EQ(snapshot_tree(outside_), before_) << "something outside the root changed";
  }
  // Every operation on `path` must fail with one of the codes in `codes`.
  void expect_all_refused(const std::string& path) {
    auto& fs = this->fs();
    auto refused = [&](StatusCode c) {
      return c == StatusCode::kPermissionDenied || c == StatusCode::kInvalidArgument;
    };
    EXPECT_TRUE(refused(fs.read(path).status().code())) << path << " " << fs.read(path).status();
    EXPECT_TRUE(refused(fs.read_bytes(path).status().code())) << path;
    EXPECT_TRUE(refused(fs.stat(path).status().code())) << path;
    EXPECT_TRUE(refused(fs.list(path).status().code())) << path;
    EXPECT_TRUE(refused(fs.write(path, "PWNED").status().code())) << path;
    EXPECT_TRUE(refused(fs.write(path, "PWNED", WriteMode::kAppend).status().code())) << path;
    EXPECT_TRUE(refused(fs.remove(path, true).code())) << path;
    EXPECT_TRUE(refused(fs.mkdir(path).code())) << path;
    EXPECT_TRUE(refused(fs.move(path, "moved").code())) << path;
    EXPECT_TRUE(refused(fs.move("victim.txt", path).code())) << path;
    EXPECT_TRUE(refused(fs.copy(path, "copied").code())) << path;
    EXPECT_TRUE(refused(fs.copy("victim.txt", path).code())) << path;
    EXPECT_TRUE(refused(fs.glob("*", path).status().code())) << path;
    EXPECT_TRUE(refused(fs.grep("SECRET", path).status().code())) << path;
    EXPECT_FALSE(fs.exists(path)) << path;
  }
  std::string outside_name() const { return outside_.filename().string(); }

  weft::testing::TempDir outside_dir_;
  stdfs::path outside_, root_;
  std::map<std::string, std::string> before_;
};
TYPED_TEST_SUITE(Escape, DiskBackends, BackendNames);

TYPED_TEST(Escape, DotDotInEveryPosition) {
  this->put("victim.txt", "v");
  this->put("a/b/keep.txt", "k");
  std::string o = this->outside_name();
  for (const std::string& p : std::vector<std::string>{
           std::string(".."), std::string("../"), "../" + o + "/secret.txt", "a/../../" + o,
           "a/b/../../../" + o + "/secret.txt", "./../" + o, "a/..//../" + o + "/sub/inner.txt",
           "a/b/../../..", std::string("..//.."), "a/./../b/../../x"}) {
    this->expect_all_refused(p);
  }
  EXPECT_EQ(this->get("a/b/../b/keep.txt"), "k");  // ".." that stays inside is fine
}

TYPED_TEST(Escape, AbsolutePaths) {
  this->put("victim.txt", "v");
  for (const std::string& p : std::vector<std::string>{
           (this->outside_ / "secret.txt").string(), this->outside_.string(),
           std::string("/etc/passwd"), std::string("/"),
           this->root_.string() + "/../" + this->outside_name() + "/secret.txt",
           this->root_.string() + "x/y"}) {
    this->expect_all_refused(p);
  }
  EXPECT_EQ(this->get(this->root_.string() + "/victim.txt"), "v");
}

TYPED_TEST(Escape, SymlinksCreatedBefore) {
  this->put("victim.txt", "v");
  stdfs::create_symlink(this->outside_ / "secret.txt", this->root_ / "link_file");
  stdfs::create_directory_symlink(this->outside_, this->root_ / "link_dir");
  stdfs::create_symlink("../" + this->outside_name() + "/secret.txt", this->root_ / "rel_link");
  stdfs::create_directories(this->root_ / "real");
  stdfs::create_directory_symlink(this->outside_ / "sub", this->root_ / "real" / "deep_link");
  for (const std::string& p : std::vector<std::string>{
           "link_file", "rel_link", "link_dir/secret.txt", "link_dir/sub", "link_dir/new.txt",
           "real/deep_link/inner.txt", "real/deep_link/new/x.txt"}) {
    auto& fs = this->fs();
    EXPECT_EQ(fs.read(p).status().code(), StatusCode::kPermissionDenied) << p;
    EXPECT_EQ(fs.write(p, "PWNED").status().code(), StatusCode::kPermissionDenied) << p;
    EXPECT_FALSE(fs.write(p, "PWNED", WriteMode::kAppend).ok()) << p;
    EXPECT_FALSE(fs.copy(p, "copied").ok()) << p;
    EXPECT_FALSE(fs.mkdir(std::string(p) + "/d").ok()) << p;
  }
  EXPECT_EQ(this->fs().list("link_dir").status().code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(this->fs().glob("*", "link_dir").status().code(), StatusCode::kPermissionDenied);
  auto all = this->fs().glob("**");
  ASSERT_TRUE(all.ok());
  for (auto& m : *all) EXPECT_EQ(m.path.find("secret"), std::string::npos) << m.path;
  auto hits = this->fs().grep("SECRET");
  ASSERT_TRUE(hits.ok());
  EXPECT_TRUE(hits->empty());
  auto listing = this->fs().list();
  ASSERT_TRUE(listing.ok());
  for (auto& e : *listing) {
    if (e.name == "link_dir") EXPECT_FALSE(e.is_directory);  // a link, not followed
  }
  // Deleting or moving a link affects the link only.
  ASSERT_TRUE(this->fs().remove("link_dir", true).ok());
  ASSERT_TRUE(this->fs().move("link_file", "moved_link").ok());
  EXPECT_TRUE(stdfs::is_symlink(this->root_ / "moved_link"));
  // Copying a tree that contains links skips them.
  ASSERT_TRUE(this->fs().copy("real", "real_copy").ok());
  EXPECT_FALSE(stdfs::exists(this->root_ / "real_copy" / "deep_link"));
}

TYPED_TEST(Escape, SymlinkSwappedDuringOperations) {
  // One thread flips "sub" between a real directory and a link to outside and
  // "t.txt" between a file and a link to the secret; others write and read.
  this->put("sub/f.txt", "inside");
  std::atomic<bool> stop{false};
  std::thread flipper([&] {
    std::error_code ec;
    for (int i = 0; i < 400 && !stop; ++i) {
      stdfs::remove_all(this->root_ / "sub", ec);
      stdfs::create_directory_symlink(this->outside_, this->root_ / "sub", ec);
      stdfs::remove(this->root_ / "t.txt", ec);
      stdfs::create_symlink(this->outside_ / "secret.txt", this->root_ / "t.txt", ec);
      std::this_thread::yield();
      stdfs::remove(this->root_ / "sub", ec);
      stdfs::create_directory(this->root_ / "sub", ec);
      stdfs::remove(this->root_ / "t.txt", ec);
    }
  });
  int leaks = 0;
  for (int i = 0; i < 400; ++i) {
    this->fs().write("sub/f.txt", "PWNED").status().ignore_error();
    this->fs().write("sub/secret.txt", "PWNED").status().ignore_error();
    this->fs().write("t.txt", "PWNED").status().ignore_error();
    this->fs().write("t.txt", "PWNED", WriteMode::kAppend).status().ignore_error();
    auto r = this->fs().read("sub/secret.txt");
    if (r.ok() && r->content.find("SECRET") != std::string::npos) ++leaks;
    auto t = this->fs().read("t.txt");
    if (t.ok() && t->content.find("SECRET") != std::string::npos) ++leaks;
    this->fs().grep("SECRET").status().ignore_error();
  }
  stop = true;
  flipper.join();
  EXPECT_EQ(leaks, 0);
  std::error_code ec;
  stdfs::remove(this->root_ / "sub", ec);  // may be a link; leave outside alone
}

TYPED_TEST(Escape, HardLinks) {
  std::error_code ec;
  stdfs::create_hard_link(this->outside_ / "secret.txt", this->root_ / "hl", ec);
  if (ec) GTEST_SKIP() << "hard links across these temp dirs are impossible: " << ec.message();
  this->before_ = snapshot_tree(this->outside_);  // nlink changed nothing visible
  EXPECT_EQ(this->fs().read("hl").status().code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(this->fs().write("hl", "x", WriteMode::kAppend).status().code(),
            StatusCode::kPermissionDenied);
  EXPECT_EQ(this->fs().copy("hl", "c").code(), StatusCode::kPermissionDenied);
  auto hits = this->fs().grep("SECRET");
  ASSERT_TRUE(hits.ok());
  EXPECT_TRUE(hits->empty());
  // Overwriting replaces the link with a new file; the outside file keeps its bytes.
  ASSERT_TRUE(this->fs().write("hl", "mine").ok());
  EXPECT_EQ(this->get("hl"), "mine");
}

TYPED_TEST(Escape, NulBytesAndOverlongPaths) {
  this->put("victim.txt", "v");
  std::string deep;
  for (int i = 0; i < 17; ++i) deep += "d/";
  for (const std::string& p :
       std::vector<std::string>{std::string("a\0/../../etc/passwd", 19), std::string("\0", 1),
                                std::string("victim.txt\0.png", 15), std::string(81, 'x'),
                                deep + "x", std::string(5000, 'a'),
                                std::string("bad\xFF"
                                            "utf8")}) {
    this->expect_all_refused(p);
  }
}

TYPED_TEST(Escape, GitDirectoryAndSnapshotStore) {
  this->put("victim.txt", "v");
  auto s = this->fs().snapshot();
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_TRUE(s->git_dir.has_value());
  std::string store = *s->git_dir;
  EXPECT_FALSE(stdfs::path(store).string().rfind(this->root_.string() + "/", 0) == 0);
  this->expect_all_refused(store + "/HEAD");
  this->expect_all_refused(store);
  for (const std::string& p : std::vector<std::string>{".git/config", ".git/hooks/pre-commit",
                                                       ".GIT/x", "a/.git/config"}) {
    EXPECT_EQ(this->fs().write(p, "x").status().code(), StatusCode::kPermissionDenied) << p;
    EXPECT_EQ(this->fs().mkdir(p).code(), StatusCode::kPermissionDenied) << p;
  }
  EXPECT_EQ(this->fs().move("victim.txt", ".git/v").code(), StatusCode::kPermissionDenied);
  // Whatever the workspace holds, a restore never writes into the store.
  stdfs::create_directory_symlink(store, this->root_ / "store_link");
  ASSERT_TRUE(this->fs().restore(*s).ok());
  EXPECT_FALSE(stdfs::exists(this->root_ / "store_link"));
  EXPECT_TRUE(stdfs::exists(store + "/HEAD"));
}

TYPED_TEST(Escape, RestoreRemovesPlantedSymlinksWithoutFollowing) {
  this->put("dir/f.txt", "v1");
  auto s = this->fs().snapshot();
  ASSERT_TRUE(s.ok());
  stdfs::remove_all(this->root_ / "dir");
  stdfs::create_directory_symlink(this->outside_, this->root_ / "dir");
  ASSERT_TRUE(this->fs().restore(*s).ok());
  EXPECT_FALSE(stdfs::is_symlink(this->root_ / "dir"));
  EXPECT_EQ(this->get("dir/f.txt"), "v1");
}

}  // namespace
}  // namespace weft::fs::testing
