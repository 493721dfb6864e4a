// Streamable HTTP transport on Boost.Beast (see include/weft/server/http_transport.h).
// Synchronous I/O: one thread per connection keeps the code short; MCP
// clients hold few connections. The count is capped, and a connection that
// is slow to send its next request is shut down by a reaper thread (asio's
// synchronous reads ignore SO_RCVTIMEO, so a socket timeout would not do).
#include "weft/server/http_transport.h"

#include <poll.h>
#include <sys/socket.h>

#include <atomic>
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <cctype>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <string_view>
#include <system_error>
#include <thread>
#include <vector>

#include "server/http_impl.h"

namespace weft::server {

bool is_local_origin(std::string_view origin) {
  for (std::string_view scheme : {"http://", "https://"}) {
    if (origin.rfind(scheme, 0) != 0) continue;
    std::string_view rest = origin.substr(scheme.size());
    for (std::string_view host : {"localhost", "127.0.0.1", "[::1]"}) {
      if (rest.rfind(host, 0) != 0) continue;
      std::string_view tail = rest.substr(host.size());
      if (tail.empty() || tail == "/") return true;
      if (tail[0] != ':') continue;
      tail.remove_prefix(1);
      if (!tail.empty() && tail.back() == '/') tail.remove_suffix(1);
      bool digits = !tail.empty() && tail.size() <= 5;
      for (char c : tail) digits = digits && c >= '0' && c <= '9';
      if (digits) return true;
    }
  }
  return false;
}

namespace {

bool all_digits(std::string_view s) {
  bool ok = !s.empty();
  for (char c : s) ok = ok && c >= '0' && c <= '9';
  return ok;
}

// The host name of a Host header value, without its port, lowercased;
// brackets stay on an IPv6 literal. Empty when malformed.
std::string host_name(std::string_view value) {
  std::string_view name = value;
  if (!name.empty() && name.front() == '[') {
    size_t close = name.find(']');
    if (close == std::string_view::npos) return "";
    std::string_view port = name.substr(close + 1);
    if (!port.empty() && (port.front() != ':' || !all_digits(port.substr(1)))) return "";
    name = name.substr(0, close + 1);
  } else if (size_t colon = name.find(':'); colon != std::string_view::npos) {
    if (!all_digits(name.substr(colon + 1))) return "";
    name = name.substr(0, colon);
  }
  std::string out(name);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

bool is_loopback_host(std::string_view host) {
  std::string name = host_name(host);
  if (name == "localhost" || name == "[::1]") return true;
  if (name.rfind("127.", 0) != 0) return false;
  int parts = 0;
  size_t start = 0;
  for (;;) {
    size_t dot = name.find('.', start);
    std::string_view part = std::string_view(name).substr(start, dot - start);
    if (!all_digits(part) || part.size() > 3 || std::stoi(std::string(part)) > 255) return false;
    ++parts;
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return parts == 4;
}

HttpServer::HttpServer(McpServer& server, HttpOptions options)
    : impl_(std::make_unique<Impl>(server, std::move(options))) {}

HttpServer::~HttpServer() { stop(); }

Status HttpServer::listen() {
  beast::error_code ec;
  auto address = net::ip::make_address(impl_->options.host, ec);
  if (ec) return invalid_argument("bad --host '" + impl_->options.host + "': " + ec.message());
  auto acceptor = std::make_unique<tcp::acceptor>(impl_->ioc);
  tcp::endpoint endpoint(address, impl_->options.port);
  acceptor->open(endpoint.protocol(), ec);
  if (!ec) acceptor->set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) acceptor->bind(endpoint, ec);
  if (!ec) acceptor->listen(net::socket_base::max_listen_connections, ec);
  if (ec) {
    return unavailable("cannot listen on " + impl_->options.host + ":" +
                       std::to_string(impl_->options.port) + ": " + ec.message() +
                       " (choose another --port?)");
  }
  impl_->acceptor = std::move(acceptor);
  impl_->loopback_bound = address.is_loopback();
  return Status();
}

uint16_t HttpServer::port() const {
  return impl_->acceptor ? impl_->acceptor->local_endpoint().port() : 0;
}

Status HttpServer::run() {
  if (!impl_->acceptor) WEFT_RETURN_IF_ERROR(listen());
  if (!impl_->reaper.joinable()) {
    try {
      impl_->reaper = std::thread([impl = impl_.get()] { impl->reap_overdue(); });
    } catch (const std::system_error& e) {
      return unavailable(std::string("cannot start the reaper thread: ") + e.what());
    }
  }
  while (!impl_->stopping) {
    tcp::socket sock(impl_->ioc);
    beast::error_code ec;
    impl_->acceptor->accept(sock, ec);
    if (impl_->stopping) break;
    if (ec) continue;
    // Answers go out in several writes (SSE events, chunk frames); without
    // this, Nagle's algorithm holds the later ones until the client's
    // delayed ACK, some 40 ms per call.
    sock.set_option(tcp::no_delay(true), ec);
    impl_->start_connection(sock);
  }
  if (impl_->reaper.joinable()) {
    impl_->reaper_cv.notify_all();
    impl_->reaper.join();
  }
  return Status();
}

bool HttpServer::Impl::start_connection(tcp::socket& sock) {
  std::shared_ptr<Conn> conn;
  {
    std::lock_guard lock(mu);
    if (active >= options.max_connections) {
      // Answered on the accepting thread: short, and the client sees why.
      static constexpr char kBusy[] =
          "HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\nContent-Type: text/plain\r\n"
          "Content-Length: 21\r\nConnection: close\r\n\r\ntoo many connections\n";
      ::send(sock.native_handle(), kBusy, sizeof(kBusy) - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
      beast::error_code ignored;
      sock.close(ignored);
      return false;
    }
    ++active;
    conn = std::make_shared<Conn>(std::move(sock));
    conns[conn->fd] = conn;
  }
  try {
    std::thread([this, conn] {
      serve_connection(*conn);
      end_connection(*conn);
    }).detach();
  } catch (const std::system_error&) {
    end_connection(*conn);  // no thread to serve it (process limits): drop it, keep going
    return false;
  }
  return true;
}

void HttpServer::Impl::end_connection(Conn& conn) {
  std::lock_guard lock(mu);
  // Closed under the lock, after it left the map: a new connection that
  // reuses the fd number cannot be shut down by mistake.
  conns.erase(conn.fd);
  beast::error_code ignored;
  conn.sock.close(ignored);
  --active;
  idle.notify_all();
}

void HttpServer::Impl::reap_overdue() {
  std::unique_lock lock(mu);
  std::vector<Conn*> watched;
  while (!stopping) {
    reaper_cv.wait_for(lock, std::chrono::milliseconds(100));
    const int64_t now = HttpSession::now_ns();
    watched.clear();
    for (const auto& [fd, conn] : conns) {
      const int64_t due = conn->read_deadline.load();
      if (due != 0 && due <= now) {
        ::shutdown(fd, SHUT_RDWR);  // the blocked read fails; its thread ends
        conn->read_deadline.store(0);
      }
      if (conn->watched.load()) watched.push_back(conn.get());
    }
    cancel_abandoned(watched);
    expire_sessions();
  }
}

void HttpServer::Impl::cancel_abandoned(const std::vector<Conn*>& watched) {
  if (watched.empty()) return;
  std::vector<pollfd> fds;
  fds.reserve(watched.size());
  for (const Conn* conn : watched) fds.push_back({conn->fd, POLLRDHUP, 0});
  if (::poll(fds.data(), fds.size(), 0) <= 0) return;
  for (size_t i = 0; i < fds.size(); ++i) {
    if (fds[i].revents & (POLLRDHUP | POLLHUP | POLLERR)) watched[i]->group.cancel();
  }
}

void HttpServer::Impl::expire_sessions() {
  if (options.session_idle_timeout_ms <= 0) return;
  const int64_t oldest =
      HttpSession::now_ns() - int64_t{options.session_idle_timeout_ms} * 1'000'000;
  std::unique_lock lock(sessions_mu);
  for (auto it = sessions.begin(); it != sessions.end();) {
    HttpSession& hs = *it->second;
    if (hs.posts.load() > 0 || hs.last_used.load() > oldest) {
      ++it;
      continue;
    }
    hs.close();  // ends its GET stream, if one is open
    it = sessions.erase(it);
  }
}

bool HttpServer::Impl::make_room(int* retry_after_s) {
  if (sessions.size() < options.max_sessions) return true;
  auto victim = sessions.end();
  for (auto it = sessions.begin(); it != sessions.end(); ++it) {
    const HttpSession& hs = *it->second;
    if (hs.posts.load() > 0 || hs.streams.load() > 0) continue;
    if (victim == sessions.end() || hs.last_used.load() < victim->second->last_used.load()) {
      victim = it;
    }
  }
  const int64_t now = HttpSession::now_ns();
  const int64_t grace = int64_t{options.session_evict_grace_ms} * 1'000'000;
  if (victim != sessions.end() && now - victim->second->last_used.load() >= grace) {
    victim->second->close();
    sessions.erase(victim);
    return true;
  }
  *retry_after_s = 1;
  if (victim != sessions.end()) {
    *retry_after_s +=
        static_cast<int>((victim->second->last_used.load() + grace - now) / 1'000'000'000);
  }
  return false;
}

HttpServer::Impl::SessionLease HttpServer::Impl::use_session(const std::string& id, bool stream) {
  std::shared_lock lock(sessions_mu);
  auto it = sessions.find(id);
  if (it == sessions.end()) return SessionLease();
  return lease(it->second, stream);
}

HttpServer::Impl::SessionLease HttpServer::Impl::lease(std::shared_ptr<HttpSession> hs,
                                                       bool stream) {
  ++(stream ? hs->streams : hs->posts);
  hs->last_used.store(HttpSession::now_ns());
  return SessionLease(std::move(hs), stream);
}

void HttpServer::Impl::release_session(HttpSession& hs, bool stream) {
  hs.last_used.store(HttpSession::now_ns());
  --(stream ? hs.streams : hs.posts);
}

void HttpServer::Impl::linger(Conn& conn) {
  beast::error_code ec;
  conn.sock.shutdown(tcp::socket::shutdown_send, ec);
  if (ec) return;
  conn.read_deadline.store(HttpSession::now_ns() + 1'000'000'000);
  char buf[16384];
  for (size_t drained = 0; drained < (1u << 20) && !ec;) {
    drained += conn.sock.read_some(net::buffer(buf), ec);
  }
  conn.read_deadline.store(0);
}

void HttpServer::Impl::read_request(Conn& conn, beast::flat_buffer& buffer,
                                    http::request_parser<http::string_body>& parser,
                                    beast::error_code& ec) {
  const bool timed = options.request_timeout_ms > 0;
  if (timed) {
    conn.read_deadline.store(HttpSession::now_ns() +
                             int64_t{options.request_timeout_ms} * 1'000'000);
  }
  http::read(conn.sock, buffer, parser, ec);
  if (timed) conn.read_deadline.store(0);
}

void HttpServer::stop() {
  if (!impl_ || impl_->stopping.exchange(true)) return;
  std::unique_lock lock(impl_->mu);
  impl_->reaper_cv.notify_all();
  if (impl_->acceptor) ::shutdown(impl_->acceptor->native_handle(), SHUT_RDWR);
  for (const auto& [fd, conn] : impl_->conns) ::shutdown(fd, SHUT_RDWR);
  {
    std::unique_lock sessions_lock(impl_->sessions_mu);
    for (auto& [id, s] : impl_->sessions) s->close();
  }
  impl_->idle.wait(lock, [this] { return impl_->active == 0; });
}

namespace {

bool is_http_error(const beast::error_code& ec) {
  return &ec.category() == &http::make_error_code(http::error::bad_method).category();
}

}  // namespace

void HttpServer::Impl::serve_connection(Conn& conn) {
  tcp::socket& sock = conn.sock;
  beast::flat_buffer buffer;
  for (;;) {
    http::request_parser<http::string_body> parser;
    parser.body_limit(server.options().max_message_bytes);
    parser.header_limit(kMaxHeaderBytes);
    beast::error_code ec;
    read_request(conn, buffer, parser, ec);
    // A client that closed (or timed out) is owed nothing; broken framing gets
    // a status saying what was wrong, then the connection closes.
    if (ec == http::error::end_of_stream || ec == http::error::partial_message) break;
    if (ec && is_http_error(ec)) {
      http::status status = http::status::bad_request;
      std::string message = "Bad Request: malformed HTTP request (" + ec.message() + ")";
      if (ec == http::error::body_limit) {
        status = http::status::payload_too_large;
        message = "Invalid Request: body exceeds the limit of " +
                  std::to_string(server.options().max_message_bytes) + " bytes";
      } else if (ec == http::error::header_limit) {
        status = http::status::request_header_fields_too_large;
        message = "Request Header Fields Too Large: the header exceeds " +
                  std::to_string(kMaxHeaderBytes) + " bytes";
      }
      Json error = make_error(nullptr, rpc::kInvalidRequest, message);
      Request closing;
      closing.keep_alive(false);
      if (respond(sock, closing, status, &error)) linger(conn);
      break;
    }
    if (ec) break;
    const Request& req = parser.get();
    if (!handle(conn, req) || !req.keep_alive() || stopping) break;
  }
  beast::error_code ignored;
  sock.shutdown(tcp::socket::shutdown_both, ignored);
}

bool HttpServer::Impl::respond(tcp::socket& sock, const Request& req, http::status status,
                               const Json* body, const std::string& session_id, int retry_after_s) {
  http::response<http::string_body> res{status, 11};
  res.set(http::field::server, "weft");
  if (body) {
    res.set(http::field::content_type, "application/json");
    res.body() = serialize(*body);
  }
  if (!session_id.empty()) res.set("Mcp-Session-Id", session_id);
  if (status == http::status::method_not_allowed) res.set(http::field::allow, "GET, POST, DELETE");
  if (retry_after_s > 0) res.set(http::field::retry_after, std::to_string(retry_after_s));
  res.keep_alive(req.keep_alive());
  res.prepare_payload();
  beast::error_code ec;
  http::write(sock, res, ec);
  return !ec;
}

bool HttpServer::Impl::host_allowed(tcp::socket& sock, const Request& req) {
  if (!loopback_bound && options.allowed_hosts.empty()) return true;
  auto found = req.find(http::field::host);
  if (found == req.end()) {
    if (req.version() < 11) return true;  // HTTP/1.0 need not name a host
    Json error = make_error(nullptr, rpc::kInvalidRequest, "Bad Request: Host header required");
    respond(sock, req, http::status::bad_request, &error);
    return false;
  }
  std::string_view host = found->value();
  if (is_loopback_host(host)) return true;
  const std::string name = host_name(host);
  for (const auto& allowed : options.allowed_hosts) {
    if (!name.empty() && host_name(allowed) == name) return true;
  }
  Json error = make_error(nullptr, rpc::kInvalidRequest,
                          "Forbidden: Host '" + std::string(host) +
                              "' is not allowed; this server answers to localhost, 127.0.0.1 "
                              "and [::1] (add names with --allow-host)");
  respond(sock, req, http::status::forbidden, &error);
  return false;
}

bool HttpServer::Impl::handle(Conn& conn, const Request& req) {
  tcp::socket& sock = conn.sock;
  if (!host_allowed(sock, req)) return false;
  std::string origin(req["Origin"]);
  if (!origin.empty() && !is_local_origin(origin)) {
    bool allowed = false;
    for (const auto& o : options.allowed_origins) allowed = allowed || o == origin;
    if (!allowed) {
      Json error = make_error(nullptr, rpc::kInvalidRequest,
                              "Forbidden: Origin '" + origin + "' is not allowed");
      respond(sock, req, http::status::forbidden, &error);
      return false;
    }
  }
  std::string_view target = req.target();
  target = target.substr(0, target.find('?'));
  if (target != options.endpoint) {
    Json error = make_error(nullptr, rpc::kInvalidRequest,
                            "Not Found: the MCP endpoint is " + options.endpoint);
    return respond(sock, req, http::status::not_found, &error);
  }
  switch (req.method()) {
    case http::verb::post:
      return handle_post(conn, req);
    case http::verb::get:
      return handle_get(sock, req);
    case http::verb::delete_:
      return handle_delete(sock, req);
    default:
      return respond(sock, req, http::status::method_not_allowed, nullptr);
  }
}

}  // namespace weft::server
