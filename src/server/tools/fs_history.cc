// fs_history, fs_diff and fs_status: what the kernel knows of a file's past
// and present. Read-only: they change nothing.
#include <ctime>

#include "server/tools/tool_util.h"

namespace weft::server::tools {

Result<kernel::Kernel*> kernel_of(const ToolContext& ctx) {
  WEFT_ASSIGN_OR_RETURN(Workspace * ws, workspace_of(ctx));
  if (!ws->kernel()) {
    return failed_precondition(
        "this workspace has no kernel (it is read-only or in memory), so files have no history");
  }
  return ws->kernel();
}

namespace {

std::string iso_time(int64_t unix_seconds) {
  std::time_t t = static_cast<std::time_t>(unix_seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

Result<ToolOutput> run_fs_history(const Json& args, ToolContext& ctx) {
  WEFT_ASSIGN_OR_RETURN(kernel::Kernel * k, kernel_of(ctx));
  WEFT_ASSIGN_OR_RETURN(std::string path, resolve_arg(ctx, args, "path"));
  size_t limit = static_cast<size_t>(arg_int(args, "limit", 50));
  auto entries = k->history(path, limit);
  if (!entries.ok()) return explain(entries.status(), path);
  Json changes = Json::array();
  std::string text = "History of " + path + " (newest first, " + std::to_string(entries->size()) +
                     " change" + (entries->size() == 1 ? "" : "s") + "):\n";
  for (const auto& e : *entries) {
    changes.push_back({{"version", e.version},
                       {"author", e.author},
                       {"message", e.message},
                       {"timestamp", e.timestamp}});
    text += e.version + "  " + iso_time(e.timestamp) + "  " + e.author +
            (e.message.empty() ? "" : "  " + e.message) + "\n";
  }
  return ToolOutput{std::move(text), Json{{"path", path}, {"changes", std::move(changes)}},
                    nullptr};
}

Result<ToolOutput> run_fs_diff(const Json& args, ToolContext& ctx) {
  WEFT_ASSIGN_OR_RETURN(kernel::Kernel * k, kernel_of(ctx));
  WEFT_ASSIGN_OR_RETURN(std::string path, resolve_arg(ctx, args, "path"));
  std::optional<std::string> from, to;
  if (args.contains("from")) from = arg_string(args, "from");
  if (args.contains("to")) to = arg_string(args, "to");
  auto diff = k->diff(path, from, to);
  if (!diff.ok()) return explain(diff.status(), path);
  std::string text = diff->empty() ? "No difference.\n" : *diff;
  return ToolOutput{std::move(text), Json{{"path", path}, {"diff", *diff}}, nullptr};
}

Result<ToolOutput> run_fs_status(const Json& args, ToolContext& ctx) {
  WEFT_ASSIGN_OR_RETURN(kernel::Kernel * k, kernel_of(ctx));
  std::optional<std::string> path;
  if (args.contains("path")) {
    WEFT_ASSIGN_OR_RETURN(std::string p, resolve_arg(ctx, args, "path"));
    if (p != ".") path = std::move(p);
  }
  auto files = k->status(path);
  if (!files.ok()) return explain(files.status(), path.value_or("."));
  Json list = Json::array();
  std::string text;
  for (const auto& f : *files) {
    Json j = {{"path", f.path},
              {"is_block", f.is_block},
              {"dirty", f.dirty},
              {"disk_ahead", f.disk_ahead},
              {"deleted", f.deleted},
              {"permission", doc::memory_permission_name(f.permission)},
              {"pending_approvals", f.pending_approvals}};
    if (!f.frozen.empty()) j["frozen"] = f.frozen;
    if (!f.version.empty()) j["version"] = f.version;
    list.push_back(std::move(j));
    text += f.path + ": " + (f.is_block ? "block" : "plain file") +
            (f.dirty ? ", dirty" : "") + (f.disk_ahead ? ", disk ahead" : "") +
            (f.deleted ? ", deleted (history kept)" : "") +
            (f.frozen.empty() ? "" : ", frozen (" + f.frozen + ")") + ", " +
            std::string(doc::memory_permission_name(f.permission)) +
            (f.pending_approvals.empty()
                 ? ""
                 : ", " + std::to_string(f.pending_approvals.size()) + " pending approval(s)") +
            "\n";
  }
  if (text.empty()) text = "No file blocks yet.\n";
  return ToolOutput{std::move(text), Json{{"files", std::move(list)}}, nullptr};
}

}  // namespace

ToolSpec fs_history_tool() {
  ToolSpec t;
  t.name = "fs_history";
  t.title = "File history";
  t.description =
      "The changes to a text file, newest first: each with its version (an opaque string that "
      "fs_diff and fs_rollback take), its author (agent:<name>, human:<name>, source:disk for "
      "edits made outside weft, system:...), the tool or message, and a Unix timestamp. The "
      "oldest entry is the content the file started from when weft first saw it.";
  t.input_schema = object_schema(
      {{"path", string_prop("File path in the workspace", 1)},
       {"limit", integer_prop("Most changes to list (default 50)", 1, 10000)}},
      {"path"});
  Json change = object_schema({{"version", {{"type", "string"}}},
                               {"author", {{"type", "string"}}},
                               {"message", {{"type", "string"}}},
                               {"timestamp", {{"type", "integer"}}}});
  t.output_schema = object_schema(
      {{"path", {{"type", "string"}}}, {"changes", {{"type", "array"}, {"items", change}}}});
  t.annotations = read_only_hints();
  t.handler = run_fs_history;
  t.via_kernel = true;
  return t;
}

ToolSpec fs_diff_tool() {
  ToolSpec t;
  t.name = "fs_diff";
  t.title = "Diff two versions of a file";
  t.description =
      "A unified diff of a text file between two versions from fs_history. Defaults: `to` is the "
      "current version and `from` the one before `to`, so with no versions it shows the last "
      "change.";
  t.input_schema = object_schema({{"path", string_prop("File path in the workspace", 1)},
                                  {"from", string_prop("Older version (default: before `to`)")},
                                  {"to", string_prop("Newer version (default: current)")}},
                                 {"path"});
  t.output_schema =
      object_schema({{"path", {{"type", "string"}}}, {"diff", {{"type", "string"}}}});
  t.annotations = read_only_hints();
  t.handler = run_fs_diff;
  t.via_kernel = true;
  return t;
}

ToolSpec fs_status_tool() {
  ToolSpec t;
  t.name = "fs_status";
  t.title = "File block status";
  t.description =
      "For each text file weft tracks as a block (under `path`, or all): whether the block has "
      "changes not yet on disk (dirty), whether the file changed on disk since (disk_ahead), "
      "whether it was deleted (its history stays), whether it is frozen (binary or too large), "
      "its permission level from weft.toml, and the ids of changes waiting for a person's "
      "approval. A path that is a plain file shows its permission.";
  t.input_schema = object_schema({{"path", string_prop("A file or directory (default: all)")}});
  t.output_schema = object_schema({{"files", {{"type", "array"}}}});
  t.annotations = read_only_hints();
  t.handler = run_fs_status;
  t.via_kernel = true;
  return t;
}

}  // namespace weft::server::tools
