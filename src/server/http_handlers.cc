// POST, GET and DELETE on the MCP endpoint (Streamable HTTP, both eras).
#include <chrono>
#include <cstdio>
#include <random>
#include <string>
#include <utility>

#include "server/http_impl.h"

namespace weft::server {
namespace {

std::string new_session_id() {
  static std::mutex mu;
  static std::mt19937_64 rng{std::random_device{}()};
  std::lock_guard lock(mu);
  char buf[33];
  std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(rng()),
                static_cast<unsigned long long>(rng()));
  return buf;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Whether a media type (parameters ignored) is `type`.
bool media_type_is(std::string_view value, std::string_view type) {
  return lower(trim(value.substr(0, value.find(';')))) == type;
}

// Whether the Accept header lists `type` (with a nonzero q), or with
// `wildcards`, a range covering it (*/* or type/*).
bool accepts(const Request& req, std::string_view type, bool wildcards = false) {
  std::string_view accept = req[http::field::accept];
  const std::string_view family = type.substr(0, type.find('/'));
  while (!accept.empty()) {
    size_t comma = accept.find(',');
    std::string_view range = accept.substr(0, comma);
    accept = comma == std::string_view::npos ? "" : accept.substr(comma + 1);
    size_t semi = range.find(';');
    std::string name = lower(trim(range.substr(0, semi)));
    bool refused = false;  // q=0
    for (std::string_view params = semi == std::string_view::npos ? "" : range.substr(semi);
         !params.empty();) {
      params.remove_prefix(1);
      size_t next = params.find(';');
      std::string param = lower(trim(params.substr(0, next)));
      if (param.rfind("q=", 0) == 0)
        refused = param.find_first_of("123456789", 2) == std::string::npos;
      params = next == std::string_view::npos ? "" : params.substr(next);
    }
    if (refused) continue;
    if (name == type) return true;
    if (wildcards && (name == "*/*" || name == std::string(family) + "/*")) return true;
  }
  return false;
}

std::string modern_version(const Message& m) {
  if (!m.params.is_object() || !m.params.contains("_meta") || !m.params["_meta"].is_object()) {
    return "";
  }
  const Json& meta = m.params["_meta"];
  auto it = meta.find(kMetaProtocolVersion);
  if (it == meta.end()) return "";
  return it->is_string() ? it->get<std::string>() : it->dump();
}

http::status status_for(const Json& reply, bool modern) {
  if (!reply.is_object() || !reply.contains("error")) return http::status::ok;
  int code = reply["error"].value("code", 0);
  if (code == rpc::kParseError || code == rpc::kInvalidRequest) return http::status::bad_request;
  if (modern && code == rpc::kMethodNotFound) return http::status::not_found;
  if (code == rpc::kUnsupportedProtocolVersion || code == rpc::kHeaderMismatch) {
    return http::status::bad_request;
  }
  return http::status::ok;
}

}  // namespace

// Writes SSE events on one chunked response, through the connection's
// write queue; thread-safe.
class HttpServer::Impl::SseWriter {
 public:
  // The response header waits in the buffer until the first flush, so that a
  // call that reports nothing before its answer goes out in one write.
  SseWriter(Conn& conn, const std::string& session_id) : conn_(conn) {
    pending_ =
        "HTTP/1.1 200 OK\r\nServer: weft\r\nContent-Type: text/event-stream\r\n"
        "Cache-Control: no-cache\r\n";
    if (!session_id.empty()) pending_ += "Mcp-Session-Id: " + session_id + "\r\n";
    pending_ += "Transfer-Encoding: chunked\r\n\r\n";
  }
  // Sends a message now (progress, logs, the GET stream's messages).
  void event(const Json& message) { raw(event_text(message)); }
  void raw(const std::string& text) {
    std::lock_guard lock(mu_);
    append_chunk(text);
    flush_locked();
  }
  // Sends the header if it has not gone yet.
  void flush() {
    std::lock_guard lock(mu_);
    flush_locked();
  }
  // Sends `last` (when given) and ends the stream, in one write with
  // whatever is still buffered.
  bool finish(const Json* last = nullptr) {
    std::lock_guard lock(mu_);
    if (last) append_chunk(event_text(*last));
    pending_ += "0\r\n\r\n";
    flush_locked();
    return !conn_.failed();
  }

 private:
  static std::string event_text(const Json& message) {
    return "event: message\ndata: " + serialize(message) + "\n\n";
  }
  void append_chunk(const std::string& data) {
    char size[20];
    std::snprintf(size, sizeof size, "%zx\r\n", data.size());
    pending_ += size;
    pending_ += data;
    pending_ += "\r\n";
  }
  void flush_locked() {
    if (!pending_.empty()) conn_.send(std::move(pending_));
    pending_.clear();
  }

  Conn& conn_;
  std::mutex mu_;
  std::string pending_;  // bytes not yet queued on the connection
};

bool HttpServer::Impl::carries_request(const ParsedInput& input) {
  bool has_request = input.is_batch;
  for (const auto& item : input.items) {
    has_request = has_request || (item.message && item.message->kind == MessageKind::kRequest);
  }
  return has_request;
}

HttpServer::Impl::After HttpServer::Impl::handle_post(Conn& conn, const Request& req,
                                                      ParsedInput input) {
  if (!media_type_is(req[http::field::content_type], "application/json")) {
    Json error = make_error(nullptr, rpc::kInvalidRequest,
                            "Unsupported Media Type: POST a JSON-RPC message with "
                            "Content-Type: application/json");
    return respond(conn, req, http::status::unsupported_media_type, &error);
  }
  if (req.find(http::field::accept) != req.end() && !accepts(req, "application/json", true)) {
    Json error = make_error(nullptr, rpc::kInvalidRequest,
                            "Not Acceptable: replies are application/json (or text/event-stream); "
                            "send Accept: application/json, text/event-stream");
    return respond(conn, req, http::status::not_acceptable, &error);
  }
  const Message* single = !input.is_batch && input.items.size() == 1 && input.items[0].message
                              ? &*input.items[0].message
                              : nullptr;
  if (!input.is_batch && input.items[0].error_response) {
    return respond(conn, req, http::status::bad_request, &*input.items[0].error_response);
  }
  bool is_request = single && single->kind == MessageKind::kRequest;
  std::string modern = is_request ? modern_version(*single) : "";
  std::shared_ptr<HttpSession> hs;
  SessionLease use;  // keeps a stored session from expiring or eviction meanwhile
  std::string session_id;
  if (is_request && single->method == "initialize") {
    int retry_after_s = 0;
    {
      std::unique_lock lock(sessions_mu);
      if (make_room(&retry_after_s)) {
        session_id = new_session_id();
        hs = std::make_shared<HttpSession>();
        sessions[session_id] = hs;
        use = lease(hs, false);
      }
    }
    if (!hs) {
      Json error =
          make_error(single->id, rpc::kInternalError,
                     "Service Unavailable: all " + std::to_string(options.max_sessions) +
                         " sessions are in use; retry in " + std::to_string(retry_after_s) + " s");
      return respond(conn, req, http::status::service_unavailable, &error, "", retry_after_s);
    }
  } else if (!modern.empty()) {
    std::string header_version(req["MCP-Protocol-Version"]);
    if (!header_version.empty() && header_version != modern) {
      Json error = make_error(single->id, rpc::kHeaderMismatch,
                              "MCP-Protocol-Version header '" + header_version +
                                  "' does not match _meta protocol version '" + modern + "'");
      return respond(conn, req, http::status::bad_request, &error);
    }
    std::string method_header(req["Mcp-Method"]);
    if (!method_header.empty() && method_header != single->method) {
      Json error = make_error(single->id, rpc::kHeaderMismatch,
                              "Mcp-Method header '" + method_header +
                                  "' does not match the body's method '" + single->method + "'");
      return respond(conn, req, http::status::bad_request, &error);
    }
    hs = std::make_shared<HttpSession>();  // stateless: a throwaway session
  } else {
    std::string id(req["Mcp-Session-Id"]);
    if (id.empty()) {
      Json error = make_error(single ? single->id : Json(), rpc::kInvalidRequest,
                              "Bad Request: Mcp-Session-Id header required (send initialize "
                              "first, or use the 2026-07-28 _meta for stateless requests)");
      return respond(conn, req, http::status::bad_request, &error);
    }
    use = use_session(id, false);
    hs = use ? use.shared() : nullptr;
    if (!hs) {
      Json error = make_error(single ? single->id : Json(), rpc::kInvalidRequest,
                              "Session not found (expired or deleted): initialize again");
      return respond(conn, req, http::status::not_found, &error);
    }
    std::string version(req["MCP-Protocol-Version"]);
    bool known = version.empty();
    for (const auto& v : legacy_versions()) known = known || v == version;
    if (!known) {
      Json error = make_error(single ? single->id : Json(), rpc::kInvalidRequest,
                              "Bad Request: unsupported MCP-Protocol-Version '" + version + "'");
      return respond(conn, req, http::status::bad_request, &error);
    }
  }
  if (!carries_request(input)) {
    for (const auto& item : input.items) {
      if (item.message) server.handle_message(*item.message, hs->session(), nullptr);
    }
    return respond(conn, req, http::status::accepted, nullptr);
  }
  WatchedConnection watch(conn);  // the client leaving cancels what it asked for
  if (is_request && single->method == "tools/call" && accepts(req, "text/event-stream")) {
    SseWriter sse(conn, session_id);
    auto reply = server.handle_message(
        *single, hs->session(), [&sse](const Json& m) { sse.event(m); }, watch.group());
    return sse.finish(reply ? &*reply : nullptr) ? After::kKeep : After::kClose;
  }
  auto reply = server.handle_input(
      std::move(input), hs->session(), [hs](const Json& m) { hs->push(m); }, watch.group());
  if (!reply) return respond(conn, req, http::status::accepted, nullptr, session_id);
  if (!session_id.empty() && reply->contains("error")) {
    std::unique_lock lock(sessions_mu);
    sessions.erase(session_id);
    session_id.clear();
  }
  return respond(conn, req, status_for(*reply, !modern.empty()), &*reply, session_id);
}

// A session's open GET stream: woken by its session when a message is
// queued or the session closes, and by a timer for keep-alive comments.
// Runs on its connection's strand and holds no thread between events.
class HttpServer::Impl::GetStream : public std::enable_shared_from_this<GetStream> {
 public:
  GetStream(Impl& impl, std::shared_ptr<Conn> conn, SessionLease use)
      : impl_(impl),
        conn_(std::move(conn)),
        use_(std::move(use)),
        sse_(*conn_, ""),
        timer_(conn_->sock.get_executor()) {}

  // Claims the session's stream; false when it has one already.
  bool open() {
    auto waker = [weak = weak_from_this(), executor = conn_->sock.get_executor()] {
      net::post(executor, [weak] {
        if (auto self = weak.lock()) self->pump();
      });
    };
    return use_->open_stream(std::move(waker));
  }
  void start() {
    sse_.flush();  // the client learns at once that its stream is open
    arm_keepalive();
    pump();
  }

 private:
  void pump() {
    if (finished_) return;
    bool closed = use_->closed();
    // A client that does not read leaves its messages in the session's
    // (bounded) queue rather than growing the connection's.
    if (closed || conn_->backlog() < kMaxBacklog) {
      for (const auto& m : use_->take(&closed)) sse_.event(m);
    }
    if (closed || impl_.stopping || conn_->failed()) finish();
  }
  void arm_keepalive() {
    timer_.expires_after(std::chrono::seconds(15));
    timer_.async_wait([self = shared_from_this()](beast::error_code ec) {
      if (ec || self->finished_) return;
      self->sse_.raw(": keep-alive\n\n");
      self->arm_keepalive();
      self->pump();
    });
  }
  void finish() {
    finished_ = true;
    use_->close_stream();
    use_ = SessionLease();
    timer_.cancel();
    sse_.finish();
    conn_->end_answer(false);  // the stream ended the connection's useful life
  }

  static constexpr size_t kMaxBacklog = 1 << 20;
  Impl& impl_;
  std::shared_ptr<Conn> conn_;
  SessionLease use_;
  SseWriter sse_;
  net::steady_timer timer_;
  bool finished_ = false;
};

HttpServer::Impl::After HttpServer::Impl::handle_get(const std::shared_ptr<Conn>& conn,
                                                     const Request& req) {
  std::string id(req["Mcp-Session-Id"]);
  if (id.empty() || !accepts(req, "text/event-stream")) {
    return respond(*conn, req, http::status::method_not_allowed, nullptr);
  }
  SessionLease use = use_session(id, true);
  if (!use) {
    Json error = make_error(nullptr, rpc::kInvalidRequest, "Session not found: initialize again");
    return respond(*conn, req, http::status::not_found, &error);
  }
  auto stream = std::make_shared<GetStream>(*this, conn, std::move(use));
  if (!stream->open()) {
    Json error = make_error(nullptr, rpc::kInvalidRequest,
                            "Conflict: this session already has an open GET stream");
    return respond(*conn, req, http::status::conflict, &error);
  }
  stream->start();
  return After::kLater;
}

HttpServer::Impl::After HttpServer::Impl::handle_delete(Conn& conn, const Request& req) {
  std::string id(req["Mcp-Session-Id"]);
  std::shared_ptr<HttpSession> hs;
  {
    std::unique_lock lock(sessions_mu);
    auto it = sessions.find(id);
    if (it != sessions.end()) {
      hs = it->second;
      sessions.erase(it);
    }
  }
  if (!hs) {
    Json error = make_error(nullptr, rpc::kInvalidRequest, "Session not found");
    return respond(conn, req, http::status::not_found, &error);
  }
  hs->close();
  return respond(conn, req, http::status::ok, nullptr);
}

}  // namespace weft::server
