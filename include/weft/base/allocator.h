// Process-wide allocator settings for weft's own executables.
//
// Thread safety: call once at the start of main(), before other threads run.
#ifndef WEFT_BASE_ALLOCATOR_H_
#define WEFT_BASE_ALLOCATOR_H_

namespace weft {

// Asks the C allocator to keep freed memory for reuse instead of returning it
// to the kernel at once. With glibc's defaults, a block over 128 KiB (a
// document's chunk arrays, an op log's vector) is mapped fresh and unmapped on
// free, and a freed heap top is trimmed, so a process that loads or merges
// documents one after another pays the page faults again every time: twice
// the merge time of a two-author trace in a fresh process. Keeps up to 32 MiB
// free for reuse. Meant for executables (the CLI, the server, benchmarks),
// never called by the library itself. A no-op where the allocator has no
// such settings (non-glibc).
void keep_freed_memory_for_reuse();

}  // namespace weft

#endif  // WEFT_BASE_ALLOCATOR_H_
