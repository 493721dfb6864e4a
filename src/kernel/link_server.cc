// The kernel's side of KernelLink's socket (see link_server.h).
#include "kernel/link_server.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstring>

#include "kernel/frame_io.h"

namespace weft::kernel {

namespace {

// More front ends than this are refused (each costs a thread).
constexpr size_t kMaxFrontEnds = 1024;
// A front end that leaves a reply unread this long loses its connection, so
// that it cannot hold a pool thread for ever.
constexpr int kSendTimeoutSeconds = 30;

}  // namespace

struct LinkServer::Connection {
  explicit Connection(int f) : fd(f) {}
  ~Connection() { ::close(fd); }
  const int fd;
  std::atomic<bool> shut{false};  // shut down: later failures are not news
  std::mutex write_mu;
  bool broken = false;  // guarded by write_mu: a reply failed, send no more
};

LinkServer::LinkServer(std::string socket_path, int listen_fd, int wake_fd,
                       std::shared_ptr<const RequestHandler> handler, size_t max_in_flight,
                       Log log)
    : socket_path_(std::move(socket_path)),
      listen_fd_(listen_fd),
      wake_fd_(wake_fd),
      handler_(std::move(handler)),
      max_in_flight_(max_in_flight == 0 ? 1 : max_in_flight),
      log_(std::move(log)) {}

Result<std::unique_ptr<LinkServer>> LinkServer::start(
    const std::string& socket_path, std::shared_ptr<const RequestHandler> handler,
    size_t max_in_flight, Log log) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (socket_path.size() >= sizeof addr.sun_path) {
    return unavailable("the kernel socket path '" + socket_path + "' is longer than " +
                       std::to_string(sizeof addr.sun_path - 1) + " bytes");
  }
  std::memcpy(addr.sun_path, socket_path.data(), socket_path.size());
  struct stat st;
  if (::lstat(socket_path.c_str(), &st) == 0) {
    if (::unlink(socket_path.c_str()) != 0 && errno != ENOENT) {
      return unavailable("cannot remove the stale kernel socket '" + socket_path +
                         "': " + std::strerror(errno));
    }
    if (log) log("removed a stale kernel socket " + socket_path);
  }
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return unavailable(std::string("cannot create a socket: ") + std::strerror(errno));
  auto fail = [&](const std::string& what) {
    int err = errno;
    ::close(fd);
    return unavailable(what + " '" + socket_path + "': " + std::strerror(err));
  };
  socklen_t len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + socket_path.size() + 1);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), len) != 0) return fail("cannot bind");
  // The state directory is 0700, so the moment before chmod exposes nothing.
  if (::chmod(socket_path.c_str(), 0600) != 0) {
    Status s = fail("cannot chmod");
    ::unlink(socket_path.c_str());
    return s;
  }
  if (::listen(fd, 128) != 0) {
    Status s = fail("cannot listen on");
    ::unlink(socket_path.c_str());
    return s;
  }
  int wake = ::eventfd(0, EFD_CLOEXEC);
  if (wake < 0) {
    Status s = fail("cannot create an eventfd for");
    ::unlink(socket_path.c_str());
    return s;
  }
  std::unique_ptr<LinkServer> server(
      new LinkServer(socket_path, fd, wake, std::move(handler), max_in_flight, std::move(log)));
  server->acceptor_ = std::thread(&LinkServer::accept_loop, server.get());
  return server;
}

LinkServer::~LinkServer() {
  {
    std::lock_guard<std::mutex> l(mu_);
    stopping_ = true;
  }
  uint64_t one = 1;
  while (::write(wake_fd_, &one, sizeof one) < 0 && errno == EINTR) {
  }
  work_cv_.notify_all();
  slot_cv_.notify_all();
  acceptor_.join();
  ::unlink(socket_path_.c_str());
  ::close(listen_fd_);
  ::close(wake_fd_);
  std::vector<std::thread> threads;
  {
    std::unique_lock<std::mutex> l(mu_);
    for (auto& [conn, entry] : live_) ::shutdown(conn->fd, SHUT_RDWR);
    conns_cv_.wait(l, [&] { return live_.empty(); });
    reap_locked(&threads);
    for (std::thread& t : workers_) threads.push_back(std::move(t));
    workers_.clear();
  }
  for (std::thread& t : threads) t.join();
  queue_.clear();  // requests never started: their connections are closed
}

size_t LinkServer::front_ends() const {
  std::lock_guard<std::mutex> l(mu_);
  return live_.size();
}

void LinkServer::linger() {
  std::unique_lock<std::mutex> l(mu_);
  conns_cv_.wait(l, [&] { return live_.empty() || stopping_; });
}

void LinkServer::log(const std::string& line) const {
  if (log_) log_(line);
}

void LinkServer::reap_locked(std::vector<std::thread>* out) {
  for (std::thread& t : finished_) out->push_back(std::move(t));
  finished_.clear();
}

void LinkServer::accept_loop() {
  for (;;) {
    pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {wake_fd_, POLLIN, 0}};
    int r = ::poll(fds, 2, -1);
    if (r < 0) {
      if (errno != EINTR) ::usleep(10000);
      continue;
    }
    if (fds[1].revents != 0) return;
    if (fds[0].revents == 0) continue;
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) {
      // Out of descriptors or memory: wait rather than spin on the pending connection.
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
        ::usleep(50000);
      }
      continue;
    }
    admit(fd);
    std::vector<std::thread> done;
    {
      std::lock_guard<std::mutex> l(mu_);
      reap_locked(&done);
    }
    for (std::thread& t : done) t.join();
  }
}

void LinkServer::admit(int fd) {
  ucred cred{};
  socklen_t len = sizeof cred;
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || cred.uid != ::geteuid()) {
    log("refused a front end of uid " + std::to_string(cred.uid) + " (pid " +
        std::to_string(cred.pid) + "): only uid " + std::to_string(::geteuid()) +
        " may use this kernel");
    ::close(fd);
    return;
  }
  timeval timeout{kSendTimeoutSeconds, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
  if (!send_frame(fd, kHelloId, encode_reply_prefix(Status()), kHello).ok()) {
    ::close(fd);  // gone before it was greeted
    return;
  }
  auto conn = std::make_shared<Connection>(fd);
  std::lock_guard<std::mutex> l(mu_);
  if (stopping_) return;
  if (live_.size() >= kMaxFrontEnds) {
    log("refused a front end: " + std::to_string(kMaxFrontEnds) + " are connected already");
    return;
  }
  auto& entry = live_[conn.get()];
  entry.first = conn;
  // The reader takes mu_ before it can end, so it finds its entry complete.
  entry.second = std::thread(&LinkServer::read_loop, this, conn);
}

void LinkServer::close_connection(Connection& conn, const std::string& why) {
  bool quiet = conn.shut.exchange(true) || why.empty();
  ::shutdown(conn.fd, SHUT_RDWR);
  if (quiet) return;
  {
    std::lock_guard<std::mutex> l(mu_);
    quiet = stopping_;
  }
  if (!quiet) log(why);
}

void LinkServer::read_loop(std::shared_ptr<Connection> conn) {
  FrameReader reader(conn->fd, kMaxFrameBytes);
  std::string why;
  for (;;) {
    Task task;
    FrameReader::Outcome outcome = reader.next(&task.id, &task.request);
    if (outcome == FrameReader::Outcome::kFrame) {
      task.conn = conn;
      std::unique_lock<std::mutex> l(mu_);
      slot_cv_.wait(l, [&] { return stopping_ || in_flight_ < max_in_flight_; });
      if (stopping_) break;
      ++in_flight_;
      queue_.push_back(std::move(task));
      if (queue_.size() > idle_workers_ && workers_.size() < max_in_flight_) {
        workers_.emplace_back(&LinkServer::work_loop, this);
      } else {
        l.unlock();  // the woken worker does not then wait for mu_
        work_cv_.notify_one();
      }
      continue;
    }
    switch (outcome) {
      case FrameReader::Outcome::kTruncated:
        why = "a front end closed its connection inside a frame";
        break;
      case FrameReader::Outcome::kTooLarge:
        why = "refused a frame of " + reader.error() + " bytes from a front end (at most " +
              std::to_string(kMaxFrameBytes) + "); closed its connection";
        break;
      case FrameReader::Outcome::kError:
        why = "a front end's connection failed: " + reader.error();
        break;
      default:
        break;
    }
    break;
  }
  close_connection(*conn, why);
  std::lock_guard<std::mutex> l(mu_);
  auto it = live_.find(conn.get());
  finished_.push_back(std::move(it->second.second));
  live_.erase(it);
  conns_cv_.notify_all();
}

void LinkServer::work_loop() {
  std::unique_lock<std::mutex> l(mu_);
  for (;;) {
    ++idle_workers_;
    work_cv_.wait(l, [&] { return stopping_ || !queue_.empty(); });
    --idle_workers_;
    if (stopping_) return;
    {
      Task task = std::move(queue_.front());
      queue_.pop_front();
      l.unlock();
      run(task);
    }  // the task's connection reference goes before the lock is taken again
    l.lock();
    bool was_full = in_flight_-- == max_in_flight_;
    if (was_full) slot_cv_.notify_one();
  }
}

void LinkServer::run(Task& task) {
  Result<std::string> reply = internal_error("the kernel's handler did not run");
  try {
    reply = (*handler_)(task.request);
  } catch (const std::exception& e) {
    reply = internal_error(std::string("the kernel's handler threw: ") + e.what());
  } catch (...) {
    reply = internal_error("the kernel's handler threw");
  }
  if (reply.ok() && reply->size() > kMaxFrameBytes) {
    reply = resource_exhausted("the kernel's reply of " + std::to_string(reply->size()) +
                               " bytes exceeds the frame limit of " +
                               std::to_string(kMaxFrameBytes) + " bytes");
  }
  Status status = reply.status();
  std::string prefix = encode_reply_prefix(status);
  std::string_view payload = reply.ok() ? std::string_view(*reply) : status.message();
  Connection& conn = *task.conn;
  std::lock_guard<std::mutex> g(conn.write_mu);
  if (conn.broken) return;
  Status sent = send_frame(conn.fd, task.id, prefix, payload);
  if (!sent.ok()) {
    conn.broken = true;
    close_connection(conn, "could not reply to a front end (" + std::string(sent.message()) +
                               "); closed its connection");
  }
}

}  // namespace weft::kernel
