// The web page of `weft serve` (docs/web.md): the bookmarkable routes
// (/, /edit/<path>, /history/<path>, /approvals) answer with the page, the
// page's files come from /assets/, and /api/ is a small JSON API over the
// workspace kernel (tree with each file's state, file info, history, diff,
// rollback, approvals). The HTTP transport turns a request into a WebRequest
// and hands it to WebRoutes::handle, which answers or declines (nullopt: not
// a web route).
//
// /api/ requests must be authorized (WebRoutesOptions::authorize, e.g. a
// bearer token); the page and its assets need no token (they hold no data).
// Changes (rollback, approve, reject) are made as `human:<name>`, the name the
// page sends.
//
// Thread safety: handle() is safe to call from any thread at once; the
// kernel does the locking. API calls may take as long as a kernel call: run
// them off an event loop.
#ifndef WEFT_SERVER_WEB_ROUTES_H_
#define WEFT_SERVER_WEB_ROUTES_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "weft/server/workspace.h"

namespace weft::server {

struct WebRequest {
  std::string method;  // "GET", "HEAD", "POST", ...
  std::string target;  // path and query, as sent: "/api/history?path=a.md"
  // Header names in any case; looked up case-insensitively.
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;

  // The first header of that name (case-insensitive), or "".
  std::string_view header(std::string_view name) const;
};

struct WebResponse {
  int status = 200;
  std::string content_type;
  // Extra headers (Cache-Control, ETag, Content-Encoding, ...).
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
};

// Decides whether a request may use /api/.
using WebAuthorizer = std::function<bool(const WebRequest&)>;

// Accepts requests whose `Authorization: Bearer <token>` matches `token`
// (constant time, sync_auth.h); an empty token accepts nothing.
WebAuthorizer bearer_authorizer(std::string token);

// Accepts what /sync accepts (docs/sync.md): the token as
// `Authorization: Bearer <token>` or as `?token=<token>` in the target
// (constant time); an empty token accepts nothing.
WebAuthorizer token_authorizer(std::string token);

struct WebRoutesOptions {
  // Null: every request is authorized (a server without a token).
  WebAuthorizer authorize;
  // A text file larger than this opens as "too large" instead of an editor.
  uint64_t max_editor_bytes = 16u << 20;
  // Entries listed for one directory of the tree (the rest are counted).
  size_t max_tree_entries = 2000;
};

// True for the paths WebRoutes answers: "/", "/edit/...", "/history/...",
// "/approvals", "/assets/...", "/api/..." (the query is ignored).
bool is_web_target(std::string_view target);

class WebRoutes {
 public:
  WebRoutes(std::shared_ptr<Workspace> workspace, WebRoutesOptions options);

  // The answer for a web route, or nullopt when `request` is not one.
  std::optional<WebResponse> handle(const WebRequest& request) const;

 private:
  WebResponse handle_api(const WebRequest& request, std::string_view path,
                         std::string_view query) const;
  // `is_asset`: a file under /assets/ (else the page itself, with its CSP).
  WebResponse serve_asset(const WebRequest& request, std::string_view name, bool is_asset) const;

  std::shared_ptr<Workspace> workspace_;
  WebRoutesOptions options_;
};

// The WebRequest of a Boost.Beast request (http::request<http::string_body>),
// for the transport; a template so that this header needs no Beast.
template <class BeastRequest>
WebRequest web_request_of(const BeastRequest& request) {
  WebRequest out{std::string(request.method_string()), std::string(request.target()), {},
                 request.body()};
  for (const auto& field : request) {
    out.headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
  }
  return out;
}

// The HTTP/1.1 bytes of a response (status line, headers with
// Content-Length, body; no body for HEAD).
std::string serialize_web_response(const WebResponse& response, bool keep_alive, bool head);

}  // namespace weft::server

#endif  // WEFT_SERVER_WEB_ROUTES_H_
