// kernel_search: one query over every block and the workspace's text files
// (Blocks::search_all).
#include "server/tools/block_tools.h"

namespace weft::server::tools {

namespace {

Result<ToolOutput> run_kernel_search(const Json& args, ToolContext& ctx) {
  WEFT_ASSIGN_OR_RETURN(kernel::Blocks * blocks, blocks_of(ctx));
  kernel::KernelSearchRequest r;
  r.query = arg_string(args, "query");
  if (auto k = args.find("kinds"); k != args.end() && k->is_array()) {
    for (const auto& name : *k) {
      WEFT_ASSIGN_OR_RETURN(kernel::BlockKind kind,
                            kernel::parse_block_kind(name.is_string() ? name.get<std::string>()
                                                                      : std::string()));
      r.kinds.push_back(kind);
    }
  }
  if (args.contains("path_prefix")) {
    WEFT_ASSIGN_OR_RETURN(std::string prefix, resolve_arg(ctx, args, "path_prefix"));
    r.path_prefix = std::move(prefix);
  } else if (ctx.roots().size() == 1) {
    // The client's root narrows the files, not the other blocks.
    r.path_prefix = ctx.roots()[0];
    if (r.kinds.empty()) {
      r.kinds = {kernel::BlockKind::kText,       kernel::BlockKind::kThinking,
                 kernel::BlockKind::kToolCall,   kernel::BlockKind::kToolResult,
                 kernel::BlockKind::kFile,       kernel::BlockKind::kMemory};
    }
  } else if (ctx.roots().size() > 1) {
    return invalid_argument("your client gave several roots: pass path_prefix naming the one "
                            "(or a directory in it) to search");
  }
  r.context_lines = static_cast<size_t>(arg_int(args, "context_lines", 0));
  r.max_matches_per_block = static_cast<size_t>(arg_int(args, "max_matches_per_block", 5));
  r.max_blocks = static_cast<size_t>(arg_int(args, "max_blocks", 50));
  r.cancel = ctx.cancel_flag();
  auto found = blocks->search_all(agent_of(ctx, "kernel_search"), r);
  if (ctx.cancelled()) return cancelled_error("cancelled");
  if (!found.ok()) return explain(found.status(), r.path_prefix.value_or(""));
  Json hits = Json::array();
  std::string text;
  if (found->literal) text += "Note: " + found->note + ".\n";
  size_t total = 0;
  for (const auto& h : found->hits) {
    Json matches = Json::array();
    text += "== " + h.block_id + " (" + std::string(kernel::block_kind_name(h.kind)) + ")\n";
    for (const auto& m : h.matches) {
      ++total;
      matches.push_back(match_json(m));
      append_match_text(text, m);
      if (r.context_lines > 0) text += "--\n";
    }
    if (h.truncated) text += "[more matches in this block: block_search it]\n";
    Json j = {{"block_id", h.block_id},
              {"kind", std::string(kernel::block_kind_name(h.kind))},
              {"role", std::string(kernel::block_role_name(h.role))},
              {"matches", std::move(matches)},
              {"truncated", h.truncated}};
    if (!h.path.empty()) j["path"] = h.path;
    hits.push_back(std::move(j));
  }
  if (found->hits.empty()) text += "No matches.\n";
  if (found->truncated) {
    text += "[stopped at max_blocks=" + std::to_string(r.max_blocks) +
            ": narrow with kinds or path_prefix]\n";
  }
  Json s = {{"results", std::move(hits)},
            {"literal", found->literal},
            {"truncated", found->truncated},
            {"match_count", total},
            {"blocks_searched", found->blocks_searched}};
  if (found->literal) s["note"] = found->note;
  return ToolOutput{std::move(text), std::move(s), nullptr};
}

}  // namespace

ToolSpec kernel_search_tool() {
  ToolSpec t;
  t.name = "kernel_search";
  t.title = "Search every block and file";
  t.description =
      "Search one RE2 regular expression (literal when it is not a valid regex; the result "
      "then says so) across the conversation blocks, your memory blocks and the workspace's "
      "text files (all of them, tracked or not, under the ignore rules; a file whose block has "
      "changes not yet on disk is searched in its block). Results are grouped by block: "
      "memory, then conversation blocks in creation order, then files; each match gives its "
      "0-based line, byte columns match_start-match_end and context_lines around it. Narrow "
      "with kinds and path_prefix (with path_prefix only files are searched unless kinds names "
      "other kinds).";
  t.input_schema = object_schema(
      {{"query", string_prop("RE2 regex, or literal text", 1)},
       {"kinds",
        {{"type", "array"},
         {"description", "Only these kinds (default: all)"},
         {"items",
          {{"type", "string"},
           {"enum", {"text", "thinking", "tool_call", "tool_result", "file", "memory"}}}}}},
       {"path_prefix", string_prop("Only files under this workspace path")},
       {"context_lines", integer_prop("Lines before and after each match (default 0)", 0, 50)},
       {"max_matches_per_block", integer_prop("Most matches per block (default 5)", 1, 1000)},
       {"max_blocks", integer_prop("Most blocks in the result (default 50)", 1, 1000)}},
      {"query"});
  t.output_schema = object_schema({{"results", {{"type", "array"}}},
                                   {"literal", {{"type", "boolean"}}},
                                   {"note", {{"type", "string"}}},
                                   {"truncated", {{"type", "boolean"}}},
                                   {"match_count", {{"type", "integer"}}},
                                   {"blocks_searched", {{"type", "integer"}}}});
  t.annotations = read_only_hints();
  t.handler = run_kernel_search;
  t.via_kernel = true;
  return t;
}

}  // namespace weft::server::tools
