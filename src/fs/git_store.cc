// Snapshots with libgit2. The working tree is scanned by our own walk (git_scan.h: fds,
// O_NOFOLLOW) instead of git_index_add_all so that: .gitignore and
// .gitattributes have no say (ignored files are captured, bytes are never
// filtered), symlinks are stored as links, and unchanged files cost one
// fstatat each (the index in the store is the stat cache). The new objects
// of a snapshot go into one pack (git_pack.h); the snapshots form one chain
// of commits under a single ref, so a snapshot creates ~4 files whatever
// its size (pack, pack index, ref, index).
#include "git_store.h"

#include <dirent.h>
#include <fcntl.h>
#include <git2.h>
#include <git2/sys/odb_backend.h>
#include <git2/sys/repository.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <mutex>
#include <thread>
#include <unordered_set>
#include <utility>

#include "common.h"
#include "git_pack.h"
#include "git_scan.h"
#include "host_io.h"

namespace weft::fs::internal {
namespace {

// Every snapshot commit's first parent is the snapshot made before it, and
// kLogRef names the newest: one ref keeps them all alive and lists them.
constexpr const char* kLogRef = "refs/weft/log";
// Stores written before the chain existed: one ref per snapshot, and the
// last snapshotted or restored commit. Still read, never written.
constexpr const char* kLegacyRefPrefix = "refs/weft/snapshots/";
constexpr const char* kLegacyHeadRef = "refs/weft/head";
// When the index (the stat cache) is written; see snapshot_locked.
constexpr int kIndexWriteEvery = 16;
constexpr size_t kIndexWriteEntries = 256;

// An flock on <git_dir>/weft.lock: processes (and instances) sharing a store
// take it exclusively to snapshot or restore (a snapshot reads the chain's tip,
// writes a pack, may merge packs away and moves the ref) and shared to list.
class StoreLock {
 public:
  static Result<StoreLock> take(const std::string& git_dir, bool exclusive) {
    std::string path = git_dir + "/weft.lock";
    int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) return errno_status(errno, "open the snapshot store lock", path);
    int rc;
    do {
      rc = ::flock(fd, exclusive ? LOCK_EX : LOCK_SH);
    } while (rc != 0 && errno == EINTR);
    if (rc != 0) {
      Status st = errno_status(errno, "lock the snapshot store", path);
      ::close(fd);
      return st;
    }
    return StoreLock(fd);
  }
  StoreLock(StoreLock&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  StoreLock& operator=(StoreLock&&) = delete;
  ~StoreLock() {
    if (fd_ >= 0) ::close(fd_);  // releases the flock
  }

 private:
  explicit StoreLock(int fd) : fd_(fd) {}
  int fd_;
};

void init_libgit2() {
  static const int once = [] {
    git_libgit2_init();
    git_libgit2_opts(GIT_OPT_ENABLE_STRICT_OBJECT_CREATION, 0);
    git_libgit2_opts(GIT_OPT_ENABLE_STRICT_HASH_VERIFICATION, 0);
    return 0;
  }();
  (void)once;
}

template <typename T, void (*Free)(T*)>
struct GitPtr {
  T* p = nullptr;
  ~GitPtr() {
    if (p) Free(p);
  }
  T** out() { return &p; }
  T* get() const { return p; }
};

std::string lexical_absolute(const std::string& path) {
  std::string abs = path;
  if (abs.empty() || abs[0] != '/') {
    char* cwd = ::getcwd(nullptr, 0);
    abs = std::string(cwd ? cwd : "/") + "/" + abs;
    std::free(cwd);
  }
  std::vector<std::string> segs;
  size_t start = 0;
  while (start <= abs.size()) {
    size_t slash = abs.find('/', start);
    if (slash == std::string::npos) slash = abs.size();
    std::string seg = abs.substr(start, slash - start);
    start = slash + 1;
    if (seg.empty() || seg == ".") continue;
    if (seg == "..") {
      if (!segs.empty()) segs.pop_back();
    } else {
      segs.push_back(seg);
    }
  }
  std::string out;
  for (const auto& s : segs) out += "/" + s;
  return out.empty() ? "/" : out;
}

// The canonical form of `path`: realpath of its longest existing prefix plus the rest.
std::string canonical_prefix(const std::string& path) {
  std::string abs = lexical_absolute(path);
  std::string rest;
  std::string head = abs;
  while (true) {
    char* real = ::realpath(head.c_str(), nullptr);
    if (real) {
      std::string out = std::string(real) + rest;
      std::free(real);
      return out;
    }
    size_t slash = head.rfind('/');
    if (slash == std::string::npos || head == "/") return abs;
    rest = head.substr(slash) + rest;
    head = slash == 0 ? "/" : head.substr(0, slash);
  }
}

bool is_within(const std::string& path, const std::string& dir) {
  return path == dir || (path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 &&
                         (dir == "/" || path[dir.size()] == '/'));
}

// Deletes every symbolic link under dirfd (not following any), skipping .git.
Status remove_symlinks(int dirfd, const std::string& rel) {
  WEFT_ASSIGN_OR_RETURN(std::vector<DirEntry> entries, read_dir(dirfd, false));
  for (const DirEntry& e : entries) {
    std::string path = rel.empty() ? e.name : rel + "/" + e.name;
    if (e.type == DT_LNK) {
      if (::unlinkat(dirfd, e.name.c_str(), 0) != 0 && errno != ENOENT) {
        return errno_status(errno, "remove link", path);
      }
    } else if (e.type == DT_DIR && e.name != ".git") {
      int fd = ::openat(dirfd, e.name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (fd < 0) continue;
      UniqueFd sub(fd);
      WEFT_RETURN_IF_ERROR(remove_symlinks(sub.get(), path));
    }
  }
  return Status();
}

// Removes directories left empty under dirfd, bottom-up (git records no
// empty directory, so after a strict restore none should remain; this is
// `git clean -d`). Returns whether dirfd itself ended up empty.
Result<bool> prune_empty_dirs(int dirfd, const std::string& rel) {
  WEFT_ASSIGN_OR_RETURN(std::vector<DirEntry> entries, read_dir(dirfd, false));
  size_t left = entries.size();
  for (const DirEntry& e : entries) {
    if (e.type != DT_DIR || e.name == ".git") continue;
    int fd = ::openat(dirfd, e.name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) continue;
    UniqueFd sub(fd);
    std::string path = rel.empty() ? e.name : rel + "/" + e.name;
    WEFT_ASSIGN_OR_RETURN(bool empty, prune_empty_dirs(sub.get(), path));
    if (empty && ::unlinkat(dirfd, e.name.c_str(), AT_REMOVEDIR) == 0) --left;
  }
  return left == 0;
}

// Reads (inflates) every object under `tree`, so that corruption is found
// before a restore changes anything.
Status verify_tree(git_odb* odb, const git_tree* tree) {
  struct Ctx {
    git_odb* odb;
    std::string failed;
  } ctx{odb, {}};
  int rc = git_tree_walk(
      tree, GIT_TREEWALK_PRE,
      [](const char* root, const git_tree_entry* e, void* payload) -> int {
        auto* c = static_cast<Ctx*>(payload);
        git_odb_object* obj = nullptr;
        if (git_odb_read(&obj, c->odb, git_tree_entry_id(e)) != 0) {
          c->failed = std::string(root) + git_tree_entry_name(e);
          return -1;
        }
        git_odb_object_free(obj);
        return 0;
      },
      &ctx);
  if (rc == 0) return Status();
  const ::git_error* e = git_error_last();
  return data_loss("snapshot store: cannot read '" + ctx.failed + "' of the snapshot: " +
                   (e && e->message ? e->message : "object missing or damaged") +
                   " (the store's object files are damaged; the workspace was not changed)");
}

}  // namespace

struct GitSnapshotStore::Repo {
  git_repository* repo = nullptr;
  git_odb* odb = nullptr;      // owned by repo
  PackWriter* pack = nullptr;  // owned by odb
  int unsaved = 0;             // snapshots whose index changes are only in memory
  ~Repo() {
    if (repo && unsaved > 0) {  // best effort: a stale stat cache only costs re-hashing
      git_index* index = nullptr;
      if (git_repository_index(&index, repo) == 0) {
        git_index_write(index);
        git_index_free(index);
      }
    }
    if (repo) git_repository_free(repo);
  }
};

Result<std::unique_ptr<GitSnapshotStore>> GitSnapshotStore::create(std::string root,
                                                                   std::string git_dir) {
  init_libgit2();
  std::string canonical = canonical_prefix(git_dir);
  if (is_within(canonical, root) || is_within(root, canonical)) {
    return invalid_argument("snapshot store '" + git_dir +
                            "' must lie outside the workspace root '" + root +
                            "' (an agent working in the root must not reach it)");
  }
  std::unique_ptr<GitSnapshotStore> s(new GitSnapshotStore());
  s->root_ = std::move(root);
  s->git_dir_ = std::move(canonical);
  return s;
}

GitSnapshotStore::~GitSnapshotStore() = default;

Status GitSnapshotStore::open_locked(bool create) {
  if (repo_) return Status();
  auto r = std::make_unique<Repo>();
  if (git_repository_open_bare(&r->repo, git_dir_.c_str()) != 0) {
    if (!create) return not_found("no snapshot store at '" + git_dir_ + "'");
    git_repository_init_options opts = GIT_REPOSITORY_INIT_OPTIONS_INIT;
    opts.flags = GIT_REPOSITORY_INIT_BARE | GIT_REPOSITORY_INIT_MKPATH;
    if (git_repository_init_ext(&r->repo, git_dir_.c_str(), &opts) != 0) {
      return git_failure("create '" + git_dir_ + "'");
    }
  }
  // Loose objects at zlib level 1, as git itself writes them (libgit2's
  // default level 6 makes a first snapshot much slower than `git add`).
  {
    git_odb* odb = nullptr;
    git_odb_backend* loose = nullptr;
    git_odb_backend* packs = nullptr;
    std::string objects = git_dir_ + "/objects";
    if (git_odb_new(&odb) != 0 || git_odb_backend_loose(&loose, objects.c_str(), 1, 0, 0, 0) != 0 ||
        git_odb_add_backend(odb, loose, 2) != 0 ||
        git_odb_backend_pack(&packs, objects.c_str()) != 0 ||
        git_odb_add_backend(odb, packs, 1) != 0) {
      if (odb) git_odb_free(odb);
      return git_failure("open object database");
    }
    auto pack = attach_pack_writer(odb, objects);
    if (!pack.ok()) {
      git_odb_free(odb);
      return pack.status();
    }
    r->pack = *pack;
    r->odb = odb;
    git_repository_set_odb(r->repo, odb);
    git_odb_free(odb);
  }
  if (git_repository_set_workdir(r->repo, root_.c_str(), 0) != 0) {
    return git_failure("attach work tree");
  }
  repo_ = std::move(r);
  return Status();
}

Result<FilesystemSnapshot> GitSnapshotStore::snapshot(std::optional<std::string> tag) {
  std::lock_guard lock(mu_);
  // The lock lives in the store, so the store's directory comes first: two
  // processes creating the store at once would otherwise race in git init.
  std::error_code ec;
  std::filesystem::create_directories(git_dir_, ec);
  if (ec)
    return unavailable("cannot create the snapshot store '" + git_dir_ + "': " + ec.message());
  WEFT_ASSIGN_OR_RETURN(StoreLock store_lock, StoreLock::take(git_dir_, true));
  WEFT_RETURN_IF_ERROR(open_locked(true));
  bool reopen = false;
  Result<FilesystemSnapshot> rec = invalid_argument("unset");
  {
    GitPtr<git_index, git_index_free> index;
    if (git_repository_index(index.out(), repo_->repo) != 0) return git_failure("open index");
    if (git_index_read(index.get(), 0) != 0) return git_failure("read index");
    WEFT_RETURN_IF_ERROR(pack_begin(repo_->pack));
    rec = snapshot_locked(index.get(), std::move(tag), &reopen);
    if (!rec.ok()) {
      // Forget the entries of this attempt: their blobs were never stored.
      pack_abort(repo_->pack);
      git_index_read(index.get(), 1);
      repo_->unsaved = 0;
    }
  }
  if (reopen) repo_.reset();  // libgit2 still lists the packs merged away
  return rec;
}

Result<FilesystemSnapshot> GitSnapshotStore::snapshot_locked(git_index* index,
                                                             std::optional<std::string> tag,
                                                             bool* reopen) {
  git_repository* repo = repo_->repo;
  FilesystemSnapshot rec;
  rec.snapshot_id = random_uuid();
  rec.created_at = Clock::now();
  rec.root_path = root_;
  rec.git_dir = git_dir_;
  rec.tag = std::move(tag);

  UniqueFd rootfd(::open(root_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!rootfd.valid()) return errno_status(errno, "open workspace root", root_);
  struct timespec now;
  ::clock_gettime(CLOCK_REALTIME, &now);
  Scanner scan(repo_->pack, index,
               RacyRule::for_root(rootfd.get(), int64_t{now.tv_sec} * 1'000'000'000 + now.tv_nsec));
  WEFT_RETURN_IF_ERROR(scan.scan(rootfd.get()));
  git_oid tree_id;
  if (git_index_write_tree(&tree_id, index) != 0) return git_failure("write tree");

  GitPtr<git_tree, git_tree_free> tree;
  if (git_tree_lookup(tree.out(), repo, &tree_id) != 0) return git_failure("look up tree");
  GitPtr<git_commit, git_commit_free> parent;
  git_oid prev;
  const git_commit* parents[1];
  size_t nparents = 0;
  if ((git_reference_name_to_id(&prev, repo, kLogRef) == 0 ||
       git_reference_name_to_id(&prev, repo, kLegacyHeadRef) == 0) &&
      git_commit_lookup(parent.out(), repo, &prev) == 0) {
    parents[0] = parent.get();
    nparents = 1;
  }
  GitPtr<git_signature, git_signature_free> sig;
  auto secs = std::chrono::duration_cast<std::chrono::seconds>(rec.created_at.time_since_epoch());
  if (git_signature_new(sig.out(), "weft", "weft@localhost", secs.count(), 0) != 0) {
    return git_failure("signature");
  }
  std::string message = "weft snapshot" + (rec.tag ? " " + *rec.tag : std::string()) + "\n\n" +
                        snapshot_to_json(rec) + "\n";
  git_oid commit_id;
  if (git_commit_create(&commit_id, repo, nullptr, sig.get(), sig.get(), "UTF-8", message.c_str(),
                        tree.get(), nparents, parents) != 0) {
    return git_failure("commit");
  }
  char hex[GIT_OID_HEXSZ + 1];
  git_oid_tostr(hex, sizeof hex, &commit_id);
  rec.commit_ref = hex;
  // Objects first, then the ref that names them, then the stat cache.
  WEFT_RETURN_IF_ERROR(pack_finish(repo_->pack, repo_->odb, reopen));
  GitPtr<git_reference, git_reference_free> ref;
  if (git_reference_create(ref.out(), repo, kLogRef, &commit_id, 1, nullptr) != 0) {
    return git_failure("record snapshot ref");
  }
  // The index is only the stat cache (a stale one costs re-hashing, never a
  // wrong snapshot), and writing it (whole, hashed, one new file) is a good
  // part of a small snapshot: small changes reach the disk every
  // kIndexWriteEvery snapshots and when the store closes, big ones at once.
  if (scan.changed()) ++repo_->unsaved;
  if (repo_->unsaved >= kIndexWriteEvery || scan.updated() >= kIndexWriteEntries) {
    if (git_index_write(index) != 0) return git_failure("write index");
    repo_->unsaved = 0;
  }
  return rec;
}

Status GitSnapshotStore::restore(const FilesystemSnapshot& snapshot) {
  std::lock_guard lock(mu_);
  if (snapshot.root_path != root_) {
    return invalid_argument("snapshot " + snapshot.snapshot_id + " is of '" + snapshot.root_path +
                            "', not of this workspace '" + root_ + "'");
  }
  if (!snapshot.git_dir) {
    return invalid_argument("snapshot " + snapshot.commit_ref +
                            " has no git_dir: it belongs to an in-memory filesystem");
  }
  std::string wanted = canonical_prefix(*snapshot.git_dir);
  if (wanted != git_dir_) {
    if (is_within(wanted, root_)) {
      return invalid_argument("snapshot store '" + wanted + "' lies inside the workspace root");
    }
    git_dir_ = wanted;
    repo_.reset();
  }
  WEFT_RETURN_IF_ERROR(open_locked(false));
  WEFT_ASSIGN_OR_RETURN(StoreLock store_lock, StoreLock::take(git_dir_, true));
  git_repository* repo = repo_->repo;
  git_oid id;
  if (snapshot.commit_ref.size() != GIT_OID_HEXSZ ||
      git_oid_fromstr(&id, snapshot.commit_ref.c_str()) != 0) {
    return invalid_argument("commit_ref '" + snapshot.commit_ref + "' is not a git commit id");
  }
  GitPtr<git_commit, git_commit_free> commit;
  if (int rc = git_commit_lookup(commit.out(), repo, &id); rc != 0) {
    if (rc != GIT_ENOTFOUND) return git_failure("read snapshot commit " + snapshot.commit_ref);
    return not_found("snapshot commit " + snapshot.commit_ref + " is not in store '" + git_dir_ +
                     "'");
  }
  GitPtr<git_tree, git_tree_free> tree;
  if (git_commit_tree(tree.out(), commit.get()) != 0) return git_failure("read snapshot tree");
  // Read every object once before touching the workspace: a damaged store
  // must fail here (kDataLoss), not halfway through the checkout.
  WEFT_RETURN_IF_ERROR(verify_tree(repo_->odb, tree.get()));
  // libgit2's checkout would write through a symlink planted where the
  // snapshot has a directory; remove every link first (links the snapshot
  // holds are recreated by the checkout).
  {
    UniqueFd rootfd(::open(root_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!rootfd.valid()) return errno_status(errno, "open workspace root", root_);
    WEFT_RETURN_IF_ERROR(remove_symlinks(rootfd.get(), ""));
    // A directory that only held links is empty now; where the snapshot has
    // a file of that name, libgit2's checkout fails on it ("Is a directory").
    WEFT_RETURN_IF_ERROR(prune_empty_dirs(rootfd.get(), "").status());
  }
  git_checkout_options opts = GIT_CHECKOUT_OPTIONS_INIT;
  opts.checkout_strategy =
      GIT_CHECKOUT_FORCE | GIT_CHECKOUT_REMOVE_UNTRACKED | GIT_CHECKOUT_REMOVE_IGNORED;
  opts.disable_filters = 1;
  if (git_checkout_tree(repo, reinterpret_cast<const git_object*>(tree.get()), &opts) != 0) {
    return git_failure("restore " + snapshot.commit_ref);
  }
  {
    UniqueFd rootfd(::open(root_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!rootfd.valid()) return errno_status(errno, "open workspace root", root_);
    WEFT_RETURN_IF_ERROR(prune_empty_dirs(rootfd.get(), "").status());
  }
  return Status();
}

Result<std::vector<FilesystemSnapshot>> GitSnapshotStore::list() {
  std::lock_guard lock(mu_);
  std::vector<FilesystemSnapshot> out;
  Status opened = open_locked(false);
  if (opened.code() == StatusCode::kNotFound) return out;  // no snapshot yet
  WEFT_RETURN_IF_ERROR(opened);
  WEFT_ASSIGN_OR_RETURN(StoreLock store_lock, StoreLock::take(git_dir_, false));
  git_repository* repo = repo_->repo;
  std::unordered_set<std::string> seen;
  // Adds the snapshot recorded in commit `id`; returns its first parent's id, if any.
  auto add = [&](const git_oid& id) -> std::optional<git_oid> {
    GitPtr<git_commit, git_commit_free> commit;
    if (git_commit_lookup(commit.out(), repo, &id) != 0) return std::nullopt;
    char hex[GIT_OID_HEXSZ + 1];
    git_oid_tostr(hex, sizeof hex, &id);
    if (!seen.insert(hex).second) return std::nullopt;  // already listed, and so are its parents
    std::string msg = git_commit_message(commit.get());
    size_t brace = msg.find('{');
    if (brace != std::string::npos) {
      auto rec = snapshot_from_json(msg.substr(brace));
      if (rec.ok()) {
        rec->commit_ref = hex;
        out.push_back(std::move(*rec));
      }
    }
    if (git_commit_parentcount(commit.get()) == 0) return std::nullopt;
    return *git_commit_parent_id(commit.get(), 0);
  };
  git_oid tip;
  if (git_reference_name_to_id(&tip, repo, kLogRef) == 0) {
    for (std::optional<git_oid> at = tip; at; at = add(*at)) {
    }
  }
  struct Ctx {
    git_repository* repo;
    std::vector<git_oid> ids;
  } ctx{repo, {}};
  std::string glob = std::string(kLegacyRefPrefix) + "*";
  int rc = git_reference_foreach_glob(
      repo, glob.c_str(),
      [](const char* name, void* payload) -> int {
        auto* c = static_cast<Ctx*>(payload);
        git_oid id;
        if (git_reference_name_to_id(&id, c->repo, name) == 0) c->ids.push_back(id);
        return 0;
      },
      &ctx);
  if (rc != 0) return git_failure("list snapshots");
  for (const git_oid& id : ctx.ids) (void)add(id);
  std::sort(out.begin(), out.end(),
            [](const auto& a, const auto& b) { return a.created_at < b.created_at; });
  return out;
}

}  // namespace weft::fs::internal
