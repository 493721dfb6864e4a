// tools/* and resources/* of the MCP engine (the lifecycle is in mcp_server.cc).
#include <mutex>
#include <utility>

#include "server/request_info.h"
#include "weft/server/mcp_server.h"

namespace weft::server {
namespace {

// Cursors are opaque to clients: "<kind>:<offset>".
std::string make_cursor(std::string_view kind, size_t offset) {
  return std::string(kind) + ":" + std::to_string(offset);
}

// Reads params.cursor; returns false (with *error set) when it is not one of ours.
bool read_cursor(const Json& params, std::string_view kind, size_t* offset, RpcError* error) {
  *offset = 0;
  auto cursor = params.find("cursor");
  if (cursor == params.end() || cursor->is_null()) return true;
  std::string prefix = std::string(kind) + ":";
  if (cursor->is_string()) {
    const std::string& text = cursor->get_ref<const std::string&>();
    if (text.rfind(prefix, 0) == 0 && text.size() > prefix.size() &&
        text.size() < prefix.size() + 12) {
      size_t value = 0;
      bool digits = true;
      for (size_t i = prefix.size(); i < text.size(); ++i) {
        if (text[i] < '0' || text[i] > '9') digits = false;
        value = value * 10 + static_cast<size_t>(text[i] - '0');
      }
      if (digits) {
        *offset = value;
        return true;
      }
    }
  }
  *error = invalid_params("Invalid cursor " + cursor->dump() +
                          ": pass back the nextCursor of a previous page unchanged");
  return false;
}

bool level_admits(std::optional<LogLevel> threshold, LogLevel level) {
  return threshold && static_cast<int>(level) >= static_cast<int>(*threshold);
}

RpcError status_to_rpc(const Status& status, int not_found_code) {
  int code = status.code() == StatusCode::kNotFound   ? not_found_code
             : status.code() == StatusCode::kInternal ? rpc::kInternalError
                                                      : rpc::kInvalidParams;
  return RpcError{code, std::string(status.message()), nullptr};
}

}  // namespace

McpServer::Outcome McpServer::list_tools(const Json& params) const {
  size_t offset = 0;
  RpcError error;
  if (!read_cursor(params, "tools", &offset, &error)) return error;
  const auto& all = tools_->tools();
  if (offset > all.size()) return invalid_params("Invalid cursor: past the end of the tool list");
  size_t end = std::min(all.size(), offset + std::max<size_t>(1, options_.tools_page_size));
  Json list = Json::array();
  for (size_t i = offset; i < end; ++i) list.push_back(all[i].to_json());
  Json result = {{"tools", std::move(list)}};
  if (end < all.size()) result["nextCursor"] = make_cursor("tools", end);
  return result;
}

McpServer::Outcome McpServer::call_tool(const Message& message, const RequestInfo& info,
                                        Session& session, const Session::Sender& related) {
  const Json& params = message.params;
  if (!params.is_object() || !params.contains("name") || !params["name"].is_string()) {
    return invalid_params("tools/call needs params.name (a string naming a tool from tools/list)");
  }
  const std::string name = params["name"].get<std::string>();
  Json args = params.contains("arguments") ? params["arguments"] : Json::object();
  if (!args.is_object() && !args.is_null()) {
    return invalid_params("tools/call params.arguments must be an object");
  }
  const ToolSpec* tool = tools_->find(name);
  if (!tool) {
    std::string known;
    for (const auto& t : tools_->tools()) known += (known.empty() ? "" : ", ") + t.name;
    return invalid_params("Unknown tool: '" + name + "'. Available tools: " + known);
  }
  // Progress values must grow; a call may report from several threads.
  auto progress_mu = std::make_shared<std::mutex>();
  auto last = std::make_shared<double>(-1);
  ToolContext::ProgressFn progress;
  if (!info.progress_token.is_null()) {
    Json token = info.progress_token;
    progress = [token, related, progress_mu, last](double done, double total,
                                                   const std::string& text) {
      std::lock_guard lock(*progress_mu);
      if (done <= *last) return;
      *last = done;
      Json p = {{"progressToken", token}, {"progress", done}};
      if (total > 0) p["total"] = total;
      if (!text.empty()) p["message"] = text;
      if (related) related(make_notification("notifications/progress", std::move(p)));
    };
  }
  std::optional<LogLevel> threshold = info.modern ? info.log_level : session.log_level();
  ToolContext::LogFn log = [threshold, related](LogLevel level, const std::string& text) {
    if (!level_admits(threshold, level) || !related) return;
    related(
        make_notification("notifications/message",
                          {{"level", log_level_name(level)}, {"logger", "weft"}, {"data", text}}));
  };
  ToolContext ctx(workspace_, session.roots(), info.cancel, progress, log);
  ctx.set_client_name(session.client_name());
  ctx.log(LogLevel::kDebug, "tools/call " + name);
  return tools_->call(*tool, args, ctx);
}

McpServer::Outcome McpServer::list_resources(const Json& params, Session& session) const {
  size_t offset = 0;
  RpcError error;
  if (!read_cursor(params, "resources", &offset, &error)) return error;
  Json result = {{"resources", Json::array()}};
  if (!resources_) return result;
  bool more = false;
  auto page = resources_->list(offset, options_.resources_page_size, session.roots(), &more);
  if (!page.ok()) return status_to_rpc(page.status(), rpc::kInvalidParams);
  for (auto& r : *page) result["resources"].push_back(std::move(r));
  if (more) result["nextCursor"] = make_cursor("resources", offset + page->size());
  return result;
}

McpServer::Outcome McpServer::read_resource(const Json& params, Session& session) const {
  auto uri = params.find("uri");
  if (uri == params.end() || !uri->is_string()) {
    return invalid_params("resources/read needs params.uri (a string from resources/list)");
  }
  if (!resources_) {
    return RpcError{rpc::kResourceNotFound, "Resource not found: " + uri->get<std::string>(),
                    Json{{"uri", *uri}}};
  }
  auto contents = resources_->read(uri->get<std::string>(), session.roots());
  if (!contents.ok()) {
    RpcError e = status_to_rpc(contents.status(), rpc::kResourceNotFound);
    e.data = Json{{"uri", *uri}};
    return e;
  }
  return Json{{"contents", std::move(*contents)}};
}

}  // namespace weft::server
