// glob and grep over a host tree: a depth-first walk through directory fds
// opened with O_NOFOLLOW (symlinks are never traversed), visiting entries in
// byte order of their paths so results come out sorted and grep can stop at
// max_matches. ".git" directories and weft's temporary files are skipped.
// grep polls its cancellation flag before each directory entry, so a
// cancelled scan stops within one file's search. With GrepOptions::threads > 1
// the walk stays on the calling thread, in the same order, and hands files to
// workers; results are stitched back in walk order, so they are identical.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <system_error>
#include <thread>

#include "common.h"
#include "host_filesystem.h"

namespace weft::fs::internal {
namespace {

constexpr size_t kMaxGrepThreads = 64;

bool skipped(const DirEntry& e) {
  return (e.type == DT_DIR && e.name == ".git") || e.name.rfind(kTempPrefix, 0) == 0;
}

struct GlobWalk {
  const GlobPattern& pattern;
  const NormalPath& base;
  std::vector<GlobMatch>* out;

  Status walk(int dirfd, const std::string& rel) {
    WEFT_ASSIGN_OR_RETURN(std::vector<DirEntry> entries, read_dir(dirfd, false));
    for (const DirEntry& e : entries) {
      if (skipped(e)) continue;
      std::string child = rel.empty() ? e.name : rel + "/" + e.name;
      if (pattern.matches(child)) {
        out->push_back({base.is_root() ? child : base.str() + "/" + child, e.type == DT_REG,
                        file_type_of_dirent(e.type)});
      }
      if (e.type == DT_DIR && pattern.could_match_below(child)) {
        int fd = ::openat(dirfd, e.name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) continue;  // vanished or unreadable: skip, like find
        UniqueFd sub(fd);
        WEFT_RETURN_IF_ERROR(walk(sub.get(), child));
      }
    }
    return Status();
  }
};

// What a grep scan needs besides the tree.
struct GrepScan {
  const GrepQuery& query;
  const NormalPath& base;
  int64_t max_bytes;
  bool allow_hard_links;
  const std::atomic<bool>* cancel;

  bool cancel_requested() const { return cancel && cancel->load(std::memory_order_relaxed); }

  // Searches file `name` in `dirfd` (result path `path`) into `out`; a file that
  // vanished, is not regular, is too big or has hard links (unless allowed) is
  // skipped, like rg skips what it cannot read.
  void file(int dirfd, const std::string& name, const std::string& path, std::string* buffer,
            std::vector<GrepMatch>* out) const {
    int fd = ::openat(dirfd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return;
    UniqueFd in(fd);
    struct stat st;
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > max_bytes) return;
    if (st.st_nlink > 1 && !allow_hard_links) return;
    ChunkReader reader(fd, path, max_bytes, buffer, st.st_size);
    // A read error mid-file keeps what was found before it, like rg.
    (void)query.search_stream([&] { return reader.next(); }, path, out);
  }

  std::string result_path(const std::string& rel) const {
    return base.is_root() ? rel : base.str() + "/" + rel;
  }
};

// Depth-first walk below `dir` in byte order of paths (read_dir's order),
// skipping .git and temp files: calls on_file(dir, name, rel) for each regular
// file the query selects; stops as soon as stop() returns true.
template <typename Stop, typename OnFile>
void walk_files(const GrepScan& scan, const std::shared_ptr<UniqueFd>& dir, const std::string& rel,
                const Stop& stop, const OnFile& on_file) {
  auto entries = read_dir(dir->get(), true);
  if (!entries.ok()) return;
  for (const DirEntry& e : *entries) {
    if (stop()) return;
    if (skipped(e)) continue;
    std::string child = rel.empty() ? e.name : rel + "/" + e.name;
    if (e.type == DT_DIR) {
      int fd =
          ::openat(dir->get(), e.name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (fd < 0) continue;  // vanished or unreadable: skip, like rg
      walk_files(scan, std::make_shared<UniqueFd>(fd), child, stop, on_file);
    } else if (e.type == DT_REG && scan.query.selects(child, e.name)) {
      on_file(dir, e.name, child);
    }
  }
}

// The single-threaded scan. Returns false when cancelled.
bool grep_walk(const GrepScan& scan, std::shared_ptr<UniqueFd> root, std::vector<GrepMatch>* out) {
  std::string buffer;
  bool cancelled = false;
  walk_files(
      scan, root, "",
      [&] {
        if (scan.cancel_requested()) cancelled = true;
        return cancelled || out->size() >= scan.query.max();
      },
      [&](const std::shared_ptr<UniqueFd>& dir, const std::string& name, const std::string& rel) {
        scan.file(dir->get(), name, scan.result_path(rel), &buffer, out);
      });
  return !cancelled;
}

// The multi-threaded scan: the calling thread walks (same order as grep_walk)
// and queues files; workers search them; finished files at the front of the
// queue are appended to the result in walk order. Files are dispatched in
// walk order, so once the finished files hold max() matches, every file taken
// so far is a prefix of the walk holding them: dispatch stops, the files in
// flight finish, and the first max() matches are exactly grep_walk's.
class ParallelGrepWalk {
 public:
  ParallelGrepWalk(const GrepScan& scan, std::vector<GrepMatch>* out) : scan_(scan), out_(out) {}

  // Scans the tree below `dirfd` with `threads` threads (the caller included).
  // Returns false when cancelled.
  bool run(std::shared_ptr<UniqueFd> root, size_t threads) {
    max_workers_ = threads - 1;
    walk(std::move(root));
    {
      std::lock_guard<std::mutex> lock(mu_);
      walk_done_ = true;
    }
    cv_.notify_all();
    work();
    for (std::thread& t : workers_) t.join();
    if (out_->size() > scan_.query.max()) out_->resize(scan_.query.max());
    return !cancelled_;
  }

 private:
  struct Item {
    std::shared_ptr<UniqueFd> dir;  // closed once its last file is searched
    std::string name;
    std::string path;
    std::vector<GrepMatch> matches;
    bool done = false;
  };
  static constexpr size_t kMaxQueued = 512;  // files walked ahead of the workers

  size_t end() const { return first_ + items_.size(); }

  // Under the lock: true once no more files are to be dispatched.
  bool stopping() {
    if (!stop_ && scan_.cancel_requested()) cancelled_ = stop_ = true;
    return stop_;
  }

  void walk(std::shared_ptr<UniqueFd> root) {
    walk_files(
        scan_, root, "",
        [&] {
          std::lock_guard<std::mutex> lock(mu_);
          return stopping();
        },
        [&](const std::shared_ptr<UniqueFd>& dir, const std::string& name, const std::string& rel) {
          queue(dir, name, scan_.result_path(rel));
        });
  }

  void queue(const std::shared_ptr<UniqueFd>& dir, const std::string& name, std::string path) {
    std::unique_lock<std::mutex> lock(mu_);
    // Too far ahead: search one file here instead of queueing more (bounds the fds held).
    while (end() - next_ >= kMaxQueued && !stopping()) search_next(lock, &walker_buffer_);
    items_.push_back(Item{dir, name, std::move(path), {}, false});
    const bool spawn = workers_.size() < max_workers_ && end() - next_ > workers_.size();
    lock.unlock();
    cv_.notify_one();
    // Workers start as files queue up, so a small tree does not pay for idle threads.
    if (spawn) {
      try {
        workers_.emplace_back([this] { work(); });
      } catch (const std::system_error&) {
        max_workers_ = workers_.size();  // no more threads: the ones running (and the caller) do
      }
    }
  }

  // Worker loop (the caller joins it once the walk is done).
  void work() {
    std::string buffer;  // this thread's file contents
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      cv_.wait(lock, [&] { return next_ < end() || walk_done_ || stop_; });
      if (stopping() || next_ == end()) {
        if (walk_done_ || stop_) return;
        continue;
      }
      search_next(lock, &buffer);
    }
  }

  // Searches the next queued file with the lock released, then appends every
  // finished file at the front of the queue to the result.
  // REQUIRES: lock held, next_ < end().
  void search_next(std::unique_lock<std::mutex>& lock, std::string* buffer) {
    Item& item = items_[next_++ - first_];  // deque: stays put while others are pushed/popped
    lock.unlock();
    scan_.file(item.dir->get(), item.name, item.path, buffer, &item.matches);
    item.dir.reset();
    lock.lock();
    item.done = true;
    found_ += item.matches.size();
    if (found_ >= scan_.query.max()) stop_ = true;
    while (!items_.empty() && items_.front().done) {
      for (GrepMatch& m : items_.front().matches) out_->push_back(std::move(m));
      items_.pop_front();
      ++first_;
    }
    if (stop_) cv_.notify_all();
  }

  const GrepScan& scan_;
  std::vector<GrepMatch>* out_;
  std::string walker_buffer_;         // for files the walker searches itself
  std::vector<std::thread> workers_;  // touched by the walking thread only
  size_t max_workers_ = 0;
  std::mutex mu_;
  std::condition_variable cv_;  // a file queued, the walk done, or stop_
  std::deque<Item> items_;      // files from index first_ on, not yet appended
  size_t first_ = 0;
  size_t next_ = 0;  // index of the next file to search
  size_t found_ = 0;
  bool walk_done_ = false;
  bool stop_ = false;
  bool cancelled_ = false;
};

}  // namespace

Result<std::vector<GlobMatch>> HostFilesystem::do_glob(std::string_view pattern,
                                                       std::string_view path) {
  WEFT_ASSIGN_OR_RETURN(GlobPattern g, GlobPattern::compile(pattern));
  WEFT_ASSIGN_OR_RETURN(NormalPath base, normalize(path));
  auto dir = root_.open_beneath(base, O_RDONLY | O_DIRECTORY);
  if (!dir.ok()) {
    if (dir.status().code() == StatusCode::kNotADirectory && do_stat(path).ok()) {
      return not_a_directory("glob base '" + base.str() + "' is a file, not a directory");
    }
    return dir.status();
  }
  std::vector<GlobMatch> out;
  GlobWalk walk{g, base, &out};
  WEFT_RETURN_IF_ERROR(walk.walk(dir->get(), ""));
  std::sort(out.begin(), out.end(),
            [](const GlobMatch& a, const GlobMatch& b) { return a.path < b.path; });
  return out;
}

Result<std::vector<GrepMatch>> HostFilesystem::do_grep(std::string_view pattern,
                                                       std::string_view path,
                                                       const std::optional<std::string>& glob,
                                                       std::optional<int64_t> max_matches) {
  return do_grep_with(pattern, path, GrepOptions{glob, max_matches, nullptr, 1});
}

Result<std::vector<GrepMatch>> HostFilesystem::do_grep_with(std::string_view pattern,
                                                            std::string_view path,
                                                            const GrepOptions& options) {
  FsLimits query_limits = limits();
  if (options.max_line_bytes) {
    query_limits.max_line_bytes = std::min(query_limits.max_line_bytes, *options.max_line_bytes);
  }
  WEFT_ASSIGN_OR_RETURN(
      auto query, GrepQuery::compile(pattern, options.glob, options.max_matches, query_limits));
  WEFT_ASSIGN_OR_RETURN(NormalPath base, normalize(path));
  WEFT_ASSIGN_OR_RETURN(UniqueFd fd, root_.open_beneath(base, O_RDONLY | O_NONBLOCK));
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) return errno_status(errno, "stat", base.str());
  std::vector<GrepMatch> out;
  if (S_ISDIR(st.st_mode)) {
    GrepScan scan{*query, base, limits().max_read_file_bytes, options_.allow_hard_links,
                  options.cancel};
    size_t threads = options.threads > 0 ? static_cast<size_t>(options.threads)
                                         : std::max(1u, std::thread::hardware_concurrency());
    threads = std::min<size_t>(threads, kMaxGrepThreads);
    auto root = std::make_shared<UniqueFd>(std::move(fd));
    bool completed = threads > 1 ? ParallelGrepWalk(scan, &out).run(std::move(root), threads)
                                 : grep_walk(scan, std::move(root), &out);
    if (!completed) return cancelled_error("grep was cancelled");
  } else {
    WEFT_RETURN_IF_ERROR(check_file(st, base));
    if (st.st_size > limits().max_read_file_bytes) {
      return resource_exhausted("'" + base.str() + "' is " + std::to_string(st.st_size) +
                                " bytes, over the read limit of " +
                                std::to_string(limits().max_read_file_bytes));
    }
    std::string buffer;
    ChunkReader reader(fd.get(), base.str(), limits().max_read_file_bytes, &buffer, st.st_size);
    WEFT_RETURN_IF_ERROR(query->search_stream([&] { return reader.next(); }, base.str(), &out));
  }
  return out;
}

}  // namespace weft::fs::internal
