// Helpers shared by every test suite: a self-deleting temporary directory and
// the location of ../shared (test data that a user's clone may not have).
#ifndef WEFT_TESTS_SUPPORT_TEST_SUPPORT_H_
#define WEFT_TESTS_SUPPORT_TEST_SUPPORT_H_

#include <gtest/gtest.h>

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace weft::testing {

// True in AddressSanitizer and ThreadSanitizer builds, where a test may check
// less often what the release build checks at every step.
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define WEFT_TESTING_SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define WEFT_TESTING_SANITIZED 1
#endif
#ifdef WEFT_TESTING_SANITIZED
inline constexpr bool kSanitizerBuild = true;
#else
inline constexpr bool kSanitizerBuild = false;
#endif

// The shared data directory: WEFT_SHARED_DIR when set (ctest sets it; an
// existing directory or nothing), else ../shared beside the source checkout;
// nullopt when it is absent.
std::optional<std::filesystem::path> shared_dir();

// Reads a whole file; fails the test (and returns "") when it cannot.
std::string read_file(const std::filesystem::path& path);

// Writes `text` to `path` (creating its parent directories); fails the test
// when it cannot.
void write_file(const std::filesystem::path& path, std::string_view text);

// The file descriptors this process holds open now.
size_t open_fd_count();

// `arg` single-quoted for a POSIX shell.
std::string shell_quote(const std::string& arg);

// A fresh directory under the system temp dir, removed with its contents on
// destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace weft::testing

// Skips the current test with a clear message when ../shared is absent.
#define WEFT_REQUIRE_SHARED_DIR(var)                                                   \
  auto var##_opt = ::weft::testing::shared_dir();                                       \
  if (!var##_opt) GTEST_SKIP() << "../shared is absent (a user's clone): skipping test " \
                                  "that needs the shared test data";                   \
  const std::filesystem::path var = *var##_opt

#endif  // WEFT_TESTS_SUPPORT_TEST_SUPPORT_H_
