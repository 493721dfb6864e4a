// Workspace: what the MCP tools act on. It wraps a weft::fs::Filesystem (a
// host directory, confined by the kernel, or a bubblewrap SandboxWorkspace
// whose exec() backs shell_exec) and adds the server's own path rules: paths
// are relative to the root, or absolute inside it, and the client's roots
// may narrow them further to some subtrees.
//
// Thread safety: immutable after construction apart from the change locks; the
// Filesystem is itself safe for concurrent calls, so tools share one Workspace
// across workers.
#ifndef WEFT_SERVER_WORKSPACE_H_
#define WEFT_SERVER_WORKSPACE_H_

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "weft/base/status.h"
#include "weft/fs/change_lock.h"
#include "weft/fs/filesystem.h"
#include "weft/fs/sandbox.h"
#include "weft/kernel/kernel.h"

namespace weft::server {

// What lock_for_change holds: this process's change mutex and, when the
// workspace has one, the cross-process lock of the named paths.
struct ChangeGuard {
  std::unique_lock<std::mutex> local;
  fs::ChangeLock::Held across;
};

class Workspace {
 public:
  // `sandbox`, when given, is the same object as `fs` (exec() for shell_exec).
  // `change_lock`, when given, is the one `fs` was opened with (HostOptions).
  explicit Workspace(std::shared_ptr<fs::Filesystem> fs,
                     std::shared_ptr<fs::SandboxWorkspace> sandbox = nullptr,
                     std::shared_ptr<fs::ChangeLock> change_lock = nullptr);

  fs::Filesystem& fs() const { return *fs_; }
  const std::shared_ptr<fs::Filesystem>& shared_fs() const { return fs_; }
  // The workspace kernel the changing tools go through (file blocks, rules,
  // history) when this process runs it, else null (a front end sends those
  // tools to the kernel's process; read-only and in-memory workspaces have
  // none and change files directly). Set once, possibly while serving (a
  // front end that takes over from a dead kernel); never unset.
  kernel::Kernel* kernel() const { return kernel_ptr_.load(std::memory_order_acquire); }
  void set_kernel(std::shared_ptr<kernel::Kernel> kernel);
  // Tells the kernel (here or in another process) that a tool read `path`, so
  // that a text file gets its block on first access. Set before serving; a
  // no-op without a kernel.
  void set_read_observer(std::function<void(const std::string& path)> observer) {
    read_observer_ = std::move(observer);
  }
  void note_read(const std::string& path) const {
    if (read_observer_) read_observer_(path);
  }
  // The sandbox, or null when the server runs without --sandbox.
  fs::SandboxWorkspace* sandbox() const { return sandbox_.get(); }
  // The absolute root ("/" for in-memory workspaces).
  std::string root() const { return fs_->root(); }

  // Serialises the tools that change the workspace, so that two concurrent
  // read-modify-write calls (fs_edit, fs_patch) cannot lose one another's change:
  // within this process always, and against other processes on the same root for
  // `paths` (normalised root-relative) when there is a change lock. A tool that
  // makes one Filesystem call needs no paths: the Filesystem locks that call.
  // Reads do not take it. kUnavailable when the lock file cannot be locked.
  Result<ChangeGuard> lock_for_change(const std::vector<std::string>& paths = {}) const;

  // The normalised root-relative path ("." for the root) of `path` (relative,
  // or absolute inside the root). kPermissionDenied when it leaves the root or
  // lies outside every client root in `roots` (empty = no narrowing);
  // kInvalidArgument for malformed paths. Messages quote the path.
  Result<std::string> resolve(std::string_view path, const std::vector<std::string>& roots) const;

  // Client root URIs (file://...) to root-relative prefixes; URIs outside the
  // workspace, or not file URIs, are dropped. A root containing the whole
  // workspace maps to ".".
  std::vector<std::string> map_roots(const std::vector<std::string>& uris) const;

  // file:// URI of a root-relative path, and back (kInvalidArgument for a
  // non-file URI, kPermissionDenied outside the root).
  std::string uri_of(std::string_view relative) const;
  Result<std::string> path_of_uri(std::string_view uri) const;

 private:
  std::shared_ptr<fs::Filesystem> fs_;
  std::shared_ptr<fs::SandboxWorkspace> sandbox_;
  std::shared_ptr<fs::ChangeLock> change_lock_;
  std::mutex kernel_mu_;
  std::shared_ptr<kernel::Kernel> kernel_;
  std::atomic<kernel::Kernel*> kernel_ptr_{nullptr};
  std::function<void(const std::string&)> read_observer_;
  mutable std::mutex change_mu_;
};

}  // namespace weft::server

#endif  // WEFT_SERVER_WORKSPACE_H_
