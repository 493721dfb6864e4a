// The web page's routes and JSON API (web_routes.h).
#include "weft/server/web_routes.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>

#include "weft/doc/permission.h"
#include "weft/server/sync_auth.h"
#include "weft/server/web_assets.h"

namespace weft::server {
namespace {

using Json = nlohmann::json;

constexpr size_t kMaxHistory = 1000;
constexpr size_t kSniffBytes = 8192;
// History for people: one writer's run of changes (a person's keystrokes
// over live sync, an agent's burst of edits) reads as one entry, as in a
// document editor's version history. A run ends at another author or
// message, a pause longer than kHistoryPauseS, or after kHistorySpanS.
constexpr int64_t kHistoryPauseS = 60;
constexpr int64_t kHistorySpanS = 600;
constexpr size_t kHistoryScan = 20000;  // changes looked at for one page of entries

// One history entry: the run of changes from `oldest` to `newest` (the same
// change for a single one); from -> version is the run's diff.
Json history_entry(const source::FileHistoryEntry& newest, const source::FileHistoryEntry& oldest,
                   size_t changes) {
  return Json{{"version", newest.version},     {"from", oldest.before},
              {"author", newest.author},       {"message", newest.message},
              {"timestamp", newest.timestamp}, {"first_timestamp", oldest.timestamp},
              {"changes", changes}};
}

// Changes, newest first, as at most `limit` runs (see kHistoryPauseS).
Json history_runs(const std::vector<source::FileHistoryEntry>& changes, size_t limit) {
  Json out = Json::array();
  size_t i = 0;
  while (i < changes.size() && out.size() < limit) {
    const source::FileHistoryEntry& newest = changes[i];
    size_t j = i + 1;
    while (j < changes.size() && changes[j].author == newest.author &&
           changes[j].message == newest.message &&
           changes[j - 1].timestamp - changes[j].timestamp <= kHistoryPauseS &&
           newest.timestamp - changes[j].timestamp <= kHistorySpanS) {
      ++j;
    }
    out.push_back(history_entry(newest, changes[j - 1], j - i));
    i = j;
  }
  return out;
}

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Percent-decodes a query value ('+' is a space); nullopt for a bad escape.
std::optional<std::string> url_decode(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '+') {
      out += ' ';
    } else if (s[i] == '%') {
      if (i + 2 >= s.size()) return std::nullopt;
      const int hi = hex_value(s[i + 1]), lo = hex_value(s[i + 2]);
      if (hi < 0 || lo < 0) return std::nullopt;
      out += static_cast<char>(hi * 16 + lo);
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

// The decoded value of `key` in a query string, or nullopt when absent.
std::optional<std::string> query_param(std::string_view query, std::string_view key) {
  while (!query.empty()) {
    const size_t amp = query.find('&');
    std::string_view pair = query.substr(0, amp);
    const size_t eq = pair.find('=');
    if (pair.substr(0, eq) == key) {
      return url_decode(eq == std::string_view::npos ? "" : pair.substr(eq + 1));
    }
    if (amp == std::string_view::npos) break;
    query.remove_prefix(amp + 1);
  }
  return std::nullopt;
}

WebResponse json_response(int status, const Json& body) {
  WebResponse r;
  r.status = status;
  r.content_type = "application/json";
  r.headers.emplace_back("Cache-Control", "no-store");
  r.body = body.dump(-1, ' ', false, Json::error_handler_t::replace);
  return r;
}

WebResponse error_response(int status, std::string_view message) {
  return json_response(status, Json{{"error", std::string(message)}});
}

int http_status_of(const Status& s) {
  switch (s.code()) {
    case StatusCode::kInvalidArgument: return 400;
    case StatusCode::kNotFound: return 404;
    case StatusCode::kPermissionDenied: return 403;
    case StatusCode::kFailedPrecondition:
    case StatusCode::kAborted:
    case StatusCode::kAlreadyExists: return 409;
    case StatusCode::kResourceExhausted: return 413;
    case StatusCode::kUnavailable: return 503;
    case StatusCode::kIsADirectory:
    case StatusCode::kNotADirectory: return 400;
    default: return 500;
  }
}

WebResponse status_response(const Status& s) {
  return error_response(http_status_of(s), s.message());
}

// A person's name as the page sends it: letters, digits, '.', '_', '-'.
bool valid_person(std::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
  });
}

bool valid_utf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    size_t n = c < 0x80 ? 0 : (c >> 5) == 6 ? 1 : (c >> 4) == 14 ? 2 : (c >> 3) == 30 ? 3 : 9;
    if (n == 9) return false;
    if (i + n >= s.size()) return true;  // cut by the sniff window: no evidence of binary
    for (size_t k = 1; k <= n; ++k) {
      if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return false;
    }
    i += n + 1;
  }
  return true;
}

Json status_json(const kernel::FileStatus& s) {
  return Json{{"block", s.is_block},
              {"dirty", s.dirty},
              {"disk_ahead", s.disk_ahead},
              {"deleted", s.deleted},
              {"frozen", s.frozen},
              {"permission", std::string(doc::memory_permission_name(s.permission))},
              {"version", s.version},
              {"pending_approvals", s.pending_approvals}};
}

Json outcome_json(const kernel::ChangeOutcome& o) {
  return Json{{"applied", o.applied},
              {"pending_approval", o.pending_approval},
              {"version", o.version},
              {"rule", o.rule}};
}

// A string member of a JSON object, or "" when absent or not a string.
std::string string_field(const Json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

struct Body {
  Json json;
  std::string person;
};

// The POST body: a JSON object with "person" (the approver's or author's name).
Result<Body> parse_body(const WebRequest& request) {
  Json json = Json::parse(request.body, nullptr, false);
  if (json.is_discarded() || !json.is_object()) {
    return invalid_argument("the request body must be a JSON object");
  }
  Body body{json, string_field(json, "person")};
  if (!valid_person(body.person)) {
    return invalid_argument(
        "\"person\" must be your name (1-64 letters, digits, '.', '_' or '-'); changes are "
        "made as human:<name>");
  }
  return body;
}

}  // namespace

std::string_view WebRequest::header(std::string_view name) const {
  for (const auto& [k, v] : headers) {
    if (iequals(k, name)) return v;
  }
  return "";
}

WebAuthorizer bearer_authorizer(std::string token) {
  return [token = std::move(token)](const WebRequest& request) {
    return sync::token_matches(token, sync::bearer_token(request.header("Authorization")));
  };
}

WebAuthorizer token_authorizer(std::string token) {
  return [token = std::move(token)](const WebRequest& request) {
    if (sync::token_matches(token, sync::bearer_token(request.header("Authorization")))) {
      return true;
    }
    const std::string_view target = request.target;
    const size_t q = target.find('?');
    if (q == std::string_view::npos) return false;
    const auto given = query_param(target.substr(q + 1), "token");
    return given && sync::token_matches(token, *given);
  };
}

bool is_web_target(std::string_view target) {
  target = target.substr(0, target.find('?'));
  if (target == "/" || target == "/approvals") return true;
  for (std::string_view prefix : {"/edit/", "/history/", "/assets/", "/api/"}) {
    if (target.substr(0, prefix.size()) == prefix) return true;
  }
  return false;
}

WebRoutes::WebRoutes(std::shared_ptr<Workspace> workspace, WebRoutesOptions options)
    : workspace_(std::move(workspace)), options_(std::move(options)) {}

std::optional<WebResponse> WebRoutes::handle(const WebRequest& request) const {
  if (!is_web_target(request.target)) return std::nullopt;
  std::string_view target = request.target;
  const size_t q = target.find('?');
  std::string_view path = target.substr(0, q);
  std::string_view query = q == std::string_view::npos ? "" : target.substr(q + 1);
  if (path.substr(0, 5) == "/api/") return handle_api(request, path.substr(5), query);
  if (request.method != "GET" && request.method != "HEAD") {
    WebResponse r = error_response(405, "the page answers GET and HEAD");
    r.headers.emplace_back("Allow", "GET, HEAD");
    return r;
  }
  if (path.substr(0, 8) == "/assets/") return serve_asset(request, path.substr(8), /*is_asset=*/true);
  return serve_asset(request, "index.html", /*is_asset=*/false);
}

WebResponse WebRoutes::serve_asset(const WebRequest& request, std::string_view name,
                                   bool is_asset) const {
  const WebBundle& bundle = embedded_web_bundle();
  auto found = bundle.files.find(name);
  if (found == bundle.files.end()) {
    return error_response(404, "no such asset: " + std::string(name));
  }
  WebResponse r;
  r.content_type = std::string(found->second.content_type);
  r.headers.emplace_back("ETag", bundle.etag);
  r.headers.emplace_back("Cache-Control", "no-cache");
  r.headers.emplace_back("X-Content-Type-Options", "nosniff");
  r.headers.emplace_back("Referrer-Policy", "no-referrer");
  if (!is_asset) {
    r.headers.emplace_back(
        "Content-Security-Policy",
        "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self' "
        "'unsafe-inline'; connect-src 'self' ws: wss:; img-src 'self' data:; "
        "frame-ancestors 'none'");
  }
  if (request.header("If-None-Match") == bundle.etag) {
    r.status = 304;
    r.content_type.clear();
    return r;
  }
  const WebAsset& asset = found->second;
  if (!asset.gzipped) {
    r.body = std::string(asset.bytes);
  } else if (request.header("Accept-Encoding").find("gzip") != std::string_view::npos) {
    r.headers.emplace_back("Content-Encoding", "gzip");
    r.headers.emplace_back("Vary", "Accept-Encoding");
    r.body = std::string(asset.bytes);
  } else {
    auto plain = gunzip(asset.bytes);
    if (!plain.ok()) return status_response(plain.status());
    r.headers.emplace_back("Vary", "Accept-Encoding");
    r.body = std::move(plain).value();
  }
  return r;
}

WebResponse WebRoutes::handle_api(const WebRequest& request, std::string_view path,
                                  std::string_view query) const {
  if (options_.authorize && !options_.authorize(request)) {
    WebResponse r = error_response(
        401, "this server needs its access token: open the URL that `weft serve` printed "
             "(it ends in ?token=...)");
    r.headers.emplace_back("WWW-Authenticate", "Bearer");
    return r;
  }
  const bool get = request.method == "GET" || request.method == "HEAD";
  const bool post = request.method == "POST";
  kernel::Kernel* kernel = workspace_->kernel();

  if (path == "session" && get) {
    return json_response(200, Json{{"root", workspace_->root()}, {"kernel", kernel != nullptr}});
  }

  // Every other call names a file (or, for the tree, a directory) by `path`.
  auto file_path = [&](const Json* body) -> Result<std::string> {
    std::optional<std::string> raw;
    if (body && body->contains("path") && (*body)["path"].is_string()) {
      raw = (*body)["path"].get<std::string>();
    } else {
      raw = query_param(query, "path");
    }
    if (!raw) return invalid_argument("\"path\" is missing (a path relative to the workspace)");
    return workspace_->resolve(*raw, {});
  };

  if (path == "tree" && get) {
    auto dir = file_path(nullptr);
    if (!dir.ok()) {
      if (query_param(query, "path")) return status_response(dir.status());
      dir = std::string(".");
    }
    auto entries = workspace_->fs().list(*dir);
    if (!entries.ok()) return status_response(entries.status());
    std::sort(entries->begin(), entries->end(), [](const auto& a, const auto& b) {
      if (a.is_directory != b.is_directory) return a.is_directory;
      return a.name < b.name;
    });
    // Block states under the directory: files by path, directories by what
    // they contain (any dirty block, pending approvals below).
    std::map<std::string, kernel::FileStatus, std::less<>> states;
    if (kernel) {
      auto st = kernel->status(*dir == "." ? std::nullopt : std::optional<std::string>(*dir));
      if (st.ok()) {
        for (auto& s : *st) states.emplace(s.path, std::move(s));
      }
    }
    Json list = Json::array();
    size_t shown = 0;
    for (const auto& e : *entries) {
      if (shown == options_.max_tree_entries) break;
      ++shown;
      Json item{{"name", e.name}, {"path", e.path}, {"dir", e.is_directory}};
      if (auto s = states.find(e.path); s != states.end()) {
        item["state"] = status_json(s->second);
      } else if (e.is_directory) {
        const std::string prefix = e.path + "/";
        size_t pending = 0;
        bool dirty = false, disk_ahead = false;
        for (auto it = states.lower_bound(prefix);
             it != states.end() && it->first.compare(0, prefix.size(), prefix) == 0; ++it) {
          pending += it->second.pending_approvals.size();
          dirty = dirty || it->second.dirty;
          disk_ahead = disk_ahead || it->second.disk_ahead;
        }
        item["below"] = Json{{"pending", pending}, {"dirty", dirty}, {"disk_ahead", disk_ahead}};
      }
      if (kernel && !e.is_directory) {
        item["permission"] =
            std::string(doc::memory_permission_name(kernel->rules()->permission_for(e.path)));
      }
      list.push_back(std::move(item));
    }
    return json_response(200, Json{{"path", *dir},
                                   {"entries", std::move(list)},
                                   {"more", entries->size() - shown}});
  }

  if (path == "file" && get) {
    auto p = file_path(nullptr);
    if (!p.ok()) return status_response(p.status());
    auto stat = workspace_->fs().stat(*p);
    Json out{{"path", *p}};
    if (!stat.ok()) {
      if (stat.status().code() != StatusCode::kNotFound) return status_response(stat.status());
      out["kind"] = "missing";
      return json_response(200, out);
    }
    out["size"] = stat->size_bytes;
    if (stat->is_directory) {
      out["kind"] = "directory";
      return json_response(200, out);
    }
    if (!stat->is_file) {
      out["kind"] = "special";
      return json_response(200, out);
    }
    std::string kind = "text";
    if (static_cast<uint64_t>(stat->size_bytes) > options_.max_editor_bytes) {
      kind = "too_large";
    } else {
      auto head = workspace_->fs().read_bytes(*p, 0, kSniffBytes);
      if (!head.ok()) return status_response(head.status());
      const std::string_view bytes(head->content);
      if (bytes.find('\0') != std::string_view::npos || !valid_utf8(bytes)) kind = "binary";
    }
    out["kind"] = kind;
    out["max_editor_bytes"] = options_.max_editor_bytes;
    out["read_only"] = false;
    out["kernel"] = kernel != nullptr;
    if (kernel) {
      // What a person's edit would be held to: the rule for overwriting.
      auto decision = kernel->rules()->decide(*p, source::FileOp::kOverwrite);
      out["permission"] = std::string(doc::memory_permission_name(decision.level));
      out["rule"] = decision.reason;
      out["read_only"] = decision.decision == doc::PermissionDecision::kDenied;
      out["needs_approval"] = decision.decision == doc::PermissionDecision::kNeedsApproval;
      auto st = kernel->status(*p);
      if (st.ok()) {
        for (const auto& s : *st) {
          if (s.path != *p) continue;
          out["state"] = status_json(s);
          if (!s.frozen.empty()) {
            out["read_only"] = true;
            out["rule"] = s.frozen;
          }
        }
      }
    } else {
      out["read_only"] = true;
      out["rule"] = "this server runs without the workspace kernel (live editing needs it)";
    }
    return json_response(200, out);
  }

  if (!kernel) {
    return error_response(503, "this server runs without the workspace kernel: history and "
                               "approvals need it (weft serve without --no-kernel)");
  }

  if (path == "history" && get) {
    auto p = file_path(nullptr);
    if (!p.ok()) return status_response(p.status());
    size_t limit = 200;
    if (auto l = query_param(query, "limit")) {
      size_t v = 0;
      auto [end, ec] = std::from_chars(l->data(), l->data() + l->size(), v);
      if (ec != std::errc() || end != l->data() + l->size() || v == 0) {
        return error_response(400, "\"limit\" must be a positive number");
      }
      limit = std::min(v, kMaxHistory);
    }
    // `changes=1`: every change on its own (the versions rollback takes).
    const bool each = query_param(query, "changes").value_or("") == "1";
    auto h = kernel->history(*p, each ? limit : kHistoryScan);
    if (!h.ok()) return status_response(h.status());
    Json list = Json::array();
    if (each) {
      for (const auto& e : *h) list.push_back(history_entry(e, e, 1));
    } else {
      list = history_runs(*h, limit);
    }
    return json_response(200, Json{{"path", *p}, {"entries", std::move(list)}});
  }

  if (path == "diff" && get) {
    auto p = file_path(nullptr);
    if (!p.ok()) return status_response(p.status());
    auto d = kernel->diff(*p, query_param(query, "from"), query_param(query, "to"));
    if (!d.ok()) return status_response(d.status());
    return json_response(200, Json{{"path", *p}, {"diff", *d}});
  }

  if (path == "rollback") {
    if (!post) return error_response(405, "rollback is a POST");
    auto body = parse_body(request);
    if (!body.ok()) return status_response(body.status());
    auto p = file_path(&body->json);
    if (!p.ok()) return status_response(p.status());
    const std::string version = string_field(body->json, "version");
    if (version.empty()) return error_response(400, "\"version\" is missing (from the history)");
    auto o = kernel->rollback(*p, version,
                              source::Attribution{"human:" + body->person, "web rollback", {}});
    if (!o.ok()) return status_response(o.status());
    return json_response(200, outcome_json(*o));
  }

  if (path == "approvals" && get) {
    const bool all = query_param(query, "all").value_or("") == "1";
    Json list = Json::array();
    for (const auto& a : kernel->approvals(all)) list.push_back(Json::parse(kernel::approval_to_json(a)));
    return json_response(200, Json{{"approvals", std::move(list)}});
  }

  constexpr std::string_view kApprovals = "approvals/";
  if (path.substr(0, kApprovals.size()) == kApprovals) {
    std::string_view rest = path.substr(kApprovals.size());
    const size_t slash = rest.find('/');
    const std::string id(rest.substr(0, slash));
    const std::string_view action = slash == std::string_view::npos ? "" : rest.substr(slash + 1);
    if (action.empty() && get) {
      auto a = kernel->approval(id);
      if (!a.ok()) return status_response(a.status());
      return json_response(200, Json::parse(kernel::approval_to_json(*a)));
    }
    if (action != "approve" && action != "reject") {
      return error_response(404, "use POST /api/approvals/<id>/approve or .../reject");
    }
    if (!post) return error_response(405, "approve and reject are POSTs");
    auto body = parse_body(request);
    if (!body.ok()) return status_response(body.status());
    if (action == "approve") {
      auto o = kernel->approve(id, body->person);
      if (!o.ok()) return status_response(o.status());
      return json_response(200, outcome_json(*o));
    }
    Status s = kernel->reject(id, body->person);
    if (!s.ok()) return status_response(s);
    return json_response(200, Json{{"rejected", id}});
  }

  return error_response(404, "no such API call: /api/" + std::string(path) + " (" +
                                 request.method + ")");
}

std::string serialize_web_response(const WebResponse& response, bool keep_alive, bool head) {
  std::string reason;
  switch (response.status) {
    case 200: reason = "OK"; break;
    case 304: reason = "Not Modified"; break;
    case 400: reason = "Bad Request"; break;
    case 401: reason = "Unauthorized"; break;
    case 403: reason = "Forbidden"; break;
    case 404: reason = "Not Found"; break;
    case 405: reason = "Method Not Allowed"; break;
    case 409: reason = "Conflict"; break;
    case 413: reason = "Payload Too Large"; break;
    case 503: reason = "Service Unavailable"; break;
    default: reason = response.status >= 500 ? "Internal Server Error" : "Status"; break;
  }
  std::string out = "HTTP/1.1 " + std::to_string(response.status) + " " + reason + "\r\n";
  out += "Server: weft\r\n";
  if (!response.content_type.empty()) out += "Content-Type: " + response.content_type + "\r\n";
  for (const auto& [k, v] : response.headers) out += k + ": " + v + "\r\n";
  if (response.status != 304) {
    out += "Content-Length: " + std::to_string(response.body.size()) + "\r\n";
  }
  out += keep_alive ? "Connection: keep-alive\r\n" : "Connection: close\r\n";
  out += "\r\n";
  if (!head && response.status != 304) out += response.body;
  return out;
}

}  // namespace weft::server
