// Private state of the Streamable HTTP transport, shared by
// http_transport.cc (accepting, framing) and http_handlers.cc (POST/GET/DELETE).
#ifndef WEFT_SRC_SERVER_HTTP_IMPL_H_
#define WEFT_SRC_SERVER_HTTP_IMPL_H_

#include <atomic>
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <thread>
#include <vector>

#include "weft/server/http_transport.h"
#include "weft/server/session.h"

namespace weft::server {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;
using Request = http::request<http::string_body>;

// A legacy-era session: the protocol Session plus the queue feeding its GET
// SSE stream (server-to-client requests and notifications not tied to a POST).
class HttpSession {
 public:
  HttpSession() : session_([this](const Json& m) { push(m); }) {}
  Session& session() { return session_; }

  // Queues a message for the GET stream. Messages wait for a stream to open
  // (a client opens it just after initialization, when roots/list is already
  // sent); past kMaxQueued the oldest are dropped.
  void push(const Json& m) {
    std::lock_guard lock(mu_);
    if (closed_) return;
    queue_.push_back(m);
    if (queue_.size() > kMaxQueued) queue_.pop_front();
    cv_.notify_all();
  }
  // Claims the GET stream; false when one is already open or the session closed.
  bool open_stream() {
    std::lock_guard lock(mu_);
    if (stream_open_ || closed_) return false;
    stream_open_ = true;
    return true;
  }
  void close_stream() {
    std::lock_guard lock(mu_);
    stream_open_ = false;
  }
  // Waits up to `timeout` for queued messages; returns them (empty on timeout).
  // *closed turns true once the session ended.
  std::deque<Json> wait(std::chrono::milliseconds timeout, bool* closed) {
    std::unique_lock lock(mu_);
    cv_.wait_for(lock, timeout, [this] { return closed_ || !queue_.empty(); });
    *closed = closed_;
    std::deque<Json> out;
    out.swap(queue_);
    return out;
  }
  void close() {
    std::lock_guard lock(mu_);
    closed_ = true;
    cv_.notify_all();
  }

  // Use, for expiry and eviction: changed under a shared lock of
  // HttpServer::Impl::sessions_mu (or none, when released), read under its
  // exclusive lock.
  std::atomic<int64_t> last_used{now_ns()};  // steady_clock nanoseconds
  std::atomic<int> posts{0};                 // POSTs being served
  std::atomic<int> streams{0};               // open GET streams

  static int64_t now_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }

 private:
  static constexpr size_t kMaxQueued = 256;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Json> queue_;
  bool stream_open_ = false;
  bool closed_ = false;
  Session session_;
};

struct HttpServer::Impl {
  class SessionLease;
  class WatchedConnection;
  static constexpr size_t kMaxHeaderBytes = 64 * 1024;
  McpServer& server;
  HttpOptions options;
  net::io_context ioc;
  std::unique_ptr<tcp::acceptor> acceptor;
  std::atomic<bool> stopping{false};
  // A served connection, as its thread and the reaper share it. Requests
  // touch only its atomics, so that serving takes no global lock.
  struct Conn {
    explicit Conn(tcp::socket s) : sock(std::move(s)), fd(sock.native_handle()) {}
    tcp::socket sock;
    const int fd;
    // When the request being read is due (steady_clock ns); 0 = not reading.
    std::atomic<int64_t> read_deadline{0};
    // A POST runs: if the client hangs up meanwhile, `group` is cancelled
    // (for good: a connection whose client left serves nothing more).
    std::atomic<bool> watched{false};
    CancelGroup group;
  };
  std::mutex mu;  // conns, active; taken per connection, not per request
  std::condition_variable idle;
  size_t active = 0;
  std::map<int, std::shared_ptr<Conn>> conns;
  std::condition_variable reaper_cv;  // stopping
  std::thread reaper;                 // started and joined by run()
  std::shared_mutex sessions_mu;      // after mu when both are held
  std::map<std::string, std::shared_ptr<HttpSession>> sessions;
  bool loopback_bound = false;  // set by listen()

  Impl(McpServer& s, HttpOptions o) : server(s), options(std::move(o)) {}

  void serve_connection(Conn& conn);
  // Forgets and closes a served connection.
  void end_connection(Conn& conn);
  // Starts a connection's thread; false (socket closed) at the cap or when no
  // thread can start.
  bool start_connection(tcp::socket& sock);
  // Every 100 ms: shuts down connections past their read deadline, cancels
  // the requests of clients that left, and closes idle sessions.
  void reap_overdue();
  void expire_sessions();
  void cancel_abandoned(const std::vector<Conn*>& watched);
  // Makes room for a new session at max_sessions by evicting the least
  // recently used idle one (closed); false, with the seconds until one may
  // go, when every session is busy or used within session_evict_grace_ms.
  bool make_room(int* retry_after_s);  // sessions_mu held exclusively
  // Reads and discards what the client still sends (bounded), after an error
  // response, so that closing does not reset the connection under it.
  void linger(Conn& conn);
  // Reads one request under request_timeout_ms (an overdue read fails).
  void read_request(Conn& conn, beast::flat_buffer& buffer,
                    http::request_parser<http::string_body>& parser, beast::error_code& ec);
  bool handle(Conn& conn, const Request& req);
  bool handle_post(Conn& conn, const Request& req);
  bool handle_get(tcp::socket& sock, const Request& req);
  bool handle_delete(tcp::socket& sock, const Request& req);
  bool respond(tcp::socket& sock, const Request& req, http::status status, const Json* body,
               const std::string& session_id = "", int retry_after_s = 0);
  // The Host check (loopback names or allowed_hosts); false when an error
  // response was sent.
  bool host_allowed(tcp::socket& sock, const Request& req);
  // Finds a session and counts it as in use; an empty lease when unknown.
  SessionLease use_session(const std::string& id, bool stream);
  SessionLease lease(std::shared_ptr<HttpSession> hs, bool stream);  // sessions_mu held
  static void release_session(HttpSession& hs, bool stream);
};

// One request's (or GET stream's) use of a session: counted from
// construction to destruction, with the last use stamped at both ends.
class HttpServer::Impl::SessionLease {
 public:
  SessionLease() = default;
  SessionLease(std::shared_ptr<HttpSession> hs, bool stream)
      : hs_(std::move(hs)), stream_(stream) {}
  ~SessionLease() {
    if (hs_) release_session(*hs_, stream_);
  }
  const std::shared_ptr<HttpSession>& shared() const { return hs_; }
  HttpSession* operator->() const { return hs_.get(); }
  explicit operator bool() const { return hs_ != nullptr; }
  SessionLease(SessionLease&& other) noexcept : hs_(std::move(other.hs_)), stream_(other.stream_) {}
  SessionLease& operator=(SessionLease&& other) noexcept {
    if (hs_) release_session(*hs_, stream_);
    hs_ = std::move(other.hs_);
    stream_ = other.stream_;
    return *this;
  }

 private:
  std::shared_ptr<HttpSession> hs_;
  bool stream_ = false;
};

// Marks a connection as watched by the reaper while its POST runs: if the
// client hangs up meanwhile, the connection's group is cancelled and so is
// the work it asked for.
class HttpServer::Impl::WatchedConnection {
 public:
  explicit WatchedConnection(Conn& conn) : conn_(conn) { conn_.watched.store(true); }
  ~WatchedConnection() { conn_.watched.store(false); }
  WatchedConnection(const WatchedConnection&) = delete;
  WatchedConnection& operator=(const WatchedConnection&) = delete;
  CancelGroup* group() const { return &conn_.group; }

 private:
  Conn& conn_;
};

}  // namespace weft::server

#endif  // WEFT_SRC_SERVER_HTTP_IMPL_H_
