// Writes git pack v2 files (objects zlib-deflated, no deltas) and their v2
// .idx directly; see git_pack.h for why. Formats: git's
// Documentation/gitformat-pack.txt.
#include "git_pack.h"

#include <dirent.h>
#include <fcntl.h>
#include <git2/sys/odb_backend.h>
#include <openssl/evp.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <unordered_map>
#include <vector>

#include "host_io.h"

namespace weft::fs::internal {
namespace {

constexpr size_t kFlushBytes = size_t{8} << 20;
// Every snapshot adds a pack; past kMaxPacks, the next snapshot's pack also
// takes in the objects of every pack of fewer than kSmallPackObjects objects
// and those are deleted. Incremental snapshots (a handful of objects each)
// thus never leave more than ~kMaxPacks packs to search, and a big first
// snapshot's pack is not rewritten again and again.
constexpr size_t kMaxPacks = 32;
constexpr size_t kSmallPackObjects = 2048;
// A temporary pack this old was left by a crashed snapshot, not one in progress.
constexpr time_t kStaleTempSeconds = 24 * 3600;
constexpr uInt kZlibChunk = 1u << 30;  // zlib counts in 32 bits

struct OidHash {
  size_t operator()(const git_oid& o) const {
    size_t h;
    std::memcpy(&h, o.id, sizeof h);
    return h;
  }
};
struct OidEq {
  bool operator()(const git_oid& a, const git_oid& b) const {
    return std::memcmp(a.id, b.id, GIT_OID_RAWSZ) == 0;
  }
};

void put_be32(std::string* out, uint32_t v) {
  char b[4] = {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8),
               static_cast<char>(v)};
  out->append(b, 4);
}

Status write_all(int fd, const char* p, size_t n, const std::string& path) {
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return errno_status(errno, "write", path);
    }
    p += w;
    n -= static_cast<size_t>(w);
  }
  return Status();
}

Status pread_all(int fd, char* p, size_t n, uint64_t off, const std::string& path) {
  while (n > 0) {
    ssize_t r = ::pread(fd, p, n, static_cast<off_t>(off));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return data_loss("snapshot store: short read of pack being written '" + path + "'");
    p += r;
    n -= static_cast<size_t>(r);
    off += static_cast<uint64_t>(r);
  }
  return Status();
}

int fail(const char* message) {
  git_error_set_str(GIT_ERROR_ODB, message);
  return GIT_ERROR;
}

}  // namespace

class PackWriter {
 public:
  struct Backend {
    git_odb_backend base;
    PackWriter* self;
  };

  explicit PackWriter(std::string objects_dir) : pack_dir_(std::move(objects_dir) + "/pack") {
    git_odb_init_backend(&backend_.base, GIT_ODB_BACKEND_VERSION);
    backend_.self = this;
    backend_.base.read = &read_cb;
    backend_.base.read_header = &read_header_cb;
    backend_.base.write = &write_cb;
    backend_.base.exists = &exists_cb;
    backend_.base.free = &free_cb;
    std::memset(&z_, 0, sizeof z_);
    sha_ = EVP_MD_CTX_new();
    md_ = EVP_MD_fetch(nullptr, "SHA1", nullptr);
  }
  ~PackWriter() {
    abort();
    if (z_ready_) deflateEnd(&z_);
    EVP_MD_CTX_free(sha_);
    EVP_MD_free(md_);
  }

  git_odb_backend* backend() { return &backend_.base; }

  Status begin() {
    abort();
    if (!sha_ || !md_) return unavailable("snapshot store: OpenSSL has no SHA-1");
    if (!z_ready_) {
      if (deflateInit(&z_, 1) != Z_OK) return unavailable("snapshot store: zlib init failed");
      z_ready_ = true;
    }
    if (::mkdir(pack_dir_.c_str(), 0755) != 0 && errno != EEXIST) {
      return errno_status(errno, "create", pack_dir_);
    }
    tmp_path_ = pack_dir_ + "/tmp_weft_pack_XXXXXX";
    fd_ = ::mkostemp(tmp_path_.data(), O_CLOEXEC);
    if (fd_ < 0) return errno_status(errno, "create", tmp_path_);
    out_.assign("PACK", 4);
    put_be32(&out_, 2);
    put_be32(&out_, 0);  // object count, patched by finish()
    active_ = true;
    return Status();
  }

  Status add_blob(std::string_view data, git_oid* oid) {
    if (!active_) return failed_precondition("snapshot store: no pack is being written");
    char head[32];
    int n = std::snprintf(head, sizeof head, "blob %zu", data.size());
    if (EVP_DigestInit_ex(sha_, md_, nullptr) != 1 ||
        EVP_DigestUpdate(sha_, head, static_cast<size_t>(n) + 1) != 1 ||
        EVP_DigestUpdate(sha_, data.data(), data.size()) != 1 ||
        EVP_DigestFinal_ex(sha_, oid->id, nullptr) != 1) {
      return unavailable("snapshot store: SHA-1 failed");
    }
    if (index_.count(*oid) ||
        git_odb_exists_ext(backend_.base.odb, oid, GIT_ODB_LOOKUP_NO_REFRESH)) {
      return Status();
    }
    return add(*oid, GIT_OBJECT_BLOB, data.data(), data.size());
  }

  Status finish(git_odb* odb, bool* removed_packs) {
    *removed_packs = false;
    if (!active_) return Status();
    if (entries_.empty()) {
      abort();
      return Status();
    }
    std::vector<std::string> absorbed = absorb_small_packs(odb);
    WEFT_RETURN_IF_ERROR(flush());
    // Patch the count, then checksum the whole file (from the page cache).
    std::string count;
    put_be32(&count, static_cast<uint32_t>(entries_.size()));
    if (::pwrite(fd_, count.data(), 4, 8) != 4) return errno_status(errno, "write", tmp_path_);
    unsigned char pack_sum[GIT_OID_RAWSZ];
    {
      EVP_DigestInit_ex(sha_, md_, nullptr);
      std::string chunk(size_t{1} << 20, '\0');
      for (uint64_t off = 0; off < written_;) {
        size_t n = static_cast<size_t>(std::min<uint64_t>(chunk.size(), written_ - off));
        WEFT_RETURN_IF_ERROR(pread_all(fd_, chunk.data(), n, off, tmp_path_));
        EVP_DigestUpdate(sha_, chunk.data(), n);
        off += n;
      }
      EVP_DigestFinal_ex(sha_, pack_sum, nullptr);
    }
    WEFT_RETURN_IF_ERROR(
        write_all(fd_, reinterpret_cast<const char*>(pack_sum), sizeof pack_sum, tmp_path_));
    ::fchmod(fd_, 0444);
    std::string idx = make_index(pack_sum);
    git_oid name_oid;
    git_oid_fromraw(&name_oid, pack_sum);
    char hex[GIT_OID_HEXSZ + 1];
    git_oid_tostr(hex, sizeof hex, &name_oid);
    std::string base = pack_dir_ + "/pack-" + hex;
    ::close(fd_);
    fd_ = -1;
    if (::rename(tmp_path_.c_str(), (base + ".pack").c_str()) != 0) {
      return errno_status(errno, "store pack", base + ".pack");
    }
    tmp_path_.clear();
    // The .idx makes the pack visible to git: write it last, atomically.
    std::string idx_tmp = pack_dir_ + "/tmp_weft_idx_XXXXXX";
    UniqueFd ifd(::mkostemp(idx_tmp.data(), O_CLOEXEC));
    if (!ifd.valid()) return errno_status(errno, "create", idx_tmp);
    Status w = write_all(ifd.get(), idx.data(), idx.size(), idx_tmp);
    ::fchmod(ifd.get(), 0444);
    if (w.ok() && ::rename(idx_tmp.c_str(), (base + ".idx").c_str()) != 0) {
      w = errno_status(errno, "store pack index", base + ".idx");
    }
    if (!w.ok()) {
      ::unlink(idx_tmp.c_str());
      ::unlink((base + ".pack").c_str());
      abort();
      return w;
    }
    abort();  // resets the in-memory state; the files are in place
    for (const std::string& old : absorbed) {
      if (old == base) continue;  // the same objects made the same pack
      ::unlink((old + ".idx").c_str());
      ::unlink((old + ".pack").c_str());
      *removed_packs = true;
    }
    if (git_odb_refresh(odb) != 0) {
      const git_error* e = git_error_last();
      return unavailable(std::string("snapshot store: reload packs: ") +
                         (e && e->message ? e->message : "unknown libgit2 error"));
    }
    return Status();
  }

  void abort() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    if (!tmp_path_.empty()) ::unlink(tmp_path_.c_str());
    tmp_path_.clear();
    active_ = false;
    written_ = 0;
    out_.clear();
    entries_.clear();
    index_.clear();
  }

 private:
  struct Entry {
    git_oid oid;
    uint64_t offset;       // of the object's header in the pack
    uint64_t data_offset;  // of its deflated data
    uint32_t crc;          // CRC-32 of header + deflated data (the .idx wants it)
    size_t size;
    git_object_t type;
  };

  Status add(const git_oid& oid, git_object_t type, const void* data, size_t len) {
    Entry e{oid, written_ + out_.size(), 0, 0, len, type};
    unsigned char head[16];
    size_t h = 0;
    size_t rest = len >> 4;
    head[h++] = static_cast<unsigned char>((type << 4) | (len & 15) | (rest ? 0x80 : 0));
    while (rest) {
      head[h++] = static_cast<unsigned char>((rest & 0x7f) | (rest >> 7 ? 0x80 : 0));
      rest >>= 7;
    }
    out_.append(reinterpret_cast<const char*>(head), h);
    size_t data_start = out_.size();
    e.data_offset = written_ + data_start;
    if (deflateReset(&z_) != Z_OK) return unavailable("snapshot store: zlib reset failed");
    const Bytef* in = static_cast<const Bytef*>(data);
    size_t left = len;
    z_.avail_in = 0;
    while (true) {
      if (z_.avail_in == 0 && left > 0) {
        uInt c = static_cast<uInt>(std::min<size_t>(left, kZlibChunk));
        z_.next_in = const_cast<Bytef*>(in);
        z_.avail_in = c;
        in += c;
        left -= c;
      }
      size_t room = std::min<size_t>(deflateBound(&z_, z_.avail_in) + 64, kZlibChunk);
      size_t old = out_.size();
      out_.resize(old + room);
      z_.next_out = reinterpret_cast<Bytef*>(out_.data() + old);
      z_.avail_out = static_cast<uInt>(room);
      int rc = deflate(&z_, left == 0 ? Z_FINISH : Z_NO_FLUSH);
      out_.resize(old + room - z_.avail_out);
      if (rc == Z_STREAM_END) break;
      if (rc != Z_OK && rc != Z_BUF_ERROR) return unavailable("snapshot store: deflate failed");
    }
    uLong crc = crc32_z(0, head, h);
    e.crc = static_cast<uint32_t>(crc32_z(
        crc, reinterpret_cast<const Bytef*>(out_.data() + data_start), out_.size() - data_start));
    index_.emplace(oid, entries_.size());
    entries_.push_back(e);
    if (out_.size() >= kFlushBytes) return flush();
    return Status();
  }

  // Adds the objects of the small packs to this one when there are too many
  // packs; returns the absorbed packs (paths without extension) to delete
  // once this pack is in place. A pack that cannot be read is left alone.
  // Also deletes temporary files a crashed snapshot left (older than a day).
  std::vector<std::string> absorb_small_packs(git_odb* odb) {
    std::vector<std::string> packs, small;
    if (DIR* d = ::opendir(pack_dir_.c_str())) {
      time_t stale_before = ::time(nullptr) - kStaleTempSeconds;
      while (dirent* e = ::readdir(d)) {
        std::string_view name = e->d_name;
        if (name.size() > 4 && name.substr(name.size() - 4) == ".idx") {
          packs.push_back(pack_dir_ + "/" + std::string(name.substr(0, name.size() - 4)));
        } else if (name.substr(0, 9) == "tmp_weft_") {
          struct stat st;
          if (::fstatat(::dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
              st.st_mtime < stale_before) {
            ::unlinkat(::dirfd(d), e->d_name, 0);
          }
        }
      }
      ::closedir(d);
    }
    if (packs.size() < kMaxPacks) return {};
    for (const std::string& base : packs) {
      UniqueFd fd(::open((base + ".idx").c_str(), O_RDONLY | O_CLOEXEC));
      std::string idx;
      if (!fd.valid() || !read_all(fd.get(), base, int64_t{1} << 30, &idx).ok()) continue;
      constexpr size_t kOids = 8 + 256 * 4;
      if (idx.size() < kOids || idx.compare(0, 4, "\377tOc", 4) != 0) continue;
      auto be32 = [&](size_t at) {
        const auto* b = reinterpret_cast<const unsigned char*>(idx.data() + at);
        return (uint32_t{b[0]} << 24) | (uint32_t{b[1]} << 16) | (uint32_t{b[2]} << 8) | b[3];
      };
      size_t n = be32(kOids - 4);
      if (be32(4) != 2 || n >= kSmallPackObjects || idx.size() < kOids + n * GIT_OID_RAWSZ) {
        continue;
      }
      bool ok = true;
      for (size_t i = 0; i < n && ok; ++i) {
        git_oid oid;
        git_oid_fromraw(
            &oid, reinterpret_cast<const unsigned char*>(idx.data()) + kOids + i * GIT_OID_RAWSZ);
        if (index_.count(oid)) continue;
        git_odb_object* obj = nullptr;
        ok = git_odb_read(&obj, odb, &oid) == 0 &&
             add(oid, git_odb_object_type(obj), git_odb_object_data(obj), git_odb_object_size(obj))
                 .ok();
        git_odb_object_free(obj);
      }
      if (ok) small.push_back(base);
    }
    return small;
  }

  Status flush() {
    WEFT_RETURN_IF_ERROR(write_all(fd_, out_.data(), out_.size(), tmp_path_));
    written_ += out_.size();
    out_.clear();
    return Status();
  }

  std::string make_index(const unsigned char* pack_sum) const {
    std::vector<const Entry*> order;
    order.reserve(entries_.size());
    for (const Entry& e : entries_) order.push_back(&e);
    std::sort(order.begin(), order.end(), [](const Entry* a, const Entry* b) {
      return std::memcmp(a->oid.id, b->oid.id, GIT_OID_RAWSZ) < 0;
    });
    std::string idx("\377tOc", 4);
    put_be32(&idx, 2);
    size_t k = 0;
    for (int b = 0; b < 256; ++b) {
      while (k < order.size() && order[k]->oid.id[0] <= b) ++k;
      put_be32(&idx, static_cast<uint32_t>(k));
    }
    for (const Entry* e : order)
      idx.append(reinterpret_cast<const char*>(e->oid.id), GIT_OID_RAWSZ);
    for (const Entry* e : order) put_be32(&idx, e->crc);
    std::vector<uint64_t> large;
    for (const Entry* e : order) {
      if (e->offset < 0x80000000u) {
        put_be32(&idx, static_cast<uint32_t>(e->offset));
      } else {
        put_be32(&idx, 0x80000000u | static_cast<uint32_t>(large.size()));
        large.push_back(e->offset);
      }
    }
    for (uint64_t off : large) {
      put_be32(&idx, static_cast<uint32_t>(off >> 32));
      put_be32(&idx, static_cast<uint32_t>(off));
    }
    idx.append(reinterpret_cast<const char*>(pack_sum), GIT_OID_RAWSZ);
    unsigned char sum[GIT_OID_RAWSZ];
    EVP_DigestInit_ex(sha_, md_, nullptr);
    EVP_DigestUpdate(sha_, idx.data(), idx.size());
    EVP_DigestFinal_ex(sha_, sum, nullptr);
    idx.append(reinterpret_cast<const char*>(sum), GIT_OID_RAWSZ);
    return idx;
  }

  const Entry* find(const git_oid* oid) const {
    if (!active_) return nullptr;
    auto it = index_.find(*oid);
    return it == index_.end() ? nullptr : &entries_[it->second];
  }

  // Reads back an object of the pack being written (libgit2 looks up the
  // trees it just wrote).
  int read(void** buf, size_t* len, git_object_t* type, const git_oid* oid) {
    const Entry* e = find(oid);
    if (!e) return GIT_ENOTFOUND;
    if (!flush().ok()) return fail("snapshot store: cannot flush the pack being written");
    size_t i = static_cast<size_t>(e - entries_.data());
    uint64_t end = i + 1 < entries_.size() ? entries_[i + 1].offset : written_;
    std::string packed(static_cast<size_t>(end - e->data_offset), '\0');
    if (!pread_all(fd_, packed.data(), packed.size(), e->data_offset, tmp_path_).ok()) {
      return fail("snapshot store: cannot read back the pack being written");
    }
    void* data = git_odb_backend_data_alloc(&backend_.base, e->size + 1);
    if (!data) return fail("snapshot store: out of memory");
    uLongf out_len = e->size;
    if (e->size > 0 &&
        (uncompress(static_cast<Bytef*>(data), &out_len,
                    reinterpret_cast<const Bytef*>(packed.data()), packed.size()) != Z_OK ||
         out_len != e->size)) {
      git_odb_backend_data_free(&backend_.base, data);
      return fail("snapshot store: object in the pack being written is corrupt");
    }
    *buf = data;
    *len = e->size;
    *type = e->type;
    return 0;
  }

  static PackWriter* self(git_odb_backend* b) { return reinterpret_cast<Backend*>(b)->self; }
  static int read_cb(void** buf, size_t* len, git_object_t* type, git_odb_backend* b,
                     const git_oid* oid) {
    return self(b)->read(buf, len, type, oid);
  }
  static int read_header_cb(size_t* len, git_object_t* type, git_odb_backend* b,
                            const git_oid* oid) {
    const Entry* e = self(b)->find(oid);
    if (!e) return GIT_ENOTFOUND;
    *len = e->size;
    *type = e->type;
    return 0;
  }
  static int write_cb(git_odb_backend* b, const git_oid* oid, const void* data, size_t len,
                      git_object_t type) {
    PackWriter* w = self(b);
    if (!w->active_) return GIT_PASSTHROUGH;  // outside a snapshot: the loose backend
    if (w->index_.count(*oid)) return 0;
    Status s = w->add(*oid, type, data, len);
    if (!s.ok()) {
      git_error_set_str(GIT_ERROR_ODB, s.to_string().c_str());
      return GIT_ERROR;
    }
    return 0;
  }
  static int exists_cb(git_odb_backend* b, const git_oid* oid) {
    return self(b)->find(oid) != nullptr;
  }
  static void free_cb(git_odb_backend* b) { delete self(b); }

  Backend backend_;
  std::string pack_dir_;
  std::string tmp_path_;
  int fd_ = -1;
  bool active_ = false;
  uint64_t written_ = 0;  // bytes of the pack already in the file
  std::string out_;       // bytes not yet written
  std::vector<Entry> entries_;
  std::unordered_map<git_oid, size_t, OidHash, OidEq> index_;
  z_stream z_;
  bool z_ready_ = false;
  EVP_MD_CTX* sha_ = nullptr;
  EVP_MD* md_ = nullptr;
};

Result<PackWriter*> attach_pack_writer(git_odb* odb, const std::string& objects_dir) {
  auto* w = new PackWriter(objects_dir);
  if (git_odb_add_backend(odb, w->backend(), 3) != 0) {
    delete w;
    const git_error* e = git_error_last();
    return unavailable(std::string("snapshot store: add pack writer: ") +
                       (e && e->message ? e->message : "unknown libgit2 error"));
  }
  return w;
}

Status pack_begin(PackWriter* w) { return w->begin(); }
Status pack_add_blob(PackWriter* w, std::string_view data, git_oid* oid) {
  return w->add_blob(data, oid);
}
Status pack_finish(PackWriter* w, git_odb* odb, bool* removed_packs) {
  return w->finish(odb, removed_packs);
}
void pack_abort(PackWriter* w) { w->abort(); }

}  // namespace weft::fs::internal
