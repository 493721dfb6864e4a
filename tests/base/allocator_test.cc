#include "weft/base/allocator.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace weft {
namespace {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kSanitizerAllocator = true;  // (it replaces malloc and mallopt)
#else
constexpr bool kSanitizerAllocator = false;
#endif

TEST(Allocator, LargeBlocksComeFromTheHeapAfterKeepFreedMemoryForReuse) {
#if !defined(__GLIBC__)
  GTEST_SKIP() << "allocator settings are glibc's";
#else
  if (kSanitizerAllocator) GTEST_SKIP() << "a sanitizer's allocator ignores mallopt";
  keep_freed_memory_for_reuse();
  const size_t mapped_before = mallinfo2().hblks;
  // 1 MiB: glibc's default would map it on its own (the threshold starts at 128 KiB).
  void* block = std::malloc(1 << 20);
  ASSERT_NE(block, nullptr);
  std::memset(block, 1, 1 << 20);
  EXPECT_EQ(mallinfo2().hblks, mapped_before);
  std::free(block);
#endif
}

}  // namespace
}  // namespace weft
