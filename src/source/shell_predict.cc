// The shell pre-hook's predictor: walks the syntax tree of shell_parse.cc
// with the shell's state (working directory, variables, functions), expands
// words (quotes, parameters it knows, braces, ~, globs through the caller's
// callback) and turns each command into file operations through the command
// table of shell_commands.cc.
#include "source/shell_predict_internal.h"

#include <algorithm>
#include <utility>

namespace weft::source::shell {

std::string normalize_absolute(std::string_view path) {
  std::string out;
  out.reserve(path.size());
  size_t i = 0;
  while (i < path.size()) {
    while (i < path.size() && path[i] == '/') ++i;
    size_t end = path.find('/', i);
    if (end == std::string_view::npos) end = path.size();
    std::string_view seg = path.substr(i, end - i);
    i = end;
    if (seg.empty() || seg == ".") continue;
    if (seg == "..") {
      size_t slash = out.rfind('/');
      out.resize(slash == std::string::npos ? 0 : slash);
      continue;
    }
    out += '/';
    out += seg;
  }
  if (out.empty()) out = "/";
  return out;
}

namespace {

bool is_glob_special(char c) { return c == '*' || c == '?' || c == '['; }

// Escapes the characters globbing and brace expansion treat specially.
void append_escaped(std::string* out, std::string_view s) {
  for (char c : s) {
    if (c == '*' || c == '?' || c == '[' || c == ']' || c == '{' || c == '}' || c == ',' ||
        c == '\\' || c == '~') {
      *out += '\\';
    }
    *out += c;
  }
}

std::string unescape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 1 < s.size()) ++i;
    out += s[i];
  }
  return out;
}

bool has_unescaped(std::string_view s, bool (*pred)(char)) {
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\') {
      ++i;
      continue;
    }
    if (pred(s[i])) return true;
  }
  return false;
}

// Brace expansion of an escaped word: {a,b} and {1..5}. Appends to `out`;
// false when the result would pass `limit` words.
bool brace_expand(const std::string& word, std::vector<std::string>* out, size_t limit,
                  int depth = 0) {
  if (depth > 8) {
    out->push_back(word);
    return true;
  }
  // The first unescaped '{' with a matching '}' and a top-level ',' or "..".
  for (size_t open = 0; open < word.size(); ++open) {
    if (word[open] == '\\') {
      ++open;
      continue;
    }
    if (word[open] != '{') continue;
    int nest = 0;
    std::vector<size_t> commas;
    size_t close = std::string::npos;
    for (size_t j = open + 1; j < word.size(); ++j) {
      char c = word[j];
      if (c == '\\') {
        ++j;
        continue;
      }
      if (c == '{') {
        ++nest;
      } else if (c == '}') {
        if (nest == 0) {
          close = j;
          break;
        }
        --nest;
      } else if (c == ',' && nest == 0) {
        commas.push_back(j);
      }
    }
    if (close == std::string::npos) return out->push_back(word), true;
    std::string prefix = word.substr(0, open);
    std::string suffix = word.substr(close + 1);
    std::vector<std::string> items;
    if (!commas.empty()) {
      size_t from = open + 1;
      commas.push_back(close);
      for (size_t c : commas) {
        items.push_back(word.substr(from, c - from));
        from = c + 1;
      }
    } else {
      std::string inner = word.substr(open + 1, close - open - 1);
      size_t dots = inner.find("..");
      bool numeric = dots != std::string::npos && dots > 0;
      long a = 0;
      long b = 0;
      if (numeric) {
        char* end = nullptr;
        std::string left = inner.substr(0, dots);
        std::string right = inner.substr(dots + 2);
        a = std::strtol(left.c_str(), &end, 10);
        numeric = end != nullptr && *end == '\0' && !left.empty();
        b = std::strtol(right.c_str(), &end, 10);
        numeric = numeric && end != nullptr && *end == '\0' && !right.empty();
      }
      if (!numeric) {
        // Not an expansion ("{}" or "{x}"): keep this brace, look further on.
        std::vector<std::string> rest;
        if (!brace_expand(suffix, &rest, limit, depth + 1)) return false;
        for (std::string& r : rest) out->push_back(word.substr(0, close + 1) + r);
        return out->size() <= limit;
      }
      long step = a <= b ? 1 : -1;
      if ((b - a) * step >= static_cast<long>(limit)) return false;
      for (long v = a;; v += step) {
        items.push_back(std::to_string(v));
        if (v == b) break;
      }
    }
    for (const std::string& item : items) {
      if (!brace_expand(prefix + item + suffix, out, limit, depth + 1)) return false;
      if (out->size() > limit) return false;
    }
    return true;
  }
  out->push_back(word);
  return true;
}

bool is_device(std::string_view abs) {
  return abs == "/dev/null" || abs == "/dev/stdout" || abs == "/dev/stderr" ||
         abs == "/dev/stdin" || abs == "/dev/tty" || abs == "/dev/zero" ||
         abs == "/dev/random" || abs == "/dev/urandom" || abs.substr(0, 8) == "/dev/fd/" ||
         abs.substr(0, 14) == "/proc/self/fd/";
}

}  // namespace

// ---------------------------------------------------------------- Predictor

Predictor::Predictor(std::string_view text, const ShellOptions& options)
    : text_(text), options_(options) {
  std::string root = options.root.empty() ? std::string("/") : options.root;
  if (root.front() != '/') root.insert(root.begin(), '/');
  root_ = normalize_absolute(root);
}

Status Predictor::run(ShellPrediction* out) {
  State st;
  if (!options_.cwd.empty() && options_.cwd.front() == '/') {
    st.cwd = normalize_absolute(options_.cwd);
  } else {
    st.cwd = normalize_absolute(root_ + "/" + options_.cwd);
  }
  Result<ShellAst> ast = parse_shell(text_);
  if (!ast.ok()) return ast.status();
  eval(*ast, ast->root, &st);
  *out = std::move(out_);
  return Status();
}

void Predictor::flag(ShellConstruct kind, std::string_view text, std::string_view command,
                     ShellSpan span) {
  for (const Unpredictable& u : out_.flags) {
    if (u.kind == kind && u.span.begin == span.begin && u.span.end == span.end &&
        u.text == text) {
      return;
    }
  }
  if (out_.flags.size() >= kMaxShellFlags) {
    out_.truncated = true;
    return;
  }
  Unpredictable u;
  u.kind = kind;
  u.text.assign(text.substr(0, 200));
  u.command.assign(command);
  u.span = span;
  out_.flags.push_back(std::move(u));
}

std::string_view Predictor::source(ShellSpan span) const {
  if (span.begin > text_.size() || span.end > text_.size() || span.end < span.begin) return "";
  return text_.substr(span.begin, span.end - span.begin);
}

PathRef Predictor::ref_of(const std::string& abs) const {
  PathRef ref;
  if (root_ == "/") {
    ref.path = abs == "/" ? "." : abs.substr(1);
    return ref;
  }
  if (abs == root_) {
    ref.path = ".";
  } else if (abs.size() > root_.size() && abs.compare(0, root_.size(), root_) == 0 &&
             abs[root_.size()] == '/') {
    ref.path = abs.substr(root_.size() + 1);
  } else {
    ref.path = abs;
    ref.inside = false;
  }
  return ref;
}

void Predictor::push_op(PredictedOp op) {
  // The caller's view of the disk refines the guess.
  if (options_.kind && op.inside_root && !op.pattern) {
    ShellPathKind kind = options_.kind(op.path);
    if (kind == ShellPathKind::kMissing &&
        (op.op == FileOp::kOverwrite || op.op == FileOp::kAppend)) {
      op.op = FileOp::kCreate;
    }
    // Nothing lies below a file, nor below a missing path being removed.
    if (kind == ShellPathKind::kFile ||
        (kind == ShellPathKind::kMissing && op.op == FileOp::kDelete)) {
      op.tree = false;
    }
  }
  for (const PredictedOp& o : out_.ops) {
    if (o.op == op.op && o.path == op.path && o.target == op.target && o.tree == op.tree &&
        o.command == op.command) {
      return;
    }
  }
  if (out_.ops.size() >= kMaxShellOps) {
    out_.truncated = true;
    return;
  }
  out_.ops.push_back(std::move(op));
}

void Predictor::emit_abs(const std::string& abs, FileOp op, const Call& call, ShellSpan span,
                         bool tree, bool redirect) {
  if (is_device(abs)) return;
  PathRef ref = ref_of(abs);
  PredictedOp p;
  p.path = std::move(ref.path);
  p.inside_root = ref.inside;
  p.op = op;
  p.tree = tree;
  p.redirect = redirect;
  p.command = call.name;
  p.span = span;
  push_op(std::move(p));
}

// The absolute path of a resolved field, or false after flagging why not.
bool Predictor::absolute_of(const Field& f, const State& st, const Call& call,
                            std::string* abs) {
  if (!f.resolved) {
    flag(f.why, f.source, call.name, f.span);
    return false;
  }
  if (!f.value.empty() && f.value.front() == '/') {
    *abs = normalize_absolute(f.value);
    return true;
  }
  if (!st.cwd) {
    flag(ShellConstruct::kCdUnknown, f.source, call.name, f.span);
    return false;
  }
  *abs = normalize_absolute(*st.cwd + "/" + f.value);
  return true;
}

bool Predictor::find_placeholder(const Field& f, const State& st, const Call& call, FileOp op,
                                 bool* handled) {
  *handled = false;
  if (st.find_starts.empty() || f.value.find("{}") == std::string::npos) return false;
  *handled = true;
  std::string prefix = f.value.substr(0, f.value.find("{}"));
  size_t slash = prefix.rfind('/');
  if (prefix.empty() || slash == std::string::npos) {
    for (const std::string& start : st.find_starts) emit_abs(start, op, call, f.span, true, false);
    return true;
  }
  Field dir = f;
  dir.value = prefix.substr(0, slash + 1);
  std::string abs;
  if (absolute_of(dir, st, call, &abs)) emit_abs(abs, op, call, f.span, true, false);
  return true;
}

void Predictor::emit(const Field& f, FileOp op, const Call& call, const State& st, bool tree,
                     bool redirect) {
  bool handled = false;
  if (find_placeholder(f, st, call, op, &handled)) return;
  if (f.resolved && f.glob) {
    std::vector<std::string> matches;
    bool unresolved = true;
    std::string abs_pattern;
    if (f.pattern.front() == '/') {
      abs_pattern = normalize_absolute(f.pattern);
    } else if (st.cwd) {
      std::string cwd_escaped;
      append_escaped(&cwd_escaped, *st.cwd);
      abs_pattern = normalize_absolute(cwd_escaped + "/" + f.pattern);
    } else {
      flag(ShellConstruct::kCdUnknown, f.source, call.name, f.span);
      return;
    }
    PathRef ref = ref_of(abs_pattern);
    if (ref.inside && options_.glob) {
      std::optional<std::vector<std::string>> got = options_.glob(ref.path);
      if (got) {
        unresolved = false;
        matches = std::move(*got);
      }
    }
    if (!unresolved && matches.empty()) {
      Field literal = f;
      literal.glob = false;
      std::string abs;
      if (absolute_of(literal, st, call, &abs)) emit_abs(abs, op, call, f.span, tree, redirect);
      return;
    }
    if (!unresolved) {
      for (const std::string& m : matches) {
        emit_abs(normalize_absolute(root_ + "/" + m), op, call, f.span, tree, redirect);
      }
      return;
    }
    flag(ShellConstruct::kGlobUnresolved, f.source, call.name, f.span);
    PredictedOp p;
    p.path = ref.inside ? ref.path : abs_pattern;
    p.inside_root = ref.inside;
    p.op = op;
    p.tree = tree;
    p.pattern = true;
    p.redirect = redirect;
    p.command = call.name;
    p.span = f.span;
    push_op(std::move(p));
    return;
  }
  std::string abs;
  if (absolute_of(f, st, call, &abs)) emit_abs(abs, op, call, f.span, tree, redirect);
}

// Every path a field stands for (globs resolved), for moves and copies.
std::vector<std::string> Predictor::paths_of(const Field& f, const State& st, const Call& call) {
  std::vector<std::string> out;
  if (!st.find_starts.empty() && f.resolved && f.value.find("{}") != std::string::npos) {
    return st.find_starts;  // find -exec CMD {}: the files under the start directories
  }
  if (f.resolved && f.glob && f.pattern.front() != '/' && st.cwd && options_.glob) {
    std::string cwd_escaped;
    append_escaped(&cwd_escaped, *st.cwd);
    PathRef ref = ref_of(normalize_absolute(cwd_escaped + "/" + f.pattern));
    if (ref.inside) {
      std::optional<std::vector<std::string>> got = options_.glob(ref.path);
      if (got && !got->empty()) {
        for (const std::string& m : *got) out.push_back(normalize_absolute(root_ + "/" + m));
        return out;
      }
    }
  }
  if (f.resolved && f.glob) {
    flag(ShellConstruct::kGlobUnresolved, f.source, call.name, f.span);
    return out;
  }
  std::string abs;
  if (absolute_of(f, st, call, &abs)) out.push_back(std::move(abs));
  return out;
}

ShellPathKind Predictor::kind_of(const std::string& abs) const {
  if (!options_.kind) return ShellPathKind::kUnknown;
  PathRef ref = ref_of(abs);
  if (!ref.inside) return ShellPathKind::kUnknown;
  return options_.kind(ref.path);
}

void Predictor::emit_move(const std::string& from, const std::string& to, const Call& call,
                          ShellSpan span, bool tree) {
  if (is_device(from)) return;
  PathRef a = ref_of(from);
  PathRef b = ref_of(to);
  PredictedOp p;
  p.path = std::move(a.path);
  p.inside_root = a.inside;
  p.op = FileOp::kMove;
  p.target = std::move(b.path);
  p.target_inside_root = b.inside;
  p.tree = tree;
  p.command = call.name;
  p.span = span;
  push_op(std::move(p));
}

// ---------------------------------------------------------------- expansion

const Var* State::find(std::string_view name) const {
  for (const Var& v : vars) {
    if (v.name == name) return &v;
  }
  return nullptr;
}

void State::set(std::string_view name, bool known, std::string value) {
  for (Var& v : vars) {
    if (v.name == name) {
      v.known = known;
      v.value = std::move(value);
      return;
    }
  }
  if (vars.size() >= 256) return;
  vars.push_back(Var{std::string(name), known, std::move(value)});
}

void Predictor::expand(const ShellAst& ast, const Word& word, State* st,
                       std::vector<Field>* out, bool split) {
  Field f;
  f.span = word.span;
  f.source.assign(source(word.span));
  std::string escaped;
  bool expandable = false;  // unquoted literal text: braces, globs, ~
  bool tilde = false;
  std::vector<std::string> split_values;
  for (size_t i = 0; i < word.parts.size(); ++i) {
    const WordPart& p = word.parts[i];
    switch (p.kind) {
      case PartKind::kLiteral:
        if (i == 0 && !p.text.empty() && p.text.front() == '~') tilde = true;
        escaped += p.text;
        expandable = true;
        break;
      case PartKind::kQuoted:
        append_escaped(&escaped, p.text);
        break;
      case PartKind::kParam: {
        const Var* v = p.simple ? st->find(p.text) : nullptr;
        std::optional<std::string> value;
        if (v != nullptr) {
          if (v->known) value = v->value;
        } else if (p.simple && p.text == "PWD" && st->cwd) {
          value = *st->cwd;
        } else if (p.simple && p.text == "HOME" && !options_.home.empty()) {
          value = options_.home;
        }
        if (!value) {
          if (f.resolved) {
            f.resolved = false;
            f.why = ShellConstruct::kVariable;
          }
        } else if (split && !p.in_dquote && word.parts.size() == 1 &&
                   value->find_first_of(" \t\n") != std::string::npos) {
          size_t k = 0;
          while (k < value->size()) {
            size_t start = value->find_first_not_of(" \t\n", k);
            if (start == std::string::npos) break;
            size_t end = value->find_first_of(" \t\n", start);
            if (end == std::string::npos) end = value->size();
            split_values.push_back(value->substr(start, end - start));
            k = end;
          }
        } else {
          append_escaped(&escaped, *value);
        }
        break;
      }
      case PartKind::kCommandSub: {
        if (p.node >= 0) {
          State sub = *st;
          eval(ast, p.node, &sub);
        }
        if (f.resolved || f.why == ShellConstruct::kVariable) {
          f.resolved = false;
          f.why = ShellConstruct::kCommandSubstitution;
        }
        break;
      }
      case PartKind::kArith:
        if (f.resolved) {
          f.resolved = false;
          f.why = ShellConstruct::kVariable;
        }
        break;
    }
  }
  if (!f.resolved) {
    f.value = f.source;
    out->push_back(std::move(f));
    return;
  }
  if (!split_values.empty()) {
    for (std::string& v : split_values) {
      Field g = f;
      g.value = std::move(v);
      out->push_back(std::move(g));
    }
    return;
  }
  if (!expandable) {
    f.value = unescape(escaped);
    out->push_back(std::move(f));
    return;
  }
  std::vector<std::string> words;
  if (escaped.find('{') != std::string::npos) {
    if (!brace_expand(escaped, &words, kMaxBraceWords)) {
      words.clear();
      words.push_back(escaped);
    }
  } else {
    words.push_back(std::move(escaped));
  }
  for (std::string& w : words) {
    Field g = f;
    if (tilde && !w.empty() && w.front() == '~') {
      size_t slash = w.find('/');
      std::string_view user = std::string_view(w).substr(1, slash == std::string::npos
                                                                ? std::string::npos
                                                                : slash - 1);
      if (!user.empty() || options_.home.empty()) {
        g.resolved = false;
        g.why = ShellConstruct::kVariable;
        g.value = g.source;
        out->push_back(std::move(g));
        continue;
      }
      std::string home;
      append_escaped(&home, options_.home);
      w = home + (slash == std::string::npos ? std::string() : w.substr(slash));
    }
    if (has_unescaped(w, is_glob_special)) {
      g.glob = true;
      g.pattern = w;
    }
    g.value = unescape(w);
    out->push_back(std::move(g));
  }
}

// ---------------------------------------------------------------- evaluation

void Predictor::eval(const ShellAst& ast, int32_t index, State* st) {
  if (index < 0 || static_cast<size_t>(index) >= ast.nodes.size()) return;
  if (++steps_ > kMaxSteps) {
    out_.truncated = true;
    return;
  }
  const Node& n = ast.nodes[static_cast<size_t>(index)];
  switch (n.kind) {
    case NodeKind::kList:
    case NodeKind::kIf:
    case NodeKind::kLoop:
      for (int32_t k : n.kids) eval(ast, k, st);
      break;
    case NodeKind::kPipeline:
      // Each part of a pipeline runs in a subshell.
      for (int32_t k : n.kids) {
        State sub = *st;
        eval(ast, k, &sub);
      }
      break;
    case NodeKind::kSubshell: {
      State sub = *st;
      for (int32_t k : n.kids) eval(ast, k, &sub);
      break;
    }
    case NodeKind::kGroup:
      for (int32_t k : n.kids) eval(ast, k, st);
      break;
    case NodeKind::kFor:
      eval_for(ast, n, st);
      break;
    case NodeKind::kCase: {
      std::vector<Field> subject;
      for (const Word& w : n.words) expand(ast, w, st, &subject, false);
      for (int32_t k : n.kids) eval(ast, k, st);
      break;
    }
    case NodeKind::kFunction:
      if (st->functions.size() < 256) st->functions.push_back(n.name);
      for (int32_t k : n.kids) eval(ast, k, st);
      break;
    case NodeKind::kTest: {
      std::vector<Field> fields;
      for (const Word& w : n.words) expand(ast, w, st, &fields, false);
      break;
    }
    case NodeKind::kSimple:
      eval_simple(ast, n, st);
      return;  // its redirections are handled there
  }
  if (!n.redirs.empty()) {
    Call call;
    call.span = n.span;
    redirects(ast, n, st, call);
  }
}

void Predictor::eval_for(const ShellAst& ast, const Node& n, State* st) {
  std::vector<Field> items;
  bool known = n.for_has_in;
  for (const Word& w : n.words) expand(ast, w, st, &items, true);
  std::vector<std::string> values;
  for (Field& f : items) {
    if (!f.resolved) {
      known = false;
      break;
    }
    if (f.glob) {
      // Globs in the list: resolved by the callback into root-relative paths.
      Call call;
      call.span = f.span;
      std::vector<std::string> paths = paths_of(f, *st, call);
      if (paths.empty()) {
        known = false;
        break;
      }
      for (const std::string& p : paths) {
        // Keep the word's own form: relative words stay relative to the cwd.
        std::string rel = p;
        if (f.pattern.front() != '/' && st->cwd && p.size() > st->cwd->size() &&
            p.compare(0, st->cwd->size(), *st->cwd) == 0) {
          rel = p.substr(st->cwd->size() == 1 ? 1 : st->cwd->size() + 1);
        }
        values.push_back(std::move(rel));
      }
      continue;
    }
    values.push_back(f.value);
  }
  if (known && !n.name.empty() && values.size() <= kMaxLoopValues) {
    for (std::string& v : values) {
      st->set(n.name, true, v);
      for (int32_t k : n.kids) eval(ast, k, st);
    }
    return;
  }
  if (!n.name.empty()) st->set(n.name, false, "");
  for (int32_t k : n.kids) eval(ast, k, st);
}

void Predictor::redirects(const ShellAst& ast, const Node& n, State* st, const Call& call) {
  for (const Redirect& r : n.redirs) {
    FileOp op;
    switch (r.kind) {
      case RedirKind::kIn:
        op = FileOp::kRead;
        break;
      case RedirKind::kOut:
      case RedirKind::kOutErr:
      case RedirKind::kReadWrite:
        op = FileOp::kOverwrite;
        break;
      case RedirKind::kAppend:
      case RedirKind::kAppendErr:
        op = FileOp::kAppend;
        break;
      case RedirKind::kHereDoc:
        if (r.heredoc >= 0 && static_cast<size_t>(r.heredoc) < ast.heredoc_substitutes.size() &&
            ast.heredoc_substitutes[static_cast<size_t>(r.heredoc)] != 0) {
          flag(ShellConstruct::kCommandSubstitution, "here-document with $(...) or `...`",
               call.name, r.span);
        }
        continue;
      case RedirKind::kHereString: {
        std::vector<Field> ignored;
        expand(ast, r.target, st, &ignored, false);
        continue;
      }
      default:
        continue;
    }
    std::vector<Field> fields;
    expand(ast, r.target, st, &fields, false);
    for (const Field& f : fields) {
      Field g = f;
      g.span = r.span;
      emit(g, op, call, *st, false, true);
    }
  }
}

void Predictor::eval_simple(const ShellAst& ast, const Node& n, State* st) {
  std::vector<Field> values;
  for (size_t i = 0; i < n.assign_names.size(); ++i) {
    values.clear();
    expand(ast, n.assign_values[i], st, &values, false);
    if (n.words.empty()) {
      bool known = values.size() == 1 && values[0].resolved;
      st->set(n.assign_names[i], known, known ? values[0].value : std::string());
    }
  }
  std::vector<Field> argv;
  argv.reserve(n.words.size());
  for (const Word& w : n.words) expand(ast, w, st, &argv, true);
  Call call;
  call.span = n.span;
  call.ast = &ast;
  if (!argv.empty() && argv[0].resolved) call.name = argv[0].value;
  redirects(ast, n, st, call);
  if (argv.empty()) return;
  dispatch(argv, 0, st, call);
}

// Predicts a shell string (sh -c, eval, trap) in `st`.
void Predictor::eval_string(const std::string& code, ShellSpan span, State* st,
                            const Call& call) {
  if (depth_ + 1 > kMaxShellDepth) {
    flag(ShellConstruct::kShellC, code, call.name, span);
    return;
  }
  Result<ShellAst> ast = parse_shell(code, depth_ + 1, &span);
  if (!ast.ok()) {
    flag(ShellConstruct::kShellC, code, call.name, span);
    return;
  }
  ++depth_;
  eval(*ast, ast->root, st);
  --depth_;
}

}  // namespace weft::source::shell

namespace weft::source {

std::string_view shell_construct_name(ShellConstruct kind) {
  switch (kind) {
    case ShellConstruct::kEval: return "eval";
    case ShellConstruct::kShellC: return "sh_c";
    case ShellConstruct::kCommandSubstitution: return "command_substitution";
    case ShellConstruct::kInlineInterpreter: return "inline_interpreter";
    case ShellConstruct::kXargs: return "xargs";
    case ShellConstruct::kVariable: return "variable";
    case ShellConstruct::kGlobUnresolved: return "glob_unresolved";
    case ShellConstruct::kCdUnknown: return "cd_unknown";
    case ShellConstruct::kBuildTool: return "build_tool";
    case ShellConstruct::kScript: return "script";
    case ShellConstruct::kUnknownCommand: return "unknown_command";
    case ShellConstruct::kConfigured: return "configured";
  }
  return "unknown";
}

Result<ShellPrediction> predict_shell(std::string_view command, const ShellOptions& options) {
  if (command.size() > kMaxShellCommandBytes) {
    return invalid_argument("shell command is " + std::to_string(command.size()) +
                            " bytes; the limit is " + std::to_string(kMaxShellCommandBytes) +
                            " (64 KiB): write long scripts to a file and run that");
  }
  size_t nul = command.find('\0');
  if (nul != std::string_view::npos) {
    return invalid_argument("shell command contains a NUL byte at byte " + std::to_string(nul) +
                            "; a shell command is text without NUL bytes");
  }
  if (!options.root.empty() && options.root.front() != '/') {
    return invalid_argument("shell root must be an absolute path, not \"" + options.root + "\"");
  }
  shell::Predictor predictor(command, options);
  ShellPrediction out;
  WEFT_RETURN_IF_ERROR(predictor.run(&out));
  return out;
}

}  // namespace weft::source
