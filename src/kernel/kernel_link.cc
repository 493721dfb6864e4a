// KernelLink: election of the kernel of a state directory, and calls to it
// (see include/weft/kernel/kernel_link.h). The socket's two sides are
// link_server.h and link_client.h.
#include "weft/kernel/kernel_link.h"

#include <fcntl.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <thread>

#include "kernel/link_client.h"
#include "kernel/link_server.h"
#include "weft/fs/state_dir.h"

namespace weft::kernel {

struct KernelLink::Impl {
  std::string dir;
  std::string lock_path;
  std::string socket_path;
  KernelFactory factory;
  LinkOptions options;

  // Guards the role below; held during an election. Once kernel is true the
  // role never changes again, so handler and server are then read without it.
  std::mutex mu;
  std::atomic<bool> kernel{false};
  int lock_fd = -1;  // holds kernel.lock while this is the kernel
  std::shared_ptr<const RequestHandler> handler;
  std::unique_ptr<LinkServer> server;
  std::shared_ptr<LinkClient> client;
  bool was_front_end = false;  // a later election is a takeover

  ~Impl();
  void log(const std::string& line) const {
    if (options.log) options.log(line);
  }
  // Makes this the kernel or connects to the kernel. REQUIRES: mu held.
  Status elect_locked();
  // Tries kernel.lock once: true when this now holds it.
  Result<bool> try_lock(int fd);
  Status become_kernel_locked(int fd);
};

KernelLink::Impl::~Impl() {
  client.reset();
  server.reset();  // unlinks the socket while the lock is still held
  handler.reset();
  if (lock_fd >= 0) ::close(lock_fd);
}

Result<bool> KernelLink::Impl::try_lock(int fd) {
  struct flock fl {};
  fl.l_type = F_WRLCK;
  fl.l_whence = SEEK_SET;
  fl.l_start = 0;
  fl.l_len = 1;
  for (;;) {
    if (::fcntl(fd, F_OFD_SETLK, &fl) == 0) return true;
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EACCES) return false;
    return unavailable("cannot lock '" + lock_path + "': " + std::strerror(errno));
  }
}

Status KernelLink::Impl::become_kernel_locked(int fd) {
  Result<RequestHandler> made = factory();
  if (!made.ok()) return made.status();
  if (!*made) return internal_error("the kernel factory for " + dir + " returned no handler");
  auto h = std::make_shared<const RequestHandler>(std::move(*made));
  Result<std::unique_ptr<LinkServer>> started =
      LinkServer::start(socket_path, h, options.max_in_flight, options.log);
  if (!started.ok()) return started.status().with_context("the kernel at " + dir);
  lock_fd = fd;
  handler = std::move(h);
  server = std::move(*started);
  kernel.store(true, std::memory_order_release);
  log(was_front_end ? "took over as the kernel for " + dir + " (the previous kernel went away)"
                    : "became the kernel for " + dir);
  return Status();
}

Status KernelLink::Impl::elect_locked() {
  int fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) {
    return unavailable("cannot open the kernel lock '" + lock_path + "': " + std::strerror(errno));
  }
  auto deadline = std::chrono::steady_clock::now() + options.connect_timeout;
  auto pause = std::chrono::milliseconds(1);
  for (;;) {
    Result<bool> locked = try_lock(fd);
    if (!locked.ok()) {
      ::close(fd);
      return locked.status();
    }
    if (*locked) {
      Status s = become_kernel_locked(fd);
      if (!s.ok()) ::close(fd);  // releases the lock for the next election
      return s;
    }
    Result<std::shared_ptr<LinkClient>> c = LinkClient::connect(socket_path, dir);
    if (c.ok()) {
      ::close(fd);
      client = std::move(*c);
      was_front_end = true;
      return Status();
    }
    if (c.status().code() == StatusCode::kPermissionDenied ||
        std::chrono::steady_clock::now() >= deadline) {
      ::close(fd);
      if (c.status().code() == StatusCode::kPermissionDenied) {
        return unavailable("the kernel at " + dir + " refused: " + std::string(c.status().message()));
      }
      return unavailable("the kernel at " + dir + " holds " + lock_path +
                         " but does not answer on " + socket_path + " (" +
                         std::string(c.status().message()) + ") after " +
                         std::to_string(options.connect_timeout.count()) + " ms");
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(50));
  }
}

KernelLink::KernelLink(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
KernelLink::~KernelLink() = default;

Result<std::unique_ptr<KernelLink>> KernelLink::open(const std::string& state_dir,
                                                     KernelFactory factory, LinkOptions options) {
  if (!factory) return invalid_argument("KernelLink::open needs a kernel factory");
  auto impl = std::make_unique<Impl>();
  impl->dir = state_dir;
  while (impl->dir.size() > 1 && impl->dir.back() == '/') impl->dir.pop_back();
  impl->lock_path = impl->dir + "/" + std::string(kKernelLockName);
  impl->socket_path = impl->dir + "/" + std::string(kKernelSocketName);
  impl->factory = std::move(factory);
  impl->options = std::move(options);
  constexpr size_t kMaxSocketPath = sizeof(sockaddr_un::sun_path) - 1;
  if (impl->socket_path.size() > kMaxSocketPath) {
    return unavailable("the state directory '" + impl->dir + "' is too long for the kernel socket: '" +
                       impl->socket_path + "' has " + std::to_string(impl->socket_path.size()) +
                       " bytes, a Unix socket path at most " + std::to_string(kMaxSocketPath) +
                       " (use a shorter state directory)");
  }
  WEFT_RETURN_IF_ERROR(fs::ensure_private_dir(impl->dir));
  {
    std::lock_guard<std::mutex> l(impl->mu);
    WEFT_RETURN_IF_ERROR(impl->elect_locked());
  }
  return std::unique_ptr<KernelLink>(new KernelLink(std::move(impl)));
}

Result<std::string> KernelLink::call(std::string_view request) {
  if (request.size() > kMaxFrameBytes) {
    return invalid_argument("a kernel request of " + std::to_string(request.size()) +
                            " bytes exceeds the limit of " + std::to_string(kMaxFrameBytes) +
                            " bytes");
  }
  Impl& m = *impl_;
  // Two attempts: a request that could not be sent whole was not run, so it
  // goes to the kernel the next election finds.
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (m.kernel.load(std::memory_order_acquire)) return (*m.handler)(request);
    std::shared_ptr<LinkClient> client;
    {
      std::lock_guard<std::mutex> l(m.mu);
      if (!m.kernel.load(std::memory_order_relaxed) && (!m.client || m.client->dead())) {
        m.client.reset();
        WEFT_RETURN_IF_ERROR(m.elect_locked());
      }
      client = m.client;
    }
    if (!client) return (*m.handler)(request);  // this election made us the kernel
    bool delivered = false;
    Result<std::string> reply = client->call(request, &delivered);
    if (delivered) return reply;
  }
  return unavailable("cannot reach the kernel at " + m.dir + ": its connections closed twice");
}

bool KernelLink::is_kernel() const { return impl_->kernel.load(std::memory_order_acquire); }

size_t KernelLink::front_ends() const {
  return is_kernel() ? impl_->server->front_ends() : 0;
}

void KernelLink::linger() {
  if (is_kernel()) impl_->server->linger();
}

}  // namespace weft::kernel
