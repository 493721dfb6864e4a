// block_history, block_diff, block_rollback, block_undo and block_redo: a
// block's past, with the contracts of fs_history, fs_diff and fs_rollback.
#include "server/tools/block_tools.h"

namespace weft::server::tools {

namespace {

Result<ToolOutput> run_block_history(const Json& args, ToolContext& ctx) {
  WEFT_ASSIGN_OR_RETURN(kernel::Blocks * blocks, blocks_of(ctx));
  WEFT_ASSIGN_OR_RETURN(std::string id, block_id_arg(ctx, args, "block_id"));
  auto entries = blocks->history(id, static_cast<size_t>(arg_int(args, "limit", 50)));
  if (!entries.ok()) return block_error(entries.status(), id);
  Json changes = Json::array();
  std::string text = "History of " + id + " (newest first, " +
                     plural(entries->size(), "change") + "):\n";
  for (const auto& e : *entries) {
    changes.push_back({{"version", e.version},
                       {"author", e.author},
                       {"message", e.message},
                       {"timestamp", e.timestamp}});
    text += e.version + "  " + std::to_string(e.timestamp) + "  " + e.author +
            (e.message.empty() ? "" : "  " + e.message) + "\n";
  }
  return ToolOutput{std::move(text), Json{{"block_id", id}, {"changes", std::move(changes)}},
                    nullptr};
}

Result<ToolOutput> run_block_diff(const Json& args, ToolContext& ctx) {
  WEFT_ASSIGN_OR_RETURN(kernel::Blocks * blocks, blocks_of(ctx));
  WEFT_ASSIGN_OR_RETURN(std::string id, block_id_arg(ctx, args, "block_id"));
  std::optional<std::string> from, to;
  if (args.contains("from")) from = arg_string(args, "from");
  if (args.contains("to")) to = arg_string(args, "to");
  auto diff = blocks->diff(id, from, to);
  if (!diff.ok()) return block_error(diff.status(), id);
  std::string text = diff->empty() ? "No difference.\n" : *diff;
  return ToolOutput{std::move(text), Json{{"block_id", id}, {"diff", *diff}}, nullptr};
}

enum class Restore { kRollback, kUndo, kRedo };

Result<ToolOutput> run_block_restore(Restore kind, const Json& args, ToolContext& ctx) {
  WEFT_ASSIGN_OR_RETURN(kernel::Blocks * blocks, blocks_of(ctx));
  WEFT_ASSIGN_OR_RETURN(std::string id, block_id_arg(ctx, args, "block_id"));
  const char* tool = kind == Restore::kRollback ? "block_rollback"
                     : kind == Restore::kUndo   ? "block_undo"
                                                : "block_redo";
  source::Attribution who = agent_of(ctx, tool);
  auto w = kind == Restore::kRollback ? blocks->rollback(who, id, arg_string(args, "version"))
           : kind == Restore::kUndo   ? blocks->undo(who, id)
                                      : blocks->redo(who, id);
  if (!w.ok()) return block_error(w.status(), id);
  return write_output(*w, kind == Restore::kRollback ? "Rolled back"
                          : kind == Restore::kUndo   ? "Undid your last change to"
                                                     : "Redid your last undone change to");
}

ToolSpec restore_tool(Restore kind) {
  ToolSpec t;
  Json props = {{"block_id", block_id_prop()}};
  std::vector<std::string> required = {"block_id"};
  if (kind == Restore::kRollback) {
    t.name = "block_rollback";
    t.title = "Roll a block back to a version";
    t.description =
        "Make a block's text what it was at `version` (from block_history), as a new change: "
        "the history keeps everything, so a rollback can itself be rolled back.";
    props["version"] = string_prop("A version from block_history", 1);
    required.push_back("version");
  } else if (kind == Restore::kUndo) {
    t.name = "block_undo";
    t.title = "Undo your last change to a block";
    t.description =
        "Undo the last change you (this client) made to a block: one tool call is one step, and "
        "a run of your appends is one step. Later changes by others stay. Repeat to go further "
        "back; block_redo brings it back. Status changes are not undone.";
  } else {
    t.name = "block_redo";
    t.title = "Redo your last undone change to a block";
    t.description =
        "Redo the change your last block_undo on this block took back. A new change of yours "
        "to the block clears what can be redone.";
  }
  t.input_schema = object_schema(props, required);
  t.output_schema = write_schema();
  t.annotations = write_hints(/*destructive=*/false, /*idempotent=*/false);
  t.handler = [kind](const Json& args, ToolContext& ctx) { return run_block_restore(kind, args, ctx); };
  t.via_kernel = true;
  return t;
}

}  // namespace

ToolSpec block_history_tool() {
  ToolSpec t;
  t.name = "block_history";
  t.title = "Block history";
  t.description =
      "The changes to a block, newest first: each with its version (block_diff and "
      "block_rollback take it), its author (agent:<name>, human:<name>, source:disk...), the "
      "tool, and a Unix timestamp.";
  t.input_schema =
      object_schema({{"block_id", block_id_prop()},
                     {"limit", integer_prop("Most changes to list (default 50)", 1, 10000)}},
                    {"block_id"});
  Json change = object_schema({{"version", {{"type", "string"}}},
                               {"author", {{"type", "string"}}},
                               {"message", {{"type", "string"}}},
                               {"timestamp", {{"type", "integer"}}}});
  t.output_schema = object_schema({{"block_id", {{"type", "string"}}},
                                   {"changes", {{"type", "array"}, {"items", change}}}});
  t.annotations = read_only_hints();
  t.handler = run_block_history;
  t.via_kernel = true;
  return t;
}

ToolSpec block_diff_tool() {
  ToolSpec t;
  t.name = "block_diff";
  t.title = "Diff two versions of a block";
  t.description =
      "A unified diff of a block between two versions from block_history. Defaults: `to` is the "
      "current version and `from` the one before `to`, so with no versions it shows the last "
      "change.";
  t.input_schema = object_schema({{"block_id", block_id_prop()},
                                  {"from", string_prop("Older version (default: before `to`)")},
                                  {"to", string_prop("Newer version (default: current)")}},
                                 {"block_id"});
  t.output_schema =
      object_schema({{"block_id", {{"type", "string"}}}, {"diff", {{"type", "string"}}}});
  t.annotations = read_only_hints();
  t.handler = run_block_diff;
  t.via_kernel = true;
  return t;
}

ToolSpec block_rollback_tool() { return restore_tool(Restore::kRollback); }
ToolSpec block_undo_tool() { return restore_tool(Restore::kUndo); }
ToolSpec block_redo_tool() { return restore_tool(Restore::kRedo); }

}  // namespace weft::server::tools
