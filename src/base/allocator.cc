#include "weft/base/allocator.h"

#include <cstdlib>  // (defines __GLIBC__ where it applies)

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace weft {

void keep_freed_memory_for_reuse() {
#if defined(__GLIBC__)
  // 32 MiB: the largest mmap threshold glibc accepts on 64-bit targets.
  constexpr int kKeepBytes = 32 << 20;
  // Fixed values also turn off glibc's own threshold adjustment, so the
  // behaviour does not depend on what the process happened to free first.
  mallopt(M_MMAP_THRESHOLD, kKeepBytes);
  mallopt(M_TRIM_THRESHOLD, kKeepBytes);
#endif
}

}  // namespace weft
