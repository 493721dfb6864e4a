// The Streamable HTTP transport of `weft serve`: one MCP endpoint (/mcp)
// taking POSTed JSON-RPC messages and answering with application/json or, for
// tools/call when the client accepts it, an SSE stream carrying progress and
// log notifications before the response. Legacy-era sessions (initialize)
// get an Mcp-Session-Id; GET opens the session's server-to-client SSE stream
// (used for roots/list); DELETE ends a session. 2026-07-28 requests (with the
// modern _meta) are served statelessly and their MCP-Protocol-Version header
// must match the _meta version (-32020 otherwise).
//
// Against DNS rebinding, every request with an Origin header that is not
// localhost (or one of allowed_origins) gets 403, and so does one whose Host
// is not a loopback name (or one of allowed_hosts) when the server is bound
// to a loopback address. Binds 127.0.0.1 unless told otherwise.
//
// A POST must carry Content-Type: application/json (415 otherwise) and,
// when it sends Accept, accept application/json (406 otherwise). Broken
// HTTP framing gets 400, an oversize header 431, an oversize body 413, each
// followed by closing the connection.
//
// Sessions: one unused for session_idle_timeout_ms is closed (its GET stream
// ends, later requests get 404). At max_sessions, initialize evicts the least
// recently used session that has no request running, no GET stream open and
// was not used in the last session_evict_grace_ms; when there is none it gets
// 503 with Retry-After. A client that disconnects while its POST runs has
// that POST's requests cancelled (a batch stops).
//
// Live sync: a GET upgrade at sync_endpoint becomes a WebSocket whose frames
// go to HttpOptions::sync (text "ping" -> "pong", binary -> on_binary); a
// message over 256 KiB (plus slack) closes it 4413. Frames are handled on the
// worker pool one at a time per socket (in order), and an idle socket holds
// only a pending read.
//
// The web page: the paths HttpOptions::web answers (see there) go to it, on
// the worker pool, one request at a time per connection (keep-alive kept).
//
// Thread safety: run() drives an event loop (asio) on io_threads threads,
// which accept, read, parse and write for every connection (at most
// max_connections) and keep the open GET streams without a thread each; the
// requests of POSTs run on a pool of `workers` threads. One more thread (the
// reaper) closes connections whose request is overdue, cancels the requests
// of clients that left and expires sessions. stop() may be called from any
// thread but the ones run() drives.
#ifndef WEFT_SERVER_HTTP_TRANSPORT_H_
#define WEFT_SERVER_HTTP_TRANSPORT_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "weft/base/status.h"
#include "weft/server/mcp_server.h"
#include "weft/server/sync_rooms.h"
#include "weft/server/web_routes.h"

namespace weft::server {

struct HttpOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 8765;  // 0 = any free port (see HttpServer::port())
  std::string endpoint = "/mcp";
  // Origins accepted besides http(s)://localhost, 127.0.0.1 and [::1] (any port).
  std::vector<std::string> allowed_origins;
  // Host names (a port is ignored) accepted besides localhost, 127.x.x.x
  // and [::1]. Checked when bound to a loopback address, or when not empty.
  std::vector<std::string> allowed_hosts;
  // Sessions kept at once (see above for what happens at the cap).
  size_t max_sessions = 1024;
  // A session with no request for this long is closed; 0 = never.
  int session_idle_timeout_ms = 30 * 60'000;
  // A session used this recently is never evicted to make room.
  int session_evict_grace_ms = 60'000;
  // Connections served at once; one more is answered 503 (Retry-After: 1)
  // and closed, so a flood of sockets cannot exhaust the process's
  // descriptors or memory.
  size_t max_connections = 512;
  // How long a connection may take to deliver its next request (idle
  // keep-alive included) before it is closed; 0 = no limit. Streams being
  // written (SSE) are not affected.
  int request_timeout_ms = 60'000;
  // Threads running the event loop (accepting, reading, writing).
  size_t io_threads = 1;
  // Threads running requests (tool calls and the like); 0 = as many as the
  // cores. A POST waits in a queue while all are busy; an idle connection
  // holds none.
  size_t workers = 0;

  // ---- live sync and the access token
  // The rooms behind the WebSocket endpoint ws://HOST:PORT/sync (see
  // docs/sync.md); null: no such endpoint (404). The server calls its tick()
  // every second and close_all() at stop().
  std::shared_ptr<sync::SyncRooms> sync;
  std::string sync_endpoint = "/sync";
  // The access token (sync_auth.h), given as `Authorization: Bearer TOKEN`
  // or `?token=TOKEN`. /sync always needs it (an upgrade without it is
  // accepted and closed 4401, so that clients do not retry); so does every
  // endpoint when the server is not bound to a loopback address (401). MCP on
  // loopback works without it. Empty: /sync refuses everyone.
  std::string token;
  // Who a sync connection is, for history (human:<name>): `?name=NAME` on
  // the upgrade URL ([A-Za-z0-9._-], 1..64 bytes), else this.
  std::string sync_person = "person";

  // ---- the web page (docs/web.md)
  // Answers the page's requests: every request whose path is_web_target()
  // accepts (/, /edit/..., /history/..., /approvals, /assets/..., /api/...)
  // and that is not at `endpoint` or `sync_endpoint`, after the Host and
  // Origin checks. It runs on the worker pool, never on the event loop;
  // nullopt (or a handler that throws) gets 404 (500). The handler checks the
  // token for /api/ itself (WebRoutesOptions::authorize): the page and its
  // assets hold no data and are served without it, also off loopback, since a
  // browser cannot attach the token to the files a page loads. Null: no page
  // (those paths get 404, as before).
  std::function<std::optional<WebResponse>(const WebRequest&)> web;
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
// True for Host header values naming the loopback interface: localhost,
// 127.x.x.x or [::1], with or without a port.
bool is_loopback_host(std::string_view host);

}  // namespace weft::server

#endif  // WEFT_SERVER_HTTP_TRANSPORT_H_
