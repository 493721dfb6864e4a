// The backends the protocol compliance suite runs against. Each type makes a
// fresh, empty Filesystem (and owns whatever temporary directories it needs).
#ifndef WEFT_TESTS_FS_BACKENDS_H_
#define WEFT_TESTS_FS_BACKENDS_H_

#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <optional>

#include "support/test_support.h"
#include "weft/fs/filesystem.h"
#include "weft/fs/sandbox.h"

namespace weft::fs::testing {

struct InMemoryBackend {
  static constexpr bool kOnDisk = false;
  static constexpr const char* kName = "InMemory";
  std::unique_ptr<Filesystem> make(FsLimits limits = {}, bool read_only = false) {
    return make_in_memory_filesystem({limits, read_only});
  }
  std::filesystem::path root() const { return {}; }
};

struct HostBackend {
  static constexpr bool kOnDisk = true;
  static constexpr const char* kName = "Host";
  weft::testing::TempDir root_dir;
  weft::testing::TempDir state_dir;
  std::unique_ptr<Filesystem> make(FsLimits limits = {}, bool read_only = false) {
    HostOptions o;
    o.limits = limits;
    o.read_only = read_only;
    o.git_dir = (state_dir.path() / "snapshots.git").string();
    auto fs = make_host_filesystem(root_dir.path().string(), o);
    EXPECT_TRUE(fs.ok()) << fs.status();
    return fs.ok() ? std::move(*fs) : nullptr;
  }
  std::filesystem::path root() const { return root_dir.path(); }
};

// Host with openat2 disabled, so the O_NOFOLLOW walk is exercised.
struct HostFallbackBackend : HostBackend {
  static constexpr const char* kName = "HostFallback";
  HostFallbackBackend();
  ~HostFallbackBackend();
};

struct SandboxBackend {
  static constexpr bool kOnDisk = true;
  static constexpr const char* kName = "Sandbox";
  weft::testing::TempDir root_dir;
  weft::testing::TempDir state_dir;
  std::unique_ptr<Filesystem> make(FsLimits limits = {}, bool read_only = false) {
    SandboxOptions o;
    o.overlay_dir = root_dir.path().string();
    o.keep_overlay = true;
    o.host.limits = limits;
    o.host.read_only = read_only;
    o.host.git_dir = (state_dir.path() / "snapshots.git").string();
    auto fs = make_sandbox_workspace(o);
    EXPECT_TRUE(fs.ok()) << fs.status();
    return fs.ok() ? std::unique_ptr<Filesystem>(std::move(*fs)) : nullptr;
  }
  std::filesystem::path root() const { return root_dir.path(); }
};

using AllBackends =
    ::testing::Types<InMemoryBackend, HostBackend, HostFallbackBackend, SandboxBackend>;
using DiskBackends = ::testing::Types<HostBackend, HostFallbackBackend, SandboxBackend>;

struct BackendNames {
  template <typename T>
  static std::string GetName(int) {
    return T::kName;
  }
};

template <typename B>
class FsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fs_ = backend_.make();
    ASSERT_NE(fs_, nullptr);
  }
  Filesystem& fs() { return *fs_; }
  // Writes through the API and asserts success.
  void put(std::string_view path, std::string_view content) {
    auto r = fs_->write_bytes(path, content);
    ASSERT_TRUE(r.ok()) << path << ": " << r.status();
  }
  std::string get(std::string_view path) {
    auto r = fs_->read_bytes(path);
    EXPECT_TRUE(r.ok()) << path << ": " << r.status();
    return r.ok() ? r->content : "";
  }

  B backend_;
  std::unique_ptr<Filesystem> fs_;
};

}  // namespace weft::fs::testing

#endif  // WEFT_TESTS_FS_BACKENDS_H_
