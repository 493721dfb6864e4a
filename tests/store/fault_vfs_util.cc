#include "store/fault_vfs_util.h"

#include <fcntl.h>
#include <sqlite3.h>
#include <unistd.h>

#include <cstring>
#include <map>
#include <mutex>
#include <random>
#include <vector>

namespace weft::store::testing {
namespace {

struct UndoRec {
  int64_t offset = 0;
  std::string old_bytes;  // what the region held before the write
  int64_t old_size = 0;   // the file size before the write
};

struct FileLog {
  std::vector<UndoRec> undo;
};

struct Global {
  std::mutex mu;
  sqlite3_vfs* real = nullptr;
  sqlite3_vfs vfs{};
  int64_t budget = 0;  // 0: disarmed
  bool dead = false;
  std::map<std::string, FileLog> files;
};

Global& g() {
  static Global* instance = new Global();
  return *instance;
}

struct FaultFile {
  sqlite3_file base;
  std::string* path;  // null for temp files without a name
  sqlite3_file* real() { return reinterpret_cast<sqlite3_file*>(this + 1); }
};

// Counts one mutating call; returns false when the device is (now) dead.
bool spend() {
  Global& s = g();
  if (s.dead) return false;
  if (s.budget > 0 && --s.budget == 0) {
    s.dead = true;
    return false;
  }
  return true;
}

int64_t real_size(sqlite3_file* f) {
  sqlite3_int64 n = 0;
  f->pMethods->xFileSize(f, &n);
  return n;
}

int x_close(sqlite3_file* f) {
  auto* ff = reinterpret_cast<FaultFile*>(f);
  int rc = ff->real()->pMethods ? ff->real()->pMethods->xClose(ff->real()) : SQLITE_OK;
  delete ff->path;
  ff->path = nullptr;
  return rc;
}

int x_read(sqlite3_file* f, void* buf, int n, sqlite3_int64 off) {
  auto* ff = reinterpret_cast<FaultFile*>(f);
  return ff->real()->pMethods->xRead(ff->real(), buf, n, off);
}

int x_write(sqlite3_file* f, const void* buf, int n, sqlite3_int64 off) {
  auto* ff = reinterpret_cast<FaultFile*>(f);
  std::lock_guard lock(g().mu);
  if (!spend()) return SQLITE_IOERR_WRITE;
  if (ff->path) {
    UndoRec rec;
    rec.offset = off;
    rec.old_size = real_size(ff->real());
    int64_t have = std::max<int64_t>(0, std::min<int64_t>(n, rec.old_size - off));
    rec.old_bytes.resize(static_cast<size_t>(have));
    if (have > 0) ff->real()->pMethods->xRead(ff->real(), rec.old_bytes.data(), int(have), off);
    g().files[*ff->path].undo.push_back(std::move(rec));
  }
  return ff->real()->pMethods->xWrite(ff->real(), buf, n, off);
}

int x_truncate(sqlite3_file* f, sqlite3_int64 size) {
  auto* ff = reinterpret_cast<FaultFile*>(f);
  std::lock_guard lock(g().mu);
  if (!spend()) return SQLITE_IOERR_TRUNCATE;
  if (ff->path) {
    UndoRec rec;
    rec.offset = size;
    rec.old_size = real_size(ff->real());
    if (rec.old_size > size) {
      rec.old_bytes.resize(static_cast<size_t>(rec.old_size - size));
      ff->real()->pMethods->xRead(ff->real(), rec.old_bytes.data(), int(rec.old_bytes.size()),
                                  size);
    }
    g().files[*ff->path].undo.push_back(std::move(rec));
  }
  return ff->real()->pMethods->xTruncate(ff->real(), size);
}

int x_sync(sqlite3_file* f, int flags) {
  auto* ff = reinterpret_cast<FaultFile*>(f);
  std::lock_guard lock(g().mu);
  if (!spend()) return SQLITE_IOERR_FSYNC;
  int rc = ff->real()->pMethods->xSync(ff->real(), flags);
  if (rc == SQLITE_OK && ff->path) g().files[*ff->path].undo.clear();
  return rc;
}

#define PASS(name, sig, args)                   \
  int name sig {                                \
    auto* ff = reinterpret_cast<FaultFile*>(f); \
    return ff->real()->pMethods->args;          \
  }
PASS(x_file_size, (sqlite3_file * f, sqlite3_int64* out), xFileSize(ff->real(), out))
PASS(x_lock, (sqlite3_file * f, int l), xLock(ff->real(), l))
PASS(x_unlock, (sqlite3_file * f, int l), xUnlock(ff->real(), l))
PASS(x_check_reserved, (sqlite3_file * f, int* out), xCheckReservedLock(ff->real(), out))
PASS(x_file_control, (sqlite3_file * f, int op, void* arg), xFileControl(ff->real(), op, arg))
PASS(x_sector_size, (sqlite3_file * f), xSectorSize(ff->real()))
PASS(x_device_chars, (sqlite3_file * f), xDeviceCharacteristics(ff->real()))
PASS(x_shm_map, (sqlite3_file * f, int pg, int sz, int ext, void volatile** pp),
     xShmMap(ff->real(), pg, sz, ext, pp))
PASS(x_shm_lock, (sqlite3_file * f, int off, int n, int flags), xShmLock(ff->real(), off, n, flags))
PASS(x_shm_unmap, (sqlite3_file * f, int del), xShmUnmap(ff->real(), del))
#undef PASS

void x_shm_barrier(sqlite3_file* f) {
  auto* ff = reinterpret_cast<FaultFile*>(f);
  ff->real()->pMethods->xShmBarrier(ff->real());
}

int x_fetch(sqlite3_file*, sqlite3_int64, int, void** pp) {
  *pp = nullptr;  // no memory-mapped I/O: every write goes through x_write
  return SQLITE_OK;
}
int x_unfetch(sqlite3_file*, sqlite3_int64, void*) { return SQLITE_OK; }

const sqlite3_io_methods kMethods = {
    3,
    x_close,
    x_read,
    x_write,
    x_truncate,
    x_sync,
    x_file_size,
    x_lock,
    x_unlock,
    x_check_reserved,
    x_file_control,
    x_sector_size,
    x_device_chars,
    x_shm_map,
    x_shm_lock,
    x_shm_barrier,
    x_shm_unmap,
    x_fetch,
    x_unfetch,
};

int x_open(sqlite3_vfs*, const char* name, sqlite3_file* f, int flags, int* out_flags) {
  auto* ff = reinterpret_cast<FaultFile*>(f);
  ff->base.pMethods = nullptr;
  ff->path = nullptr;
  {
    std::lock_guard lock(g().mu);
    if (g().dead) return SQLITE_CANTOPEN;
  }
  int rc = g().real->xOpen(g().real, name, ff->real(), flags, out_flags);
  if (rc != SQLITE_OK) return rc;
  if (name) ff->path = new std::string(name);
  ff->base.pMethods = &kMethods;
  return SQLITE_OK;
}

int x_delete(sqlite3_vfs*, const char* name, int sync_dir) {
  std::lock_guard lock(g().mu);
  if (!spend()) return SQLITE_IOERR_DELETE;
  g().files.erase(name);
  return g().real->xDelete(g().real, name, sync_dir);
}

int x_access(sqlite3_vfs*, const char* name, int flags, int* out) {
  return g().real->xAccess(g().real, name, flags, out);
}
int x_full_pathname(sqlite3_vfs*, const char* name, int n, char* out) {
  return g().real->xFullPathname(g().real, name, n, out);
}
int x_randomness(sqlite3_vfs*, int n, char* out) { return g().real->xRandomness(g().real, n, out); }
int x_sleep(sqlite3_vfs*, int us) { return g().real->xSleep(g().real, us); }
int x_current_time(sqlite3_vfs*, double* out) { return g().real->xCurrentTime(g().real, out); }
int x_last_error(sqlite3_vfs*, int n, char* out) {
  return g().real->xGetLastError(g().real, n, out);
}
int x_current_time64(sqlite3_vfs*, sqlite3_int64* out) {
  return g().real->xCurrentTimeInt64(g().real, out);
}

// Restores `path` by undoing the records (newest first); `keep` chooses
// records whose write survives the power cut.
void restore(const std::string& path, const std::vector<UndoRec>& undo,
             const std::vector<bool>& keep) {
  int fd = ::open(path.c_str(), O_RDWR);
  if (fd < 0) return;
  for (size_t i = undo.size(); i-- > 0;) {
    if (keep[i]) continue;
    const UndoRec& r = undo[i];
    if (!r.old_bytes.empty()) {
      [[maybe_unused]] auto n = ::pwrite(fd, r.old_bytes.data(), r.old_bytes.size(), r.offset);
    }
    // Undo growth of the file too.
    if (::lseek(fd, 0, SEEK_END) > r.old_size) {
      [[maybe_unused]] int t = ::ftruncate(fd, r.old_size);
    }
  }
  ::close(fd);
}

}  // namespace

void register_fault_vfs() {
  Global& s = g();
  std::lock_guard lock(s.mu);
  if (s.real) return;
  s.real = sqlite3_vfs_find(nullptr);
  s.vfs.iVersion = 2;
  s.vfs.szOsFile = static_cast<int>(sizeof(FaultFile)) + s.real->szOsFile;
  s.vfs.mxPathname = s.real->mxPathname;
  s.vfs.zName = kFaultVfsName;
  s.vfs.xOpen = x_open;
  s.vfs.xDelete = x_delete;
  s.vfs.xAccess = x_access;
  s.vfs.xFullPathname = x_full_pathname;
  s.vfs.xRandomness = x_randomness;
  s.vfs.xSleep = x_sleep;
  s.vfs.xCurrentTime = x_current_time;
  s.vfs.xGetLastError = x_last_error;
  s.vfs.xCurrentTimeInt64 = x_current_time64;
  sqlite3_vfs_register(&s.vfs, 0);
}

void fault_vfs_fail_after(int64_t n) {
  std::lock_guard lock(g().mu);
  g().budget = n;
  g().dead = false;
}

bool fault_vfs_dead() {
  std::lock_guard lock(g().mu);
  return g().dead;
}

void fault_vfs_power_cut(bool torn, uint64_t seed) {
  std::lock_guard lock(g().mu);
  std::mt19937_64 rng(seed);
  for (auto& [path, log] : g().files) {
    std::vector<bool> keep(log.undo.size(), false);
    if (torn) {
      for (size_t i = 0; i < keep.size(); ++i) keep[i] = (rng() & 1) != 0;
    }
    restore(path, log.undo, keep);
  }
  g().files.clear();
  g().budget = 0;
  g().dead = false;
}

}  // namespace weft::store::testing
