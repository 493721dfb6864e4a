// block_create, block_status, block_append, block_edit, block_splice and
// block_apply_patch: the writes of the block API.
#include "server/tools/block_tools.h"

namespace weft::server::tools {

namespace {

const std::vector<std::string> kRoles = {"user", "model", "system", "tool"};
const std::vector<std::string> kCreateKinds = {"text", "thinking", "tool_call", "tool_result",
                                               "file"};
const std::vector<std::string> kStatuses = {"pending", "running", "done", "error"};

Result<ToolOutput> run_block_create(const Json& args, ToolContext& ctx) {
  WEFT_ASSIGN_OR_RETURN(kernel::Blocks * blocks, blocks_of(ctx));
  kernel::CreateBlock request;
  if (args.contains("parent_id")) {
    WEFT_ASSIGN_OR_RETURN(std::string parent, block_id_arg(ctx, args, "parent_id"));
    request.parent_id = std::move(parent);
  }
  WEFT_ASSIGN_OR_RETURN(request.role, kernel::parse_block_role(arg_string(args, "role")));
  WEFT_ASSIGN_OR_RETURN(request.kind, kernel::parse_block_kind(arg_string(args, "kind")));
  request.content = arg_string(args, "content");
  if (args.contains("metadata")) request.metadata = args["metadata"];
  if (args.contains("cell")) request.cell = arg_string(args, "cell");
  if (args.contains("permission")) {
    if (request.kind == kernel::BlockKind::kFile) {
      return invalid_argument(
          "permission does not apply to kind file: a file's permission comes from the rules of "
          "weft.toml; leave permission out");
    }
    WEFT_ASSIGN_OR_RETURN(request.permission,
                          kernel::parse_block_permission(arg_string(args, "permission")));
  }
  if (request.kind == kernel::BlockKind::kFile) {
    // The file's path resolves like any fs_* path.
    auto it = request.metadata.find("path");
    if (it == request.metadata.end() || !it->is_string()) {
      return invalid_argument(
          "a file block needs metadata.path: the workspace path of the file to create");
    }
    WEFT_ASSIGN_OR_RETURN(Workspace * ws, workspace_of(ctx));
    auto resolved = ws->resolve(it->get<std::string>(), ctx.roots());
    if (!resolved.ok()) return explain(resolved.status(), it->get<std::string>());
    request.metadata["path"] = *resolved;
  }
  auto w = blocks->create(agent_of(ctx, "block_create"), request);
  if (!w.ok()) return block_error(w.status(), request.parent_id.value_or(""));
  return write_output(*w, "Created");
}

Result<ToolOutput> run_block_status(const Json& args, ToolContext& ctx) {
  WEFT_ASSIGN_OR_RETURN(kernel::Blocks * blocks, blocks_of(ctx));
  WEFT_ASSIGN_OR_RETURN(std::string id, block_id_arg(ctx, args, "block_id"));
  WEFT_ASSIGN_OR_RETURN(kernel::BlockStatus status,
                        kernel::parse_block_status(arg_string(args, "status")));
  auto w = blocks->set_status(agent_of(ctx, "block_status"), id, status);
  if (!w.ok()) return block_error(w.status(), id);
  return write_output(*w, "Status " + std::string(kernel::block_status_name(status)) + " on");
}

Result<ToolOutput> run_block_append(const Json& args, ToolContext& ctx) {
  WEFT_ASSIGN_OR_RETURN(kernel::Blocks * blocks, blocks_of(ctx));
  WEFT_ASSIGN_OR_RETURN(std::string id, block_id_arg(ctx, args, "block_id"));
  auto w = blocks->append(agent_of(ctx, "block_append"), id, arg_string(args, "text"));
  if (!w.ok()) return block_error(w.status(), id);
  return write_output(*w, "Appended to");
}

Result<size_t> line_arg(const Json& op, const char* key, size_t index) {
  auto it = op.find(key);
  if (it == op.end() || !it->is_number_integer() || it->get<int64_t>() < 0) {
    return invalid_argument("operations[" + std::to_string(index) + "] (" +
                            op.value("op", std::string("?")) + ") needs " + key +
                            ": a 0-based line number");
  }
  return static_cast<size_t>(it->get<int64_t>());
}

Result<std::vector<kernel::LineEdit>> parse_ops(const Json& list) {
  std::vector<kernel::LineEdit> ops;
  for (size_t i = 0; i < list.size(); ++i) {
    const Json& op = list[i];
    std::string name = op.value("op", std::string());
    WEFT_ASSIGN_OR_RETURN(kernel::LineEdit::Op kind, kernel::parse_line_edit_op(name));
    auto content = [&]() -> Result<std::string> {
      auto it = op.find("content");
      if (it == op.end() || !it->is_string()) {
        return invalid_argument("operations[" + std::to_string(i) + "] (" + name +
                                ") needs content: the whole lines to put there");
      }
      return it->get<std::string>();
    };
    if (kind == kernel::LineEdit::Op::kInsert) {
      WEFT_ASSIGN_OR_RETURN(size_t line, line_arg(op, "line", i));
      WEFT_ASSIGN_OR_RETURN(std::string text, content());
      ops.push_back(kernel::LineEdit::insert(line, std::move(text)));
      continue;
    }
    WEFT_ASSIGN_OR_RETURN(size_t start, line_arg(op, "start_line", i));
    WEFT_ASSIGN_OR_RETURN(size_t end, line_arg(op, "end_line", i));
    if (kind == kernel::LineEdit::Op::kDelete) {
      ops.push_back(kernel::LineEdit::erase(start, end));
      continue;
    }
    WEFT_ASSIGN_OR_RETURN(std::string text, content());
    std::optional<std::string> expected;
    if (auto it = op.find("expected_text"); it != op.end() && it->is_string()) {
      expected = it->get<std::string>();
    }
    ops.push_back(kernel::LineEdit::replace(start, end, std::move(text), std::move(expected)));
  }
  return ops;
}

Result<ToolOutput> run_block_edit(const Json& args, ToolContext& ctx) {
  WEFT_ASSIGN_OR_RETURN(kernel::Blocks * blocks, blocks_of(ctx));
  WEFT_ASSIGN_OR_RETURN(std::string id, block_id_arg(ctx, args, "block_id"));
  auto ops = parse_ops(args["operations"]);
  if (!ops.ok()) return ops.status();
  auto w = blocks->edit(agent_of(ctx, "block_edit"), id, *ops);
  if (!w.ok()) return block_error(w.status(), id);
  return write_output(*w, "Edited (" + plural(ops->size(), "operation") + ")");
}

Result<ToolOutput> run_block_splice(const Json& args, ToolContext& ctx) {
  WEFT_ASSIGN_OR_RETURN(kernel::Blocks * blocks, blocks_of(ctx));
  WEFT_ASSIGN_OR_RETURN(std::string id, block_id_arg(ctx, args, "block_id"));
  auto w = blocks->splice(agent_of(ctx, "block_splice"), id,
                          static_cast<uint64_t>(arg_int(args, "offset", 0)),
                          static_cast<uint64_t>(arg_int(args, "delete_count", 0)),
                          arg_string(args, "insert"));
  if (!w.ok()) return block_error(w.status(), id);
  return write_output(*w, "Spliced");
}

Result<ToolOutput> run_block_apply_patch(const Json& args, ToolContext& ctx) {
  WEFT_ASSIGN_OR_RETURN(kernel::Blocks * blocks, blocks_of(ctx));
  WEFT_ASSIGN_OR_RETURN(std::string id, block_id_arg(ctx, args, "block_id"));
  bool dry_run = arg_bool(args, "dry_run");
  auto r = blocks->apply_patch(agent_of(ctx, "block_apply_patch"), id, arg_string(args, "patch"),
                               dry_run);
  if (!r.ok()) return block_error(r.status(), id);
  Json s = {{"block_id", id}, {"success", r->success}, {"dry_run", dry_run}};
  std::string text;
  if (!r->success) {
    s["errors"] = r->errors;
    text = "The patch does not apply to " + id + "; nothing changed:\n";
    for (const auto& e : r->errors) text += "  " + e + "\n";
    text += "Read the block (block_read) and make the patch against its current text.\n";
  } else if (!r->pending_approval.empty()) {
    s["pending_approval"] = r->pending_approval;
    s["applied"] = false;
    text = "Pending approval " + r->pending_approval + ": '" + id +
           "' stays unchanged until a person approves the patch. Do not retry it.\n";
  } else if (dry_run) {
    s["diff"] = r->diff;
    text = "The patch applies to " + id + " (dry run, nothing changed):\n" + r->diff;
  } else {
    s["version"] = r->version;
    s["applied"] = true;
    text = "Patched " + id + " (now version " + r->version + ")\n";
  }
  return ToolOutput{std::move(text), std::move(s), nullptr};
}

Result<ToolOutput> run_block_delete(const Json& args, ToolContext& ctx) {
  WEFT_ASSIGN_OR_RETURN(kernel::Blocks * blocks, blocks_of(ctx));
  WEFT_ASSIGN_OR_RETURN(std::string id, block_id_arg(ctx, args, "block_id"));
  bool recursive = arg_bool(args, "recursive");
  auto r = blocks->remove(agent_of(ctx, "block_delete"), id, recursive);
  if (!r.ok()) return block_error(r.status(), id);
  Json s = {{"block_id", r->block_id},
            {"deleted", r->removed},
            {"changed", r->changed},
            {"version", r->version}};
  if (!r->pending_approval.empty()) {
    s["applied"] = false;
    s["pending_approval"] = r->pending_approval;
    return ToolOutput{"Pending approval " + r->pending_approval + ": " + r->rule + ".\n'" + id +
                          "' stays until a person approves the delete. Do not retry it.\n",
                      std::move(s), nullptr};
  }
  s["applied"] = true;
  std::string text;
  if (!r->changed) {
    text = "'" + id + "' was deleted already (no change)\n";
  } else if (r->removed.size() > 1) {
    text = "Deleted " + id + " and " + plural(r->removed.size() - 1, "block") + " under it\n";
  } else {
    text = "Deleted " + id + "\n";
  }
  if (r->changed && id.rfind("memory:", 0) != 0) {
    text += id.rfind("file:", 0) == 0
                ? "Its block keeps the history: block_undo on it (by you) or block_rollback to its "
                  "last version (block_history) writes the file back.\n"
                : "Its text and history stay readable; block_undo on it restores it.\n";
  }
  return ToolOutput{std::move(text), std::move(s), nullptr};
}

ToolSpec write_tool(std::string name, std::string title, std::string description, Json props,
                    std::vector<std::string> required, ToolHandler handler, bool idempotent) {
  return block_tool(std::move(name), std::move(title), std::move(description), std::move(props),
                    std::move(required), write_schema(),
                    write_hints(/*destructive=*/false, idempotent), std::move(handler));
}

}  // namespace

ToolSpec block_create_tool() {
  return write_tool(
      "block_create", "Create a block",
      "Create a conversation block: a message, thinking, tool call or tool result, as a child of "
      "parent_id (any block: conversation, file:<path> or memory:...) or as a root. Its id is "
      "<cell>/<your name>/<seq>; its status starts pending and becomes running at the first "
      "write (set it with block_status). Stream text into it with block_append. kind \"file\" "
      "creates a new workspace text file at metadata.path instead (it must not exist; "
      "weft.toml's rules apply). Returns block_id and version.",
      {{"parent_id", block_id_prop("The parent block's id (omit for a root block)")},
       {"role", enum_prop("Who speaks: user, model, system or tool", kRoles)},
       {"kind", enum_prop("What the block holds", kCreateKinds)},
       {"content", string_prop("Initial text (default empty)")},
       {"metadata",
        {{"type", "object"},
         {"description",
          "A JSON object: path, language, tool_name and any keys of yours (at most 16 KiB)"}}},
       {"cell", string_prop("The cell (conversation) the block belongs to (default main; "
                            "[A-Za-z0-9._:-], 1-64 bytes)", 1)},
       {"permission",
        enum_prop("What later writes to the block may do, yours included (default read_write): "
                  "read_only (none), append_only (block_append only), read_write, partner or "
                  "human (each write needs approval), admin (anyone may also delete it). Not "
                  "for kind file (weft.toml's rules decide)",
                  {"read_only", "append_only", "read_write", "partner", "human", "admin"})}},
      {"role", "kind"}, run_block_create, false);
}

ToolSpec block_delete_tool() {
  ToolSpec t = block_tool(
      "block_delete", "Delete a block",
      "Delete a block. A conversation block is marked deleted: block_list leaves it out, "
      "writes to it are refused, but block_read and block_history still show it, and your "
      "block_undo on it restores it. A block with children is refused unless recursive is "
      "true (which deletes the whole subtree). You may delete the blocks you created (when "
      "their permission lets you rewrite them); other agents' blocks only when their "
      "permission is admin. file:<path> deletes the file through weft.toml's rules (its block "
      "keeps the history: the deleter's block_undo, or block_rollback, writes it back); "
      "memory:<agent>/<label> deletes the memory block (admin permission).",
      {{"block_id", block_id_prop()},
       {"recursive", bool_prop("Also delete every block under it (default false)")}},
      {"block_id"},
      object_schema(
          {{"block_id", {{"type", "string"}}},
           {"deleted",
            {{"type", "array"},
             {"items", {{"type", "string"}}},
             {"description", "The blocks deleted: the block, then those under it"}}},
           {"changed", {{"type", "boolean"}}},
           {"version", {{"type", "string"}}},
           {"applied", {{"type", "boolean"}}},
           {"pending_approval", {{"type", "string"}}}}),
      write_hints(/*destructive=*/true, /*idempotent=*/true), run_block_delete);
  return t;
}

ToolSpec block_status_tool() {
  return write_tool(
      "block_status", "Set a block's status",
      "Set a conversation block's status: pending, running, done or error (any transition). "
      "File and memory blocks have no status. Returns the version.",
      {{"block_id", block_id_prop()}, {"status", enum_prop("The new status", kStatuses)}},
      {"block_id", "status"}, run_block_status, true);
}

ToolSpec block_append_tool() {
  ToolSpec spec = write_tool(
      "block_append", "Append text to a block",
      "Append text to the end of a block: the streaming path for a model's output (send each "
      "chunk as it comes; the kernel batches them, committing at a line break, every 50 bytes "
      "or after 100 ms of silence, and every read sees them at once). Consecutive appends of "
      "yours form one undo step. Works on conversation, file and memory (text) blocks.",
      {{"block_id", block_id_prop()},
       {"text", string_prop("The text to add (up to 64 KiB, UTF-8)", 1)}},
      {"block_id", "text"}, run_block_append, false);
  spec.quick = true;  // a buffered chunk of at most 64 KiB
  return spec;
}

ToolSpec block_edit_tool() {
  Json op = object_schema(
      {{"op", enum_prop("insert, delete or replace", {"insert", "delete", "replace"})},
       {"line", integer_prop("insert: the 0-based line to insert before (line_count: at the "
                             "end)", 0, 1ll << 40)},
       {"start_line", integer_prop("delete, replace: first 0-based line", 0, 1ll << 40)},
       {"end_line", integer_prop("delete, replace: the line after the last (exclusive)", 0,
                                 1ll << 40)},
       {"content", string_prop("insert, replace: whole lines, each ending with a line break")},
       {"expected_text",
        string_prop("replace: the current text of lines [start_line, end_line); the batch "
                    "fails if it differs (compare-and-set)")}},
      {"op"});
  return write_tool(
      "block_edit", "Edit a block's lines",
      "Edit a block by line numbers, as block_read shows them (0-based; end_line exclusive). "
      "Every operation addresses the lines as they are BEFORE the batch, so list them in any "
      "order; ranges must not overlap. Content is whole lines. The batch is atomic: an "
      "out-of-range line or an expected_text that differs fails it all, and the error shows "
      "the current text of the lines concerned.",
      {{"block_id", block_id_prop()},
       {"operations",
        {{"type", "array"},
         {"description", "The edits (1 to 1000)"},
         {"minItems", 1},
         {"maxItems", 1000},
         {"items", op}}}},
      {"block_id", "operations"}, run_block_edit, false);
}

ToolSpec block_splice_tool() {
  return write_tool(
      "block_splice", "Splice a block's bytes",
      "Replace delete_count bytes at byte offset `offset` of a block's text with `insert`. "
      "Offsets are UTF-8 bytes; an offset or end inside a character is refused with the nearest "
      "character boundaries. Prefer block_edit for whole lines.",
      {{"block_id", block_id_prop()},
       {"offset", integer_prop("Byte offset in the text", 0, 1ll << 40)},
       {"delete_count", integer_prop("Bytes to remove from offset", 0, 1ll << 40)},
       {"insert", string_prop("Text to insert at offset (default empty)")}},
      {"block_id", "offset", "delete_count"}, run_block_splice, false);
}

ToolSpec block_apply_patch_tool() {
  ToolSpec t = write_tool(
      "block_apply_patch", "Apply a unified diff to a block",
      "Apply a unified diff (the diff of one text; its file names are ignored) to a block, all "
      "hunks or none. A patch that does not apply is not an error: success is false and errors "
      "says which hunk failed and why. dry_run checks it and returns the diff it would make.",
      {{"block_id", block_id_prop()},
       {"patch", string_prop("The unified diff", 1)},
       {"dry_run", bool_prop("Check only; change nothing (default false)")}},
      {"block_id", "patch"}, run_block_apply_patch, false);
  t.output_schema = write_schema(
      {{"success", {{"type", "boolean"}, {"description", "Every hunk applies"}}},
       {"errors", {{"type", "array"}, {"items", {{"type", "string"}}}}},
       {"dry_run", {{"type", "boolean"}}},
       {"diff", {{"type", "string"}, {"description", "dry run: what it would change"}}}});
  return t;
}

}  // namespace weft::server::tools
