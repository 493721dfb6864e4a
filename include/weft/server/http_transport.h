// The Streamable HTTP transport of `weft serve`: one MCP endpoint (/mcp)
// taking POSTed JSON-RPC messages and answering with application/json or, for
// tools/call when the client accepts it, an SSE stream carrying progress and
// log notifications before the response. Legacy-era sessions (initialize)
// get an Mcp-Session-Id; GET opens the session's server-to-client SSE stream
// (used for roots/list); DELETE ends a session. 2026-07-28 requests (with the
// modern _meta) are served statelessly and their MCP-Protocol-Version header
// must match the _meta version (-32020 otherwise).
//
// Every request with an Origin header that is not localhost (or one of
// allowed_origins) gets 403, against DNS rebinding. Binds 127.0.0.1 unless
// told otherwise.
//
// Thread safety: one thread accepts, one thread serves each connection (at
// most max_connections), one closes connections whose request is overdue;
// stop() may be called from any thread.
#ifndef WEFT_SERVER_HTTP_TRANSPORT_H_
#define WEFT_SERVER_HTTP_TRANSPORT_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "weft/base/status.h"
#include "weft/server/mcp_server.h"

namespace weft::server {

struct HttpOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 8765;  // 0 = any free port (see HttpServer::port())
  std::string endpoint = "/mcp";
  // Origins accepted besides http(s)://localhost, 127.0.0.1 and [::1] (any port).
  std::vector<std::string> allowed_origins;
  size_t max_sessions = 256;
  // Connections served at once; one more is answered 503 (Retry-After: 1)
  // and closed, so a flood of sockets cannot exhaust the process's threads.
  size_t max_connections = 512;
  // How long a connection may take to deliver its next request (idle
  // keep-alive included) before it is closed; 0 = no limit. Streams being
  // written (SSE) are not affected.
  int request_timeout_ms = 60'000;
};

class HttpServer {
 public:
  HttpServer(McpServer& server, HttpOptions options);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds and listens. kUnavailable when the address is in use or cannot be
  // bound; kInvalidArgument for a bad host.
  Status listen();
  // The bound port (after listen()).
  uint16_t port() const;
  // Accepts and serves until stop(); returns OK then.
  Status run();
  // Stops accepting, closes open connections and streams; run() returns.
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// True for Origin values naming this machine (http or https, any port).
bool is_local_origin(std::string_view origin);

}  // namespace weft::server

#endif  // WEFT_SERVER_HTTP_TRANSPORT_H_
