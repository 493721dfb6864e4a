// Block enums, ids and the names tools spell them with.
#include <array>

#include "kernel/blocks_impl.h"

namespace weft::kernel {

namespace {

constexpr std::array<std::string_view, 4> kRoleNames = {"user", "model", "system", "tool"};
constexpr std::array<std::string_view, 6> kKindNames = {"text",        "thinking", "tool_call",
                                                        "tool_result", "file",     "memory"};
constexpr std::array<std::string_view, 4> kStatusNames = {"pending", "running", "done", "error"};
constexpr std::array<std::string_view, 3> kOpNames = {"insert", "delete", "replace"};

template <typename E, size_t N>
Result<E> parse_name(std::string_view name, const std::array<std::string_view, N>& names,
                     std::string_view what) {
  std::string valid;
  for (size_t i = 0; i < N; ++i) {
    if (names[i] == name) return static_cast<E>(i);
    valid += (i ? ", " : "") + std::string(names[i]);
  }
  return invalid_argument("unknown " + std::string(what) + " '" + std::string(name.substr(0, 40)) +
                          "': use one of " + valid);
}

bool name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == ':' || c == '-';
}

Status check_name(std::string_view name, std::string_view what) {
  if (name.empty() || name.size() > kMaxNameBytes) {
    return invalid_argument("the " + std::string(what) + " must be 1 to " +
                            std::to_string(kMaxNameBytes) + " bytes long");
  }
  for (char c : name) {
    if (!name_char(c)) {
      return invalid_argument("the " + std::string(what) + " '" + std::string(name) +
                              "' may hold only letters, digits and . _ : -");
    }
  }
  return Status();
}

}  // namespace

std::string_view block_role_name(BlockRole role) { return kRoleNames[static_cast<size_t>(role)]; }
std::string_view block_kind_name(BlockKind kind) { return kKindNames[static_cast<size_t>(kind)]; }
std::string_view block_status_name(BlockStatus status) {
  return kStatusNames[static_cast<size_t>(status)];
}
Result<doc::MemoryPermission> parse_block_permission(std::string_view name) {
  if (name == "append_only" || name == "append-only" || name == "appendonly") {
    return doc::MemoryPermission::kAppend;
  }
  auto p = doc::parse_memory_permission(name);
  if (!p.ok()) {
    return invalid_argument("unknown permission '" + std::string(name.substr(0, 40)) +
                            "': use one of read_only, append_only (append), read_write, partner, "
                            "human, admin");
  }
  return p;
}

Result<BlockRole> parse_block_role(std::string_view name) {
  return parse_name<BlockRole>(name, kRoleNames, "role");
}
Result<BlockKind> parse_block_kind(std::string_view name) {
  return parse_name<BlockKind>(name, kKindNames, "block kind");
}
Result<BlockStatus> parse_block_status(std::string_view name) {
  return parse_name<BlockStatus>(name, kStatusNames, "status");
}
std::string_view line_edit_op_name(LineEdit::Op op) { return kOpNames[static_cast<size_t>(op)]; }
Result<LineEdit::Op> parse_line_edit_op(std::string_view name) {
  return parse_name<LineEdit::Op>(name, kOpNames, "edit op");
}

LineEdit LineEdit::insert(size_t line, std::string content) {
  LineEdit e;
  e.op = Op::kInsert;
  e.line = line;
  e.content = std::move(content);
  return e;
}
LineEdit LineEdit::erase(size_t start, size_t end) {
  LineEdit e;
  e.op = Op::kDelete;
  e.start_line = start;
  e.end_line = end;
  return e;
}
LineEdit LineEdit::replace(size_t start, size_t end, std::string content,
                           std::optional<std::string> expected) {
  LineEdit e;
  e.op = Op::kReplace;
  e.start_line = start;
  e.end_line = end;
  e.content = std::move(content);
  e.expected_text = std::move(expected);
  return e;
}

std::string agent_name_of(std::string_view origin) {
  if (origin.substr(0, 6) == "agent:") origin.remove_prefix(6);
  std::string out;
  for (char c : origin.substr(0, kMaxNameBytes)) out += name_char(c) ? c : '-';
  return out.empty() ? "anonymous" : out;
}

std::string conversation_block_id(std::string_view cell, std::string_view agent, uint64_t seq) {
  return std::string(cell) + "/" + std::string(agent) + "/" + std::to_string(seq);
}

std::string memory_block_id(std::string_view agent, std::string_view label) {
  return std::string(kMemoryBlockPrefix) + std::string(agent) + "/" + std::string(label);
}

Status check_cell(std::string_view cell) { return check_name(cell, "cell"); }

Status check_memory_label(std::string_view label) {
  if (label.empty() || label.size() > kMaxLabelBytes) {
    return invalid_argument("a memory label must be 1 to " + std::to_string(kMaxLabelBytes) +
                            " bytes long");
  }
  for (char c : label) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-' || c == '/';
    if (!ok) {
      return invalid_argument("the memory label '" + std::string(label.substr(0, 80)) +
                              "' may hold only letters, digits and . _ - /");
    }
  }
  return Status();
}

Result<BlockId> parse_block_id(std::string_view id) {
  BlockId out;
  const std::string forms =
      "a block id is <cell>/<agent>/<seq> (e.g. main/claude/3), file:<path> or "
      "memory:<agent>/<label>";
  if (id.empty()) return invalid_argument("empty block id: " + forms);
  if (id.size() > 4096) return invalid_argument("block id too long: " + forms);
  if (auto path = path_of_block_id(id)) {
    if (path->empty()) return invalid_argument("'file:' needs a path: " + forms);
    out.type = BlockId::Type::kFile;
    out.path = *path;
    while (out.path.size() > 2 && out.path.substr(0, 2) == "./") out.path.erase(0, 2);
    return out;
  }
  if (id.substr(0, kMemoryBlockPrefix.size()) == kMemoryBlockPrefix) {
    std::string_view rest = id.substr(kMemoryBlockPrefix.size());
    size_t slash = rest.find('/');
    if (slash == std::string_view::npos) {
      return invalid_argument("'" + std::string(id.substr(0, 200)) + "' is not a block id: " +
                              forms);
    }
    out.type = BlockId::Type::kMemory;
    out.agent = std::string(rest.substr(0, slash));
    out.label = std::string(rest.substr(slash + 1));
    WEFT_RETURN_IF_ERROR(check_name(out.agent, "agent name"));
    WEFT_RETURN_IF_ERROR(check_memory_label(out.label));
    return out;
  }
  size_t a = id.find('/');
  size_t b = a == std::string_view::npos ? a : id.find('/', a + 1);
  if (b == std::string_view::npos || id.find('/', b + 1) != std::string_view::npos) {
    return invalid_argument("'" + std::string(id.substr(0, 200)) + "' is not a block id: " +
                            forms);
  }
  out.type = BlockId::Type::kConversation;
  out.cell = std::string(id.substr(0, a));
  out.agent = std::string(id.substr(a + 1, b - a - 1));
  std::string_view seq = id.substr(b + 1);
  WEFT_RETURN_IF_ERROR(check_name(out.cell, "cell"));
  WEFT_RETURN_IF_ERROR(check_name(out.agent, "agent name"));
  if (seq.empty() || seq.size() > 19 || seq[0] == '0') {
    return invalid_argument("'" + std::string(id.substr(0, 200)) +
                            "': the seq must be a number from 1: " + forms);
  }
  for (char c : seq) {
    if (c < '0' || c > '9') {
      return invalid_argument("'" + std::string(id.substr(0, 200)) +
                              "': the seq must be a number: " + forms);
    }
    out.seq = out.seq * 10 + static_cast<uint64_t>(c - '0');
  }
  return out;
}

}  // namespace weft::kernel
