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
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
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
    if (waker_) waker_();
  }
  // Claims the GET stream; false when one is already open or the session
  // closed. `waker` is called (under the session's lock: it must only post
  // work elsewhere) whenever a message is queued or the session closes.
  bool open_stream(std::function<void()> waker) {
    std::lock_guard lock(mu_);
    if (stream_open_ || closed_) return false;
    stream_open_ = true;
    waker_ = std::move(waker);
    return true;
  }
  void close_stream() {
    std::lock_guard lock(mu_);
    stream_open_ = false;
    waker_ = nullptr;
  }
  // Takes the queued messages; *closed turns true once the session ended.
  std::deque<Json> take(bool* closed) {
    std::lock_guard lock(mu_);
    *closed = closed_;
    std::deque<Json> out;
    out.swap(queue_);
    return out;
  }
  void close() {
    std::lock_guard lock(mu_);
    closed_ = true;
    if (waker_) waker_();
  }
  bool closed() {
    std::lock_guard lock(mu_);
    return closed_;
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
  std::function<void()> waker_;
  std::deque<Json> queue_;
  bool stream_open_ = false;
  bool closed_ = false;
  Session session_;
};

// A fixed set of threads running queued jobs (the requests of POSTs). The
// queue needs no bound of its own: a connection has at most one job queued
// or running, and connections are capped.
class HttpWorkers {
 public:
  HttpWorkers() = default;
  ~HttpWorkers() { stop(); }
  HttpWorkers(const HttpWorkers&) = delete;
  HttpWorkers& operator=(const HttpWorkers&) = delete;

  // Starts n threads; false when none could start.
  bool start(size_t n);
  void submit(std::function<void()> job);
  // Runs what is queued, then joins the threads.
  void stop();

 private:
  void run();
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;
  bool closing_ = false;
  std::vector<std::thread> threads_;
};

struct HttpServer::Impl {
  class SessionLease;
  class WatchedConnection;
  class Conn;
  class GetStream;
  class SseWriter;
  class SyncSocket;
  // What a handler left the connection to do once its answer is written.
  enum class After { kKeep, kClose, kLater };
  static constexpr size_t kMaxHeaderBytes = 64 * 1024;
  // POST bodies up to this size are parsed on the event loop (see handle()).
  static constexpr size_t kInlineParseBytes = 16 * 1024;
  McpServer& server;
  HttpOptions options;
  net::io_context ioc;
  net::strand<net::io_context::executor_type> accept_strand{net::make_strand(ioc)};
  std::unique_ptr<tcp::acceptor> acceptor;
  std::atomic<bool> stopping{false};
  HttpWorkers workers;
  std::mutex mu;  // conns, active; taken per connection, not per request
  std::condition_variable idle;
  size_t active = 0;
  std::map<int, std::shared_ptr<Conn>> conns;
  std::condition_variable reaper_cv;  // stopping
  std::thread reaper;                 // started and joined by run()
  std::shared_mutex sessions_mu;      // after mu when both are held
  std::map<std::string, std::shared_ptr<HttpSession>> sessions;
  bool loopback_bound = false;  // set by listen()
  uint16_t bound_port = 0;      // set by listen()

  Impl(McpServer& s, HttpOptions o) : server(s), options(std::move(o)) {}

  void accept_next();
  // Counts and starts serving an accepted socket; at the cap, answers 503 and closes it.
  void start_connection(tcp::socket sock);
  // Reads the connection's next request under request_timeout_ms.
  void read_next(const std::shared_ptr<Conn>& conn);
  void on_request(const std::shared_ptr<Conn>& conn, beast::error_code ec);
  // Once an answer is written: reads the next request, lingers or closes.
  void after_answer(const std::shared_ptr<Conn>& conn, bool keep);
  // Forgets and closes a served connection.
  void end_connection(Conn& conn);
  // Reads and discards what the client still sends (bounded), after an error
  // response, so that closing does not reset the connection under it.
  void linger(const std::shared_ptr<Conn>& conn, size_t drained);
  // Every 100 ms: shuts down connections past their read deadline, cancels
  // the requests of clients that left, and closes idle sessions.
  void reap_overdue();
  void expire_sessions();
  void cancel_abandoned(const std::vector<Conn*>& watched);
  // Makes room for a new session at max_sessions by evicting the least
  // recently used idle one (closed); false, with the seconds until one may
  // go, when every session is busy or used within session_evict_grace_ms.
  bool make_room(int* retry_after_s);  // sessions_mu held exclusively
  // The handlers queue their answer on the connection and say what follows it.
  // handle() runs on the connection's strand; handle_post() there too for a
  // POST carrying no request, on a worker otherwise.
  After handle(const std::shared_ptr<Conn>& conn, const Request& req);
  After handle_post(Conn& conn, const Request& req, ParsedInput input);
  // Whether handling `input` runs a request (a batch counts as one).
  static bool carries_request(const ParsedInput& input);
  After handle_get(const std::shared_ptr<Conn>& conn, const Request& req);
  After handle_delete(Conn& conn, const Request& req);
  After respond(Conn& conn, const Request& req, http::status status, const Json* body,
                const std::string& session_id = "", int retry_after_s = 0);
  // The Host check (loopback names or allowed_hosts); false when an error
  // response was queued.
  bool host_allowed(Conn& conn, const Request& req);
  // Finds a session and counts it as in use; an empty lease when unknown.
  SessionLease use_session(const std::string& id, bool stream);
  SessionLease lease(std::shared_ptr<HttpSession> hs, bool stream);  // sessions_mu held
  static void release_session(HttpSession& hs, bool stream);

  // ---- the access token and live sync (sync_transport.cc)
  // Whether the request carries the token (Authorization: Bearer or ?token=).
  bool has_token(const Request& req) const;
  // A GET at options.sync_endpoint: the WebSocket upgrade. The socket leaves
  // the HTTP connection (no longer counted in `active`) for a SyncSocket.
  After handle_sync(const std::shared_ptr<Conn>& conn, const Request& req);
  // The person a sync upgrade names (?name=), or options.sync_person.
  std::string sync_person(const Request& req) const;

  // ---- the web page (http_handlers.cc)
  // A request for options.web: answered on a worker (kLater).
  After handle_web(const std::shared_ptr<Conn>& conn, const Request& req);
};

// A served connection. Its socket is used on its strand only (the reaper and
// stop() merely shut its descriptor down, under Impl::mu); send() and
// end_answer() may be called from any thread. Requests touch only its own
// state, so that serving takes no global lock.
class HttpServer::Impl::Conn : public std::enable_shared_from_this<Conn> {
 public:
  Conn(Impl& impl, tcp::socket s) : impl_(impl), sock(std::move(s)), fd(sock.native_handle()) {}

  // Writes bytes, in order: at once as far as the socket takes them, the
  // rest queued for the event loop. Dropped once a write failed.
  void send(std::string bytes);
  // The answer is complete: once everything queued is written, the
  // connection reads its next request (keep) or closes.
  void end_answer(bool keep);
  bool failed() const;
  // Bytes queued and not yet written.
  size_t backlog() const;
  // Closes the socket (strand, under Impl::mu); later sends are dropped.
  void close();

  Impl& impl_;
  tcp::socket sock;
  const int fd;
  beast::flat_buffer buffer;
  std::optional<http::request_parser<http::string_body>> parser;
  bool linger_after = false;  // strand; an error answer: drain before closing
  bool ended = false;         // strand; end_connection() ran
  // When the request being read is due (steady_clock ns); 0 = not reading.
  std::atomic<int64_t> read_deadline{0};
  // A POST runs: if the client hangs up meanwhile, `group` is cancelled
  // (for good: a connection whose client left serves nothing more).
  std::atomic<bool> watched{false};
  CancelGroup group;

 private:
  void write_queued();  // strand
  mutable std::mutex out_mu_;
  std::string pending_;   // queued, not yet being written
  std::string inflight_;  // being written (strand)
  bool writing_ = false;  // a write_queued() is posted or running
  bool done_ = false;     // end_answer() came
  bool keep_ = false;
  bool failed_ = false;
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
