// The snapshot stat walk (src/fs/git_scan.*): it matches the tree against
// the index in path order and trusts a file's stat from 50 ms after its
// change on local filesystems. These tests check that nothing is missed:
// names whose git order differs from plain byte order of the names, files
// replaced by directories and back, deletions anywhere in the order,
// same-size in-place edits right after a snapshot, mode changes, symlinks,
// and (RapidCheck) random edit sequences whose every snapshot must restore
// to exactly the tree it was taken of.
#include <fcntl.h>
#include <git2.h>
#include <gtest/gtest.h>
#include <linux/magic.h>
#include <rapidcheck/gtest.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "backends.h"
#include "fs/git_pack.h"
#include "fs/git_scan.h"

namespace weft::fs::testing {
namespace {

namespace stdfs = std::filesystem;
using internal::RacyRule;

// A file or symlink as a snapshot must capture it.
struct Leaf {
  bool link = false;
  bool exec = false;
  std::string data;  // content, or the link's target
  bool operator==(const Leaf&) const = default;
};
using Tree = std::map<std::string, Leaf>;

void PrintTo(const Leaf& l, std::ostream* os) {
  *os << (l.link ? "link->" : l.exec ? "exec:" : "file:") << l.data;
}

// Every file and symlink under root (not following links; .git skipped).
Tree read_tree(const stdfs::path& root) {
  Tree t;
  for (auto it = stdfs::recursive_directory_iterator(root); it != stdfs::end(it); ++it) {
    const auto& e = *it;
    std::string rel = e.path().lexically_relative(root).string();
    auto type = e.symlink_status().type();  // never follow links (they may loop)
    if (type == stdfs::file_type::directory) {
      if (e.path().filename() == ".git") it.disable_recursion_pending();
      continue;
    }
    Leaf l;
    if (type == stdfs::file_type::symlink) {
      l.link = true;
      l.data = stdfs::read_symlink(e.path()).string();
    } else {
      std::ifstream in(e.path(), std::ios::binary);
      l.data.assign(std::istreambuf_iterator<char>(in), {});
      l.exec = (e.symlink_status().permissions() & stdfs::perms::owner_exec) != stdfs::perms::none;
    }
    t[rel] = l;
  }
  return t;
}

class SnapshotWalk : public ::testing::Test {
 protected:
  weft::testing::TempDir root_, state_;
  std::unique_ptr<Filesystem> open() {
    HostOptions o;
    o.git_dir = (state_.path() / "store.git").string();
    auto fs = make_host_filesystem(root_.path().string(), o);
    EXPECT_TRUE(fs.ok()) << fs.status();
    return fs.ok() ? std::move(*fs) : nullptr;
  }
  stdfs::path at(const std::string& rel) const { return root_.path() / rel; }
  // Writes in place (same inode when the file exists), creating parents.
  void put(const std::string& rel, const std::string& data) {
    stdfs::create_directories(at(rel).parent_path());
    std::ofstream(at(rel), std::ios::binary | std::ios::trunc) << data;
  }
};

timespec ts(int64_t sec, long nsec) { return timespec{sec, nsec}; }

TEST(RacyRuleTest, FineFilesystemsTrustTimesOlderThanTheMargin) {
  RacyRule r;
  r.fine = true;
  int64_t now = int64_t{1'800'000'000} * 1'000'000'000 + 500'000'000;  // x.5 s
  r.fine_cutoff_ns = now - 50'000'000;
  r.coarse_after_sec = now / 1'000'000'000 - 1;
  EXPECT_TRUE(r.trusted(ts(1'800'000'000, 400'000'000), ts(1'800'000'000, 400'000'001)));
  // Within the margin, or in the future (a clock step): re-hashed next time.
  EXPECT_FALSE(r.trusted(ts(1'800'000'000, 460'000'000), ts(1'800'000'000, 400'000'000)));
  EXPECT_FALSE(r.trusted(ts(1'800'000'000, 400'000'000), ts(1'800'000'000, 460'000'000)));
  EXPECT_FALSE(r.trusted(ts(1'800'000'001, 1), ts(1'800'000'001, 1)));
  // tv_nsec 0: a filesystem with whole-second times; only times two seconds
  // back are safe then.
  EXPECT_FALSE(r.trusted(ts(1'800'000'000, 0), ts(1'800'000'000, 0)));
  EXPECT_FALSE(r.trusted(ts(1'799'999'999, 0), ts(1'799'999'999, 0)));
  EXPECT_TRUE(r.trusted(ts(1'799'999'998, 0), ts(1'799'999'998, 0)));
  EXPECT_FALSE(r.trusted(ts(1'799'999'998, 0), ts(1'800'000'000, 400'000'000)));
}

TEST(RacyRuleTest, OtherFilesystemsUseWholeSeconds) {
  RacyRule r;
  r.fine = false;
  int64_t now = int64_t{1'800'000'000} * 1'000'000'000 + 500'000'000;
  r.fine_cutoff_ns = now - 50'000'000;
  r.coarse_after_sec = now / 1'000'000'000 - 1;
  EXPECT_FALSE(r.trusted(ts(1'800'000'000, 100), ts(1'800'000'000, 100)));
  EXPECT_FALSE(r.trusted(ts(1'799'999'999, 100), ts(1'799'999'999, 100)));
  EXPECT_TRUE(r.trusted(ts(1'799'999'998, 100), ts(1'799'999'998, 100)));
}

TEST(RacyRuleTest, ForRootKnowsLocalFilesystems) {
  weft::testing::TempDir dir;
  int fd = ::open(dir.path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  struct statfs fs;
  ASSERT_EQ(::fstatfs(fd, &fs), 0);
  RacyRule r = RacyRule::for_root(fd, int64_t{1'800'000'000'123'456'789});
  ::close(fd);
  EXPECT_EQ(r.fine_cutoff_ns, int64_t{1'800'000'000'073'456'789});
  EXPECT_EQ(r.coarse_after_sec, 1'799'999'999);
  if (fs.f_type == EXT4_SUPER_MAGIC || fs.f_type == TMPFS_MAGIC) EXPECT_TRUE(r.fine);
}

TEST_F(SnapshotWalk, NamesThatSortDifferentlyAsPathsAndTypeChanges) {
  auto fs = open();
  // Byte order of the names: "a" < "a-b" < "a.txt" < "a0"; as git paths a
  // directory "a" sorts as "a/", after "a.txt" and before "a0".
  put("a/x", "in dir a");
  put("a-b/y", "in dir a-b");
  put("a.txt", "file a.txt");
  put("a0", "file a0");
  put("ab/z", "z");
  put("\xC3\xA9t\xC3\xA9.txt", "utf-8 name");
  put("zz", "last");
  // Beyond the first 8 bytes (the walk sorts by an 8-byte key first).
  put("longname/in", "dir longname");
  put("longname.txt", "file");
  put("longname-x/in", "dir longname-x");
  put("longnamf", "file");
  Tree t1 = read_tree(root_.path());
  auto s1 = fs->snapshot();
  ASSERT_TRUE(s1.ok()) << s1.status();

  stdfs::remove_all(at("a"));
  put("a", "a is now a file");  // directory -> file
  stdfs::remove(at("a0"));
  put("a0/inner", "a0 is now a dir");  // file -> directory
  stdfs::remove_all(at("a-b"));        // a deleted directory in the middle
  stdfs::remove_all(at("longname"));
  put("longname", "now a file");
  put("zz", "LAST");  // same size, in place, right after the snapshot
  stdfs::permissions(at("a.txt"), stdfs::perms::owner_exec, stdfs::perm_options::add);
  stdfs::create_symlink("a.txt", at("ab/link"));
  Tree t2 = read_tree(root_.path());
  auto s2 = fs->snapshot();
  ASSERT_TRUE(s2.ok()) << s2.status();

  stdfs::remove(at("ab/link"));
  stdfs::create_symlink("zz", at("ab/link"));  // same target length, new target
  stdfs::remove(at("\xC3\xA9t\xC3\xA9.txt"));  // the entry sorting last goes
  Tree t3 = read_tree(root_.path());
  auto s3 = fs->snapshot();
  ASSERT_TRUE(s3.ok()) << s3.status();

  ASSERT_TRUE(fs->restore(*s1).ok());
  EXPECT_EQ(read_tree(root_.path()), t1);
  ASSERT_TRUE(fs->restore(*s2).ok());
  EXPECT_EQ(read_tree(root_.path()), t2);
  ASSERT_TRUE(fs->restore(*s3).ok());
  EXPECT_EQ(read_tree(root_.path()), t3);
  // A new instance (the index read back from the store) sees the same tree.
  fs.reset();
  fs = open();
  put("a", "changed again");
  Tree t4 = read_tree(root_.path());
  auto s4 = fs->snapshot();
  ASSERT_TRUE(s4.ok()) << s4.status();
  ASSERT_TRUE(fs->restore(*s1).ok());
  ASSERT_TRUE(fs->restore(*s4).ok());
  EXPECT_EQ(read_tree(root_.path()), t4);
}

TEST_F(SnapshotWalk, RestoreAFileWhereADirectoryOfLinksStands) {
  auto fs = open();
  put("a", "a file");
  auto s1 = fs->snapshot();
  ASSERT_TRUE(s1.ok()) << s1.status();
  stdfs::remove(at("a"));
  stdfs::create_directories(at("a"));
  stdfs::create_symlink("../elsewhere", at("a/link"));
  auto s2 = fs->snapshot();
  ASSERT_TRUE(s2.ok()) << s2.status();
  // Restore removes the links first, leaving "a" an empty directory.
  Status st = fs->restore(*s1);
  ASSERT_TRUE(st.ok()) << st;
  EXPECT_EQ(read_tree(root_.path()), (Tree{{"a", Leaf{false, false, "a file"}}}));
  st = fs->restore(*s2);
  ASSERT_TRUE(st.ok()) << st;
  EXPECT_EQ(read_tree(root_.path()), (Tree{{"a/link", Leaf{true, false, "../elsewhere"}}}));
}

// Everything under one top-level directory: the two walk threads share its
// subdirectories as they meet them (and TSan checks they do so safely).
TEST_F(SnapshotWalk, OneBigDirectoryIsWalkedCompletely) {
  auto fs = open();
  for (int d = 0; d < 40; ++d) {
    for (int f = 0; f < 8; ++f) {
      put("src/m" + std::to_string(d) + "/sub/f" + std::to_string(f), std::to_string(d * f));
    }
  }
  Tree t1 = read_tree(root_.path());
  auto s1 = fs->snapshot();
  ASSERT_TRUE(s1.ok()) << s1.status();
  put("src/m7/sub/f3", "edited");
  stdfs::remove_all(at("src/m20"));
  put("src/m39/new", "new");
  stdfs::remove(at("src/m0/sub/f0"));
  Tree t2 = read_tree(root_.path());
  auto s2 = fs->snapshot();
  ASSERT_TRUE(s2.ok()) << s2.status();
  ASSERT_TRUE(fs->restore(*s1).ok());
  EXPECT_EQ(read_tree(root_.path()), t1);
  ASSERT_TRUE(fs->restore(*s2).ok());
  EXPECT_EQ(read_tree(root_.path()), t2);
}

// The Scanner alone, on a bare repository: what it re-hashes and removes.
TEST(ScannerTest, OnlyChangedFilesAreHashedAndVanishedOnesRemoved) {
  git_libgit2_init();
  weft::testing::TempDir root, store;
  auto write = [&](const std::string& rel, const std::string& data) {
    stdfs::create_directories((root.path() / rel).parent_path());
    std::ofstream(root.path() / rel, std::ios::binary | std::ios::trunc) << data;
  };
  for (const char* f : {"a/1", "a/2", "a/3", "b/4", "top"}) write(f, f);
  std::string git_dir = (store.path() / "s.git").string();
  git_repository* repo = nullptr;
  ASSERT_EQ(git_repository_init(&repo, git_dir.c_str(), 1), 0);
  git_odb* odb = nullptr;
  ASSERT_EQ(git_repository_odb(&odb, repo), 0);
  auto pack = internal::attach_pack_writer(odb, git_dir + "/objects");
  ASSERT_TRUE(pack.ok()) << pack.status();
  git_index* index = nullptr;
  ASSERT_EQ(git_repository_index(&index, repo), 0);
  int fd = ::open(root.path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  timespec now;
  ::clock_gettime(CLOCK_REALTIME, &now);
  int64_t now_ns = int64_t{now.tv_sec} * 1'000'000'000 + now.tv_nsec;
  // As if an hour had passed since every change: all stats are trusted.
  RacyRule later = RacyRule::for_root(fd, now_ns + int64_t{3600} * 1'000'000'000);
  auto scan = [&](const RacyRule& rule) -> size_t {
    EXPECT_TRUE(internal::pack_begin(*pack).ok());
    internal::Scanner s(*pack, index, rule);
    Status st = s.scan(fd);
    EXPECT_TRUE(st.ok()) << st;
    bool removed_packs = false;
    EXPECT_TRUE(internal::pack_finish(*pack, odb, &removed_packs).ok());
    return s.updated();
  };
  EXPECT_EQ(scan(later), 5u);
  EXPECT_EQ(scan(later), 0u);  // nothing re-hashed
  write("a/2", "longer than before");
  stdfs::remove(root.path() / "b/4");
  write("c/5", "new");
  EXPECT_EQ(scan(later), 3u);
  EXPECT_EQ(git_index_entrycount(index), 5u);
  EXPECT_EQ(git_index_get_bypath(index, "b/4", 0), nullptr);
  EXPECT_NE(git_index_get_bypath(index, "c/5", 0), nullptr);
  // Changed within the margin before the walk: stored with zero times, so
  // re-hashed by the next walk too, until its times are old enough.
  RacyRule soon = RacyRule::for_root(fd, now_ns);
  write("a/3", "a/X");  // same size
  EXPECT_EQ(scan(soon), 1u);
  EXPECT_EQ(scan(soon), 1u);
  EXPECT_EQ(scan(later), 1u);
  EXPECT_EQ(scan(later), 0u);
  ::close(fd);
  git_index_free(index);
  git_odb_free(odb);
  git_repository_free(repo);
  git_libgit2_shutdown();
}

// Random edit sequences over a small set of names chosen to collide in
// sort order; each snapshot must restore to exactly the tree it was taken of.
RC_GTEST_PROP(SnapshotWalkProps, EverySnapshotRestoresItsTree, ()) {
  // Names of 8 bytes and more share the walk's 8-byte sort keys.
  static const char* kNames[] = {"a",        "a-",       "a.b",       "a0",        "b",
                                 "\xC3\xA9", "longname", "longname-", "longname.b"};
  auto name = rc::gen::elementOf(std::vector<std::string>(std::begin(kNames), std::end(kNames)));
  auto path = rc::gen::mapcat(rc::gen::inRange(1, 4), [name](int depth) {
    return rc::gen::map(rc::gen::container<std::vector<std::string>>(depth, name),
                        [](const std::vector<std::string>& segs) {
                          std::string p;
                          for (const auto& s : segs) p += (p.empty() ? "" : "/") + s;
                          return p;
                        });
  });
  weft::testing::TempDir root, state;
  HostOptions o;
  o.git_dir = (state.path() / "store.git").string();
  auto fs = make_host_filesystem(root.path().string(), o);
  RC_ASSERT(fs.ok());
  std::vector<std::pair<FilesystemSnapshot, Tree>> taken;
  int steps = *rc::gen::inRange(4, 24);
  for (int i = 0; i < steps; ++i) {
    std::string p = *path;
    stdfs::path full = root.path() / p;
    int op = *rc::gen::inRange(0, 6);
    // Make p's parents directories and p itself free for a file or link.
    auto clear_for_leaf = [&] {
      stdfs::path q = root.path();
      for (const auto& seg : stdfs::path(p).parent_path()) {  // top down: parents are dirs
        q /= seg;
        auto type = stdfs::symlink_status(q).type();
        if (type != stdfs::file_type::directory && type != stdfs::file_type::not_found) {
          stdfs::remove(q);
        }
      }
      if (stdfs::is_directory(stdfs::symlink_status(full))) stdfs::remove_all(full);
      stdfs::create_directories(full.parent_path());
    };
    if (op == 5) {
      auto s = (*fs)->snapshot();
      RC_ASSERT(s.ok());
      taken.emplace_back(*s, read_tree(root.path()));
      continue;
    }
    // An edit through a path the sequence made impossible (a parent that is
    // a looping link, say) is skipped.
    try {
      switch (op) {
        case 0: {  // write (in place when it exists)
          clear_for_leaf();
          if (stdfs::is_symlink(full)) stdfs::remove(full);
          std::ofstream(full, std::ios::binary | std::ios::trunc)
              << *rc::gen::arbitrary<std::string>();
          break;
        }
        case 1:  // same-size in-place edit
          if (stdfs::is_regular_file(stdfs::symlink_status(full))) {
            auto size = stdfs::file_size(full);
            std::ofstream(full, std::ios::binary | std::ios::trunc)
                << std::string(size, static_cast<char>('A' + i % 26));
          }
          break;
        case 2: {
          std::error_code ec;  // a parent may be a file: then there is nothing to remove
          stdfs::remove_all(full, ec);
          break;
        }
        case 3:  // toggle the exec bit
          if (stdfs::is_regular_file(stdfs::symlink_status(full))) {
            stdfs::permissions(full, stdfs::perms::owner_exec,
                               stdfs::perm_options::replace | stdfs::perm_options::nofollow);
            stdfs::permissions(full, stdfs::perms::owner_read | stdfs::perms::owner_write |
                                         (i % 2 ? stdfs::perms::owner_exec : stdfs::perms::none));
          }
          break;
        case 4: {  // symlink (replacing whatever is there)
          clear_for_leaf();
          if (stdfs::exists(stdfs::symlink_status(full))) stdfs::remove(full);
          stdfs::create_symlink(*name, full);
          break;
        }
      }
    } catch (const stdfs::filesystem_error&) {
    }
  }
  auto s = (*fs)->snapshot();
  RC_ASSERT(s.ok());
  taken.emplace_back(*s, read_tree(root.path()));
  for (int k = 0; k < 3; ++k) {
    const auto& [snap, tree] = taken[*rc::gen::inRange<size_t>(0, taken.size())];
    Status restored = (*fs)->restore(snap);
    if (!restored.ok()) RC_LOG() << restored.to_string() << "\n";
    RC_ASSERT(restored.ok());
    RC_ASSERT(read_tree(root.path()) == tree);
  }
}

}  // namespace
}  // namespace weft::fs::testing
