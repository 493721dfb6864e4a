// fs_list: a directory listing, optionally recursive to a depth, with sizes,
// skipping .git, the root .gitignore's patterns and caller-given globs.
#include <memory>

#include "server/tools/tool_util.h"
#include "weft/base/glob.h"

namespace weft::server::tools {
namespace {

constexpr size_t kMaxEntries = 2000;

struct IgnoreRule {
  GlobPattern pattern;
  bool by_name;  // no '/' in the pattern: matches a base name at any depth
};

void add_rule(std::vector<IgnoreRule>& rules, std::string line) {
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
  if (line.empty() || line[0] == '#' || line[0] == '!') return;  // negation is not supported
  if (line.back() == '/') line.pop_back();
  bool anchored = line[0] == '/';
  if (anchored) line.erase(0, 1);
  if (line.empty()) return;
  auto pattern = GlobPattern::compile(line);
  if (pattern.ok()) {
    bool by_name = !anchored && line.find('/') == std::string::npos;
    rules.push_back({std::move(*pattern), by_name});
  }
}

// The text listing's tag for an entry type, padded to one width.
const char* type_tag(fs::FileType type) {
  switch (type) {
    case fs::FileType::kFile:
      return "[FILE] ";
    case fs::FileType::kDirectory:
      return "[DIR]  ";
    case fs::FileType::kSymlink:
      return "[LINK] ";
    case fs::FileType::kFifo:
      return "[FIFO] ";
    case fs::FileType::kSocket:
      return "[SOCK] ";
    case fs::FileType::kCharDevice:
      return "[CHR]  ";
    case fs::FileType::kBlockDevice:
      return "[BLK]  ";
    case fs::FileType::kOther:
      break;
  }
  return "[OTHER]";
}

struct Lister {
  Workspace& ws;
  const ToolContext& ctx;
  std::vector<IgnoreRule> rules;
  int64_t depth;
  bool sizes;
  Json entries = Json::array();
  std::string text;
  bool truncated = false;

  bool ignored(const fs::FileEntry& e) const {
    if (e.name == ".git") return true;
    for (const auto& r : rules) {
      if (r.pattern.matches(r.by_name ? e.name : e.path)) return true;
    }
    return false;
  }

  Status walk(const std::string& dir, int64_t level) {
    if (ctx.cancelled()) return cancelled_error("cancelled");
    auto listing = ws.fs().list(dir);
    if (!listing.ok()) return explain(listing.status(), dir);
    for (const auto& e : *listing) {
      if (ignored(e)) continue;
      if (entries.size() >= kMaxEntries) {
        truncated = true;
        return Status();
      }
      Json entry = {{"path", e.path}, {"type", std::string(fs::file_type_name(e.type))}};
      std::string line(static_cast<size_t>(2 * (level - 1)), ' ');
      line += type_tag(e.type);
      line += fs::display_name(e.name) + (e.is_directory ? "/" : "");
      if (e.symlink_target) {
        entry["symlink_target"] = *e.symlink_target;
        line += " -> " + fs::display_name(*e.symlink_target);
      }
      if (sizes && e.is_file) {
        auto st = ws.fs().stat(e.path);
        if (st.ok()) {
          entry["size_bytes"] = st->size_bytes;
          line += "  (" + std::to_string(st->size_bytes) + " bytes)";
        }
      }
      entries.push_back(std::move(entry));
      text += line + "\n";
      if (e.is_directory && level < depth) WEFT_RETURN_IF_ERROR(walk(e.path, level + 1));
      if (truncated) return Status();
    }
    return Status();
  }
};

Result<ToolOutput> run_fs_list(const Json& args, ToolContext& ctx) {
  WEFT_ASSIGN_OR_RETURN(Workspace * ws, workspace_of(ctx));
  WEFT_ASSIGN_OR_RETURN(std::string path, resolve_arg(ctx, args, "path"));
  Lister lister{*ws,           ctx, {},   arg_int(args, "depth", 1), arg_bool(args, "sizes"),
                Json::array(), "",  false};
  if (arg_bool(args, "gitignore", true) && ws->fs().exists(".gitignore")) {
    auto ignore = ws->fs().read(".gitignore", 0, 10'000);
    if (ignore.ok()) {
      size_t pos = 0;
      const std::string& body = ignore->content;
      while (pos < body.size()) {
        size_t nl = body.find('\n', pos);
        if (nl == std::string::npos) nl = body.size();
        add_rule(lister.rules, body.substr(pos, nl - pos));
        pos = nl + 1;
      }
    }
  }
  if (args.contains("ignore")) {
    for (const Json& g : args["ignore"]) {
      auto pattern = GlobPattern::compile(g.get<std::string>());
      if (!pattern.ok()) return pattern.status().with_context("ignore pattern");
      bool by_name = g.get<std::string>().find('/') == std::string::npos;
      lister.rules.push_back({std::move(*pattern), by_name});
    }
  }
  WEFT_RETURN_IF_ERROR(lister.walk(path, 1));
  std::string text = lister.text.empty() ? "(empty directory)\n" : lister.text;
  if (lister.truncated) {
    text += "[truncated at " + std::to_string(kMaxEntries) +
            " entries; list a subdirectory or "
            "lower depth]\n";
  }
  return ToolOutput{
      std::move(text),
      Json{{"path", path}, {"entries", std::move(lister.entries)}, {"truncated", lister.truncated}},
      nullptr};
}

}  // namespace

ToolSpec fs_list_tool() {
  ToolSpec t;
  t.name = "fs_list";
  t.title = "List directory";
  t.description =
      "List a workspace directory, sorted by name: [DIR] / [FILE] / [LINK] (with its target) / "
      "[FIFO] / [SOCK] / [CHR] / [BLK] entries (symbolic links are shown, never followed). "
      "Control characters, backslashes and invalid UTF-8 in names are escaped in the text "
      "(\\n, \\\\, \\xNN); structuredContent holds the exact paths. depth > 1 recurses "
      "(indented). sizes adds byte sizes. .git and the patterns of the root .gitignore are skipped "
      "(gitignore: false to show them); "
      "ignore adds glob patterns (a pattern without '/' matches names at any depth). At most "
      "2000 entries.";
  t.input_schema = object_schema(
      {{"path", string_prop("Directory (default: the workspace root)")},
       {"depth", integer_prop("Levels to descend (default 1)", 1, 10)},
       {"sizes", bool_prop("Include file sizes (default false)")},
       {"gitignore", bool_prop("Apply the root .gitignore (default true)")},
       {"ignore",
        {{"type", "array"},
         {"items", {{"type", "string"}, {"minLength", 1}}},
         {"description", "Extra glob patterns to skip, e.g. [\"node_modules\", \"*.log\"]"}}}});
  t.output_schema = object_schema({{"path", {{"type", "string"}}},
                                   {"entries", {{"type", "array"}}},
                                   {"truncated", {{"type", "boolean"}}}});
  t.annotations = read_only_hints();
  t.handler = run_fs_list;
  return t;
}

}  // namespace weft::server::tools
