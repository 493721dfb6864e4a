// Helpers shared by the block tools (see block_tools.h).
#include "server/tools/block_tools.h"

namespace weft::server::tools {

Result<kernel::Blocks*> blocks_of(const ToolContext& ctx) {
  WEFT_ASSIGN_OR_RETURN(Workspace * ws, workspace_of(ctx));
  if (!ws->kernel()) {
    return failed_precondition(
        "this workspace has no kernel (it is read-only, in memory, or served with --no-kernel), "
        "so it has no blocks; the fs_* tools still work on its files");
  }
  return &ws->kernel()->blocks();
}

Result<std::string> block_id_arg(const ToolContext& ctx, const Json& args, const char* key) {
  std::string id = arg_string(args, key);
  auto parsed = kernel::parse_block_id(id);
  if (!parsed.ok()) {
    return invalid_argument(std::string(key) + ": " + std::string(parsed.status().message()) +
                            " (block_list shows the ids)");
  }
  if (parsed->type != kernel::BlockId::Type::kFile) return id;
  WEFT_ASSIGN_OR_RETURN(Workspace * ws, workspace_of(ctx));
  auto resolved = ws->resolve(parsed->path, ctx.roots());
  if (!resolved.ok()) return explain(resolved.status(), parsed->path);
  return kernel::file_block_id(*resolved);
}

Status block_error(const Status& status, std::string_view block_id) {
  std::string message(status.message());
  std::string hint;
  switch (status.code()) {
    case StatusCode::kNotFound:
      if (message.find("block_list") == std::string::npos) {
        hint = " (block_list shows the blocks there are)";
      }
      break;
    case StatusCode::kPermissionDenied:
      if (message.find("weft.toml") == std::string::npos) {
        hint = " (the block's permission forbids this change; block_read shows its permission)";
      }
      break;
    default:
      break;
  }
  if (!block_id.empty() && message.find(std::string(block_id)) == std::string::npos) {
    message = "'" + std::string(block_id) + "': " + message;
  }
  return Status(status.code(), message + hint);
}

std::string plural(size_t n, std::string_view word) {
  return std::to_string(n) + " " + std::string(word) + (n == 1 ? "" : "s");
}

Json match_json(const kernel::BlockMatch& m) {
  return {{"line", m.line},
          {"content", m.content},
          {"first_line", m.first_line},
          {"match_start", m.match_start},
          {"match_end", m.match_end}};
}

void append_match_text(std::string& out, const kernel::BlockMatch& m) {
  size_t n = m.first_line;
  size_t pos = 0;
  while (pos < m.content.size()) {
    size_t nl = m.content.find('\n', pos);
    size_t end = nl == std::string::npos ? m.content.size() : nl;
    out += std::to_string(n) + (n == m.line ? ":" : "-") + "\t";
    out.append(m.content, pos, end - pos);
    out += "\n";
    pos = end + 1;
    ++n;
  }
}

ToolSpec block_tool(std::string name, std::string title, std::string description, Json props,
                    std::vector<std::string> required, Json output_schema,
                    ToolAnnotations annotations, ToolHandler handler) {
  ToolSpec t;
  t.name = std::move(name);
  t.title = std::move(title);
  t.description = std::move(description);
  t.input_schema = object_schema(std::move(props), std::move(required));
  t.output_schema = std::move(output_schema);
  t.annotations = annotations;
  t.handler = std::move(handler);
  t.via_kernel = true;
  return t;
}

ToolOutput write_output(const kernel::BlockWrite& write, const std::string& what) {
  Json s = {{"block_id", write.block_id},
            {"version", write.version},
            {"changed", write.changed},
            {"status", std::string(kernel::block_status_name(write.status))}};
  if (!write.pending_approval.empty()) {
    s["applied"] = false;
    s["pending_approval"] = write.pending_approval;
    std::string text = "Pending approval " + write.pending_approval + ": " + write.rule + ".\n'" +
                       write.block_id +
                       "' stays unchanged until a person approves the change; it is then "
                       "applied, merged with whatever changed meanwhile. Do not retry it.";
    return ToolOutput{std::move(text), std::move(s), nullptr};
  }
  s["applied"] = true;
  std::string text = what + " " + write.block_id;
  if (write.buffered_bytes > 0) {
    s["buffered_bytes"] = write.buffered_bytes;
    text += " (" + std::to_string(write.buffered_bytes) +
            " bytes buffered; readers see them, committed within 100 ms)";
  } else {
    text += write.changed ? " (now version " + write.version + ")" : " (no change)";
  }
  return ToolOutput{text + "\n", std::move(s), nullptr};
}

Json write_schema(Json extra) {
  Json props = {{"block_id", {{"type", "string"}, {"description", "The block written"}}},
                {"version",
                 {{"type", "string"},
                  {"description",
                   "The block's version after the write (block_history, block_diff, "
                   "block_rollback take it)"}}},
                {"changed", {{"type", "boolean"}, {"description", "Something was committed"}}},
                {"status",
                 {{"type", "string"},
                  {"description", "The block's status: pending, running, done or error"}}},
                {"applied",
                 {{"type", "boolean"}, {"description", "False when the change waits for approval"}}},
                {"pending_approval",
                 {{"type", "string"},
                  {"description", "Set when a person must approve the change first: its id"}}},
                {"buffered_bytes",
                 {{"type", "integer"},
                  {"description", "block_append: bytes accepted but not yet committed"}}}};
  for (auto& [k, v] : extra.items()) props[k] = v;
  return object_schema(std::move(props));
}

Json block_id_prop(std::string description) {
  return string_prop(description.empty()
                         ? "Block id: <cell>/<agent>/<seq> (conversation), file:<path> (a "
                           "workspace text file) or memory:<agent>/<label>; block_list shows them"
                         : std::move(description),
                     1);
}

std::vector<ToolSpec> block_tools() {
  return {block_create_tool(),     block_status_tool(),   block_delete_tool(),
          block_append_tool(),
          block_edit_tool(),       block_splice_tool(),   block_apply_patch_tool(),
          block_read_tool(),       block_search_tool(),   block_list_tool(),
          block_history_tool(),    block_diff_tool(),     block_rollback_tool(),
          block_undo_tool(),       block_redo_tool(),     memory_create_tool(),
          memory_read_tool(),      memory_update_tool(),  memory_append_tool(),
          kernel_search_tool()};
}

}  // namespace weft::server::tools
