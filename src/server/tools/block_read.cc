// block_read, block_search and block_list: reading blocks. They change
// nothing, but run in the kernel's process like every block tool.
#include "server/tools/block_tools.h"

namespace weft::server::tools {

namespace {

Result<ToolOutput> run_block_read(const Json& args, ToolContext& ctx) {
  WEFT_ASSIGN_OR_RETURN(kernel::Blocks * blocks, blocks_of(ctx));
  WEFT_ASSIGN_OR_RETURN(std::string id, block_id_arg(ctx, args, "block_id"));
  kernel::ReadOptions options;
  options.line_numbers = arg_bool(args, "line_numbers", true);
  if (auto r = args.find("range"); r != args.end() && r->is_object()) {
    kernel::LineRange range;
    range.start = static_cast<size_t>(arg_int(*r, "start", 0));
    range.end = static_cast<size_t>(arg_int(*r, "end", 1ll << 40));
    if (range.end < range.start) {
      return invalid_argument("range.end (" + std::to_string(range.end) +
                              ") is before range.start (" + std::to_string(range.start) +
                              "): lines are [start, end), 0-based");
    }
    options.range = range;
  }
  auto c = blocks->read(id, options);
  if (!c.ok()) return block_error(c.status(), id);
  Json s = {{"block_id", c->block_id},
            {"parent_id", c->parent_id ? Json(*c->parent_id) : Json()},
            {"role", std::string(kernel::block_role_name(c->role))},
            {"kind", std::string(kernel::block_kind_name(c->kind))},
            {"status", std::string(kernel::block_status_name(c->status))},
            {"version", c->version},
            {"line_count", c->line_count},
            {"range", {{"start", c->shown.start}, {"end", c->shown.end}}},
            {"content", c->content},
            {"metadata", c->metadata},
            {"dirty", c->dirty},
            {"permission", std::string(doc::memory_permission_name(c->permission))},
            {"deleted", c->deleted}};
  if (c->deleted) {
    s["deleted_by"] = c->deleted_by;
    s["deleted_at"] = c->deleted_at;
  }
  std::string text = c->block_id + " (" + std::string(kernel::block_role_name(c->role)) + " " +
                     std::string(kernel::block_kind_name(c->kind)) + ", " +
                     std::string(kernel::block_status_name(c->status)) + ", version " +
                     c->version + ", " + plural(c->line_count, "line");
  if (c->shown.start != 0 || c->shown.end != c->line_count) {
    text += ", showing lines " + std::to_string(c->shown.start) + "-" +
            std::to_string(c->shown.end) + " (end exclusive)";
  }
  if (c->parent_id) text += ", parent " + *c->parent_id;
  if (c->permission != doc::MemoryPermission::kReadWrite) {
    text += ", " + std::string(doc::memory_permission_name(c->permission));
  }
  if (c->deleted) text += ", DELETED by " + c->deleted_by + " (block_undo by them restores it)";
  text += ")\n" + c->content;
  if (!c->content.empty() && c->content.back() != '\n') text += "\n";
  return ToolOutput{std::move(text), std::move(s), nullptr};
}

Result<ToolOutput> run_block_search(const Json& args, ToolContext& ctx) {
  WEFT_ASSIGN_OR_RETURN(kernel::Blocks * blocks, blocks_of(ctx));
  WEFT_ASSIGN_OR_RETURN(std::string id, block_id_arg(ctx, args, "block_id"));
  kernel::SearchOptions options;
  options.context_lines = static_cast<size_t>(arg_int(args, "context_lines", 2));
  options.max_matches = static_cast<size_t>(arg_int(args, "max_matches", 20));
  auto r = blocks->search(id, arg_string(args, "query"), options);
  if (!r.ok()) return block_error(r.status(), id);
  Json matches = Json::array();
  std::string text;
  if (r->literal) text += "Note: " + r->note + ".\n";
  for (const auto& m : r->matches) {
    matches.push_back(match_json(m));
    text += "-- line " + std::to_string(m.line) + " (bytes " + std::to_string(m.match_start) +
            "-" + std::to_string(m.match_end) + ")\n";
    append_match_text(text, m);
  }
  if (r->matches.empty()) text += "No matches in " + id + ".\n";
  if (r->truncated) text += "[stopped at max_matches=" + std::to_string(options.max_matches) + "]\n";
  Json s = {{"block_id", id},
            {"matches", std::move(matches)},
            {"literal", r->literal},
            {"truncated", r->truncated}};
  if (r->literal) s["note"] = r->note;
  return ToolOutput{std::move(text), std::move(s), nullptr};
}

Result<ToolOutput> run_block_list(const Json& args, ToolContext& ctx) {
  WEFT_ASSIGN_OR_RETURN(kernel::Blocks * blocks, blocks_of(ctx));
  kernel::ListFilter f;
  if (args.contains("parent_id")) {
    WEFT_ASSIGN_OR_RETURN(std::string parent, block_id_arg(ctx, args, "parent_id"));
    f.parent_id = std::move(parent);
  }
  if (args.contains("kind")) {
    WEFT_ASSIGN_OR_RETURN(f.kind, kernel::parse_block_kind(arg_string(args, "kind")));
  }
  if (args.contains("status")) {
    WEFT_ASSIGN_OR_RETURN(f.status, kernel::parse_block_status(arg_string(args, "status")));
  }
  if (args.contains("path_prefix")) {
    std::string prefix = arg_string(args, "path_prefix");
    if (!prefix.empty() && prefix != ".") {
      WEFT_ASSIGN_OR_RETURN(Workspace * ws, workspace_of(ctx));
      auto resolved = ws->resolve(prefix, ctx.roots());
      if (!resolved.ok()) return explain(resolved.status(), prefix);
      prefix = *resolved == "." ? "" : *resolved;
    } else {
      prefix.clear();
    }
    f.path_prefix = prefix;
  }
  f.depth = static_cast<size_t>(arg_int(args, "depth", 1));
  f.limit = static_cast<size_t>(arg_int(args, "limit", 1000));
  f.include_deleted = arg_bool(args, "include_deleted");
  auto listed = blocks->list(agent_of(ctx, "block_list"), f);
  if (!listed.ok()) return block_error(listed.status(), f.parent_id.value_or(""));
  Json list = Json::array();
  std::string text;
  for (const auto& b : listed->blocks) {
    Json j = {{"block_id", b.block_id},
              {"parent_id", b.parent_id ? Json(*b.parent_id) : Json()},
              {"role", std::string(kernel::block_role_name(b.role))},
              {"kind", std::string(kernel::block_kind_name(b.kind))},
              {"status", std::string(kernel::block_status_name(b.status))},
              {"path", b.path},
              {"summary", b.summary},
              {"version", b.version},
              {"dirty", b.dirty},
              {"depth", b.depth},
              {"deleted", b.deleted}};
    list.push_back(std::move(j));
    text += std::string(2 * (b.depth - 1), ' ') + b.block_id + "  " +
            std::string(kernel::block_role_name(b.role)) + " " +
            std::string(kernel::block_kind_name(b.kind)) + " " +
            std::string(kernel::block_status_name(b.status)) + (b.dirty ? " dirty" : "") +
            (b.deleted ? " DELETED" : "") + "  " +
            b.summary + "\n";
  }
  if (text.empty()) {
    text = f.parent_id ? "No children of " + *f.parent_id + " match.\n" : "No blocks match.\n";
  }
  if (listed->truncated) text += "[stopped at limit=" + std::to_string(f.limit) + "]\n";
  return ToolOutput{std::move(text),
                    Json{{"blocks", std::move(list)}, {"truncated", listed->truncated}}, nullptr};
}

ToolSpec read_tool(std::string name, std::string title, std::string description, Json props,
                   std::vector<std::string> required, Json output, ToolHandler handler) {
  return block_tool(std::move(name), std::move(title), std::move(description), std::move(props),
                    std::move(required), std::move(output), read_only_hints(),
                    std::move(handler));
}

}  // namespace

ToolSpec block_read_tool() {
  Json range = object_schema(
      {{"start", integer_prop("First 0-based line", 0, 1ll << 40)},
       {"end", integer_prop("The line after the last (exclusive; past the end: to the end)", 0,
                            1ll << 40)}},
      {"start"});
  range["description"] = "Only these lines (default: all)";
  Json t = {{"type", "string"}};
  return read_tool(
      "block_read", "Read a block",
      "Read a block's text (each line prefixed with its 0-based number and a tab unless "
      "line_numbers is false; block_edit takes these numbers) with its role, kind, status, "
      "version, metadata, permission and line_count. Pending appends are included.",
      {{"block_id", block_id_prop()},
       {"line_numbers", bool_prop("Prefix lines with their 0-based number (default true)")},
       {"range", range}},
      {"block_id"},
      object_schema({{"block_id", t},
                     {"parent_id", {{"type", {"string", "null"}}}},
                     {"role", t},
                     {"kind", t},
                     {"status", t},
                     {"version", t},
                     {"line_count", {{"type", "integer"}}},
                     {"range", {{"type", "object"}}},
                     {"content", t},
                     {"metadata", {{"type", "object"}}},
                     {"dirty", {{"type", "boolean"}}},
                     {"permission", t},
                     {"deleted", {{"type", "boolean"}}},
                     {"deleted_by", t},
                     {"deleted_at", {{"type", "integer"}}}}),
      run_block_read);
}

ToolSpec block_search_tool() {
  return read_tool(
      "block_search", "Search one block",
      "Find an RE2 regular expression in one block's text (taken literally when it is not a "
      "valid regex; the result then says so). Each match gives its 0-based line, the byte "
      "columns match_start-match_end in that line, and the line with context_lines around it. "
      "kernel_search searches every block and file at once.",
      {{"block_id", block_id_prop()},
       {"query", string_prop("RE2 regex, or literal text", 1)},
       {"context_lines", integer_prop("Lines before and after each match (default 2)", 0, 50)},
       {"max_matches", integer_prop("Most matches (default 20)", 1, 1000)}},
      {"block_id", "query"},
      object_schema({{"block_id", {{"type", "string"}}},
                     {"matches", {{"type", "array"}}},
                     {"literal", {{"type", "boolean"}}},
                     {"note", {{"type", "string"}}},
                     {"truncated", {{"type", "boolean"}}}}),
      run_block_search);
}

ToolSpec block_list_tool() {
  return read_tool(
      "block_list", "List blocks",
      "List blocks: the children of parent_id (to `depth` levels), or the root conversation "
      "blocks and your memory blocks. kind \"file\" or path_prefix lists file blocks (the "
      "workspace text files weft tracks). Each entry: block_id, parent_id, role, kind, status, "
      "path, summary (the first characters), version, dirty (changes not yet stored or on "
      "disk), deleted (only with include_deleted).",
      {{"parent_id", block_id_prop("List this block's children (default: roots)")},
       {"kind", enum_prop("Only this kind",
                          {"text", "thinking", "tool_call", "tool_result", "file", "memory"})},
       {"status", enum_prop("Only this status", {"pending", "running", "done", "error"})},
       {"path_prefix", string_prop("File blocks under this workspace path")},
       {"depth", integer_prop("Levels of children to list (default 1)", 1, 64)},
       {"limit", integer_prop("Most blocks (default 1000)", 1, 10000)},
       {"include_deleted", bool_prop("Also list deleted conversation blocks (default false)")}},
      {},
      object_schema({{"blocks", {{"type", "array"}}}, {"truncated", {{"type", "boolean"}}}}),
      run_block_list);
}

}  // namespace weft::server::tools
