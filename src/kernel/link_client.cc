// A front end's connection to the kernel (see link_client.h).
#include "kernel/link_client.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>

#include "kernel/frame_io.h"
#include "weft/kernel/kernel_link.h"

namespace weft::kernel {

LinkClient::LinkClient(int fd, std::string state_dir)
    : fd_(fd), state_dir_(std::move(state_dir)) {}

namespace {
// How long a front end waits for a kernel's greeting.
constexpr int kHelloTimeoutSeconds = 5;
}  // namespace

Result<std::shared_ptr<LinkClient>> LinkClient::connect(const std::string& socket_path,
                                                        const std::string& state_dir) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (socket_path.size() >= sizeof addr.sun_path) {
    return unavailable("the kernel socket path '" + socket_path + "' is too long");
  }
  std::memcpy(addr.sun_path, socket_path.data(), socket_path.size());
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return unavailable(std::string("cannot create a socket: ") + std::strerror(errno));
  socklen_t len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + socket_path.size() + 1);
  int r;
  do {
    r = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), len);
  } while (r != 0 && errno == EINTR);
  if (r != 0) {
    int err = errno;
    ::close(fd);
    return unavailable(std::string("connect: ") + std::strerror(err));
  }
  ucred cred{};
  socklen_t cred_len = sizeof cred;
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cred_len) != 0 ||
      cred.uid != ::geteuid()) {
    ::close(fd);
    return permission_denied("the kernel socket '" + socket_path + "' belongs to uid " +
                             std::to_string(cred.uid) + ", not to this user (uid " +
                             std::to_string(::geteuid()) + ")");
  }
  // The kernel greets every connection it serves; a socket whose process is
  // dying (kill -9) may still take the connection but never greets it.
  timeval wait{kHelloTimeoutSeconds, 0}, none{0, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof wait);
  {
    FrameReader reader(fd, kHello.size() + 1);
    uint64_t id = 1;
    std::string body;
    FrameReader::Outcome got = reader.next(&id, &body);
    if (got != FrameReader::Outcome::kFrame || id != kHelloId ||
        body != encode_reply_prefix(Status()) + std::string(kHello)) {
      ::close(fd);
      return unavailable("the kernel socket '" + socket_path + "' did not greet this front end");
    }
  }
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &none, sizeof none);
  std::shared_ptr<LinkClient> client(new LinkClient(fd, state_dir));
  client->reader_ = std::thread(&LinkClient::read_loop, client.get());
  return client;
}

LinkClient::~LinkClient() {
  ::shutdown(fd_, SHUT_RDWR);
  reader_.join();
  ::close(fd_);
}

bool LinkClient::dead() const {
  std::lock_guard<std::mutex> l(mu_);
  return dead_;
}

Result<std::string> LinkClient::call(std::string_view request, bool* delivered) {
  *delivered = false;
  std::future<Result<std::string>> reply;
  uint64_t id;
  {
    std::lock_guard<std::mutex> l(mu_);
    if (dead_) return unavailable("the connection to the kernel at " + state_dir_ + " is closed");
    id = next_id_++;
    reply = pending_[id].get_future();
  }
  Status sent;
  {
    std::lock_guard<std::mutex> w(write_mu_);
    sent = send_frame(fd_, id, {}, request);
  }
  if (!sent.ok()) {
    // An incomplete frame is never run; the reader fails the other calls.
    {
      std::lock_guard<std::mutex> l(mu_);
      pending_.erase(id);
      dead_ = true;
    }
    ::shutdown(fd_, SHUT_RDWR);
    return unavailable("cannot send to the kernel at " + state_dir_ + ": " +
                       std::string(sent.message()));
  }
  *delivered = true;
  return reply.get();
}

void LinkClient::read_loop() {
  FrameReader reader(fd_, kMaxFrameBytes + 1);
  std::string body;
  for (;;) {
    uint64_t id;
    if (reader.next(&id, &body) != FrameReader::Outcome::kFrame) break;
    if (body.empty()) break;  // a reply without its status byte: not a kernel
    std::promise<Result<std::string>> waiting;
    {
      std::lock_guard<std::mutex> l(mu_);
      auto it = pending_.find(id);
      if (it == pending_.end()) continue;  // not ours to answer: ignore
      waiting = std::move(it->second);
      pending_.erase(it);
    }
    waiting.set_value(decode_reply(std::move(body)));
    body = std::string();
  }
  ::shutdown(fd_, SHUT_RDWR);
  std::unordered_map<uint64_t, std::promise<Result<std::string>>> orphans;
  {
    std::lock_guard<std::mutex> l(mu_);
    dead_ = true;
    orphans.swap(pending_);
  }
  for (auto& [id, p] : orphans) {
    p.set_value(unavailable("the kernel at " + state_dir_ +
                            " went away during the call; it may or may not have been applied; "
                            "retry"));
  }
}

}  // namespace weft::kernel
