// Host write durability modes (HostOptions::durability) and grep
// cancellation (GrepOptions::cancel). Both durability modes must replace files
// atomically and keep the file's mode and bytes; they differ only in fsync,
// which a test cannot observe short of a power cut.
#include <gtest/gtest.h>
#include <pthread.h>
#include <sys/stat.h>
#include <time.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "support/test_support.h"
#include "weft/fs/filesystem.h"

namespace weft::fs {
namespace {

namespace stdfs = std::filesystem;
using Clock = std::chrono::steady_clock;

class HostDurability : public ::testing::TestWithParam<WriteDurability> {
 protected:
  std::unique_ptr<Filesystem> make() {
    HostOptions o;
    o.durability = GetParam();
    o.limits.max_write_chars = 1 << 20;
    o.git_dir = (state_.path() / "snapshots.git").string();
    auto fs = make_host_filesystem(root_.path().string(), o);
    EXPECT_TRUE(fs.ok()) << fs.status();
    return fs.ok() ? std::move(*fs) : nullptr;
  }
  mode_t mode_of(const std::string& rel) {
    struct stat st;
    EXPECT_EQ(::stat((root_.path() / rel).c_str(), &st), 0);
    return st.st_mode & 07777;
  }
  std::vector<std::string> names() {
    std::vector<std::string> out;
    for (const auto& e : stdfs::directory_iterator(root_.path())) {
      out.push_back(e.path().filename().string());
    }
    std::sort(out.begin(), out.end());
    return out;
  }

  weft::testing::TempDir root_;
  weft::testing::TempDir state_;
};

TEST_P(HostDurability, WritesKeepModeAndEveryByte) {
  auto fs = make();
  ASSERT_NE(fs, nullptr);
  constexpr char kBytes[] = "head\r\nNUL\0byte\xff\xfe\r\ntail";
  const std::string bytes(kBytes, sizeof kBytes - 1);  // the NUL inside included
  ASSERT_TRUE(fs->write_bytes("f.bin", bytes).ok());
  EXPECT_EQ(weft::testing::read_file(root_.path() / "f.bin"), bytes);
  ASSERT_EQ(::chmod((root_.path() / "f.bin").c_str(), 0751), 0);
  const std::string replaced = bytes + "\r\nmore";
  ASSERT_TRUE(fs->write_bytes("f.bin", replaced).ok());
  EXPECT_EQ(weft::testing::read_file(root_.path() / "f.bin"), replaced);
  EXPECT_EQ(mode_of("f.bin"), 0751u);
  ASSERT_TRUE(fs->write_bytes("f.bin", "!", WriteMode::kAppend).ok());
  EXPECT_EQ(weft::testing::read_file(root_.path() / "f.bin"), replaced + "!");
  EXPECT_EQ(mode_of("f.bin"), 0751u);
  // kCreate never replaces; the old bytes stay.
  auto again = fs->write_bytes("f.bin", "x", WriteMode::kCreate);
  EXPECT_EQ(again.status().code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(weft::testing::read_file(root_.path() / "f.bin"), replaced + "!");
  // Whole-file reads hand over the buffer; paging facts stay right.
  auto whole = fs->read_bytes("f.bin");
  ASSERT_TRUE(whole.ok()) << whole.status();
  EXPECT_EQ(whole->content, replaced + "!");
  EXPECT_EQ(whole->size_bytes, static_cast<int64_t>(replaced.size() + 1));
  EXPECT_EQ(whole->limit, whole->size_bytes);
  EXPECT_EQ(whole->offset, 0);
  EXPECT_FALSE(whole->truncated);
  auto part = fs->read_bytes("f.bin", 2, 3);
  ASSERT_TRUE(part.ok());
  EXPECT_EQ(part->content, "ad\r");
  EXPECT_TRUE(part->truncated);
  // No temporary file is left behind.
  EXPECT_EQ(names(), std::vector<std::string>{"f.bin"});
}

TEST_P(HostDurability, ReadersNeverSeeATornFile) {
  auto fs = make();
  ASSERT_NE(fs, nullptr);
  const std::string a(256 << 10, 'a');
  const std::string b(300 << 10, 'b');
  ASSERT_TRUE(fs->write_bytes("big.txt", a).ok());
  std::atomic<bool> done{false};
  std::atomic<int> torn{0}, failed{0};
  std::thread reader([&] {
    while (!done.load()) {
      auto r = fs->read_bytes("big.txt");
      if (!r.ok()) {
        ++failed;
      } else if (r->content != a && r->content != b) {
        ++torn;
      }
    }
  });
  for (int i = 0; i < 60; ++i) {
    if (!fs->write_bytes("big.txt", i % 2 ? a : b).ok()) ++failed;
  }
  done = true;
  reader.join();
  EXPECT_EQ(torn.load(), 0);
  EXPECT_EQ(failed.load(), 0);
  EXPECT_EQ(names(), std::vector<std::string>{"big.txt"});
}

INSTANTIATE_TEST_SUITE_P(Modes, HostDurability,
                         ::testing::Values(WriteDurability::kFsync, WriteDurability::kAtomicRename),
                         [](const auto& info) {
                           return info.param == WriteDurability::kFsync ? "Fsync" : "AtomicRename";
                         });

TEST(HostDurabilityDefault, LibraryDefaultIsFsync) {
  EXPECT_EQ(HostOptions{}.durability, WriteDurability::kFsync);
}

// A tree big enough that a full scan takes a while (files read, none matches).
void make_tree(const stdfs::path& root, int dirs, int files_per_dir) {
  std::string body;
  for (int l = 0; l < 40; ++l) body += "fn item_" + std::to_string(l) + "() { return 0; }\n";
  for (int d = 0; d < dirs; ++d) {
    stdfs::path sub = root / ("pkg" + std::to_string(d));
    stdfs::create_directories(sub);
    for (int f = 0; f < files_per_dir; ++f) {
      std::ofstream(sub / ("file" + std::to_string(f) + ".rs"), std::ios::binary) << body;
    }
  }
}

class GrepCancel : public ::testing::Test {
 protected:
  // One tree for the suite: writing 4,000 files is the slow part.
  static void SetUpTestSuite() {
    root_ = new weft::testing::TempDir();
    state_ = new weft::testing::TempDir();
    make_tree(root_->path(), 40, 100);
  }
  static void TearDownTestSuite() {
    delete root_;
    delete state_;
  }
  void SetUp() override {
    HostOptions o;
    o.git_dir = (state_->path() / "snapshots.git").string();
    auto fs = make_host_filesystem(root_->path().string(), o);
    ASSERT_TRUE(fs.ok()) << fs.status();
    fs_ = std::move(*fs);
  }
  static weft::testing::TempDir* root_;
  static weft::testing::TempDir* state_;
  std::unique_ptr<Filesystem> fs_;
};
weft::testing::TempDir* GrepCancel::root_ = nullptr;
weft::testing::TempDir* GrepCancel::state_ = nullptr;

TEST_F(GrepCancel, AnUnsetFlagChangesNothing) {
  std::atomic<bool> cancel{false};
  auto plain = fs_->grep("item_7\\(", ".", std::string("*.rs"), 50);
  auto hooked = fs_->grep("item_7\\(", ".", GrepOptions{std::string("*.rs"), 50, &cancel});
  ASSERT_TRUE(plain.ok()) << plain.status();
  ASSERT_TRUE(hooked.ok()) << hooked.status();
  ASSERT_EQ(hooked->size(), 50u);
  for (size_t i = 0; i < hooked->size(); ++i) {
    EXPECT_EQ((*hooked)[i].path, (*plain)[i].path);
    EXPECT_EQ((*hooked)[i].line_number, (*plain)[i].line_number);
  }
}

TEST_F(GrepCancel, ASetFlagStopsBeforeScanning) {
  std::atomic<bool> cancel{true};
  auto r = fs_->grep("NEVER_THERE", ".", GrepOptions{std::nullopt, std::nullopt, &cancel});
  EXPECT_EQ(r.status().code(), StatusCode::kCancelled);
  // The default (non-incremental) implementation honours it too.
  auto mem = make_in_memory_filesystem();
  ASSERT_TRUE(mem->write("a.txt", "x\n").ok());
  EXPECT_EQ(mem->grep("x", ".", GrepOptions{std::nullopt, std::nullopt, &cancel}).status().code(),
            StatusCode::kCancelled);
  cancel = false;
  auto found = mem->grep("x", ".", GrepOptions{std::nullopt, std::nullopt, &cancel});
  ASSERT_TRUE(found.ok());
  EXPECT_EQ(found->size(), 1u);
}

// CPU milliseconds used so far by the thread behind `clock`. Unlike wall time
// it does not grow while a loaded machine keeps the thread off a core.
double cpu_ms(clockid_t clock) {
  timespec ts{};
  ::clock_gettime(clock, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

// Cancelling mid-scan stops the scan: the CPU the scanning thread spends after
// the flag is set is a small fraction of a full scan (before the hook, the
// whole tree was scanned whatever the flag said). The flag is set at a
// fraction of a full scan's wall time; if the scan is over by then, the attempt
// is repeated with an earlier setting time.
TEST_F(GrepCancel, CancellingMidScanStopsTheScan) {
  clockid_t scanner;
  ASSERT_EQ(::pthread_getcpuclockid(::pthread_self(), &scanner), 0);
  auto start = Clock::now();
  double cpu_start = cpu_ms(scanner);
  auto full = fs_->grep("NEVER_THERE");
  const double full_cpu = cpu_ms(scanner) - cpu_start;
  const auto full_scan = Clock::now() - start;
  ASSERT_TRUE(full.ok()) << full.status();
  ASSERT_TRUE(full->empty());
  bool cancelled_mid_scan = false;
  for (int attempt = 1; attempt <= 10 && !cancelled_mid_scan; ++attempt) {
    std::atomic<bool> cancel{false};
    double cpu_at_cancel = 0;
    std::thread setter([&] {
      std::this_thread::sleep_for(full_scan / (1 << attempt));
      cpu_at_cancel = cpu_ms(scanner);
      cancel = true;
    });
    auto r = fs_->grep("NEVER_THERE", ".", GrepOptions{std::nullopt, std::nullopt, &cancel});
    double cpu_at_return = cpu_ms(scanner);
    setter.join();
    if (r.ok()) continue;  // the scan finished before the flag was set
    EXPECT_EQ(r.status().code(), StatusCode::kCancelled) << r.status();
    cancelled_mid_scan = true;
    EXPECT_LT(cpu_at_return - cpu_at_cancel, full_cpu / 4)
        << "CPU ms after the cancel vs a full scan's " << full_cpu;
  }
  EXPECT_TRUE(cancelled_mid_scan) << "every scan finished before its flag was set; full scan "
                                  << full_cpu << " CPU ms";
}

}  // namespace
}  // namespace weft::fs
