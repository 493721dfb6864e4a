// fs_rollback, fs_undo and fs_redo: bringing back an earlier state of a text
// file as a new change (nothing in the history is lost).
#include "server/tools/tool_util.h"
#include "weft/text/unified_diff.h"

namespace weft::server::tools {

namespace {

enum class Restore { kRollback, kUndo, kRedo };

Result<ToolOutput> run_fs_rollback(Restore kind, const Json& args, ToolContext& ctx) {
  WEFT_ASSIGN_OR_RETURN(kernel::Kernel * k, kernel_of(ctx));
  WEFT_ASSIGN_OR_RETURN(std::string path, resolve_arg(ctx, args, "path"));
  const char* tool = kind == Restore::kRollback ? "fs_rollback"
                     : kind == Restore::kUndo   ? "fs_undo"
                                                : "fs_redo";
  source::Attribution who = agent_of(ctx, tool);
  Result<kernel::ChangeOutcome> outcome =
      kind == Restore::kRollback ? k->rollback(path, arg_string(args, "version"), who)
      : kind == Restore::kUndo   ? k->undo(path, who)
                                 : k->redo(path, who);
  if (!outcome.ok()) return explain(outcome.status(), path);
  Json structured = {{"path", path}};
  if (!outcome->pending_approval.empty()) return pending_output(path, *outcome, structured);
  text::MakeDiffOptions diff_options;
  diff_options.old_label = "a/" + path;
  diff_options.new_label = "b/" + path;
  std::string diff = text::make_unified_diff(outcome->old_text, outcome->new_text, diff_options);
  structured["applied"] = true;
  structured["version"] = outcome->version;
  structured["diff"] = diff;
  std::string verb = kind == Restore::kRollback ? "Rolled back "
                     : kind == Restore::kUndo   ? "Undid the last change of yours to "
                                                : "Redid the last undone change of yours to ";
  return ToolOutput{verb + path + " (now version " + outcome->version + ")\n" +
                        (diff.empty() ? "(no change)\n" : diff),
                    std::move(structured), nullptr};
}

ToolSpec restore_tool(Restore kind) {
  ToolSpec t;
  Json props = {{"path", string_prop("File path in the workspace", 1)}};
  std::vector<std::string> required = {"path"};
  if (kind == Restore::kRollback) {
    t.name = "fs_rollback";
    t.title = "Roll a file back to a version";
    t.description =
        "Make a text file's content what it was at `version` (from fs_history), as a new change: "
        "the history keeps everything, so a rollback can itself be rolled back. The permission "
        "rules apply as to any change.";
    props["version"] = string_prop("A version from fs_history", 1);
    required.push_back("version");
  } else if (kind == Restore::kUndo) {
    t.name = "fs_undo";
    t.title = "Undo your last change to a file";
    t.description =
        "Undo the last change you (this client) made to a text file with a tool call; one call "
        "is one undo step. Later changes by other agents, people or the disk stay. Repeat to go "
        "further back; fs_redo brings it back.";
  } else {
    t.name = "fs_redo";
    t.title = "Redo your last undone change";
    t.description =
        "Redo the change your last fs_undo on this file took back. A new change of yours to the "
        "file clears what can be redone.";
  }
  t.input_schema = object_schema(props, required);
  t.output_schema = object_schema({{"path", {{"type", "string"}}}, {"diff", {{"type", "string"}}}});
  add_change_properties(t.output_schema);
  t.annotations = write_hints(/*destructive=*/false, /*idempotent=*/false);
  t.handler = [kind](const Json& args, ToolContext& ctx) { return run_fs_rollback(kind, args, ctx); };
  t.via_kernel = true;
  return t;
}

}  // namespace

ToolSpec fs_rollback_tool() { return restore_tool(Restore::kRollback); }
ToolSpec fs_undo_tool() { return restore_tool(Restore::kUndo); }
ToolSpec fs_redo_tool() { return restore_tool(Restore::kRedo); }

}  // namespace weft::server::tools
