// WorkspaceRules: weft.toml's [permissions] table parsed with toml++ into an
// ordered rule list, and the per-file decision built on doc::permission_decision;
// its [shell.commands.NAME] tables for the shell pre-hook.
#include "weft/source/rules.h"

#include <toml++/toml.h>

#include <algorithm>
#include <exception>
#include <string>
#include <utility>

#include "weft/base/input_file.h"

namespace weft::source {
namespace {

using doc::MemoryOp;
using doc::MemoryPermission;
using doc::PermissionDecision;

constexpr size_t kMaxConfigBytes = size_t{1} << 20;
constexpr std::string_view kLevelNames =
    "read_only, human, partner, append, read_write, admin";
constexpr std::string_view kOpNames = "read, create, append, overwrite, delete, move";
constexpr FileOp kAllFileOps[] = {FileOp::kRead,      FileOp::kCreate, FileOp::kAppend,
                                  FileOp::kOverwrite, FileOp::kDelete, FileOp::kMove};
constexpr std::string_view kConfigReason = "weft's own configuration";

std::string quote(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 2);
  out += '"';
  out += s;
  out += '"';
  return out;
}

// "a string", "an integer", ... for type errors.
std::string_view type_phrase(toml::node_type type) {
  switch (type) {
    case toml::node_type::table:
      return "a table";
    case toml::node_type::array:
      return "an array";
    case toml::node_type::string:
      return "a string";
    case toml::node_type::integer:
      return "an integer";
    case toml::node_type::floating_point:
      return "a float";
    case toml::node_type::boolean:
      return "a boolean";
    case toml::node_type::date:
      return "a date";
    case toml::node_type::time:
      return "a time";
    case toml::node_type::date_time:
      return "a date-time";
    case toml::node_type::none:
      break;
  }
  return "nothing";
}

// Builds "NAME:LINE: message" errors for one source.
class ErrorAt {
 public:
  explicit ErrorAt(std::string_view source_name) : name_(source_name) {}
  Status operator()(const toml::source_region& where, std::string_view message) const {
    return at(static_cast<int>(where.begin.line), message);
  }
  Status at(int line, std::string_view message) const {
    if (line <= 0) return invalid_argument(name_ + ": " + std::string(message));
    return invalid_argument(name_ + ":" + std::to_string(line) + ": " + std::string(message));
  }

 private:
  std::string name_;
};

// toml::parse behind one interface whatever TOML_EXCEPTIONS is; nothing thrown escapes.
Result<toml::table> parse_toml(std::string_view text, std::string_view source_name,
                               const ErrorAt& error) {
  auto syntax_error = [&](const toml::parse_error& e) {
    const toml::source_position& pos = e.source().begin;
    std::string message = "invalid TOML at column " + std::to_string(pos.column) + ": " +
                          std::string(e.description());
    // The usual mistake: a rule's { ... } split over lines, which TOML forbids.
    if (message.find("inline table") != std::string::npos &&
        message.find("saw '\\n'") != std::string::npos) {
      message += " (an inline table { ... } must fit on one line; write long rules as "
                 "[[permissions.rules]] tables)";
    }
    return error(e.source(), message);
  };
#if TOML_EXCEPTIONS
  try {
    return toml::parse(text, source_name);
  } catch (const toml::parse_error& e) {
    return syntax_error(e);
  } catch (const std::exception& e) {
    return error.at(0, std::string("cannot parse: ") + e.what());
  }
#else
  toml::parse_result parsed = toml::parse(text, source_name);
  if (!parsed) return syntax_error(parsed.error());
  return std::move(parsed).table();
#endif
}

Result<MemoryPermission> parse_level(const toml::node& node, std::string_view key,
                                     const ErrorAt& error) {
  const toml::value<std::string>* s = node.as_string();
  if (s == nullptr) {
    return error(node.source(), quote(key) + " must be a string (one of " +
                                    std::string(kLevelNames) + "), not " +
                                    std::string(type_phrase(node.type())));
  }
  Result<MemoryPermission> level = doc::parse_memory_permission(s->get());
  if (!level.ok()) {
    return error(node.source(), "unknown level " + quote(s->get()) + "; use one of " +
                                    std::string(kLevelNames));
  }
  return *level;
}

Result<std::vector<FileOp>> parse_escalate(const toml::node& node, const ErrorAt& error) {
  const toml::array* list = node.as_array();
  if (list == nullptr) {
    return error(node.source(), "\"escalate\" must be an array of operation names such as "
                                "[\"delete\", \"overwrite\"], not " +
                                    std::string(type_phrase(node.type())));
  }
  std::vector<FileOp> ops;
  for (const toml::node& item : *list) {
    const toml::value<std::string>* s = item.as_string();
    if (s == nullptr) {
      return error(item.source(), "\"escalate\" lists operation names (strings), not " +
                                      std::string(type_phrase(item.type())));
    }
    Result<FileOp> op = parse_file_op(s->get());
    if (!op.ok()) {
      return error(item.source(), "unknown escalate op " + quote(s->get()) + "; use one of " +
                                      std::string(kOpNames));
    }
    if (std::find(ops.begin(), ops.end(), *op) == ops.end()) ops.push_back(*op);
  }
  return ops;
}

Result<PermissionRule> parse_rule(const toml::node& node, size_t number, const ErrorAt& error) {
  const std::string which = "rule " + std::to_string(number);
  const toml::table* table = node.as_table();
  if (table == nullptr) {
    return error(node.source(), which + " must be a table such as { glob = \"vendor/**\", "
                                        "level = \"read_only\" }, not " +
                                    std::string(type_phrase(node.type())));
  }
  PermissionRule rule;
  rule.line = static_cast<int>(table->source().begin.line);
  bool has_glob = false;
  bool has_level = false;
  for (const auto& [key, value] : *table) {
    if (key.str() == "glob") {
      const toml::value<std::string>* s = value.as_string();
      if (s == nullptr) {
        return error(value.source(), which + ": \"glob\" must be a string such as \"docs/**\", "
                                             "not " +
                                         std::string(type_phrase(value.type())));
      }
      Result<GlobPattern> pattern = GlobPattern::compile(s->get());
      if (!pattern.ok()) {
        return error(value.source(), which + ": bad glob " + quote(s->get()) + ": " +
                                         std::string(pattern.status().message()));
      }
      rule.glob = s->get();
      rule.pattern = std::move(pattern).value();
      has_glob = true;
    } else if (key.str() == "level") {
      WEFT_ASSIGN_OR_RETURN(rule.level, parse_level(value, "level", error));
      has_level = true;
    } else if (key.str() == "escalate") {
      WEFT_ASSIGN_OR_RETURN(rule.escalate, parse_escalate(value, error));
    } else {
      return error(key.source(), which + ": unknown key " + quote(key.str()) +
                                     "; a rule has glob, level and escalate");
    }
  }
  if (!has_glob) {
    return error(table->source(), which + " has no \"glob\"; add glob = \"PATTERN\"");
  }
  if (!has_level) {
    return error(table->source(), which + " has no \"level\"; add level = \"LEVEL\" with one of " +
                                      std::string(kLevelNames));
  }
  return rule;
}

// A list of option names ("-o", "--output"), for [shell.commands.NAME].
Result<std::vector<std::string>> parse_option_list(const toml::node& node, std::string_view key,
                                                   const std::string& which,
                                                   const ErrorAt& error) {
  const toml::array* list = node.as_array();
  if (list == nullptr) {
    return error(node.source(), which + ": " + quote(key) +
                                    " must be an array of option names such as [\"-o\", "
                                    "\"--output\"], not " +
                                    std::string(type_phrase(node.type())));
  }
  std::vector<std::string> out;
  for (const toml::node& item : *list) {
    const toml::value<std::string>* s = item.as_string();
    if (s == nullptr || s->get().size() < 2 || s->get()[0] != '-') {
      return error(item.source(), which + ": " + quote(key) +
                                      " lists options starting with '-' such as \"-o\"");
    }
    out.push_back(s->get());
  }
  return out;
}

Result<ShellCommandRule> parse_shell_command(std::string_view name, const toml::node& node,
                                             const ErrorAt& error) {
  const std::string which = "[shell.commands." + std::string(name) + "]";
  const toml::table* table = node.as_table();
  if (table == nullptr) {
    return error(node.source(), which + " must be a table, not " +
                                    std::string(type_phrase(node.type())));
  }
  if (name.empty() || name.find_first_of(" \t/") != std::string_view::npos) {
    return error(node.source(), which + ": a command name has no spaces or '/'");
  }
  ShellCommandRule rule;
  rule.name = std::string(name);
  rule.line = static_cast<int>(table->source().begin.line);
  for (const auto& [key, value] : *table) {
    if (key.str() == "operands") {
      const toml::value<std::string>* s = value.as_string();
      if (s == nullptr) {
        return error(value.source(), which + ": \"operands\" must be a string (none, " +
                                         std::string(kOpNames) + ")");
      }
      if (s->get() != "none") {
        Result<FileOp> op = parse_file_op(s->get());
        if (!op.ok() || *op == FileOp::kMove) {
          return error(value.source(), which + ": unknown operands op " + quote(s->get()) +
                                           "; use none, read, create, append, overwrite or delete");
        }
        rule.operands = *op;
      }
    } else if (key.str() == "writes") {
      WEFT_ASSIGN_OR_RETURN(rule.writes, parse_option_list(value, "writes", which, error));
    } else if (key.str() == "value_options") {
      WEFT_ASSIGN_OR_RETURN(rule.value_options,
                            parse_option_list(value, "value_options", which, error));
    } else if (key.str() == "skip_operands") {
      const toml::value<int64_t>* n = value.as_integer();
      if (n == nullptr || n->get() < 0 || n->get() > 16) {
        return error(value.source(), which + ": \"skip_operands\" must be an integer 0..16");
      }
      rule.skip_operands = static_cast<int>(n->get());
    } else if (key.str() == "tree" || key.str() == "unpredictable") {
      const toml::value<bool>* b = value.as_boolean();
      if (b == nullptr) {
        return error(value.source(), which + ": " + quote(key.str()) +
                                         " must be true or false, not " +
                                         std::string(type_phrase(value.type())));
      }
      (key.str() == "tree" ? rule.tree : rule.unpredictable) = b->get();
    } else {
      return error(key.source(), which + ": unknown key " + quote(key.str()) +
                                     "; use operands, writes, value_options, skip_operands, "
                                     "tree or unpredictable");
    }
  }
  return rule;
}

Result<std::vector<ShellCommandRule>> parse_shell_section(const toml::node& section,
                                                         const ErrorAt& error) {
  const toml::table* shell = section.as_table();
  if (shell == nullptr) {
    return error(section.source(), "\"shell\" must be a table ([shell]), not " +
                                       std::string(type_phrase(section.type())));
  }
  std::vector<ShellCommandRule> out;
  for (const auto& [key, value] : *shell) {
    // enforcement and network are shell_hooks.h's (parse_shell_settings checks them).
    if (key.str() == "enforcement" || key.str() == "network") continue;
    if (key.str() != "commands") {
      return error(key.source(), "unknown key " + quote(key.str()) +
                                     " in [shell]; use enforcement, network or "
                                     "[shell.commands.NAME] tables");
    }
    const toml::table* commands = value.as_table();
    if (commands == nullptr) {
      return error(value.source(), "\"shell.commands\" must be a table of [shell.commands.NAME] "
                                   "tables, not " +
                                       std::string(type_phrase(value.type())));
    }
    for (const auto& [name, spec] : *commands) {
      WEFT_ASSIGN_OR_RETURN(ShellCommandRule rule, parse_shell_command(name.str(), spec, error));
      out.push_back(std::move(rule));
    }
  }
  return out;
}

bool escalates(const std::vector<FileOp>& escalate, FileOp op) {
  return std::find(escalate.begin(), escalate.end(), op) != escalate.end();
}

// The first rule matching `path` (and its 1-based number), or nullptr.
const PermissionRule* first_match(const std::vector<PermissionRule>& rules, std::string_view path,
                                  size_t* number) {
  for (size_t i = 0; i < rules.size(); ++i) {
    if (rules[i].pattern.matches(path)) {
      if (number != nullptr) *number = i + 1;
      return &rules[i];
    }
  }
  return nullptr;
}

// The table's answer for a file operation, before escalation.
PermissionDecision table_decision(MemoryPermission level, FileOp op) {
  switch (op) {
    case FileOp::kRead:
      return doc::permission_decision(level, MemoryOp::kRead);
    case FileOp::kCreate:
    case FileOp::kAppend:
      return doc::permission_decision(level, MemoryOp::kAppend);
    case FileOp::kOverwrite:
    case FileOp::kDelete:  // the block keeps the history: deleting = overwriting everything
    case FileOp::kMove:    // at the source, a delete
      return doc::permission_decision(level, MemoryOp::kOverwrite);
  }
  return PermissionDecision::kDenied;
}

// Whether the rule's escalate list covers `op` (delete is an overwrite, a move a delete).
bool is_escalated(const std::vector<FileOp>& escalate, FileOp op) {
  if (escalates(escalate, op)) return true;
  if (op == FileOp::kDelete || op == FileOp::kMove) {
    return escalates(escalate, FileOp::kOverwrite) || escalates(escalate, FileOp::kDelete);
  }
  return false;
}

int strictness(PermissionDecision d) {
  switch (d) {
    case PermissionDecision::kAllowed:
      return 0;
    case PermissionDecision::kNeedsApproval:
      return 1;
    case PermissionDecision::kDenied:
      break;
  }
  return 2;
}

}  // namespace

std::string_view file_op_name(FileOp op) {
  switch (op) {
    case FileOp::kRead:
      return "read";
    case FileOp::kCreate:
      return "create";
    case FileOp::kAppend:
      return "append";
    case FileOp::kOverwrite:
      return "overwrite";
    case FileOp::kDelete:
      return "delete";
    case FileOp::kMove:
      return "move";
  }
  return "unknown";
}

Result<FileOp> parse_file_op(std::string_view name) {
  for (FileOp op : kAllFileOps) {
    if (name == file_op_name(op)) return op;
  }
  return invalid_argument("unknown file operation " + quote(name) + "; use one of " +
                          std::string(kOpNames));
}

bool is_configuration_path(std::string_view path) {
  return path == kConfigFileName || path == kIgnoreFileName;
}

WorkspaceRules::WorkspaceRules() = default;

Result<WorkspaceRules> WorkspaceRules::parse(std::string_view toml_text,
                                             std::string_view source_name) {
  const ErrorAt error(source_name);
  if (toml_text.size() > kMaxConfigBytes) {
    return error.at(0, "is " + std::to_string(toml_text.size()) +
                           " bytes; the limit is 1 MiB (1048576 bytes)");
  }
  WEFT_ASSIGN_OR_RETURN(toml::table doc, parse_toml(toml_text, source_name, error));
  WorkspaceRules out;
  if (const toml::node* shell = doc.get("shell"); shell != nullptr) {
    WEFT_ASSIGN_OR_RETURN(out.shell_commands_, parse_shell_section(*shell, error));
  }
  const toml::node* section = doc.get("permissions");
  if (section == nullptr) return out;
  const toml::table* permissions = section->as_table();
  if (permissions == nullptr) {
    return error(section->source(), "\"permissions\" must be a table ([permissions]), not " +
                                         std::string(type_phrase(section->type())));
  }
  for (const auto& [key, value] : *permissions) {
    if (key.str() == "default") {
      WEFT_ASSIGN_OR_RETURN(out.default_level_, parse_level(value, "default", error));
    } else if (key.str() == "rules") {
      const toml::array* list = value.as_array();
      if (list == nullptr) {
        return error(value.source(), "\"rules\" must be an array of tables such as "
                                     "[{ glob = \"vendor/**\", level = \"read_only\" }], not " +
                                         std::string(type_phrase(value.type())));
      }
      for (const toml::node& item : *list) {
        WEFT_ASSIGN_OR_RETURN(PermissionRule rule,
                              parse_rule(item, out.rules_.size() + 1, error));
        out.rules_.push_back(std::move(rule));
      }
    } else {
      return error(key.source(), "unknown key " + quote(key.str()) +
                                     " in [permissions]; use default or rules");
    }
  }
  return out;
}

Result<WorkspaceRules> WorkspaceRules::load(const std::string& root) {
  const std::string path = root + "/" + std::string(kConfigFileName);
  Result<std::string> text =
      read_regular_file(path, "configuration file", static_cast<int64_t>(kMaxConfigBytes));
  if (!text.ok()) {
    switch (text.status().code()) {
      case StatusCode::kNotFound:
        return WorkspaceRules();
      case StatusCode::kResourceExhausted:
        return invalid_argument(std::string(text.status().message()) +
                                "; weft.toml may be at most 1 MiB");
      default:
        return unavailable(std::string(text.status().message()));
    }
  }
  return parse(*text, kConfigFileName);
}

MemoryPermission WorkspaceRules::permission_for(std::string_view path) const {
  const PermissionRule* rule = first_match(rules_, path, nullptr);
  return rule != nullptr ? rule->level : default_level_;
}

RuleDecision WorkspaceRules::decide(std::string_view path, FileOp op) const {
  size_t number = 0;
  const PermissionRule* rule = first_match(rules_, path, &number);
  RuleDecision out;
  out.level = rule != nullptr ? rule->level : default_level_;
  if (op != FileOp::kRead && is_configuration_path(path)) {
    out.decision = PermissionDecision::kDenied;
    out.reason = std::string(kConfigReason);
    return out;
  }
  out.decision = table_decision(out.level, op);
  if (rule == nullptr) {
    out.reason = "default";
    return out;
  }
  out.reason = "rule " + std::to_string(number) + " (glob " + quote(rule->glob);
  if (rule->line > 0) out.reason += ", line " + std::to_string(rule->line);
  out.reason += ")";
  if (out.decision == PermissionDecision::kAllowed && is_escalated(rule->escalate, op)) {
    out.decision = PermissionDecision::kNeedsApproval;
  }
  return out;
}

RuleDecision WorkspaceRules::decide_move(std::string_view from, std::string_view to) const {
  RuleDecision source = decide(from, FileOp::kMove);
  RuleDecision target = decide(to, FileOp::kCreate);
  // A rule escalating "move" covers moves into its paths too.
  const PermissionRule* rule = first_match(rules_, to, nullptr);
  if (target.decision == PermissionDecision::kAllowed && rule != nullptr &&
      escalates(rule->escalate, FileOp::kMove)) {
    target.decision = PermissionDecision::kNeedsApproval;
  }
  return strictness(target.decision) > strictness(source.decision) ? target : source;
}

}  // namespace weft::source
