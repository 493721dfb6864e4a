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
#include <set>
#include <string>
#include <thread>

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
  McpServer& server;
  HttpOptions options;
  net::io_context ioc;
  std::unique_ptr<tcp::acceptor> acceptor;
  std::atomic<bool> stopping{false};
  std::mutex mu;
  std::condition_variable idle;
  size_t active = 0;
  std::set<int> open_fds;
  // Connections waiting for a request, with the time it is due by.
  std::map<int, std::chrono::steady_clock::time_point> read_deadlines;
  std::condition_variable reaper_cv;  // stopping
  std::thread reaper;                 // started and joined by run()
  std::map<std::string, std::shared_ptr<HttpSession>> sessions;

  Impl(McpServer& s, HttpOptions o) : server(s), options(std::move(o)) {}

  void serve_connection(tcp::socket& sock);
  // Forgets and closes a served connection.
  void end_connection(tcp::socket& sock);
  // Starts a connection's thread; false (socket closed) at the cap or when no
  // thread can start.
  bool start_connection(tcp::socket& sock);
  // Every 100 ms, shuts down connections past their read deadline.
  void reap_overdue();
  // Reads one request under request_timeout_ms (an overdue read fails).
  void read_request(tcp::socket& sock, beast::flat_buffer& buffer,
                    http::request_parser<http::string_body>& parser, beast::error_code& ec);
  bool handle(tcp::socket& sock, const Request& req);
  bool handle_post(tcp::socket& sock, const Request& req);
  bool handle_get(tcp::socket& sock, const Request& req);
  bool handle_delete(tcp::socket& sock, const Request& req);
  bool respond(tcp::socket& sock, const Request& req, http::status status, const Json* body,
               const std::string& session_id = "");
  std::shared_ptr<HttpSession> find_session(const std::string& id);
};

}  // namespace weft::server

#endif  // WEFT_SRC_SERVER_HTTP_IMPL_H_
