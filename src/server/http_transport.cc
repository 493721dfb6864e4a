// Streamable HTTP transport on Boost.Beast (see include/weft/server/http_transport.h).
// An asio event loop reads and writes every connection; requests run on a
// worker pool, and an open GET stream is only a registered waker and a timer.
// The connection count is capped, and a connection that is slow to send its
// next request is shut down by a reaper thread, which also watches the
// clients of running POSTs for hanging up.
#include "weft/server/http_transport.h"

#include <poll.h>
#include <sys/types.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <cctype>
#include <cerrno>
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
  auto acceptor = std::make_unique<tcp::acceptor>(impl_->accept_strand);
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
  impl_->bound_port = acceptor->local_endpoint(ec).port();
  impl_->acceptor = std::move(acceptor);
  impl_->loopback_bound = address.is_loopback();
  return Status();
}

uint16_t HttpServer::port() const { return impl_->bound_port; }

Status HttpServer::run() {
  if (!impl_->acceptor) WEFT_RETURN_IF_ERROR(listen());
  if (impl_->stopping) return Status();
  size_t workers = impl_->options.workers;
  if (workers == 0) workers = std::max(1u, std::thread::hardware_concurrency());
  if (!impl_->workers.start(workers)) return unavailable("cannot start the worker threads");
  // The loop keeps running while requests are on workers (with nothing
  // pending in it) and after the acceptor closed: stop() ends it once every
  // connection has.
  auto busy = net::make_work_guard(impl_->ioc);
  std::vector<std::thread> io;
  try {
    impl_->reaper = std::thread([impl = impl_.get()] { impl->reap_overdue(); });
    for (size_t i = 1; i < impl_->options.io_threads; ++i) {
      io.emplace_back([impl = impl_.get()] { impl->ioc.run(); });
    }
  } catch (const std::system_error& e) {
    impl_->stopping = true;
    impl_->ioc.stop();
    for (auto& t : io) t.join();
    if (impl_->reaper.joinable()) {
      impl_->reaper_cv.notify_all();
      impl_->reaper.join();
    }
    impl_->workers.stop();
    return unavailable(std::string("cannot start the server's threads: ") + e.what());
  }
  net::post(impl_->accept_strand, [impl = impl_.get()] { impl->accept_next(); });
  impl_->ioc.run();
  for (auto& t : io) t.join();
  {
    std::lock_guard lock(impl_->mu);  // the reaper waits on reaper_cv under mu
    impl_->reaper_cv.notify_all();
  }
  impl_->reaper.join();
  impl_->workers.stop();
  return Status();
}

void HttpServer::stop() {
  if (!impl_ || impl_->stopping.exchange(true)) return;
  std::unique_lock lock(impl_->mu);
  impl_->reaper_cv.notify_all();
  if (impl_->acceptor) {
    net::post(impl_->accept_strand, [impl = impl_.get()] {
      beast::error_code ignored;
      impl->acceptor->close(ignored);
    });
  }
  for (const auto& [fd, conn] : impl_->conns) ::shutdown(fd, SHUT_RDWR);
  {
    std::unique_lock sessions_lock(impl_->sessions_mu);
    for (auto& [id, s] : impl_->sessions) s->close();
  }
  if (impl_->options.sync) impl_->options.sync->close_all("server shutting down");
  impl_->idle.wait(lock, [this] { return impl_->active == 0; });
  impl_->ioc.stop();  // run() returns, also when it has not started yet
}

bool HttpWorkers::start(size_t n) {
  for (size_t i = 0; i < std::max<size_t>(1, n); ++i) {
    try {
      threads_.emplace_back([this] { run(); });
    } catch (const std::system_error&) {
      break;  // process limits: serve with the threads there are
    }
  }
  return !threads_.empty();
}

void HttpWorkers::submit(std::function<void()> job) {
  {
    std::lock_guard lock(mu_);
    queue_.push_back(std::move(job));
  }
  cv_.notify_one();
}

void HttpWorkers::stop() {
  {
    std::lock_guard lock(mu_);
    closing_ = true;
  }
  cv_.notify_all();
  for (auto& t : threads_) {
    if (t.joinable()) t.join();
  }
  threads_.clear();
}

void HttpWorkers::run() {
  for (;;) {
    std::function<void()> job;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [this] { return closing_ || !queue_.empty(); });
      if (queue_.empty()) return;
      job = std::move(queue_.front());
      queue_.pop_front();
    }
    job();
  }
}

void HttpServer::Impl::accept_next() {
  acceptor->async_accept(net::make_strand(ioc), [this](beast::error_code ec, tcp::socket sock) {
    if (stopping || !acceptor->is_open()) return;
    if (!ec) {
      // Answers go out in several writes (SSE events, chunk frames); without
      // this, Nagle's algorithm holds the later ones until the client's
      // delayed ACK, some 40 ms per call.
      sock.set_option(tcp::no_delay(true), ec);
      start_connection(std::move(sock));
    }
    accept_next();
  });
}

void HttpServer::Impl::start_connection(tcp::socket sock) {
  std::shared_ptr<Conn> conn;
  {
    std::lock_guard lock(mu);
    if (active >= options.max_connections) {
      // Short, and the client sees why.
      static constexpr char kBusy[] =
          "HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\nContent-Type: text/plain\r\n"
          "Content-Length: 21\r\nConnection: close\r\n\r\ntoo many connections\n";
      ::send(sock.native_handle(), kBusy, sizeof(kBusy) - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
      beast::error_code ignored;
      sock.close(ignored);
      return;
    }
    ++active;
    conn = std::make_shared<Conn>(*this, std::move(sock));
    conns[conn->fd] = conn;
  }
  net::dispatch(conn->sock.get_executor(), [this, conn] { read_next(conn); });
}

void HttpServer::Impl::end_connection(Conn& conn) {
  if (conn.ended) return;
  conn.ended = true;
  std::lock_guard lock(mu);
  // Closed under the lock, after it left the map: a new connection that
  // reuses the fd number cannot be shut down by mistake.
  conns.erase(conn.fd);
  conn.close();
  --active;
  idle.notify_all();
}

void HttpServer::Impl::reap_overdue() {
  std::unique_lock lock(mu);
  std::vector<Conn*> watched;
  size_t rounds = 0;
  while (!stopping) {
    reaper_cv.wait_for(lock, std::chrono::milliseconds(100));
    if (options.sync && ++rounds % 10 == 0) {
      lock.unlock();
      options.sync->tick();
      lock.lock();
    }
    const int64_t now = HttpSession::now_ns();
    watched.clear();
    for (const auto& [fd, conn] : conns) {
      const int64_t due = conn->read_deadline.load();
      if (due != 0 && due <= now) {
        ::shutdown(fd, SHUT_RDWR);  // the pending read fails; the connection ends
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

void HttpServer::Impl::Conn::send(std::string bytes) {
  std::lock_guard lock(out_mu_);
  if (failed_) return;
  if (!writing_) {
    // Nothing queued before: write what the socket takes now, on this thread,
    // and leave only the rest to the event loop.
    ssize_t n;
    do {
      n = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    } while (n < 0 && errno == EINTR);
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
      failed_ = true;
      return;
    }
    if (n > 0) bytes.erase(0, static_cast<size_t>(n));
    if (bytes.empty()) return;
  }
  pending_ += bytes;
  if (writing_) return;
  writing_ = true;
  net::post(sock.get_executor(), [self = shared_from_this()] { self->write_queued(); });
}

void HttpServer::Impl::Conn::end_answer(bool keep) {
  std::lock_guard lock(out_mu_);
  done_ = true;
  keep_ = keep;
  if (writing_) return;
  writing_ = true;
  net::post(sock.get_executor(), [self = shared_from_this()] { self->write_queued(); });
}

void HttpServer::Impl::Conn::close() {
  {
    std::lock_guard lock(out_mu_);
    failed_ = true;  // nothing more is written to this descriptor
  }
  beast::error_code ignored;
  sock.close(ignored);
}

size_t HttpServer::Impl::Conn::backlog() const {
  std::lock_guard lock(out_mu_);
  return pending_.size() + (writing_ ? inflight_.size() : 0);
}

bool HttpServer::Impl::Conn::failed() const {
  std::lock_guard lock(out_mu_);
  return failed_;
}

void HttpServer::Impl::Conn::write_queued() {
  std::unique_lock lock(out_mu_);
  if (pending_.empty() || failed_) {
    pending_.clear();
    writing_ = false;
    if (!done_) return;
    done_ = false;
    const bool keep = keep_ && !failed_;
    lock.unlock();
    impl_.after_answer(shared_from_this(), keep);
    return;
  }
  inflight_.swap(pending_);
  pending_.clear();
  lock.unlock();
  net::async_write(sock, net::buffer(inflight_),
                   [self = shared_from_this()](beast::error_code ec, size_t) {
                     if (ec) {
                       std::lock_guard lock(self->out_mu_);
                       self->failed_ = true;
                     }
                     self->write_queued();
                   });
}

void HttpServer::Impl::after_answer(const std::shared_ptr<Conn>& conn, bool keep) {
  if (conn->ended) return;
  if (conn->linger_after && keep) {
    beast::error_code ec;
    conn->sock.shutdown(tcp::socket::shutdown_send, ec);
    if (!ec) {
      conn->read_deadline.store(HttpSession::now_ns() + 1'000'000'000);
      linger(conn, 0);
      return;
    }
  } else if (keep && !stopping) {
    read_next(conn);
    return;
  }
  beast::error_code ignored;
  conn->sock.shutdown(tcp::socket::shutdown_both, ignored);
  end_connection(*conn);
}

void HttpServer::Impl::linger(const std::shared_ptr<Conn>& conn, size_t drained) {
  if (drained >= (1u << 20)) {
    conn->read_deadline.store(0);
    end_connection(*conn);
    return;
  }
  conn->buffer.clear();
  conn->sock.async_read_some(
      conn->buffer.prepare(16384), [this, conn, drained](beast::error_code ec, size_t n) {
        if (ec) {
          conn->read_deadline.store(0);
          end_connection(*conn);
          return;
        }
        linger(conn, drained + n);
      });
}

void HttpServer::Impl::read_next(const std::shared_ptr<Conn>& conn) {
  conn->parser.emplace();
  conn->parser->body_limit(server.options().max_message_bytes);
  conn->parser->header_limit(kMaxHeaderBytes);
  if (options.request_timeout_ms > 0) {
    conn->read_deadline.store(HttpSession::now_ns() +
                              int64_t{options.request_timeout_ms} * 1'000'000);
  }
  http::async_read(conn->sock, conn->buffer, *conn->parser,
                   [this, conn](beast::error_code ec, size_t) { on_request(conn, ec); });
}

namespace {

bool is_http_error(const beast::error_code& ec) {
  return &ec.category() == &http::make_error_code(http::error::bad_method).category();
}

}  // namespace

void HttpServer::Impl::on_request(const std::shared_ptr<Conn>& conn, beast::error_code ec) {
  conn->read_deadline.store(0);
  // A client that closed (or timed out) is owed nothing; broken framing gets
  // a status saying what was wrong, then the connection closes.
  if (ec && is_http_error(ec) && ec != http::error::end_of_stream &&
      ec != http::error::partial_message) {
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
    respond(*conn, closing, status, &error);
    conn->linger_after = true;
    conn->end_answer(true);
    return;
  }
  if (ec || stopping) {
    after_answer(conn, false);
    return;
  }
  const Request& req = conn->parser->get();
  After after = handle(conn, req);
  if (after != After::kLater) conn->end_answer(after == After::kKeep && req.keep_alive());
}

HttpServer::Impl::After HttpServer::Impl::respond(Conn& conn, const Request& req,
                                                  http::status status, const Json* body,
                                                  const std::string& session_id,
                                                  int retry_after_s) {
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
  std::string out = "HTTP/1.1 " + std::to_string(res.result_int()) + " ";
  out += res.reason();
  out += "\r\n";
  for (const auto& field : res) {
    out += field.name_string();
    out += ": ";
    out += field.value();
    out += "\r\n";
  }
  out += "\r\n";
  out += res.body();
  conn.send(std::move(out));
  return After::kKeep;
}

bool HttpServer::Impl::host_allowed(Conn& conn, const Request& req) {
  if (!loopback_bound && options.allowed_hosts.empty()) return true;
  auto found = req.find(http::field::host);
  if (found == req.end()) {
    if (req.version() < 11) return true;  // HTTP/1.0 need not name a host
    Json error = make_error(nullptr, rpc::kInvalidRequest, "Bad Request: Host header required");
    respond(conn, req, http::status::bad_request, &error);
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
  respond(conn, req, http::status::forbidden, &error);
  return false;
}

HttpServer::Impl::After HttpServer::Impl::handle(const std::shared_ptr<Conn>& conn,
                                                 const Request& req) {
  if (!host_allowed(*conn, req)) return After::kClose;
  std::string origin(req["Origin"]);
  if (!origin.empty() && !is_local_origin(origin)) {
    bool allowed = false;
    for (const auto& o : options.allowed_origins) allowed = allowed || o == origin;
    if (!allowed) {
      Json error = make_error(nullptr, rpc::kInvalidRequest,
                              "Forbidden: Origin '" + origin + "' is not allowed");
      respond(*conn, req, http::status::forbidden, &error);
      return After::kClose;
    }
  }
  std::string_view target = req.target();
  target = target.substr(0, target.find('?'));
  if (options.sync && target == options.sync_endpoint) return handle_sync(conn, req);
  // The page (before the token check below: its files hold no data, and its
  // API checks the token itself).
  if (options.web && target != options.endpoint && is_web_target(target)) {
    return handle_web(conn, req);
  }
  if (!loopback_bound && !has_token(req)) {
    Json error = make_error(nullptr, rpc::kInvalidRequest,
                            "Unauthorized: this server is reachable from the network and needs "
                            "its access token (Authorization: Bearer TOKEN or ?token=TOKEN)");
    return respond(*conn, req, http::status::unauthorized, &error);
  }
  if (target != options.endpoint) {
    Json error = make_error(nullptr, rpc::kInvalidRequest,
                            "Not Found: the MCP endpoint is " + options.endpoint);
    return respond(*conn, req, http::status::not_found, &error);
  }
  switch (req.method()) {
    case http::verb::post: {
      // A small body is parsed here: one carrying no request (notifications,
      // cancellations, responses to the server's requests) is handled at
      // once, so that it never waits behind the requests it may cancel.
      const size_t max_bytes = server.options().max_message_bytes;
      std::shared_ptr<ParsedInput> input;
      if (req.body().size() <= kInlineParseBytes) {
        input = std::make_shared<ParsedInput>(parse_input(req.body(), max_bytes));
        if (!carries_request(*input)) return handle_post(*conn, req, std::move(*input));
      }
      // Requests (which may run long) go to a worker; `req` stays put in the
      // connection's parser until the answer is written.
      workers.submit([this, conn, &req, input, max_bytes] {
        const After after =
            handle_post(*conn, req, input ? std::move(*input) : parse_input(req.body(), max_bytes));
        conn->end_answer(after == After::kKeep && req.keep_alive() && !stopping);
      });
      return After::kLater;
    }
    case http::verb::get:
      return handle_get(conn, req);
    case http::verb::delete_:
      return handle_delete(*conn, req);
    default:
      return respond(*conn, req, http::status::method_not_allowed, nullptr);
  }
}

}  // namespace weft::server
