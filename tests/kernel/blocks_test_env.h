// A kernel over a fresh temporary root for the block tests (blocks_*_test.cc):
// host filesystem with atomic renames, no watcher, state beside the root.
// One test's thread only.
#ifndef WEFT_TESTS_KERNEL_BLOCKS_TEST_ENV_H_
#define WEFT_TESTS_KERNEL_BLOCKS_TEST_ENV_H_

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "support/test_support.h"
#include "weft/kernel/kernel.h"

namespace weft::kernel::blocks_test {

struct Env {
  weft::testing::TempDir dir;
  std::string root() const { return (dir.path() / "root").string(); }
  std::string state() const { return (dir.path() / "state").string(); }
  Env() { std::filesystem::create_directories(root()); }
  // Writes a file under the root (its directories made).
  void write(const std::string& rel, const std::string& body) const {
    auto p = std::filesystem::path(root()) / rel;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << body;
  }
  // A kernel on the root (null, with a test failure, when it cannot open).
  std::unique_ptr<Kernel> open() const {
    fs::HostOptions host;
    host.durability = fs::WriteDurability::kAtomicRename;
    auto filesystem = fs::make_host_filesystem(root(), host);
    EXPECT_TRUE(filesystem.ok());
    if (!filesystem.ok()) return nullptr;
    KernelOptions options;
    options.state_dir = state();
    options.watch = false;
    auto k = Kernel::open(std::shared_ptr<fs::Filesystem>(std::move(*filesystem)), options);
    EXPECT_TRUE(k.ok()) << k.status();
    return k.ok() ? std::move(*k) : nullptr;
  }
};

}  // namespace weft::kernel::blocks_test

#endif  // WEFT_TESTS_KERNEL_BLOCKS_TEST_ENV_H_
