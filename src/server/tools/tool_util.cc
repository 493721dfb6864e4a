// Helpers shared by the workspace tools (see tool_util.h).
#include "server/tools/tool_util.h"

#include <utility>

#include "server/tools/block_tools.h"
#include "weft/server/workspace_tools.h"

namespace weft::server::tools {

Json object_schema(Json properties, std::vector<std::string> required) {
  Json schema = {{"type", "object"},
                 {"properties", properties.is_null() ? Json::object() : std::move(properties)},
                 {"additionalProperties", false}};
  if (!required.empty()) schema["required"] = required;
  return schema;
}

Json string_prop(std::string description, size_t min_length) {
  Json p = {{"type", "string"}, {"description", std::move(description)}};
  if (min_length > 0) p["minLength"] = min_length;
  return p;
}

Json integer_prop(std::string description, int64_t minimum, int64_t maximum) {
  return {{"type", "integer"},
          {"description", std::move(description)},
          {"minimum", minimum},
          {"maximum", maximum}};
}

Json bool_prop(std::string description) {
  return {{"type", "boolean"}, {"description", std::move(description)}};
}

Json enum_prop(std::string description, std::vector<std::string> values) {
  return {{"type", "string"}, {"description", std::move(description)}, {"enum", values}};
}

ToolAnnotations read_only_hints() {
  ToolAnnotations a;
  a.read_only = true;
  a.destructive = false;
  a.idempotent = true;
  return a;
}

ToolAnnotations write_hints(bool destructive, bool idempotent) {
  ToolAnnotations a;
  a.read_only = false;
  a.destructive = destructive;
  a.idempotent = idempotent;
  return a;
}

std::string arg_string(const Json& args, const char* key, std::string fallback) {
  auto it = args.find(key);
  return it != args.end() && it->is_string() ? it->get<std::string>() : std::move(fallback);
}

int64_t arg_int(const Json& args, const char* key, int64_t fallback) {
  auto it = args.find(key);
  if (it == args.end() || !it->is_number()) return fallback;
  return static_cast<int64_t>(it->get<double>());
}

bool arg_bool(const Json& args, const char* key, bool fallback) {
  auto it = args.find(key);
  return it != args.end() && it->is_boolean() ? it->get<bool>() : fallback;
}

Result<Workspace*> workspace_of(const ToolContext& ctx) {
  if (!ctx.workspace()) return failed_precondition("this server has no workspace attached");
  return ctx.workspace();
}

Result<std::string> resolve_arg(const ToolContext& ctx, const Json& args, const char* key) {
  WEFT_ASSIGN_OR_RETURN(Workspace * ws, workspace_of(ctx));
  auto resolved = ws->resolve(arg_string(args, key, "."), ctx.roots());
  if (!resolved.ok()) return explain(resolved.status(), arg_string(args, key, "."));
  return resolved;
}

Status explain(const Status& status, std::string_view path) {
  std::string hint;
  switch (status.code()) {
    case StatusCode::kNotFound:
      hint = " (paths are relative to the workspace root; use fs_list or fs_glob to find files)";
      break;
    case StatusCode::kPermissionDenied:
      // The workspace's rules say why themselves; the hint is for paths.
      if (status.message().find("weft.toml") != std::string_view::npos ||
          status.message().find("weft's own configuration") != std::string_view::npos) {
        break;
      }
      hint =
          " (access stays inside the workspace root: no '..' above it, no symbolic links "
          "leading out, no absolute paths elsewhere)";
      break;
    default:
      break;
  }
  std::string message(status.message());
  if (!path.empty() && message.find(std::string(path)) == std::string::npos) {
    message = "'" + std::string(path) + "': " + message;
  }
  return Status(status.code(), message + hint);
}

std::string base64_encode(std::string_view bytes) {
  static const char* kTable = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    uint32_t v = (uint8_t(bytes[i]) << 16) | (uint8_t(bytes[i + 1]) << 8) | uint8_t(bytes[i + 2]);
    out += {kTable[v >> 18], kTable[(v >> 12) & 63], kTable[(v >> 6) & 63], kTable[v & 63]};
  }
  if (i + 1 == bytes.size()) {
    uint32_t v = uint8_t(bytes[i]) << 16;
    out += {kTable[v >> 18], kTable[(v >> 12) & 63], '=', '='};
  } else if (i + 2 == bytes.size()) {
    uint32_t v = (uint8_t(bytes[i]) << 16) | (uint8_t(bytes[i + 1]) << 8);
    out += {kTable[v >> 18], kTable[(v >> 12) & 63], kTable[(v >> 6) & 63], '='};
  }
  return out;
}

std::string mime_type_for(std::string_view path) {
  static const std::pair<const char*, const char*> kTypes[] = {
      {".png", "image/png"},       {".jpg", "image/jpeg"},      {".jpeg", "image/jpeg"},
      {".gif", "image/gif"},       {".webp", "image/webp"},     {".bmp", "image/bmp"},
      {".svg", "image/svg+xml"},   {".ico", "image/x-icon"},    {".mp3", "audio/mpeg"},
      {".wav", "audio/wav"},       {".ogg", "audio/ogg"},       {".flac", "audio/flac"},
      {".m4a", "audio/mp4"},       {".pdf", "application/pdf"}, {".json", "application/json"},
      {".md", "text/markdown"},    {".txt", "text/plain"},      {".html", "text/html"},
      {".css", "text/css"},        {".js", "text/javascript"},  {".csv", "text/csv"},
      {".zip", "application/zip"}, {".gz", "application/gzip"}, {".xml", "application/xml"}};
  size_t dot = path.rfind('.');
  if (dot != std::string_view::npos) {
    std::string ext(path.substr(dot));
    for (auto& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    for (const auto& [suffix, type] : kTypes) {
      if (ext == suffix) return type;
    }
  }
  return "application/octet-stream";
}

Json stat_to_json(const fs::FileStat& stat) {
  Json out = {{"path", stat.path},
              {"type", std::string(fs::file_type_name(stat.type))},
              {"size_bytes", stat.size_bytes}};
  if (stat.symlink_target) out["symlink_target"] = *stat.symlink_target;
  out["modified_at"] = stat.modified_at ? Json(fs::format_time(*stat.modified_at)) : Json();
  out["created_at"] = stat.created_at ? Json(fs::format_time(*stat.created_at)) : Json();
  return out;
}

std::string cut_line_note(int64_t length_bytes) {
  return " [line truncated: " + std::to_string(length_bytes) + " bytes total]";
}

source::Attribution agent_of(const ToolContext& ctx, std::string_view tool) {
  return source::Attribution{ctx.origin(), std::string(tool), std::nullopt};
}

ToolOutput pending_output(const std::string& path, const kernel::ChangeOutcome& outcome,
                          Json structured) {
  structured["applied"] = false;
  structured["pending_approval"] = outcome.pending_approval;
  std::string text = "Pending approval " + outcome.pending_approval + ": " + outcome.rule +
                     ".\n'" + path +
                     "' stays unchanged until a person approves the change; it is then applied, "
                     "merged with whatever changed meanwhile. Do not retry it.";
  return ToolOutput{std::move(text), std::move(structured), nullptr};
}

void add_change_properties(Json& output_schema) {
  if (!output_schema["properties"].contains("applied")) {
    output_schema["properties"]["applied"] = {
        {"type", "boolean"}, {"description", "False when the change waits for approval"}};
  }
  output_schema["properties"]["version"] = {
      {"type", "string"},
      {"description", "The file's version after the change (fs_history, fs_diff, fs_rollback)"}};
  output_schema["properties"]["pending_approval"] = {
      {"type", "string"},
      {"description", "Set when a person must approve the change first: the approval's id"}};
}

}  // namespace weft::server::tools

namespace weft::server {

Status add_workspace_tools(ToolRegistry& registry, const WorkspaceToolsOptions& options) {
  using namespace tools;
  std::vector<ToolSpec> all = {
      fs_read_tool(),  fs_read_media_tool(), fs_write_tool(),   fs_edit_tool(),
      fs_patch_tool(), fs_list_tool(),       fs_glob_tool(),    fs_grep_tool(),
      fs_stat_tool(),  fs_delete_tool(),     fs_mkdir_tool(),   fs_move_tool(),
      fs_copy_tool(),  fs_snapshot_tool(),   fs_restore_tool(), fs_snapshots_tool()};
  if (options.kernel) {
    for (auto tool : {fs_history_tool(), fs_diff_tool(), fs_rollback_tool(), fs_undo_tool(),
                      fs_redo_tool(), fs_status_tool()}) {
      all.push_back(std::move(tool));
    }
    for (auto& tool : block_tools()) all.push_back(std::move(tool));
  }
  if (options.shell) all.push_back(shell_exec_tool());
  for (auto& tool : all) {
    if (options.read_only && !tool.annotations.read_only) continue;
    WEFT_RETURN_IF_ERROR(registry.add(std::move(tool)));
  }
  return Status();
}

}  // namespace weft::server
