// Streamable HTTP transport on Boost.Beast (see include/weft/server/http_transport.h).
// Synchronous I/O: one thread per connection keeps the code short; MCP
// clients hold few connections. The count is capped, and a connection that
// is slow to send its next request is shut down by a reaper thread (asio's
// synchronous reads ignore SO_RCVTIMEO, so a socket timeout would not do).
#include "weft/server/http_transport.h"

#include <sys/socket.h>

#include <atomic>
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <system_error>
#include <thread>

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
  return Status();
}

uint16_t HttpServer::port() const {
  return impl_->acceptor ? impl_->acceptor->local_endpoint().port() : 0;
}

Status HttpServer::run() {
  if (!impl_->acceptor) WEFT_RETURN_IF_ERROR(listen());
  if (impl_->options.request_timeout_ms > 0 && !impl_->reaper.joinable()) {
    try {
      impl_->reaper = std::thread([impl = impl_.get()] { impl->reap_overdue(); });
    } catch (const std::system_error& e) {
      return unavailable(std::string("cannot start the connection reaper thread: ") + e.what());
    }
  }
  while (!impl_->stopping) {
    tcp::socket sock(impl_->ioc);
    beast::error_code ec;
    impl_->acceptor->accept(sock, ec);
    if (impl_->stopping) break;
    if (ec) continue;
    impl_->start_connection(sock);
  }
  if (impl_->reaper.joinable()) {
    impl_->reaper_cv.notify_all();
    impl_->reaper.join();
  }
  return Status();
}

bool HttpServer::Impl::start_connection(tcp::socket& sock) {
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
    open_fds.insert(sock.native_handle());
  }
  auto conn = std::make_shared<tcp::socket>(std::move(sock));
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

void HttpServer::Impl::end_connection(tcp::socket& sock) {
  std::lock_guard lock(mu);
  // Closed under the lock, after its fd left the sets: a new connection that
  // reuses the number cannot be shut down or forgotten by mistake.
  open_fds.erase(sock.native_handle());
  read_deadlines.erase(sock.native_handle());
  beast::error_code ignored;
  sock.close(ignored);
  --active;
  idle.notify_all();
}

void HttpServer::Impl::reap_overdue() {
  std::unique_lock lock(mu);
  while (!stopping) {
    reaper_cv.wait_for(lock, std::chrono::milliseconds(100));
    const auto now = std::chrono::steady_clock::now();
    for (auto it = read_deadlines.begin(); it != read_deadlines.end();) {
      if (it->second > now) {
        ++it;
        continue;
      }
      ::shutdown(it->first, SHUT_RDWR);  // the blocked read fails; its thread ends
      it = read_deadlines.erase(it);
    }
  }
}

void HttpServer::Impl::read_request(tcp::socket& sock, beast::flat_buffer& buffer,
                                    http::request_parser<http::string_body>& parser,
                                    beast::error_code& ec) {
  const int fd = sock.native_handle();
  const bool timed = options.request_timeout_ms > 0;
  if (timed) {
    std::lock_guard lock(mu);
    read_deadlines[fd] =
        std::chrono::steady_clock::now() + std::chrono::milliseconds(options.request_timeout_ms);
  }
  http::read(sock, buffer, parser, ec);
  if (timed) {
    std::lock_guard lock(mu);
    read_deadlines.erase(fd);
  }
}

void HttpServer::stop() {
  if (!impl_ || impl_->stopping.exchange(true)) return;
  std::unique_lock lock(impl_->mu);
  impl_->reaper_cv.notify_all();
  if (impl_->acceptor) ::shutdown(impl_->acceptor->native_handle(), SHUT_RDWR);
  for (int fd : impl_->open_fds) ::shutdown(fd, SHUT_RDWR);
  for (auto& [id, s] : impl_->sessions) s->close();
  impl_->idle.wait(lock, [this] { return impl_->active == 0; });
}

std::shared_ptr<HttpSession> HttpServer::Impl::find_session(const std::string& id) {
  std::lock_guard lock(mu);
  auto it = sessions.find(id);
  return it == sessions.end() ? nullptr : it->second;
}

void HttpServer::Impl::serve_connection(tcp::socket& sock) {
  beast::flat_buffer buffer;
  for (;;) {
    http::request_parser<http::string_body> parser;
    parser.body_limit(server.options().max_message_bytes);
    parser.header_limit(64 * 1024);
    beast::error_code ec;
    read_request(sock, buffer, parser, ec);
    if (ec == http::error::body_limit) {
      Json error = make_error(nullptr, rpc::kInvalidRequest,
                              "Invalid Request: body exceeds the limit of " +
                                  std::to_string(server.options().max_message_bytes) + " bytes");
      Request dummy;
      respond(sock, dummy, http::status::payload_too_large, &error);
      break;
    }
    if (ec) break;
    const Request& req = parser.get();
    if (!handle(sock, req) || !req.keep_alive() || stopping) break;
  }
  beast::error_code ignored;
  sock.shutdown(tcp::socket::shutdown_both, ignored);
}

bool HttpServer::Impl::respond(tcp::socket& sock, const Request& req, http::status status,
                               const Json* body, const std::string& session_id) {
  http::response<http::string_body> res{status, 11};
  res.set(http::field::server, "weft");
  if (body) {
    res.set(http::field::content_type, "application/json");
    res.body() = serialize(*body);
  }
  if (!session_id.empty()) res.set("Mcp-Session-Id", session_id);
  if (status == http::status::method_not_allowed) res.set(http::field::allow, "GET, POST, DELETE");
  res.keep_alive(req.keep_alive());
  res.prepare_payload();
  beast::error_code ec;
  http::write(sock, res, ec);
  return !ec;
}

bool HttpServer::Impl::handle(tcp::socket& sock, const Request& req) {
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
      return handle_post(sock, req);
    case http::verb::get:
      return handle_get(sock, req);
    case http::verb::delete_:
      return handle_delete(sock, req);
    default:
      return respond(sock, req, http::status::method_not_allowed, nullptr);
  }
}

}  // namespace weft::server
