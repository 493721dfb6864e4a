// A fault-injecting SQLite VFS for power-cut tests. It wraps the default VFS
// and remembers, per file, every write since that file's last xSync (with
// the bytes it overwrote). After `fail_after` write/sync/truncate calls the
// "device dies": that call and every later one fails with an I/O error and
// changes nothing. power_cut() then undoes the unsynced writes on disk (all of
// them, or a random subset for a torn write), as a power failure would lose
// them, and forgets the state so the files can be opened normally.
//
// Thread safety: one global instance guarded by a mutex; tests use it from
// one thread.
#ifndef WEFT_TESTS_STORE_FAULT_VFS_UTIL_H_
#define WEFT_TESTS_STORE_FAULT_VFS_UTIL_H_

#include <cstdint>
#include <string>

namespace weft::store::testing {

inline constexpr const char* kFaultVfsName = "weft_fault";

// Registers the VFS once (not as the default).
void register_fault_vfs();
// Arms the fault: the `n`-th write/sync/truncate from now fails, and all after
// it. n == 0 disarms.
void fault_vfs_fail_after(int64_t n);
bool fault_vfs_dead();
// Undoes unsynced writes (a random subset kept when `torn`, chosen by
// `seed`) and resets the VFS to healthy.
void fault_vfs_power_cut(bool torn, uint64_t seed);

}  // namespace weft::store::testing

#endif  // WEFT_TESTS_STORE_FAULT_VFS_UTIL_H_
