// POST, GET and DELETE on the MCP endpoint (Streamable HTTP, both eras).
#include <chrono>
#include <random>

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

bool accepts(const Request& req, std::string_view type) {
  std::string_view accept = req[http::field::accept];
  return accept.find(type) != std::string_view::npos;
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

// Writes SSE events on one chunked response; thread-safe.
class SseWriter {
 public:
  SseWriter(tcp::socket& sock, const std::string& session_id) : sock_(sock) {
    http::response<http::empty_body> res{http::status::ok, 11};
    res.set(http::field::server, "weft");
    res.set(http::field::content_type, "text/event-stream");
    res.set(http::field::cache_control, "no-cache");
    if (!session_id.empty()) res.set("Mcp-Session-Id", session_id);
    res.chunked(true);
    http::response_serializer<http::empty_body> sr{res};
    http::write_header(sock_, sr, ec_);
  }
  void event(const Json& message) { raw("event: message\ndata: " + serialize(message) + "\n\n"); }
  void raw(const std::string& text) {
    std::lock_guard lock(mu_);
    if (ec_) return;
    net::write(sock_, http::make_chunk(net::buffer(text)), ec_);
  }
  bool finish() {
    std::lock_guard lock(mu_);
    if (!ec_) net::write(sock_, http::make_chunk_last(), ec_);
    return !ec_;
  }
  bool ok() {
    std::lock_guard lock(mu_);
    return !ec_;
  }

 private:
  tcp::socket& sock_;
  std::mutex mu_;
  beast::error_code ec_;
};

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

bool HttpServer::Impl::handle_post(tcp::socket& sock, const Request& req) {
  ParsedInput input = parse_input(req.body(), server.options().max_message_bytes);
  const Message* single = !input.is_batch && input.items.size() == 1 && input.items[0].message
                              ? &*input.items[0].message
                              : nullptr;
  if (!input.is_batch && input.items[0].error_response) {
    return respond(sock, req, http::status::bad_request, &*input.items[0].error_response);
  }
  bool is_request = single && single->kind == MessageKind::kRequest;
  std::string modern = is_request ? modern_version(*single) : "";
  std::shared_ptr<HttpSession> hs;
  std::string session_id;
  if (is_request && single->method == "initialize") {
    std::lock_guard lock(mu);
    if (sessions.size() >= options.max_sessions) sessions.erase(sessions.begin());
    session_id = new_session_id();
    hs = std::make_shared<HttpSession>();
    sessions[session_id] = hs;
  } else if (!modern.empty()) {
    std::string header_version(req["MCP-Protocol-Version"]);
    if (!header_version.empty() && header_version != modern) {
      Json error = make_error(single->id, rpc::kHeaderMismatch,
                              "MCP-Protocol-Version header '" + header_version +
                                  "' does not match _meta protocol version '" + modern + "'");
      return respond(sock, req, http::status::bad_request, &error);
    }
    std::string method_header(req["Mcp-Method"]);
    if (!method_header.empty() && method_header != single->method) {
      Json error = make_error(single->id, rpc::kHeaderMismatch,
                              "Mcp-Method header '" + method_header +
                                  "' does not match the body's method '" + single->method + "'");
      return respond(sock, req, http::status::bad_request, &error);
    }
    hs = std::make_shared<HttpSession>();  // stateless: a throwaway session
  } else {
    std::string id(req["Mcp-Session-Id"]);
    if (id.empty()) {
      Json error = make_error(single ? single->id : Json(), rpc::kInvalidRequest,
                              "Bad Request: Mcp-Session-Id header required (send initialize "
                              "first, or use the 2026-07-28 _meta for stateless requests)");
      return respond(sock, req, http::status::bad_request, &error);
    }
    hs = find_session(id);
    if (!hs) {
      Json error = make_error(single ? single->id : Json(), rpc::kInvalidRequest,
                              "Session not found (expired or deleted): initialize again");
      return respond(sock, req, http::status::not_found, &error);
    }
    std::string version(req["MCP-Protocol-Version"]);
    bool known = version.empty();
    for (const auto& v : legacy_versions()) known = known || v == version;
    if (!known) {
      Json error = make_error(single ? single->id : Json(), rpc::kInvalidRequest,
                              "Bad Request: unsupported MCP-Protocol-Version '" + version + "'");
      return respond(sock, req, http::status::bad_request, &error);
    }
  }
  bool has_request = input.is_batch;
  for (const auto& item : input.items) {
    has_request = has_request || (item.message && item.message->kind == MessageKind::kRequest);
  }
  if (!has_request) {
    for (const auto& item : input.items) {
      if (item.message) server.handle_message(*item.message, hs->session(), nullptr);
    }
    return respond(sock, req, http::status::accepted, nullptr);
  }
  if (is_request && single->method == "tools/call" && accepts(req, "text/event-stream")) {
    SseWriter sse(sock, session_id);
    auto reply =
        server.handle_message(*single, hs->session(), [&sse](const Json& m) { sse.event(m); });
    if (reply) sse.event(*reply);
    return sse.finish();
  }
  auto reply = server.handle_text(req.body(), hs->session(), [hs](const Json& m) { hs->push(m); });
  if (!reply) return respond(sock, req, http::status::accepted, nullptr, session_id);
  if (!session_id.empty() && reply->contains("error")) {
    std::lock_guard lock(mu);
    sessions.erase(session_id);
    session_id.clear();
  }
  return respond(sock, req, status_for(*reply, !modern.empty()), &*reply, session_id);
}

bool HttpServer::Impl::handle_get(tcp::socket& sock, const Request& req) {
  std::string id(req["Mcp-Session-Id"]);
  if (id.empty() || !accepts(req, "text/event-stream")) {
    return respond(sock, req, http::status::method_not_allowed, nullptr);
  }
  auto hs = find_session(id);
  if (!hs) {
    Json error = make_error(nullptr, rpc::kInvalidRequest, "Session not found: initialize again");
    return respond(sock, req, http::status::not_found, &error);
  }
  if (!hs->open_stream()) {
    Json error = make_error(nullptr, rpc::kInvalidRequest,
                            "Conflict: this session already has an open GET stream");
    return respond(sock, req, http::status::conflict, &error);
  }
  SseWriter sse(sock, "");
  bool closed = false;
  while (sse.ok() && !closed && !stopping) {
    auto messages = hs->wait(std::chrono::seconds(15), &closed);
    if (messages.empty() && !closed) sse.raw(": keep-alive\n\n");
    for (const auto& m : messages) sse.event(m);
  }
  hs->close_stream();
  sse.finish();
  return false;  // the stream ended the connection's useful life
}

bool HttpServer::Impl::handle_delete(tcp::socket& sock, const Request& req) {
  std::string id(req["Mcp-Session-Id"]);
  std::shared_ptr<HttpSession> hs;
  {
    std::lock_guard lock(mu);
    auto it = sessions.find(id);
    if (it != sessions.end()) {
      hs = it->second;
      sessions.erase(it);
    }
  }
  if (!hs) {
    Json error = make_error(nullptr, rpc::kInvalidRequest, "Session not found");
    return respond(sock, req, http::status::not_found, &error);
  }
  hs->close();
  return respond(sock, req, http::status::ok, nullptr);
}

}  // namespace weft::server
