// SandboxWorkspace: the seed's container workspace, with bubblewrap as the
// runtime. An overlay directory on the host, hydrated from host mounts and
// served through a HostFilesystem (so it is a Filesystem itself, snapshots
// included), in which exec() runs commands inside `bwrap`: the overlay bound
// read-write at /workspace, only the system paths programs need read-only
// (not /home, /root, /var, the snapshot store...), a private /tmp, no
// network, a time limit and bounded output.
//
// Thread safety: as Filesystem (filesystem.h); exec() may run concurrently
// with itself and with filesystem calls.
#ifndef WEFT_FS_SANDBOX_H_
#define WEFT_FS_SANDBOX_H_

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "weft/fs/filesystem.h"
#include "weft/fs/hydrate.h"

namespace weft::fs {

struct ExecResult {
  int exit_code = -1;  // the command's exit status; 128+N if killed by signal N
  std::string stdout_text;
  std::string stderr_text;
  bool timed_out = false;  // killed after the timeout
  bool truncated = false;  // stdout or stderr exceeded max_output_bytes
  int64_t stdout_bytes = 0;  // what the command wrote to each stream, kept or not
  int64_t stderr_bytes = 0;
  int64_t elapsed_ms = 0;    // from the start of bubblewrap to the command's end
  // ExecOptions::read_only_workspace_paths that did not exist (not bound).
  std::vector<std::string> unprotected;
};

struct ExecOptions {
  // Working directory, relative to the workspace root ("." = /workspace).
  std::string cwd = ".";
  // The command's whole environment (it does not inherit weft's); PATH,
  // HOME=/workspace and LANG=C.UTF-8 are set unless given here.
  std::map<std::string, std::string> env;
  std::chrono::milliseconds timeout{30'000};
  // Per stream; the rest is read and dropped (truncated = true).
  int64_t max_output_bytes = 1 << 20;
  // Workspace paths (root-relative, normalised; files or directories) bound
  // read-only over /workspace: writes, truncation, chmod fail with EROFS and
  // rename, unlink or link over them with EBUSY/EXDEV, whatever the command
  // does. Paths that do not exist are skipped (a bind needs an existing
  // target) and listed in ExecResult::unprotected. At most
  // kMaxReadOnlyWorkspacePaths, else kInvalidArgument.
  std::vector<std::string> read_only_workspace_paths;
  // Share the host's network (and its /etc/resolv.conf) with the command.
  bool network = false;
};

inline constexpr size_t kMaxReadOnlyWorkspacePaths = 4096;

// The host paths a sandbox sees read-only by default: /usr, the /bin, /sbin
// and /lib* links or directories, and the files under /etc that programs
// read (dynamic loader cache, passwd/group, name service, certificates,
// alternatives, time zone, locale, shell configuration, OS release).
std::vector<std::string> default_sandbox_read_only_paths();

struct SandboxOptions {
  // The overlay directory; created if absent. Default: a fresh directory
  // under $XDG_STATE_HOME/weft/sandboxes (removed with the workspace unless
  // keep_overlay).
  std::optional<std::string> overlay_dir;
  bool keep_overlay = false;
  // Copied into the overlay at creation (see hydrate.h).
  std::vector<HostMount> mounts;
  std::vector<std::string> allowed_host_roots;
  HostOptions host;  // limits, read_only, snapshot store of the overlay
  std::string bwrap_path = "bwrap";
  // Host paths visible (read-only, at the same path) inside the sandbox;
  // missing ones are skipped, a symbolic link stays a link. Nothing else of
  // the host is visible: the workspace is at /workspace, /tmp is private.
  std::vector<std::string> read_only_paths = default_sandbox_read_only_paths();
  // Added to read_only_paths (e.g. a toolchain under /opt). Absolute paths
  // without "." or ".." segments, else make_sandbox_workspace fails with
  // kInvalidArgument.
  std::vector<std::string> extra_read_only_paths;
};

class SandboxWorkspace : public Filesystem {
 public:
  // Runs argv[0] (looked up in the sandbox's PATH) inside the sandbox.
  // kInvalidArgument (empty argv, bad cwd/timeout), kNotFound (cwd missing),
  // kUnavailable (bubblewrap missing or unable to create namespaces here; the
  // message says which). A command that fails is not an error: see exit_code.
  virtual Result<ExecResult> exec(const std::vector<std::string>& argv,
                                  const ExecOptions& options = {}) = 0;

  // The overlay directory (== root()).
  virtual std::string overlay_dir() const = 0;
};

// Creates the overlay, hydrates it and checks bubblewrap once (the workspace
// is usable as a Filesystem even when bubblewrap is not: then exec() returns
// kUnavailable). Errors: as make_host_filesystem and hydrate_from_host.
Result<std::unique_ptr<SandboxWorkspace>> make_sandbox_workspace(SandboxOptions options = {});

// OK when `bwrap_path` can create the namespaces exec() needs on this machine
// (probed with the default read-only paths);
// kUnavailable with bubblewrap's own message otherwise.
Status sandbox_available(const std::string& bwrap_path = "bwrap");

}  // namespace weft::fs

#endif  // WEFT_FS_SANDBOX_H_
