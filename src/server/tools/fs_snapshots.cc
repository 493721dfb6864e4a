// fs_snapshot, fs_restore, fs_snapshots: the workspace's git-backed snapshots.
#include "server/tools/tool_util.h"

namespace weft::server::tools {
namespace {

Json snapshot_json(const fs::FilesystemSnapshot& s) {
  return {{"snapshot_id", s.snapshot_id},
          {"created_at", fs::format_time(s.created_at)},
          {"tag", s.tag ? Json(*s.tag) : Json()},
          {"commit_ref", s.commit_ref}};
}

std::string snapshot_line(const fs::FilesystemSnapshot& s) {
  return s.snapshot_id + "  " + fs::format_time(s.created_at) +
         (s.tag ? "  " + fs::display_name(*s.tag) : "");
}

Result<ToolOutput> take(const Json& args, ToolContext& ctx) {
  WEFT_ASSIGN_OR_RETURN(Workspace * ws, workspace_of(ctx));
  WEFT_ASSIGN_OR_RETURN(ChangeGuard change, ws->lock_for_change());
  std::optional<std::string> tag;
  if (args.contains("tag")) tag = arg_string(args, "tag");
  auto snap = ws->fs().snapshot(tag);
  if (!snap.ok()) return snap.status();
  return ToolOutput{"Snapshot " + snapshot_line(*snap) +
                        "\nRestore it with fs_restore {\"snapshot\": \"" + snap->snapshot_id +
                        "\"}",
                    snapshot_json(*snap), nullptr};
}

Result<ToolOutput> restore(const Json& args, ToolContext& ctx) {
  WEFT_ASSIGN_OR_RETURN(Workspace * ws, workspace_of(ctx));
  WEFT_ASSIGN_OR_RETURN(ChangeGuard change, ws->lock_for_change());
  std::string wanted = arg_string(args, "snapshot");
  WEFT_ASSIGN_OR_RETURN(auto all, ws->fs().snapshots());
  const fs::FilesystemSnapshot* found = nullptr;
  for (const auto& s : all) {  // the newest snapshot with a tag wins
    if (s.snapshot_id == wanted || (s.tag && *s.tag == wanted)) found = &s;
  }
  if (!found) {
    return not_found("no snapshot with id or tag '" + wanted + "'; fs_snapshots lists them");
  }
  WEFT_RETURN_IF_ERROR(ws->fs().restore(*found));
  return ToolOutput{"Restored the workspace to " + snapshot_line(*found),
                    Json{{"restored", snapshot_json(*found)}}, nullptr};
}

Result<ToolOutput> list(const Json&, ToolContext& ctx) {
  WEFT_ASSIGN_OR_RETURN(Workspace * ws, workspace_of(ctx));
  WEFT_ASSIGN_OR_RETURN(auto all, ws->fs().snapshots());
  Json items = Json::array();
  std::string text;
  for (const auto& s : all) {
    items.push_back(snapshot_json(s));
    text += snapshot_line(s) + "\n";
  }
  if (text.empty()) text = "No snapshots yet; fs_snapshot takes one.\n";
  return ToolOutput{std::move(text), Json{{"snapshots", std::move(items)}}, nullptr};
}

Json snapshot_schema() {
  return object_schema({{"snapshot_id", {{"type", "string"}}},
                        {"created_at", {{"type", "string"}}},
                        {"tag", {{"type", {"string", "null"}}}},
                        {"commit_ref", {{"type", "string"}}}});
}

}  // namespace

ToolSpec fs_snapshot_tool() {
  ToolSpec t;
  t.name = "fs_snapshot";
  t.title = "Snapshot workspace";
  t.description =
      "Record the whole workspace as a snapshot (a git commit in a store outside the workspace), "
      "optionally tagged, so that fs_restore can bring it back. Cheap: costs time in proportion "
      "to what changed.";
  t.input_schema = object_schema({{"tag", string_prop("A label to find it by", 1)}});
  t.output_schema = snapshot_schema();
  t.annotations = write_hints(/*destructive=*/false, /*idempotent=*/false);
  t.handler = take;
  return t;
}

ToolSpec fs_restore_tool() {
  ToolSpec t;
  t.name = "fs_restore";
  t.title = "Restore snapshot";
  t.description =
      "Make the workspace exactly what it was at a snapshot (by snapshot_id or tag; files "
      "created since are removed). Take a new fs_snapshot first to keep the current state.";
  t.input_schema = object_schema(
      {{"snapshot", string_prop("snapshot_id or tag from fs_snapshots", 1)}}, {"snapshot"});
  t.output_schema = object_schema({{"restored", {{"type", "object"}}}});
  t.annotations = write_hints(/*destructive=*/true, /*idempotent=*/true);
  t.handler = restore;
  return t;
}

ToolSpec fs_snapshots_tool() {
  ToolSpec t;
  t.name = "fs_snapshots";
  t.title = "List snapshots";
  t.description = "List the workspace's snapshots, oldest first (id, time, tag).";
  t.input_schema = object_schema(Json::object());
  t.output_schema = object_schema({{"snapshots", {{"type", "array"}}}});
  t.annotations = read_only_hints();
  t.handler = list;
  return t;
}

}  // namespace weft::server::tools
