// `weft block edit|append|search|read|undo|redo|rollback|rm ID` and `weft
// block new`: one block tool each (block_edit, block_append, ..., block_delete,
// block_create), run in the root's kernel as the person running the command
// (or --agent NAME). See block_kernel_command.h.
#include "cli/block_kernel_command.h"

#include <iostream>
#include <iterator>
#include <memory>
#include <string>

#include "cli/command_registry.h"
#include "cli/kernel_client.h"
#include "weft/base/input_file.h"
#include "weft/kernel/blocks.h"

namespace weft::cli {
namespace {

using server::Json;

// Largest text read from stdin or a file for one command.
constexpr size_t kMaxInputBytes = kernel::kMaxContentBytes;

// The text of an argument: TEXT as given, @FILE read, "-" (or nothing given) stdin.
Result<std::string> text_input(const std::string& value, bool given, const char* what) {
  if (given && value != "-") {
    if (value.empty() || value[0] != '@') return value;
    auto text = read_regular_file(value.substr(1), what);
    if (!text.ok()) return text.status().with_context(what);
    return text;
  }
  std::string text;
  char buf[65536];
  while (std::cin.read(buf, sizeof buf) || std::cin.gcount() > 0) {
    text.append(buf, static_cast<size_t>(std::cin.gcount()));
    if (text.size() > kMaxInputBytes) {
      return invalid_argument(std::string(what) + " from stdin is larger than " +
                              std::to_string(kMaxInputBytes) + " bytes");
    }
  }
  return text;
}

// "A:B" -> [A, B); "A" -> [A, A+1).
Result<std::pair<size_t, size_t>> line_range(const std::string& text, const char* what) {
  auto number = [&](const std::string& s) -> Result<size_t> {
    if (s.empty() || s.size() > 12 || s.find_first_not_of("0123456789") != std::string::npos) {
      return invalid_argument(std::string(what) + " takes 0-based lines START:END (END "
                              "exclusive) or LINE, not '" + text + "'");
    }
    return static_cast<size_t>(std::stoull(s));
  };
  size_t colon = text.find(':');
  WEFT_ASSIGN_OR_RETURN(size_t start, number(text.substr(0, colon)));
  if (colon == std::string::npos) return std::make_pair(start, start + 1);
  WEFT_ASSIGN_OR_RETURN(size_t end, number(text.substr(colon + 1)));
  if (end < start) return invalid_argument(std::string(what) + " " + text + ": END is before START");
  return std::make_pair(start, end);
}

// Adds the positional ID every subcommand takes, and the kernel options.
CLI::App* block_subcommand(CLI::App* block, const char* name, const char* help,
                           std::shared_ptr<KernelArgs> a, std::shared_ptr<std::string> id) {
  auto* cmd = block->add_subcommand(name, help);
  cmd->add_option("ID", *id,
                  "Block id: <cell>/<agent>/<seq>, file:<path> or memory:<agent>/<label>")
      ->required();
  add_kernel_options(cmd, *a, true);
  return cmd;
}

void setup_append(CLI::App* block) {
  auto a = std::make_shared<KernelArgs>();
  auto id = std::make_shared<std::string>();
  auto text = std::make_shared<std::string>();
  auto* cmd = block_subcommand(block, "append", "Append text to a block (through the rules)", a, id);
  auto* opt = cmd->add_option("TEXT", *text, "The text, @FILE, or - / nothing for stdin");
  cmd->callback([a, id, text, opt] {
    auto t = text_input(*text, opt->count() > 0, "TEXT");
    if (!t.ok()) return (void)fail(t.status());
    run_kernel_tool(*a, "block_append", {{"block_id", *id}, {"text", *t}});
  });
}

void setup_edit(CLI::App* block) {
  struct Args {
    std::string ops, insert, erase, replace, text, expect;
  };
  auto a = std::make_shared<KernelArgs>();
  auto id = std::make_shared<std::string>();
  auto e = std::make_shared<Args>();
  auto* cmd = block_subcommand(
      block, "edit",
      "Edit a block's lines (0-based, END exclusive): one --insert/--delete/--replace, or a "
      "batch with --ops; all or nothing",
      a, id);
  auto* ops = cmd->add_option("--ops", e->ops,
                              "A JSON array of block_edit operations, or @FILE");
  auto* ins = cmd->add_option("--insert", e->insert, "Insert the text before LINE");
  auto* del = cmd->add_option("--delete", e->erase, "Delete lines START:END (or LINE)");
  auto* rep = cmd->add_option("--replace", e->replace, "Replace lines START:END (or LINE)");
  auto* txt = cmd->add_option("--text", e->text,
                              "The new lines for --insert/--replace: text, @FILE or - (stdin, "
                              "the default)");
  cmd->add_option("--expect", e->expect,
                  "--replace only: fail unless the lines are exactly this now");
  ops->excludes(ins)->excludes(del)->excludes(rep)->excludes(txt);
  ins->excludes(del)->excludes(rep);
  del->excludes(rep)->excludes(txt);
  cmd->callback([a, id, e, ops, ins, del, rep, txt] {
    Json operations = Json::array();
    if (ops->count() > 0) {
      auto text = text_input(e->ops, true, "--ops");
      if (!text.ok()) return (void)fail(text.status());
      operations = Json::parse(*text, nullptr, false);
      if (!operations.is_array()) {
        return (void)fail(invalid_argument(
            "--ops must be a JSON array of operations such as "
            R"([{"op":"replace","start_line":0,"end_line":1,"content":"new\n"}])"));
      }
    } else if (del->count() > 0) {
      auto r = line_range(e->erase, "--delete");
      if (!r.ok()) return (void)fail(r.status());
      operations.push_back({{"op", "delete"}, {"start_line", r->first}, {"end_line", r->second}});
    } else if (ins->count() > 0 || rep->count() > 0) {
      auto content = text_input(e->text, txt->count() > 0, "--text");
      if (!content.ok()) return (void)fail(content.status());
      if (ins->count() > 0) {
        auto r = line_range(e->insert, "--insert");
        if (!r.ok()) return (void)fail(r.status());
        operations.push_back({{"op", "insert"}, {"line", r->first}, {"content", *content}});
      } else {
        auto r = line_range(e->replace, "--replace");
        if (!r.ok()) return (void)fail(r.status());
        Json op = {{"op", "replace"},
                   {"start_line", r->first},
                   {"end_line", r->second},
                   {"content", *content}};
        if (!e->expect.empty()) op["expected_text"] = e->expect;
        operations.push_back(std::move(op));
      }
    } else {
      return (void)fail(invalid_argument("say what to change: --insert LINE, --delete START:END, "
                                         "--replace START:END or --ops JSON"));
    }
    run_kernel_tool(*a, "block_edit", {{"block_id", *id}, {"operations", std::move(operations)}});
  });
}

void setup_search(CLI::App* block) {
  auto a = std::make_shared<KernelArgs>();
  auto id = std::make_shared<std::string>();
  auto query = std::make_shared<std::string>();
  auto context = std::make_shared<int>(2);
  auto max = std::make_shared<int>(20);
  auto* cmd = block_subcommand(
      block, "search", "Search a block (RE2 regex; taken literally when not a valid one)", a, id);
  cmd->add_option("QUERY", *query, "What to look for")->required();
  cmd->add_option("--context", *context, "Lines of context around each match (default 2)")
      ->check(CLI::Range(0, static_cast<int>(kernel::kMaxSearchContextLines)));
  cmd->add_option("--max", *max, "Most matches (default 20)")
      ->check(CLI::Range(1, static_cast<int>(kernel::kMaxSearchMatches)));
  cmd->callback([a, id, query, context, max] {
    run_kernel_tool(*a, "block_search",
                    {{"block_id", *id},
                     {"query", *query},
                     {"context_lines", *context},
                     {"max_matches", *max}});
  });
}

void setup_read(CLI::App* block) {
  auto a = std::make_shared<KernelArgs>();
  auto id = std::make_shared<std::string>();
  auto lines = std::make_shared<std::string>();
  auto numbers = std::make_shared<bool>(false);
  auto* cmd = block_subcommand(block, "read", "Print a block's text (or some of its lines)", a, id);
  cmd->add_option("--lines", *lines, "Only lines START:END (0-based, END exclusive)");
  cmd->add_flag("--numbers", *numbers, "Prefix each line with its 0-based number");
  cmd->callback([a, id, lines, numbers] {
    Json args = {{"block_id", *id}, {"line_numbers", *numbers}};
    if (!lines->empty()) {
      auto r = line_range(*lines, "--lines");
      if (!r.ok()) return (void)fail(r.status());
      args["range"] = {{"start", r->first}, {"end", r->second}};
    }
    auto built = connect_kernel(*a);
    if (!built.ok()) return (void)fail(built.status());
    auto reply = call_kernel_tool(*built, *a, "block_read", std::move(args));
    if (!reply.ok()) return (void)fail(reply.status());
    if (a->json) return print_tool_reply(*a, *reply);
    // The text alone, byte for byte, so that it can be piped.
    std::cout << reply->structured.value("content", "");
    set_exit_code(kExitOk);
  });
}

void setup_history_ops(CLI::App* block) {
  for (const char* name : {"undo", "redo"}) {
    auto a = std::make_shared<KernelArgs>();
    auto id = std::make_shared<std::string>();
    bool undo = std::string(name) == "undo";
    auto* cmd = block_subcommand(
        block, name,
        undo ? "Revert your newest change to a block (or --agent NAME's), keeping later ones"
             : "Re-apply the change the last undo reverted",
        a, id);
    std::string tool = undo ? "block_undo" : "block_redo";
    cmd->callback([a, id, tool] { run_kernel_tool(*a, tool, {{"block_id", *id}}); });
  }
  auto a = std::make_shared<KernelArgs>();
  auto id = std::make_shared<std::string>();
  auto to = std::make_shared<std::string>();
  auto* cmd = block_subcommand(
      block, "rollback", "Make a block what it was at a version, as a new change", a, id);
  cmd->add_option("--to", *to, "The version (from block_history / weft history)")->required();
  cmd->callback([a, id, to] {
    run_kernel_tool(*a, "block_rollback", {{"block_id", *id}, {"version", *to}});
  });
}

void setup_rm(CLI::App* block) {
  auto a = std::make_shared<KernelArgs>();
  auto id = std::make_shared<std::string>();
  auto recursive = std::make_shared<bool>(false);
  auto* cmd = block_subcommand(
      block, "rm",
      "Delete a block: a conversation block is marked deleted (still readable; `weft block "
      "undo` by whoever deleted it restores it), a memory block is deleted, a file block's "
      "file is deleted through the rules (history kept)",
      a, id);
  cmd->add_flag("-r,--recursive", *recursive, "Also delete the blocks under it");
  cmd->callback([a, id, recursive] {
    run_kernel_tool(*a, "block_delete", {{"block_id", *id}, {"recursive", *recursive}});
  });
}

void setup_new(CLI::App* block) {
  struct Args {
    std::string role = "user", kind = "text", parent, cell, permission, metadata, text;
  };
  auto a = std::make_shared<KernelArgs>();
  auto n = std::make_shared<Args>();
  auto* cmd = block->add_subcommand(
      "new", "Create a conversation block in a workspace's kernel (prints its id)");
  add_kernel_options(cmd, *a, true);
  cmd->add_option("--role", n->role, "user, model, system or tool (default user)");
  cmd->add_option("--kind", n->kind, "text, thinking, tool_call or tool_result (default text)");
  cmd->add_option("--parent", n->parent, "The parent block's id (default: a root block)");
  cmd->add_option("--cell", n->cell, "The cell (default main)");
  cmd->add_option("--permission", n->permission,
                  "What later writes may do: read_only, append_only, read_write (default), "
                  "partner, human or admin");
  cmd->add_option("--metadata", n->metadata, "A JSON object of metadata");
  auto* text = cmd->add_option("--text", n->text, "Initial text, @FILE or - (stdin)");
  cmd->callback([a, n, text] {
    Json args = {{"role", n->role}, {"kind", n->kind}};
    if (text->count() > 0) {
      auto t = text_input(n->text, true, "--text");
      if (!t.ok()) return (void)fail(t.status());
      args["content"] = *t;
    }
    if (!n->parent.empty()) args["parent_id"] = n->parent;
    if (!n->cell.empty()) args["cell"] = n->cell;
    if (!n->permission.empty()) args["permission"] = n->permission;
    if (!n->metadata.empty()) {
      Json m = Json::parse(n->metadata, nullptr, false);
      if (!m.is_object()) {
        return (void)fail(invalid_argument("--metadata must be a JSON object, such as "
                                           R"({"tool_name":"grep"})"));
      }
      args["metadata"] = std::move(m);
    }
    run_kernel_tool(*a, "block_create", std::move(args));
  });
}

}  // namespace

void setup_block_kernel_commands(CLI::App* block) {
  setup_append(block);
  setup_edit(block);
  setup_search(block);
  setup_read(block);
  setup_history_ops(block);
  setup_rm(block);
  setup_new(block);
}

}  // namespace weft::cli
