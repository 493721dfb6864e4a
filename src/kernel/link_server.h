// LinkServer: the kernel's side of KernelLink's socket. It listens on
// kernel.sock, accepts front ends of this user (SO_PEERCRED), reads their
// request frames on one thread per connection and runs the requests on a pool
// of at most max_in_flight threads, writing each reply under the connection's
// write mutex. A peer that misbehaves (an oversized or truncated frame, a
// socket error, replies it does not read) loses its connection; the others
// are served on.
//
// Thread safety: front_ends() and linger() may be called from any thread;
// the destructor from one that is not the server's.
#ifndef WEFT_KERNEL_LINK_SERVER_H_
#define WEFT_KERNEL_LINK_SERVER_H_

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "weft/base/status.h"
#include "weft/kernel/kernel_link.h"

namespace weft::kernel {

class LinkServer {
 public:
  using Log = std::function<void(const std::string&)>;

  // Removes a socket file left at `socket_path` (the caller holds the kernel
  // lock, so it is stale), then binds and listens there (mode 0600).
  static Result<std::unique_ptr<LinkServer>> start(const std::string& socket_path,
                                                   std::shared_ptr<const RequestHandler> handler,
                                                   size_t max_in_flight, Log log);
  // Stops accepting, closes every connection, waits for the requests running
  // and unlinks the socket.
  ~LinkServer();
  LinkServer(const LinkServer&) = delete;
  LinkServer& operator=(const LinkServer&) = delete;

  size_t front_ends() const;
  // Blocks until no front end is connected.
  void linger();

 private:
  struct Connection;
  struct Task {
    std::shared_ptr<Connection> conn;
    uint64_t id = 0;
    std::string request;
  };

  LinkServer(std::string socket_path, int listen_fd, int wake_fd,
             std::shared_ptr<const RequestHandler> handler, size_t max_in_flight, Log log);
  void accept_loop();
  void admit(int fd);
  void read_loop(std::shared_ptr<Connection> conn);
  void work_loop();
  void run(Task& task);
  // Shuts the connection down; logs `why` unless empty, stopping or already shut.
  void close_connection(Connection& conn, const std::string& why);
  void reap_locked(std::vector<std::thread>* out);
  void log(const std::string& line) const;

  const std::string socket_path_;
  const int listen_fd_;
  const int wake_fd_;
  const std::shared_ptr<const RequestHandler> handler_;
  const size_t max_in_flight_;
  const Log log_;

  mutable std::mutex mu_;
  std::condition_variable conns_cv_;  // a front end left
  std::condition_variable slot_cv_;   // an in-flight request finished
  std::condition_variable work_cv_;   // a task was queued, or stopping
  bool stopping_ = false;
  // Connected front ends with their reader threads; a reader that ends moves
  // its thread to finished_, joined by the accept thread or the destructor.
  std::unordered_map<Connection*, std::pair<std::shared_ptr<Connection>, std::thread>> live_;
  std::vector<std::thread> finished_;
  std::deque<Task> queue_;
  std::vector<std::thread> workers_;
  size_t idle_workers_ = 0;
  size_t in_flight_ = 0;  // queued plus running
  std::thread acceptor_;
};

}  // namespace weft::kernel

#endif  // WEFT_KERNEL_LINK_SERVER_H_
