// SandboxWorkspace: a HostFilesystem over an overlay directory plus exec()
// through bubblewrap. The sandbox's root is bubblewrap's own tmpfs holding
// only the configured read-only paths (system directories, a few /etc
// files), a private /tmp, a minimal /dev, /proc, all namespaces unshared (no
// network) and the overlay bound read-write at /workspace. Whatever is not
// listed (home directories, /root, /var, /work, the user's state directory
// with the snapshot store) does not exist inside.
#include "weft/fs/sandbox.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>

#include "common.h"
#include "host_io.h"
#include "weft/fs/state_dir.h"

extern char** environ;

namespace weft::fs {
namespace {

namespace stdfs = std::filesystem;
using Ms = std::chrono::milliseconds;

struct Spawned {
  pid_t pid = -1;
  internal::UniqueFd out, err;
};

Result<Spawned> spawn(const std::vector<std::string>& argv, const std::vector<std::string>& env) {
  int out_pipe[2], err_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) return internal::errno_status(errno, "pipe", "stdout");
  if (::pipe2(err_pipe, O_CLOEXEC) != 0) {
    ::close(out_pipe[0]);
    ::close(out_pipe[1]);
    return internal::errno_status(errno, "pipe", "stderr");
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, out_pipe[1], 1);
  posix_spawn_file_actions_adddup2(&fa, err_pipe[1], 2);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  // The command starts with no signal blocked and the usual dispositions,
  // whatever the server's threads block (SIGINT, SIGTERM) or ignore (SIGPIPE).
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK |
                                      POSIX_SPAWN_SETSIGDEF);
  posix_spawnattr_setpgroup(&attr, 0);
  sigset_t no_signals, default_signals;
  sigemptyset(&no_signals);
  posix_spawnattr_setsigmask(&attr, &no_signals);
  sigemptyset(&default_signals);
  for (int signal : {SIGINT, SIGTERM, SIGPIPE, SIGQUIT}) sigaddset(&default_signals, signal);
  posix_spawnattr_setsigdefault(&attr, &default_signals);
  std::vector<char*> args, envp;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  for (const auto& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  Spawned s;
  int rc = ::posix_spawnp(&s.pid, args[0], &fa, &attr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  s.out = internal::UniqueFd(out_pipe[0]);
  s.err = internal::UniqueFd(err_pipe[0]);
  if (rc != 0) {
    return unavailable("cannot start '" + argv[0] + "': " + std::strerror(rc) +
                       " (is bubblewrap installed? apt-get install bubblewrap)");
  }
  return s;
}

// Collects both streams until EOF or the deadline; kills the group on timeout.
ExecResult collect(Spawned& s, Ms timeout, int64_t max_bytes) {
  ExecResult r;
  const auto start = std::chrono::steady_clock::now();
  auto deadline = start + timeout;
  std::string* sinks[2] = {&r.stdout_text, &r.stderr_text};
  internal::UniqueFd* fds[2] = {&s.out, &s.err};
  char buf[65536];
  while (fds[0]->valid() || fds[1]->valid()) {
    auto left = std::chrono::duration_cast<Ms>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      r.timed_out = true;
      ::kill(-s.pid, SIGKILL);
      break;
    }
    pollfd p[2];
    nfds_t n = 0;
    int which[2];
    for (int i = 0; i < 2; ++i) {
      if (fds[i]->valid()) {
        p[n] = {fds[i]->get(), POLLIN, 0};
        which[n++] = i;
      }
    }
    int rc = ::poll(p, n, static_cast<int>(std::min<int64_t>(left.count(), 1000)));
    if (rc < 0 && errno != EINTR) break;
    for (nfds_t k = 0; k < n && rc > 0; ++k) {
      if (!(p[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      int i = which[k];
      ssize_t got = ::read(fds[i]->get(), buf, sizeof buf);
      if (got <= 0) {
        if (got < 0 && errno == EINTR) continue;
        fds[i]->reset();
        continue;
      }
      (i == 0 ? r.stdout_bytes : r.stderr_bytes) += got;
      size_t room = static_cast<size_t>(
          std::max<int64_t>(0, max_bytes - static_cast<int64_t>(sinks[i]->size())));
      if (static_cast<size_t>(got) > room) r.truncated = true;
      sinks[i]->append(buf, std::min(static_cast<size_t>(got), room));
    }
  }
  int status = 0;
  while (::waitpid(s.pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.exit_code = 128 + WTERMSIG(status);
  r.elapsed_ms =
      std::chrono::duration_cast<Ms>(std::chrono::steady_clock::now() - start).count();
  return r;
}

bool is_within(const std::string& path, const std::string& dir) {
  return path == dir || (path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 &&
                         (dir == "/" || path[dir.size()] == '/'));
}

Status check_read_only_path(const std::string& p) {
  bool ok = !p.empty() && p[0] == '/' && p.find('\0') == std::string::npos;
  for (size_t start = 1; ok && start <= p.size();) {
    size_t slash = std::min(p.find('/', start), p.size());
    std::string_view seg(p.data() + start, slash - start);
    ok = seg != "." && seg != ".." && (!seg.empty() || slash == p.size());
    start = slash + 1;
  }
  if (!ok) {
    return invalid_argument("sandbox read-only path '" + p +
                            "' must be absolute, without '.' or '..' segments");
  }
  return Status();
}

// The bubblewrap arguments that build the sandbox's root: /dev, /proc, a
// private /tmp and /var/tmp, then each path bound read-only where it exists
// (links recreated as links; a path under /tmp lands in the private one).
// Every namespace is unshared (the PID namespace too: when the command ends,
// or bubblewrap is killed, whatever it left running dies with it), the
// network only unless `network`.
std::vector<std::string> root_binds(const std::string& bwrap,
                                    const std::vector<std::string>& read_only,
                                    bool network = false) {
  std::vector<std::string> a{
      bwrap,    "--unshare-all", "--die-with-parent", "--new-session", "--dev",   "/dev",
      "--proc", "/proc",         "--tmpfs",           "/tmp",          "--tmpfs", "/var/tmp"};
  if (network) {
    a.push_back("--share-net");
    a.insert(a.end(), {"--ro-bind-try", "/etc/resolv.conf", "/etc/resolv.conf"});
  }
  for (const std::string& path : read_only) {
    struct stat st;
    if (::lstat(path.c_str(), &st) != 0) continue;
    if (S_ISLNK(st.st_mode)) {
      std::error_code ec;
      std::string target = stdfs::read_symlink(path, ec).string();
      if (!ec) a.insert(a.end(), {"--symlink", target, path});
    } else {
      a.insert(a.end(), {"--ro-bind-try", path, path});
    }
  }
  return a;
}

// Binds each existing workspace path read-only over itself under /workspace
// (after the workspace's own bind, so it wins). A path is checked to be
// normalised and to stay inside the root without following a link: a
// symbolic link is bound as the link's own directory entry would not be, so
// it is refused rather than bound to wherever it points.
Status add_workspace_binds(const std::string& root, const std::vector<std::string>& paths,
                           std::vector<std::string>* args, std::vector<std::string>* missing) {
  std::error_code ec;
  const std::string real_root = stdfs::canonical(root, ec).string();
  if (ec) return unavailable("the workspace root '" + root + "': " + ec.message());
  for (const std::string& p : paths) {
    bool ok = !p.empty() && p[0] != '/' && p.find('\0') == std::string::npos;
    for (size_t start = 0; ok && start < p.size();) {
      size_t slash = std::min(p.find('/', start), p.size());
      std::string_view seg(p.data() + start, slash - start);
      ok = !seg.empty() && seg != "." && seg != "..";
      start = slash + 1;
    }
    if (!ok) {
      return invalid_argument("read-only workspace path '" + p +
                              "' must be root-relative, without '.', '..' or empty segments");
    }
    std::string host = root + "/" + p;
    struct stat st;
    if (::lstat(host.c_str(), &st) != 0 || S_ISLNK(st.st_mode)) {
      missing->push_back(p);
      continue;
    }
    // Directories above it that are links would move the bind elsewhere.
    std::string real = stdfs::canonical(host, ec).string();
    if (ec || !is_within(real, real_root)) {
      missing->push_back(p);
      continue;
    }
    args->insert(args->end(), {"--ro-bind", host, "/workspace/" + p});
  }
  return Status();
}

}  // namespace

std::vector<std::string> default_sandbox_read_only_paths() {
  return {"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
          // the dynamic loader, users and name service
          "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/passwd", "/etc/group",
          "/etc/nsswitch.conf", "/etc/host.conf", "/etc/hosts",
          // certificates, alternatives (/usr/bin links point here), time, locale
          "/etc/ssl", "/etc/ca-certificates", "/etc/alternatives", "/etc/localtime",
          "/etc/timezone", "/etc/locale.alias", "/etc/locale.conf", "/etc/default/locale",
          // shells and common tools' system-wide configuration
          "/etc/profile", "/etc/bash.bashrc", "/etc/inputrc", "/etc/mime.types", "/etc/magic",
          "/etc/gitconfig", "/etc/python3", "/etc/perl", "/etc/shells",
          // what the system is (Python's platform module, pip, build scripts read these)
          "/etc/os-release", "/etc/debian_version", "/etc/lsb-release"};
}

namespace {

class Sandbox final : public SandboxWorkspace {
 public:
  Sandbox(std::unique_ptr<Filesystem> host, SandboxOptions options, Status bwrap_status,
          bool owns_overlay)
      : host_(std::move(host)),
        options_(std::move(options)),
        bwrap_status_(std::move(bwrap_status)),
        owns_overlay_(owns_overlay) {}

  ~Sandbox() override {
    if (owns_overlay_ && !options_.keep_overlay) {
      std::error_code ec;
      stdfs::remove_all(host_->root(), ec);
    }
  }

  std::string root() const override { return host_->root(); }
  bool read_only() const override { return host_->read_only(); }
  const FsLimits& limits() const override { return host_->limits(); }
  std::string overlay_dir() const override { return host_->root(); }

  Result<ExecResult> exec(const std::vector<std::string>& argv,
                          const ExecOptions& options) override {
    if (argv.empty()) return invalid_argument("exec needs a command (argv is empty)");
    if (options.timeout.count() <= 0) return invalid_argument("exec timeout must be positive");
    if (options.max_output_bytes < 0) return invalid_argument("max_output_bytes is negative");
    WEFT_RETURN_IF_ERROR(bwrap_status_);
    WEFT_ASSIGN_OR_RETURN(NormalPath cwd, normalize_path(options.cwd, "/workspace", limits()));
    auto st = host_->stat(cwd.str());
    if (!st.ok()) return not_found("exec cwd '" + cwd.str() + "' does not exist in the workspace");
    if (!st->is_directory) return not_a_directory("exec cwd '" + cwd.str() + "' is a file");
    if (options.read_only_workspace_paths.size() > kMaxReadOnlyWorkspacePaths) {
      return invalid_argument("exec: " + std::to_string(options.read_only_workspace_paths.size()) +
                              " read-only workspace paths, over the limit of " +
                              std::to_string(kMaxReadOnlyWorkspacePaths));
    }
    std::vector<std::string> args =
        root_binds(options_.bwrap_path, options_.read_only_paths, options.network);
    if (options_.host.git_dir) {
      // Only reachable when a configured path contains the store: hide it.
      std::error_code ec;
      for (const std::string& p : options_.read_only_paths) {
        if (is_within(*options_.host.git_dir, p) &&
            stdfs::is_directory(*options_.host.git_dir, ec)) {
          args.insert(args.end(), {"--tmpfs", *options_.host.git_dir});
          break;
        }
      }
    }
    // Last, the root tmpfs itself becomes read-only (only /workspace and the
    // private /tmp, /var/tmp stay writable).
    args.insert(args.end(), {read_only() ? "--ro-bind" : "--bind", root(), "/workspace"});
    std::vector<std::string> unprotected;
    WEFT_RETURN_IF_ERROR(
        add_workspace_binds(root(), options.read_only_workspace_paths, &args, &unprotected));
    args.insert(
        args.end(),
        {"--remount-ro", "/", "--chdir",
         cwd.is_root() ? std::string("/workspace") : "/workspace/" + cwd.str(), "--"});
    args.insert(args.end(), argv.begin(), argv.end());
    std::map<std::string, std::string> env = options.env;
    env.emplace("PATH", "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin");
    env.emplace("HOME", "/workspace");
    env.emplace("LANG", "C.UTF-8");
    std::vector<std::string> envv;
    for (const auto& [k, v] : env) {
      if (k.empty() || k.find('=') != std::string::npos || k.find('\0') != std::string::npos) {
        return invalid_argument("environment variable name '" + k + "' is invalid");
      }
      envv.push_back(k + "=" + v);
    }
    WEFT_ASSIGN_OR_RETURN(Spawned s, spawn(args, envv));
    ExecResult result = collect(s, options.timeout, options.max_output_bytes);
    result.unprotected = std::move(unprotected);
    return result;
  }

 protected:
  Result<ReadResult> do_read(std::string_view p, int64_t o, std::optional<int64_t> l) override {
    return host_->read(p, o, l);
  }
  Result<ReadBytesResult> do_read_bytes(std::string_view p, int64_t o,
                                        std::optional<int64_t> l) override {
    return host_->read_bytes(p, o, l);
  }
  bool do_exists(std::string_view p) override { return host_->exists(p); }
  Result<FileStat> do_stat(std::string_view p) override { return host_->stat(p); }
  Result<std::vector<FileEntry>> do_list(std::string_view p) override { return host_->list(p); }
  Result<std::vector<GlobMatch>> do_glob(std::string_view pat, std::string_view p) override {
    return host_->glob(pat, p);
  }
  Result<std::vector<GrepMatch>> do_grep(std::string_view pat, std::string_view p,
                                         const std::optional<std::string>& g,
                                         std::optional<int64_t> m) override {
    return host_->grep(pat, p, g, m);
  }
  Result<std::vector<GrepMatch>> do_grep_with(std::string_view pat, std::string_view p,
                                              const GrepOptions& options) override {
    return host_->grep(pat, p, options);  // the host scan polls options.cancel
  }
  Result<WriteResult> do_write(std::string_view p, std::string_view c, WriteMode mode, bool parents,
                               bool text) override {
    return text ? host_->write(p, c, mode, parents) : host_->write_bytes(p, c, mode, parents);
  }
  Status do_remove(std::string_view p, bool r) override { return host_->remove(p, r); }
  Status do_mkdir(std::string_view p, bool parents, bool ok) override {
    return host_->mkdir(p, parents, ok);
  }
  Status do_move(std::string_view a, std::string_view b, bool o) override {
    return host_->move(a, b, o);
  }
  Status do_copy(std::string_view a, std::string_view b, bool o) override {
    return host_->copy(a, b, o);
  }
  Result<FilesystemSnapshot> do_snapshot(std::optional<std::string> tag) override {
    return host_->snapshot(std::move(tag));
  }
  Status do_restore(const FilesystemSnapshot& s) override { return host_->restore(s); }
  Result<std::vector<FilesystemSnapshot>> do_snapshots() override { return host_->snapshots(); }

 private:
  std::unique_ptr<Filesystem> host_;
  SandboxOptions options_;
  Status bwrap_status_;
  bool owns_overlay_;
};

}  // namespace

Status sandbox_available(const std::string& bwrap_path) {
  std::vector<std::string> args = root_binds(bwrap_path, default_sandbox_read_only_paths());
  args.insert(args.end(), {"--", "true"});
  auto s = spawn(args, {"PATH=/usr/bin:/bin"});
  if (!s.ok()) return s.status();
  ExecResult r = collect(*s, Ms(10'000), 4096);
  if (r.exit_code != 0) {
    return unavailable("bubblewrap cannot create a sandbox on this machine (exit " +
                       std::to_string(r.exit_code) +
                       "): " + (r.stderr_text.empty() ? std::string("no message") : r.stderr_text) +
                       "; unprivileged user namespaces may be disabled");
  }
  return Status();
}

Result<std::unique_ptr<SandboxWorkspace>> make_sandbox_workspace(SandboxOptions options) {
  options.read_only_paths.insert(options.read_only_paths.end(),
                                 options.extra_read_only_paths.begin(),
                                 options.extra_read_only_paths.end());
  options.extra_read_only_paths.clear();
  for (const std::string& p : options.read_only_paths)
    WEFT_RETURN_IF_ERROR(check_read_only_path(p));
  bool owns = false;
  std::error_code ec;
  if (!options.overlay_dir) {
    std::string base = user_state_home() + "/weft/sandboxes";
    stdfs::create_directories(base, ec);
    std::string templ = base + "/ws-XXXXXX";
    if (!::mkdtemp(templ.data())) return internal::errno_status(errno, "create overlay in", base);
    options.overlay_dir = templ;
    owns = true;
  } else if (!stdfs::exists(*options.overlay_dir, ec)) {
    stdfs::create_directories(*options.overlay_dir, ec);
    if (ec)
      return unavailable("cannot create overlay '" + *options.overlay_dir + "': " + ec.message());
  }
  HostOptions host = options.host;
  host.read_only = false;  // hydrate first, then honour read_only
  WEFT_ASSIGN_OR_RETURN(auto writable, make_host_filesystem(*options.overlay_dir, host));
  for (const HostMount& m : options.mounts) {
    auto st = hydrate_from_host(*writable, m, options.allowed_host_roots);
    if (!st.ok()) return st.status();
  }
  std::unique_ptr<Filesystem> fs = std::move(writable);
  if (options.host.read_only) {
    WEFT_ASSIGN_OR_RETURN(fs, make_host_filesystem(*options.overlay_dir, options.host));
  }
  if (!options.host.git_dir) options.host.git_dir = default_snapshot_git_dir(fs->root());
  // Probing bubblewrap costs a process launch: do it once per path.
  static std::mutex probe_mu;
  static std::map<std::string, Status> probes;
  Status bwrap;
  {
    std::lock_guard lock(probe_mu);
    auto it = probes.find(options.bwrap_path);
    if (it == probes.end()) {
      it = probes.emplace(options.bwrap_path, sandbox_available(options.bwrap_path)).first;
    }
    bwrap = it->second;
  }
  return std::unique_ptr<SandboxWorkspace>(
      new Sandbox(std::move(fs), std::move(options), std::move(bwrap), owns));
}

}  // namespace weft::fs
