// The shell pre-hook's predictor state, shared by shell_predict.cc (walking
// and word expansion) and shell_commands.cc (the command table). Internal to
// src/source.
//
// Thread safety: a Predictor is used by one thread for one command.
#ifndef WEFT_SRC_SOURCE_SHELL_PREDICT_INTERNAL_H_
#define WEFT_SRC_SOURCE_SHELL_PREDICT_INTERNAL_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "source/shell_syntax.h"
#include "weft/source/shell_predict.h"

namespace weft::source::shell {

inline constexpr size_t kMaxBraceWords = 256;
inline constexpr size_t kMaxLoopValues = 64;
inline constexpr size_t kMaxSteps = 20000;

// "/a/./b/../c" -> "/a/c"; "" -> "/".
std::string normalize_absolute(std::string_view path);

// Whether `name` changes no file through its arguments (the table's read-only
// commands, or a weft.toml entry with no operands, writes or flag).
bool read_only_command(std::string_view name, const std::vector<ShellCommandRule>* rules);

// One word after expansion.
struct Field {
  std::string value;    // the text (quotes removed, braces and ~ expanded)
  std::string pattern;  // glob: the escaped pattern
  std::string source;   // the word as written
  bool resolved = true;
  bool glob = false;
  ShellConstruct why = ShellConstruct::kVariable;  // when !resolved
  ShellSpan span;
};

struct Var {
  std::string name;
  bool known = false;
  std::string value;
};

struct State {
  std::optional<std::string> cwd;  // absolute; nullopt: unknown (cd $X)
  std::optional<std::string> oldpwd;
  std::vector<std::optional<std::string>> dir_stack;
  std::vector<Var> vars;
  std::vector<std::string> functions;
  // Inside find -exec: the start directories `{}` stands for (absolute).
  std::vector<std::string> find_starts;

  const Var* find(std::string_view name) const;
  void set(std::string_view name, bool known, std::string value);
};

// The command being predicted.
struct Call {
  std::string name;  // for PredictedOp::command
  ShellSpan span;
  const ShellAst* ast = nullptr;
};

struct PathRef {
  std::string path;
  bool inside = true;
};

class Predictor {
 public:
  Predictor(std::string_view text, const ShellOptions& options);
  Status run(ShellPrediction* out);

 private:
  // shell_predict.cc
  void flag(ShellConstruct kind, std::string_view text, std::string_view command,
            ShellSpan span);
  std::string_view source(ShellSpan span) const;
  PathRef ref_of(const std::string& abs) const;
  void push_op(PredictedOp op);
  void emit_abs(const std::string& abs, FileOp op, const Call& call, ShellSpan span, bool tree,
                bool redirect);
  bool absolute_of(const Field& f, const State& st, const Call& call, std::string* abs);
  bool find_placeholder(const Field& f, const State& st, const Call& call, FileOp op,
                        bool* handled);
  void emit(const Field& f, FileOp op, const Call& call, const State& st, bool tree = false,
            bool redirect = false);
  std::vector<std::string> paths_of(const Field& f, const State& st, const Call& call);
  ShellPathKind kind_of(const std::string& abs) const;
  void emit_move(const std::string& from, const std::string& to, const Call& call,
                 ShellSpan span, bool tree);
  void expand(const ShellAst& ast, const Word& word, State* st, std::vector<Field>* out,
              bool split);
  void eval(const ShellAst& ast, int32_t index, State* st);
  void eval_for(const ShellAst& ast, const Node& n, State* st);
  void eval_simple(const ShellAst& ast, const Node& n, State* st);
  void redirects(const ShellAst& ast, const Node& n, State* st, const Call& call);
  void eval_string(const std::string& code, ShellSpan span, State* st, const Call& call);

  // shell_commands.cc
  void dispatch(std::vector<Field>& argv, size_t at, State* st, Call call);
  void dispatch_one(std::vector<Field>& argv, size_t at, State* st, Call call);
  void run_configured(const ShellCommandRule& rule, std::vector<Field>& argv, size_t at,
                      State* st, const Call& call);
  void cmd_cd(std::vector<Field>& argv, size_t at, State* st, const Call& call, bool push);
  void cmd_copy_like(std::vector<Field>& argv, size_t at, State* st, const Call& call,
                     bool move);
  void cmd_ln(std::vector<Field>& argv, size_t at, State* st, const Call& call);
  void cmd_chmod(std::vector<Field>& argv, size_t at, State* st, const Call& call);
  void cmd_sed(std::vector<Field>& argv, size_t at, State* st, const Call& call);
  void cmd_perl(std::vector<Field>& argv, size_t at, State* st, const Call& call);
  void cmd_awk(std::vector<Field>& argv, size_t at, State* st, const Call& call);
  void cmd_interpreter(std::vector<Field>& argv, size_t at, State* st, const Call& call);
  void cmd_shell(std::vector<Field>& argv, size_t at, State* st, const Call& call);
  void cmd_find(std::vector<Field>& argv, size_t at, State* st, const Call& call);
  void cmd_xargs(std::vector<Field>& argv, size_t at, State* st, const Call& call);
  void cmd_git(std::vector<Field>& argv, size_t at, State* st, Call call);
  void cmd_tar(std::vector<Field>& argv, size_t at, State* st, const Call& call);
  void cmd_compress(std::vector<Field>& argv, size_t at, State* st, const Call& call);
  void cmd_download(std::vector<Field>& argv, size_t at, State* st, const Call& call);
  void cmd_dd(std::vector<Field>& argv, size_t at, State* st, const Call& call);
  void cmd_rsync(std::vector<Field>& argv, size_t at, State* st, const Call& call);
  void cmd_patch(std::vector<Field>& argv, size_t at, State* st, const Call& call);
  void cmd_unzip(std::vector<Field>& argv, size_t at, State* st, const Call& call);
  void cmd_compiler(std::vector<Field>& argv, size_t at, State* st, const Call& call);
  void cmd_build(std::vector<Field>& argv, size_t at, State* st, const Call& call);
  void emit_tree_at(const std::optional<std::string>& dir, FileOp op, const Call& call,
                    const State& st);

  std::string_view text_;
  const ShellOptions& options_;
  std::string root_;  // absolute, normalised
  ShellPrediction out_;
  int depth_ = 0;
  int dispatch_depth_ = 0;
  size_t steps_ = 0;
};

}  // namespace weft::source::shell

#endif  // WEFT_SRC_SOURCE_SHELL_PREDICT_INTERNAL_H_
