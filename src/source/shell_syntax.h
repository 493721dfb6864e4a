// The shell pre-hook's syntax tree: a POSIX sh parse (the bash subset agents
// write) of one command string, kept only as far as predicting file
// operations needs it. Internal to src/source.
//
// Thread safety: a ShellAst is a value; parse_shell() is reentrant.
#ifndef WEFT_SRC_SOURCE_SHELL_SYNTAX_H_
#define WEFT_SRC_SOURCE_SHELL_SYNTAX_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "weft/base/status.h"
#include "weft/source/shell_predict.h"

namespace weft::source::shell {

enum class PartKind : uint8_t {
  kLiteral,     // unquoted text: subject to brace expansion, globbing, ~
  kQuoted,      // quoted or backslash-escaped text: taken as is
  kParam,       // $name, ${...}, $1, $@ ...
  kCommandSub,  // $(...), `...`, <(...), >(...): `node` is its program
  kArith,       // $((...))
};

struct WordPart {
  PartKind kind = PartKind::kLiteral;
  bool in_dquote = false;  // a kParam/kCommandSub inside "..." (no field splitting)
  bool simple = false;     // kParam: $name or ${name} (text is the name)
  std::string text;        // literal text, the parameter's name or ${...} inside
  int32_t node = -1;       // kCommandSub: its program (a kList node)
};

struct Word {
  std::vector<WordPart> parts;
  ShellSpan span;
  // The word is one unquoted literal equal to `s` (reserved words, `]]`).
  bool is_plain(std::string_view s) const {
    return parts.size() == 1 && parts[0].kind == PartKind::kLiteral && parts[0].text == s;
  }
};

enum class RedirKind : uint8_t {
  kIn,         // <
  kOut,        // > and >|
  kAppend,     // >>
  kOutErr,     // &> and >&WORD (not a number)
  kAppendErr,  // &>>
  kReadWrite,  // <>
  kDupOut,     // >&N, >&-
  kDupIn,      // <&N
  kHereDoc,    // << and <<-
  kHereString  // <<<
};

struct Redirect {
  int fd = -1;  // the explicit fd number, -1 when none
  RedirKind kind = RedirKind::kOut;
  Word target;  // the file, fd, here-string or here-doc delimiter
  ShellSpan span;
  int32_t heredoc = -1;  // kHereDoc: index into ShellAst::heredoc_substitutes
};

enum class NodeKind : uint8_t {
  kList,      // kids: and-or items in order (&&, ||, ;, & are all sequential here)
  kPipeline,  // kids: the commands
  kSimple,    // assigns, words, redirs
  kSubshell,  // kids[0]: a kList
  kGroup,     // kids[0]: a kList
  kIf,        // kids: cond, then, [cond, then]..., [else]
  kLoop,      // while / until: kids: cond, body
  kFor,       // name, words (absent `in`: "$@"), kids[0]: body
  kCase,      // words[0]: subject, kids: bodies
  kFunction,  // name, kids[0]: body
  kTest,      // [[ ... ]] and ((...)): words (for their substitutions)
};

struct Node {
  NodeKind kind = NodeKind::kList;
  ShellSpan span;
  std::string name;
  bool for_has_in = false;
  std::vector<int32_t> kids;
  std::vector<std::string> assign_names;  // kSimple: NAME of NAME=value
  std::vector<Word> assign_values;        // kSimple: value of NAME=value
  std::vector<Word> words;
  std::vector<Redirect> redirs;
};

struct ShellAst {
  std::vector<Node> nodes;
  int32_t root = -1;  // a kList
  // Per here-document: its body is unquoted and holds $( or ` (runs commands).
  std::vector<uint8_t> heredoc_substitutes;
};

// Parses `text`. Errors: kInvalidArgument naming line, column and byte.
// `depth` is the nesting already used by an enclosing parse (sh -c, eval);
// `span_override`, when set, replaces every span (inner text of a quoted
// string maps back to the word that held it).
Result<ShellAst> parse_shell(std::string_view text, int depth = 0,
                             const ShellSpan* span_override = nullptr);

inline constexpr int kMaxShellDepth = 64;

}  // namespace weft::source::shell

#endif  // WEFT_SRC_SOURCE_SHELL_SYNTAX_H_
