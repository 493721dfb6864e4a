// The shell pre-hook's parser: a hand-written lexer and recursive-descent
// parser for the POSIX sh grammar (plus the bash forms agents use: [[ ]],
// ((...)), &>, <<<, $'...', <(...), function NAME). No exceptions, no regex;
// errors name the position.
#include <cstring>
#include <string>
#include <utility>

#include "source/shell_syntax.h"

namespace weft::source::shell {
namespace {

enum class Tok : uint8_t { kWord, kIoNumber, kOp, kNewline, kEnd };
enum class Op : uint8_t {
  kSemi, kDSemi, kSemiAnd, kDSemiAnd, kAmp, kAndIf, kPipe, kOrIf, kPipeAmp, kLParen, kRParen,
  kLess, kGreat, kDGreat, kClobber, kDLess, kDLessDash, kTLess, kLessGreat, kLessAnd,
  kGreatAnd, kAndGreat, kAndDGreat,
};

struct Token {
  Tok type = Tok::kEnd;
  Op op = Op::kSemi;
  int io = -1;
  uint32_t begin = 0;
  uint32_t end = 0;
  Word word;
};

bool is_meta(char c) {
  switch (c) {
    case ' ': case '\t': case '\n': case ';': case '&': case '|': case '<': case '>':
    case '(': case ')':
      return true;
    default:
      return false;
  }
}

bool is_name_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool is_name_char(char c) { return is_name_start(c) || (c >= '0' && c <= '9'); }

bool is_valid_name(std::string_view s) {
  if (s.empty() || !is_name_start(s[0])) return false;
  for (char c : s) {
    if (!is_name_char(c)) return false;
  }
  return true;
}

bool is_redirect_op(Op op) { return op >= Op::kLess; }

std::string_view op_text(Op op) {
  static constexpr std::string_view kTexts[] = {
      ";", ";;", ";&", ";;&", "&", "&&", "|", "||", "|&", "(", ")", "<", ">", ">>", ">|",
      "<<", "<<-", "<<<", "<>", "<&", ">&", "&>", "&>>"};
  return kTexts[static_cast<size_t>(op)];
}

struct PendingHeredoc {
  std::string delimiter;
  bool strip_tabs = false;
  bool expands = false;
  int32_t index = 0;
  uint32_t at = 0;
};

class Parser {
 public:
  Parser(std::string_view text, int depth) : text_(text), depth_(depth) {}

  Result<ShellAst> run() {
    int32_t root = parse_list();
    if (ok() && peek().type != Tok::kEnd) unexpected(peek());
    if (!ok()) return error_;
    ast_.root = root;
    return std::move(ast_);
  }

 private:
  bool ok() const { return error_.ok(); }

  std::string where(uint32_t pos) const {
    uint32_t line = 1;
    uint32_t col = 1;
    for (uint32_t i = 0; i < pos && i < text_.size(); ++i) {
      if (text_[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    return "line " + std::to_string(line) + ", column " + std::to_string(col) + " (byte " +
           std::to_string(pos) + ")";
  }

  void fail(uint32_t pos, std::string_view message) {
    if (!ok()) return;
    error_ = invalid_argument("shell syntax: " + std::string(message) + " at " + where(pos));
    pos_ = static_cast<uint32_t>(text_.size());
  }

  std::string describe(const Token& t) const {
    switch (t.type) {
      case Tok::kEnd:
        return "end of command";
      case Tok::kNewline:
        return "newline";
      case Tok::kOp:
        return "'" + std::string(op_text(t.op)) + "'";
      default:
        return "'" + std::string(text_.substr(t.begin, std::min<uint32_t>(t.end - t.begin, 40))) +
               "'";
    }
  }

  void unexpected(const Token& t) { fail(t.begin, "unexpected " + describe(t)); }

  bool enter(uint32_t pos) {
    if (++depth_ > kMaxShellDepth) {
      fail(pos, "nested more than " + std::to_string(kMaxShellDepth) + " levels deep");
      return false;
    }
    return true;
  }
  void leave() { --depth_; }

  // ---- lexer ----

  const Token& peek() {
    if (!has_peek_) {
      Token t = lex();
      peek_ = std::move(t);
      has_peek_ = true;
    }
    return peek_;
  }
  Token take() {
    peek();
    has_peek_ = false;
    return std::move(peek_);
  }
  bool peek_op(Op op) {
    const Token& t = peek();
    return t.type == Tok::kOp && t.op == op;
  }
  bool peek_plain(std::string_view s) {
    const Token& t = peek();
    return t.type == Tok::kWord && t.word.is_plain(s);
  }
  void skip_newlines() {
    while (ok() && peek().type == Tok::kNewline) take();
  }

  char at(size_t i) const { return i < text_.size() ? text_[i] : '\0'; }

  Token lex() {
    Token t;
    for (;;) {
      char c = at(pos_);
      if (c == ' ' || c == '\t' || c == '\r') {
        ++pos_;
      } else if (c == '\\' && at(pos_ + 1) == '\n') {
        pos_ += 2;
      } else if (c == '#') {
        while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
      } else {
        break;
      }
    }
    t.begin = pos_;
    if (!ok() || pos_ >= text_.size()) {
      t.type = Tok::kEnd;
      t.end = t.begin;
      if (ok() && !pending_.empty()) {
        fail(pending_.front().at, "here-document has no closing line '" +
                                      pending_.front().delimiter + "'");
      }
      return t;
    }
    char c = text_[pos_];
    if (c == '\n') {
      ++pos_;
      t.type = Tok::kNewline;
      t.end = pos_;
      read_heredocs();
      return t;
    }
    if ((c == '<' || c == '>') && at(pos_ + 1) == '(') {
      lex_word(&t);
      return t;
    }
    if (is_meta(c)) {
      t.type = Tok::kOp;
      t.op = lex_op();
      t.end = pos_;
      return t;
    }
    lex_word(&t);
    return t;
  }

  Op lex_op() {
    auto take_if = [&](std::string_view s) {
      if (text_.substr(pos_, s.size()) == s) {
        pos_ += static_cast<uint32_t>(s.size());
        return true;
      }
      return false;
    };
    // Longest first.
    if (take_if("&>>")) return Op::kAndDGreat;
    if (take_if(";;&")) return Op::kDSemiAnd;
    if (take_if("<<<")) return Op::kTLess;
    if (take_if("<<-")) return Op::kDLessDash;
    if (take_if("&&")) return Op::kAndIf;
    if (take_if("&>")) return Op::kAndGreat;
    if (take_if("||")) return Op::kOrIf;
    if (take_if("|&")) return Op::kPipeAmp;
    if (take_if(";;")) return Op::kDSemi;
    if (take_if(";&")) return Op::kSemiAnd;
    if (take_if("<<")) return Op::kDLess;
    if (take_if("<>")) return Op::kLessGreat;
    if (take_if("<&")) return Op::kLessAnd;
    if (take_if(">>")) return Op::kDGreat;
    if (take_if(">|")) return Op::kClobber;
    if (take_if(">&")) return Op::kGreatAnd;
    char c = text_[pos_++];
    switch (c) {
      case ';': return Op::kSemi;
      case '&': return Op::kAmp;
      case '|': return Op::kPipe;
      case '(': return Op::kLParen;
      case ')': return Op::kRParen;
      case '<': return Op::kLess;
      default: return Op::kGreat;
    }
  }

  static void add(Word* w, PartKind kind, std::string_view s, bool in_dq) {
    if (!w->parts.empty()) {
      WordPart& last = w->parts.back();
      if (last.kind == kind && (kind == PartKind::kLiteral || kind == PartKind::kQuoted)) {
        last.text.append(s);
        return;
      }
    }
    WordPart part;
    part.kind = kind;
    part.in_dquote = in_dq;
    part.text.assign(s);
    w->parts.push_back(std::move(part));
  }

  void lex_word(Token* t) {
    Word& w = t->word;
    w.span.begin = pos_;
    while (ok() && pos_ < text_.size()) {
      char c = text_[pos_];
      if ((c == '<' || c == '>') && at(pos_ + 1) == '(' && w.parts.empty()) {
        uint32_t start = pos_;
        pos_ += 2;
        int32_t node = parse_subprogram(start, "<(");
        if (!ok()) break;
        WordPart part;
        part.kind = PartKind::kCommandSub;
        part.node = node;
        part.text.assign(text_.substr(start, pos_ - start));
        w.parts.push_back(std::move(part));
        continue;
      }
      if (is_meta(c)) {
        // NAME=(a b c): an array assignment, kept as an unknown value.
        if (c == '(' && w.parts.size() == 1 && w.parts[0].kind == PartKind::kLiteral &&
            !w.parts[0].text.empty() && w.parts[0].text.back() == '=') {
          uint32_t start = pos_;
          if (!skip_balanced_parens()) break;
          WordPart part;
          part.kind = PartKind::kParam;
          part.text.assign(text_.substr(start, pos_ - start));
          w.parts.push_back(std::move(part));
          continue;
        }
        break;
      }
      switch (c) {
        case '\\':
          if (at(pos_ + 1) == '\n') {
            pos_ += 2;
          } else if (pos_ + 1 < text_.size()) {
            add(&w, PartKind::kQuoted, text_.substr(pos_ + 1, 1), false);
            pos_ += 2;
          } else {
            add(&w, PartKind::kLiteral, "\\", false);
            ++pos_;
          }
          break;
        case '\'': {
          size_t close = text_.find('\'', pos_ + 1);
          if (close == std::string_view::npos) {
            fail(pos_, "unterminated single quote");
            break;
          }
          add(&w, PartKind::kQuoted, text_.substr(pos_ + 1, close - pos_ - 1), false);
          pos_ = static_cast<uint32_t>(close + 1);
          break;
        }
        case '"':
          lex_dquote(&w);
          break;
        case '$':
          lex_dollar(&w, false);
          break;
        case '`':
          lex_backtick(&w, false);
          break;
        default: {
          uint32_t start = pos_;
          while (pos_ < text_.size()) {
            char d = text_[pos_];
            if (is_meta(d) || d == '\\' || d == '\'' || d == '"' || d == '$' || d == '`') break;
            ++pos_;
          }
          add(&w, PartKind::kLiteral, text_.substr(start, pos_ - start), false);
          break;
        }
      }
    }
    w.span.end = pos_;
    t->end = pos_;
    t->type = Tok::kWord;
    // 2>file: an fd number directly before < or >.
    char next = at(pos_);
    if ((next == '<' || next == '>') && w.parts.size() == 1 &&
        w.parts[0].kind == PartKind::kLiteral && w.parts[0].text.size() <= 4) {
      bool digits = true;
      for (char d : w.parts[0].text) digits = digits && d >= '0' && d <= '9';
      if (digits) {
        t->type = Tok::kIoNumber;
        t->io = std::stoi(w.parts[0].text);
      }
    }
  }

  void lex_dquote(Word* w) {
    uint32_t open = pos_++;
    add(w, PartKind::kQuoted, "", true);
    while (ok()) {
      if (pos_ >= text_.size()) {
        fail(open, "unterminated double quote");
        return;
      }
      char c = text_[pos_];
      if (c == '"') {
        ++pos_;
        return;
      }
      if (c == '\\') {
        char d = at(pos_ + 1);
        if (d == '\n') {
          pos_ += 2;
        } else if (d == '$' || d == '`' || d == '"' || d == '\\') {
          add(w, PartKind::kQuoted, text_.substr(pos_ + 1, 1), true);
          pos_ += 2;
        } else {
          add(w, PartKind::kQuoted, "\\", true);
          ++pos_;
        }
      } else if (c == '$') {
        lex_dollar(w, true);
      } else if (c == '`') {
        lex_backtick(w, true);
      } else {
        uint32_t start = pos_;
        while (pos_ < text_.size()) {
          char d = text_[pos_];
          if (d == '"' || d == '\\' || d == '$' || d == '`') break;
          ++pos_;
        }
        add(w, PartKind::kQuoted, text_.substr(start, pos_ - start), true);
      }
    }
  }

  // Moves pos_ past the `close` that brings `depth` (the openers already
  // consumed) to zero, honouring backslashes and quotes. False when the text
  // ends first or a quote is left open.
  bool skip_balanced(char open, char close, int depth) {
    while (pos_ < text_.size()) {
      char c = text_[pos_];
      if (c == '\\') {
        pos_ += 2;
        continue;
      }
      if (c == '\'' || c == '"') {
        size_t end = text_.find(c, pos_ + 1);
        if (end == std::string_view::npos) return false;
        pos_ = static_cast<uint32_t>(end + 1);
        continue;
      }
      ++pos_;
      if (c == open) {
        ++depth;
      } else if (c == close && --depth == 0) {
        return true;
      }
    }
    return false;
  }

  // Skips a balanced (...) starting at pos_ ('('), honouring quotes.
  bool skip_balanced_parens() {
    uint32_t open = pos_;
    if (skip_balanced('(', ')', 0)) return true;
    fail(open, "unbalanced '('");
    return false;
  }

  void lex_dollar(Word* w, bool in_dq) {
    uint32_t start = pos_;
    char n = at(pos_ + 1);
    WordPart part;
    part.in_dquote = in_dq;
    if (n == '(' && at(pos_ + 2) == '(') {
      // $(( arithmetic )): up to the matching "))".
      pos_ += 3;
      int depth = 0;
      bool closed = false;
      while (pos_ < text_.size()) {
        char c = text_[pos_];
        if (c == '(') {
          ++depth;
        } else if (c == ')') {
          if (depth == 0 && at(pos_ + 1) == ')') {
            pos_ += 2;
            closed = true;
            break;
          }
          --depth;
        }
        ++pos_;
      }
      if (!closed) {
        fail(start, "unterminated $((");
        return;
      }
      part.kind = PartKind::kArith;
      part.text.assign(text_.substr(start, pos_ - start));
    } else if (n == '(') {
      pos_ += 2;
      int32_t node = parse_subprogram(start, "$(");
      if (!ok()) return;
      part.kind = PartKind::kCommandSub;
      part.node = node;
      part.text.assign(text_.substr(start, pos_ - start));
    } else if (n == '{') {
      pos_ += 2;
      if (!skip_balanced('{', '}', 1)) {
        fail(start, "unterminated ${");
        return;
      }
      part.kind = PartKind::kParam;
      part.text.assign(text_.substr(start + 2, pos_ - start - 3));
      part.simple = is_valid_name(part.text);
    } else if (n == '\'' && !in_dq) {
      // $'...': ANSI-C quoting.
      pos_ += 2;
      std::string s;
      if (!scan_to(start, '\'', /*ansi=*/true, "unterminated $'", &s)) return;
      add(w, PartKind::kQuoted, s, false);
      return;
    } else if (n == '"' && !in_dq) {
      ++pos_;
      lex_dquote(w);
      return;
    } else if (is_name_start(n)) {
      pos_ += 1;
      uint32_t name = pos_;
      while (pos_ < text_.size() && is_name_char(text_[pos_])) ++pos_;
      part.kind = PartKind::kParam;
      part.simple = true;
      part.text.assign(text_.substr(name, pos_ - name));
    } else if ((n >= '0' && n <= '9') || (n != '\0' && std::strchr("@*#?$!-", n) != nullptr)) {
      pos_ += 2;
      part.kind = PartKind::kParam;
      part.simple = true;
      part.text.assign(1, n);
    } else {
      add(w, in_dq ? PartKind::kQuoted : PartKind::kLiteral, "$", in_dq);
      ++pos_;
      return;
    }
    w->parts.push_back(std::move(part));
  }

  // Reads up to the closing `close` (consumed) into `out`, undoing the
  // backslash escapes: C escapes for $'...', \` \\ \$ for backquotes.
  bool scan_to(uint32_t start, char close, bool ansi, std::string_view error, std::string* out) {
    while (pos_ < text_.size()) {
      char c = text_[pos_];
      if (c == close) {
        ++pos_;
        return true;
      }
      if (c == '\\' && pos_ + 1 < text_.size()) {
        char e = text_[pos_ + 1];
        if (ansi) {
          *out += e == 'n' ? '\n' : e == 't' ? '\t' : e;
          pos_ += 2;
          continue;
        }
        if (e == '`' || e == '\\' || e == '$') {
          *out += e;
          pos_ += 2;
          continue;
        }
      }
      *out += c;
      ++pos_;
    }
    fail(start, error);
    return false;
  }

  void lex_backtick(Word* w, bool in_dq) {
    uint32_t start = pos_++;
    std::string inner;
    if (!scan_to(start, '`', /*ansi=*/false, "unterminated backquote", &inner)) return;
    ShellSpan span{start, pos_};
    if (depth_ + 1 > kMaxShellDepth) {
      fail(start, "nested more than " + std::to_string(kMaxShellDepth) + " levels deep");
      return;
    }
    Result<ShellAst> sub = parse_shell(inner, depth_ + 1, &span);
    if (!sub.ok()) {
      fail(start, "in backquoted command: " + std::string(sub.status().message()));
      return;
    }
    WordPart part;
    part.kind = PartKind::kCommandSub;
    part.in_dquote = in_dq;
    part.node = merge(std::move(sub).value());
    part.text.assign(text_.substr(start, pos_ - start));
    w->parts.push_back(std::move(part));
  }

  // Appends another AST's nodes to ours; returns its root's new index.
  int32_t merge(ShellAst&& sub) {
    const auto offset = static_cast<int32_t>(ast_.nodes.size());
    const auto doc_offset = static_cast<int32_t>(ast_.heredoc_substitutes.size());
    auto fix_word = [&](Word& w) {
      for (WordPart& p : w.parts) {
        if (p.node >= 0) p.node += offset;
      }
    };
    for (Node& n : sub.nodes) {
      for (int32_t& k : n.kids) k += offset;
      for (Word& w : n.words) fix_word(w);
      for (Word& w : n.assign_values) fix_word(w);
      for (Redirect& r : n.redirs) {
        fix_word(r.target);
        if (r.heredoc >= 0) r.heredoc += doc_offset;
      }
      ast_.nodes.push_back(std::move(n));
    }
    ast_.heredoc_substitutes.insert(ast_.heredoc_substitutes.end(),
                                    sub.heredoc_substitutes.begin(),
                                    sub.heredoc_substitutes.end());
    return sub.root + offset;
  }

  void read_heredocs() {
    while (ok() && !pending_.empty()) {
      PendingHeredoc doc = std::move(pending_.front());
      pending_.erase(pending_.begin());
      bool closed = false;
      while (pos_ < text_.size()) {
        size_t eol = text_.find('\n', pos_);
        if (eol == std::string_view::npos) eol = text_.size();
        std::string_view line = text_.substr(pos_, eol - pos_);
        pos_ = static_cast<uint32_t>(eol < text_.size() ? eol + 1 : eol);
        if (doc.strip_tabs) {
          while (!line.empty() && line.front() == '\t') line.remove_prefix(1);
        }
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        if (line == doc.delimiter) {
          closed = true;
          break;
        }
        if (doc.expands && (line.find("$(") != std::string_view::npos ||
                            line.find('`') != std::string_view::npos)) {
          ast_.heredoc_substitutes[static_cast<size_t>(doc.index)] = 1;
        }
      }
      if (!closed) {
        fail(doc.at, "here-document has no closing line '" + doc.delimiter + "'");
      }
    }
  }

  // ---- parser ----

  int32_t add_node(Node&& n) {
    ast_.nodes.push_back(std::move(n));
    return static_cast<int32_t>(ast_.nodes.size() - 1);
  }

  // $( ... ) / <( ... ): the program up to the matching ')', which is consumed.
  int32_t parse_subprogram(uint32_t start, std::string_view opener) {
    if (!enter(start)) return -1;
    // The enclosing token is being lexed: this parse runs its own lookahead.
    bool saved_has_peek = has_peek_;
    Token saved;
    if (saved_has_peek) saved = std::move(peek_);
    has_peek_ = false;
    int32_t list = parse_list();
    if (ok() && !peek_op(Op::kRParen)) {
      fail(start, "unterminated " + std::string(opener) + " (no matching ')'; found " +
                      describe(peek()) + ")");
    }
    if (ok()) has_peek_ = false;  // consume ')'
    if (saved_has_peek) peek_ = std::move(saved);
    has_peek_ = saved_has_peek;
    leave();
    return list;
  }

  bool at_list_end() {
    const Token& t = peek();
    if (t.type == Tok::kEnd) return true;
    if (t.type == Tok::kOp) {
      return t.op == Op::kRParen || t.op == Op::kDSemi || t.op == Op::kSemiAnd ||
             t.op == Op::kDSemiAnd;
    }
    if (t.type != Tok::kWord || t.word.parts.size() != 1 ||
        t.word.parts[0].kind != PartKind::kLiteral) {
      return false;
    }
    const std::string& s = t.word.parts[0].text;
    return s == "then" || s == "elif" || s == "else" || s == "fi" || s == "do" ||
           s == "done" || s == "esac" || s == "}";
  }

  int32_t parse_list() {
    Node list;
    list.kind = NodeKind::kList;
    skip_newlines();
    list.span.begin = peek().begin;
    while (ok() && !at_list_end()) {
      parse_and_or(&list.kids);
      if (!ok()) break;
      if (peek_op(Op::kSemi) || peek_op(Op::kAmp)) {
        take();
        skip_newlines();
      } else if (peek().type == Tok::kNewline) {
        skip_newlines();
      } else {
        break;
      }
    }
    list.span.end = pos_;
    return add_node(std::move(list));
  }

  void parse_and_or(std::vector<int32_t>* kids) {
    kids->push_back(parse_pipeline());
    while (ok() && (peek_op(Op::kAndIf) || peek_op(Op::kOrIf))) {
      take();
      skip_newlines();
      kids->push_back(parse_pipeline());
    }
  }

  int32_t parse_pipeline() {
    if (peek_plain("!")) take();
    Node pipe;
    pipe.kind = NodeKind::kPipeline;
    pipe.span.begin = peek().begin;
    pipe.kids.push_back(parse_command());
    while (ok() && (peek_op(Op::kPipe) || peek_op(Op::kPipeAmp))) {
      take();
      skip_newlines();
      pipe.kids.push_back(parse_command());
    }
    if (pipe.kids.size() == 1) return pipe.kids[0];
    pipe.span.end = pos_;
    return add_node(std::move(pipe));
  }

  bool expect_word(std::string_view word, std::string_view opener, uint32_t opened_at) {
    if (!ok()) return false;
    if (peek_plain(word)) {
      take();
      return true;
    }
    fail(peek().begin, "expected '" + std::string(word) + "' to close '" + std::string(opener) +
                           "' opened at " + where(opened_at) + ", found " + describe(peek()));
    return false;
  }

  bool expect_op(Op op, std::string_view what, uint32_t opened_at) {
    if (!ok()) return false;
    if (peek_op(op)) {
      take();
      return true;
    }
    fail(peek().begin, "expected '" + std::string(op_text(op)) + "' " + std::string(what) +
                           " (opened at " + where(opened_at) + "), found " + describe(peek()));
    return false;
  }

  int32_t parse_command() {
    const Token& t = peek();
    uint32_t begin = t.begin;
    if (!enter(begin)) return -1;
    int32_t out = -1;
    if (t.type == Tok::kWord && t.word.parts.size() == 1 &&
        t.word.parts[0].kind == PartKind::kLiteral) {
      const std::string s = t.word.parts[0].text;
      if (s == "if") {
        out = parse_if();
      } else if (s == "while" || s == "until") {
        out = parse_loop();
      } else if (s == "for" || s == "select") {
        out = parse_for();
      } else if (s == "case") {
        out = parse_case();
      } else if (s == "{") {
        take();
        Node g;
        g.kind = NodeKind::kGroup;
        g.span.begin = begin;
        g.kids.push_back(parse_list());
        expect_word("}", "{", begin);
        g.span.end = pos_;
        out = add_node(std::move(g));
      } else if (s == "function") {
        out = parse_function();
      } else if (s == "[[") {
        out = parse_test();
      } else if (s == "then" || s == "elif" || s == "else" || s == "fi" || s == "do" ||
                 s == "done" || s == "esac" || s == "}" || s == "in") {
        unexpected(t);
      } else {
        out = parse_simple();
      }
    } else if (t.type == Tok::kOp && t.op == Op::kLParen) {
      if (at(t.begin + 1) == '(') {
        out = parse_arith_command(t.begin);
      } else {
        take();
        Node sub;
        sub.kind = NodeKind::kSubshell;
        sub.span.begin = begin;
        sub.kids.push_back(parse_list());
        expect_op(Op::kRParen, "to close the subshell", begin);
        sub.span.end = pos_;
        out = add_node(std::move(sub));
      }
    } else if (t.type == Tok::kWord || t.type == Tok::kIoNumber ||
               (t.type == Tok::kOp && is_redirect_op(t.op))) {
      out = parse_simple();
    } else {
      unexpected(t);
    }
    // Redirections after a compound command.
    if (ok() && out >= 0 && ast_.nodes[static_cast<size_t>(out)].kind != NodeKind::kSimple) {
      std::vector<Redirect> redirs;
      while (ok() && (peek().type == Tok::kIoNumber ||
                      (peek().type == Tok::kOp && is_redirect_op(peek().op)))) {
        parse_redirect(&redirs);
      }
      if (!redirs.empty()) {
        Node& n = ast_.nodes[static_cast<size_t>(out)];
        for (Redirect& r : redirs) n.redirs.push_back(std::move(r));
      }
    }
    leave();
    return out;
  }

  // ((...)): scanned to the matching "))".
  int32_t parse_arith_command(uint32_t begin) {
    has_peek_ = false;
    pos_ = begin + 2;
    int depth = 0;
    while (pos_ < text_.size()) {
      char c = text_[pos_];
      if (c == '(') {
        ++depth;
      } else if (c == ')') {
        if (depth == 0 && at(pos_ + 1) == ')') {
          pos_ += 2;
          Node n;
          n.kind = NodeKind::kTest;
          n.span = {begin, pos_};
          return add_node(std::move(n));
        }
        --depth;
      }
      ++pos_;
    }
    fail(begin, "unterminated ((");
    return -1;
  }

  static bool assignment_split(const Word& w, std::string* name, Word* value) {
    if (w.parts.empty() || w.parts[0].kind != PartKind::kLiteral) return false;
    const std::string& s = w.parts[0].text;
    size_t eq = s.find('=');
    if (eq == std::string::npos || eq == 0) return false;
    std::string_view n(s.data(), eq);
    if (!n.empty() && n.back() == '+') n.remove_suffix(1);
    size_t bracket = n.find('[');
    if (bracket != std::string_view::npos && n.back() == ']') n = n.substr(0, bracket);
    if (!is_valid_name(n)) return false;
    name->assign(n);
    value->span = w.span;
    value->span.begin += static_cast<uint32_t>(eq + 1);
    if (eq + 1 < s.size()) {
      WordPart first;
      first.kind = PartKind::kLiteral;
      first.text = s.substr(eq + 1);
      value->parts.push_back(std::move(first));
    }
    for (size_t i = 1; i < w.parts.size(); ++i) value->parts.push_back(w.parts[i]);
    return true;
  }

  int32_t parse_simple() {
    Node n;
    n.kind = NodeKind::kSimple;
    n.span.begin = peek().begin;
    for (;;) {
      if (!ok()) return -1;
      const Token& t = peek();
      if (t.type == Tok::kIoNumber || (t.type == Tok::kOp && is_redirect_op(t.op))) {
        parse_redirect(&n.redirs);
      } else if (t.type == Tok::kWord) {
        Token w = take();
        std::string name;
        Word value;
        if (n.words.empty() && assignment_split(w.word, &name, &value)) {
          n.assign_names.push_back(std::move(name));
          n.assign_values.push_back(std::move(value));
          continue;
        }
        n.words.push_back(std::move(w.word));
        if (n.words.size() == 1 && n.assign_names.empty() && n.redirs.empty() &&
            peek_op(Op::kLParen)) {
          return parse_function_body(std::move(n.words[0]), n.span.begin, true);
        }
      } else {
        break;
      }
    }
    if (n.words.empty() && n.assign_names.empty() && n.redirs.empty()) {
      unexpected(peek());
      return -1;
    }
    n.span.end = pos_;
    return add_node(std::move(n));
  }

  // A function's body after its name: NAME ( ) compound-command, or
  // `function NAME compound-command` (`parens` false).
  int32_t parse_function_body(Word name, uint32_t begin, bool parens) {
    if (parens) {
      take();
      if (!expect_op(Op::kRParen, "after the function name", begin)) return -1;
    }
    skip_newlines();
    Node f;
    f.kind = NodeKind::kFunction;
    f.span.begin = begin;
    if (!name.parts.empty()) f.name = name.parts[0].text;
    f.kids.push_back(parse_command());
    f.span.end = pos_;
    return add_node(std::move(f));
  }

  int32_t parse_function() {
    uint32_t begin = take().begin;
    if (peek().type != Tok::kWord) {
      unexpected(peek());
      return -1;
    }
    Token name = take();
    return parse_function_body(std::move(name.word), begin, peek_op(Op::kLParen));
  }

  void parse_redirect(std::vector<Redirect>* out) {
    Redirect r;
    r.span.begin = peek().begin;
    if (peek().type == Tok::kIoNumber) r.fd = take().io;
    Token op = take();
    if (op.type != Tok::kOp || !is_redirect_op(op.op)) {
      unexpected(op);
      return;
    }
    if (peek().type != Tok::kWord) {
      fail(peek().begin, "expected a word after '" + std::string(op_text(op.op)) + "', found " +
                             describe(peek()));
      return;
    }
    Token target = take();
    r.target = std::move(target.word);
    r.span.end = target.end;
    switch (op.op) {
      case Op::kLess: r.kind = RedirKind::kIn; break;
      case Op::kGreat:
      case Op::kClobber: r.kind = RedirKind::kOut; break;
      case Op::kDGreat: r.kind = RedirKind::kAppend; break;
      case Op::kAndGreat: r.kind = RedirKind::kOutErr; break;
      case Op::kAndDGreat: r.kind = RedirKind::kAppendErr; break;
      case Op::kLessGreat: r.kind = RedirKind::kReadWrite; break;
      case Op::kLessAnd: r.kind = RedirKind::kDupIn; break;
      case Op::kTLess: r.kind = RedirKind::kHereString; break;
      case Op::kGreatAnd: {
        bool fd_like = r.target.parts.size() == 1 && r.target.parts[0].kind == PartKind::kLiteral;
        if (fd_like) {
          for (char c : r.target.parts[0].text) fd_like = fd_like && ((c >= '0' && c <= '9') || c == '-');
        }
        r.kind = fd_like ? RedirKind::kDupOut : RedirKind::kOutErr;
        break;
      }
      case Op::kDLess:
      case Op::kDLessDash: {
        r.kind = RedirKind::kHereDoc;
        PendingHeredoc doc;
        doc.strip_tabs = op.op == Op::kDLessDash;
        doc.expands = true;
        for (const WordPart& p : r.target.parts) {
          if (p.kind != PartKind::kLiteral) doc.expands = false;
          doc.delimiter += p.text;
        }
        doc.at = r.span.begin;
        doc.index = static_cast<int32_t>(ast_.heredoc_substitutes.size());
        ast_.heredoc_substitutes.push_back(0);
        r.heredoc = doc.index;
        pending_.push_back(std::move(doc));
        break;
      }
      default:
        break;
    }
    out->push_back(std::move(r));
  }

  int32_t parse_if() {
    uint32_t begin = take().begin;
    Node n;
    n.kind = NodeKind::kIf;
    n.span.begin = begin;
    n.kids.push_back(parse_list());
    if (!expect_word("then", "if", begin)) return -1;
    n.kids.push_back(parse_list());
    while (ok() && peek_plain("elif")) {
      take();
      n.kids.push_back(parse_list());
      if (!expect_word("then", "elif", begin)) return -1;
      n.kids.push_back(parse_list());
    }
    if (ok() && peek_plain("else")) {
      take();
      n.kids.push_back(parse_list());
    }
    if (!expect_word("fi", "if", begin)) return -1;
    n.span.end = pos_;
    return add_node(std::move(n));
  }

  // `do LIST done`, closing a loop opened by `keyword` at `begin`.
  int32_t finish_loop(Node&& n, std::string_view keyword, uint32_t begin) {
    if (!expect_word("do", keyword, begin)) return -1;
    n.kids.push_back(parse_list());
    if (!expect_word("done", keyword, begin)) return -1;
    n.span.end = pos_;
    return add_node(std::move(n));
  }

  int32_t parse_loop() {
    Token kw = take();
    Node n;
    n.kind = NodeKind::kLoop;
    n.span.begin = kw.begin;
    n.kids.push_back(parse_list());
    return finish_loop(std::move(n), kw.word.parts[0].text, kw.begin);
  }

  int32_t parse_for() {
    Token kw = take();
    uint32_t begin = kw.begin;
    std::string keyword = kw.word.parts[0].text;
    Node n;
    n.kind = NodeKind::kFor;
    n.span.begin = begin;
    if (peek_op(Op::kLParen) && at(peek().begin + 1) == '(') {
      // for ((i = 0; i < n; i++))
      parse_arith_command(peek().begin);
      n.for_has_in = true;  // no variable to bind
    } else {
      if (peek().type != Tok::kWord) {
        fail(peek().begin, "expected a variable name after '" + keyword + "', found " +
                               describe(peek()));
        return -1;
      }
      Token var = take();
      if (!var.word.parts.empty()) n.name = var.word.parts[0].text;
      skip_newlines();
      if (peek_plain("in")) {
        take();
        n.for_has_in = true;
        while (ok() && peek().type == Tok::kWord) n.words.push_back(take().word);
      }
    }
    if (ok() && (peek_op(Op::kSemi) || peek().type == Tok::kNewline)) take();
    skip_newlines();
    return finish_loop(std::move(n), keyword, begin);
  }

  int32_t parse_case() {
    uint32_t begin = take().begin;
    Node n;
    n.kind = NodeKind::kCase;
    n.span.begin = begin;
    if (peek().type != Tok::kWord) {
      fail(peek().begin, "expected a word after 'case', found " + describe(peek()));
      return -1;
    }
    n.words.push_back(take().word);
    skip_newlines();
    if (!expect_word("in", "case", begin)) return -1;
    skip_newlines();
    while (ok()) {
      if (peek_plain("esac")) {
        take();
        n.span.end = pos_;
        return add_node(std::move(n));
      }
      if (peek().type == Tok::kEnd) break;
      if (peek_op(Op::kLParen)) take();
      if (peek().type != Tok::kWord) {
        fail(peek().begin, "expected a case pattern, found " + describe(peek()));
        return -1;
      }
      take();
      while (ok() && peek_op(Op::kPipe)) {
        take();
        if (peek().type != Tok::kWord) {
          fail(peek().begin, "expected a case pattern after '|', found " + describe(peek()));
          return -1;
        }
        take();
      }
      if (!expect_op(Op::kRParen, "after the case pattern", begin)) return -1;
      n.kids.push_back(parse_list());
      if (ok() && (peek_op(Op::kDSemi) || peek_op(Op::kSemiAnd) || peek_op(Op::kDSemiAnd))) {
        take();
      }
      skip_newlines();
    }
    expect_word("esac", "case", begin);
    return -1;
  }

  int32_t parse_test() {
    uint32_t begin = take().begin;
    Node n;
    n.kind = NodeKind::kTest;
    n.span.begin = begin;
    while (ok()) {
      const Token& t = peek();
      if (t.type == Tok::kEnd) {
        fail(begin, "'[[' has no closing ']]'");
        return -1;
      }
      if (t.type == Tok::kWord && t.word.is_plain("]]")) {
        take();
        break;
      }
      Token any = take();
      if (any.type == Tok::kWord) n.words.push_back(std::move(any.word));
    }
    n.span.end = pos_;
    return add_node(std::move(n));
  }

  std::string_view text_;
  uint32_t pos_ = 0;
  int depth_ = 0;
  Status error_;
  ShellAst ast_;
  bool has_peek_ = false;
  Token peek_;
  std::vector<PendingHeredoc> pending_;
};

void override_spans(ShellAst* ast, const ShellSpan& span) {
  auto fix_word = [&](Word& w) { w.span = span; };
  for (Node& n : ast->nodes) {
    n.span = span;
    for (Word& w : n.words) fix_word(w);
    for (Word& w : n.assign_values) fix_word(w);
    for (Redirect& r : n.redirs) {
      r.span = span;
      fix_word(r.target);
    }
  }
}

}  // namespace

Result<ShellAst> parse_shell(std::string_view text, int depth, const ShellSpan* span_override) {
  Parser parser(text, depth);
  Result<ShellAst> ast = parser.run();
  if (ast.ok() && span_override != nullptr) override_spans(&ast.value(), *span_override);
  return ast;
}

}  // namespace weft::source::shell
