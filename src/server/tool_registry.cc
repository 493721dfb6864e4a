// ToolRegistry and ToolContext (see include/weft/server/tool.h).
#include <exception>
#include <utility>

#include "weft/server/json_schema.h"
#include "weft/server/tool.h"

namespace weft::server {
namespace {

constexpr std::string_view kLevelNames[] = {"debug", "info",     "notice", "warning",
                                            "error", "critical", "alert",  "emergency"};

bool valid_tool_name(std::string_view name) {
  if (name.empty() || name.size() > 128) return false;
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '.' || c == '-';
    if (!ok) return false;
  }
  return true;
}

// "not found: no file 'a.txt'" reads as "Error (not found): no file 'a.txt'".
std::string error_text(const Status& status) {
  return "Error (" + std::string(status_code_name(status.code())) +
         "): " + std::string(status.message());
}

}  // namespace

bool parse_log_level(std::string_view name, LogLevel* out) {
  for (size_t i = 0; i < std::size(kLevelNames); ++i) {
    if (kLevelNames[i] == name) {
      *out = static_cast<LogLevel>(i);
      return true;
    }
  }
  return false;
}

std::string_view log_level_name(LogLevel level) { return kLevelNames[static_cast<size_t>(level)]; }

ToolContext::ToolContext(Workspace* workspace, std::vector<std::string> roots,
                         std::shared_ptr<std::atomic<bool>> cancel, ProgressFn progress, LogFn log)
    : workspace_(workspace),
      roots_(std::move(roots)),
      cancel_(std::move(cancel)),
      progress_(std::move(progress)),
      log_(std::move(log)) {}

void ToolContext::progress(double progress, double total, const std::string& message) const {
  if (progress_) progress_(progress, total, message);
}

void ToolContext::log(LogLevel level, const std::string& text) const {
  if (log_) log_(level, text);
}

Json ToolSpec::to_json() const {
  Json tool = {{"name", name}, {"description", description}, {"inputSchema", input_schema}};
  if (!title.empty()) tool["title"] = title;
  if (output_schema.is_object()) tool["outputSchema"] = output_schema;
  Json hints = {{"readOnlyHint", annotations.read_only}, {"openWorldHint", annotations.open_world}};
  if (!title.empty()) hints["title"] = title;
  if (!annotations.read_only) {
    hints["destructiveHint"] = annotations.destructive;
    hints["idempotentHint"] = annotations.idempotent;
  } else {
    hints["idempotentHint"] = true;
    hints["destructiveHint"] = false;
  }
  tool["annotations"] = std::move(hints);
  return tool;
}

Status ToolRegistry::add(ToolSpec spec) {
  if (!valid_tool_name(spec.name)) {
    return invalid_argument("tool name '" + spec.name + "' must be 1-128 of [A-Za-z0-9_.-]");
  }
  if (!spec.input_schema.is_object()) {
    return invalid_argument("tool '" + spec.name + "' needs an object inputSchema");
  }
  if (!spec.output_schema.is_null() && !spec.output_schema.is_object()) {
    return invalid_argument("tool '" + spec.name + "' outputSchema must be an object");
  }
  if (index_.count(spec.name))
    return already_exists("tool '" + spec.name + "' is already registered");
  index_.emplace(spec.name, tools_.size());
  tools_.push_back(std::move(spec));
  return Status();
}

void ToolRegistry::keep_read_only() {
  std::vector<ToolSpec> kept;
  for (auto& tool : tools_) {
    if (tool.annotations.read_only) kept.push_back(std::move(tool));
  }
  tools_ = std::move(kept);
  index_.clear();
  for (size_t i = 0; i < tools_.size(); ++i) index_.emplace(tools_[i].name, i);
}

const ToolSpec* ToolRegistry::find(std::string_view name) const {
  auto it = index_.find(name);
  return it == index_.end() ? nullptr : &tools_[it->second];
}

Json tool_error_result(const std::string& text) {
  return Json{{"content", Json::array({{{"type", "text"}, {"text", text}}})}, {"isError", true}};
}

Json ToolRegistry::call(const ToolSpec& tool, const Json& args, ToolContext& ctx) const {
  const Json& actual = args.is_null() ? Json::object() : args;
  Status valid = validate_json(tool.input_schema, actual, "arguments");
  if (!valid.ok()) {
    return tool_error_result("Invalid arguments for tool '" + tool.name + "': " +
                             std::string(valid.message()).substr(sizeof("invalid arguments:") - 1) +
                             "\nFix the arguments to match the tool's inputSchema and call again.");
  }
  if (forwarder_ && tool.via_kernel) {
    if (std::optional<Json> answered = forwarder_(tool, actual, ctx)) return std::move(*answered);
  }
  Result<ToolOutput> out = internal_error("tool handler did not run");
  try {
    out = tool.handler(actual, ctx);
  } catch (const std::exception& e) {
    // A handler bug must not take the server down; report it to the caller.
    return tool_error_result(std::string("Error (internal): ") + e.what());
  }
  if (!out.ok()) return tool_error_result(error_text(out.status()));
  Json result;
  if (out->content.is_array()) {
    result["content"] = std::move(out->content);
  } else {
    result["content"] = Json::array({{{"type", "text"}, {"text", std::move(out->text)}}});
  }
  if (out->structured.is_object()) result["structuredContent"] = std::move(out->structured);
  if (out->is_error) result["isError"] = true;
  return result;
}

}  // namespace weft::server
