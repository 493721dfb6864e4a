// Shell hooks: enforcement levels, the [shell] table, command-line checks,
// rule checks of predicted and observed changes, and metadata snapshots.
#include "weft/source/shell_hooks.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <toml++/toml.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "weft/base/input_file.h"
#include "weft/base/utf.h"
#include "weft/source/file_block.h"

namespace weft::source {
namespace {

constexpr size_t kMaxConfigBytes = size_t{1} << 20;
// Files larger than this are compared by metadata only.
constexpr int64_t kMaxHashBytes = int64_t{16} << 20;

std::string join(const std::string& dir, const std::string& name) {
  return dir.empty() ? name : dir + "/" + name;
}

bool under(std::string_view path, std::string_view dir) {
  return dir == "." || dir.empty() ||
         (path.size() > dir.size() && path.substr(0, dir.size()) == dir && path[dir.size()] == '/');
}

std::optional<std::string> hash_file(const std::string& full) {
  int fd = ::open(full.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return std::nullopt;
  std::string bytes;
  char buf[65536];
  while (true) {
    ssize_t got = ::read(fd, buf, sizeof buf);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    bytes.append(buf, static_cast<size_t>(got));
    if (static_cast<int64_t>(bytes.size()) > kMaxHashBytes) {
      ::close(fd);
      return std::nullopt;
    }
  }
  ::close(fd);
  return content_hash(bytes);
}

}  // namespace

// ---------------------------------------------------------------- levels, settings

std::string_view enforcement_name(Enforcement level) {
  switch (level) {
    case Enforcement::kStrict: return "strict";
    case Enforcement::kWarned: return "warned";
    case Enforcement::kAudit: return "audit";
    case Enforcement::kNone: return "none";
  }
  return "unknown";
}

Result<Enforcement> parse_enforcement(std::string_view name) {
  for (Enforcement e : {Enforcement::kStrict, Enforcement::kWarned, Enforcement::kAudit,
                        Enforcement::kNone}) {
    if (enforcement_name(e) == name) return e;
  }
  return invalid_argument("unknown enforcement level '" + std::string(name) +
                          "'; use strict, warned, audit or none");
}

Result<ShellSettings> parse_shell_settings(std::string_view toml_text,
                                           std::string_view source_name) {
  toml::table doc;
  try {
    doc = toml::parse(toml_text, source_name);
  } catch (const toml::parse_error& e) {
    return invalid_argument(std::string(source_name) + ":" +
                            std::to_string(e.source().begin.line) + ": " +
                            std::string(e.description()));
  }
  ShellSettings out;
  const toml::node* shell = doc.get("shell");
  if (!shell) return out;
  auto at = [&](const toml::node& n) {
    return std::string(source_name) + ":" + std::to_string(n.source().begin.line) + ": ";
  };
  if (!shell->is_table()) return invalid_argument(at(*shell) + "[shell] must be a table");
  const toml::table& t = *shell->as_table();
  if (const toml::node* e = t.get("enforcement")) {
    auto name = e->value<std::string>();
    if (!name) {
      return invalid_argument(at(*e) +
                              "shell.enforcement must be a string: strict, warned, audit or none");
    }
    auto level = parse_enforcement(*name);
    if (!level.ok()) return invalid_argument(at(*e) + std::string(level.status().message()));
    out.enforcement = *level;
  }
  if (const toml::node* n = t.get("network")) {
    auto on = n->value<bool>();
    if (!on || !n->is_boolean()) {
      return invalid_argument(at(*n) + "shell.network must be true or false");
    }
    out.network = *on;
  }
  return out;
}

Result<ShellSettings> load_shell_settings(const std::string& root) {
  const std::string path = root + "/" + std::string(kConfigFileName);
  Result<std::string> text =
      read_regular_file(path, "configuration file", static_cast<int64_t>(kMaxConfigBytes));
  if (!text.ok()) {
    if (text.status().code() == StatusCode::kNotFound) return ShellSettings{};
    return unavailable(std::string(text.status().message()));
  }
  return parse_shell_settings(*text);
}

// ---------------------------------------------------------------- command line

Status check_command_line(std::string_view command) {
  if (command.empty()) return invalid_argument("the command is empty; give a shell command line");
  if (command.size() > kMaxCommandBytes) {
    return invalid_argument("the command is " + std::to_string(command.size()) +
                            " bytes, over the limit of " + std::to_string(kMaxCommandBytes) +
                            "; put a long script in a file and run that");
  }
  size_t nul = command.find('\0');
  if (nul != std::string_view::npos) {
    return invalid_argument("the command holds a NUL byte at offset " + std::to_string(nul) +
                            "; a shell command line cannot contain one");
  }
  if (!is_valid_utf8(command)) return invalid_argument("the command is not valid UTF-8");
  // sh's quoting, enough to tell a line sh would reject for an open quote:
  // a stack of contexts ('\'', '"', '`', '(' for $( ... )), comments and
  // here-documents (whose bodies are not quoted text).
  std::vector<char> stack;
  std::vector<std::pair<std::string, bool>> heredocs;  // delimiter, strip tabs
  size_t i = 0;
  const size_t n = command.size();
  auto top = [&] { return stack.empty() ? '\0' : stack.back(); };
  auto open_error = [&](char q, size_t at) {
    std::string what = q == '\'' ? "single quote (')" : q == '"' ? "double quote (\")"
                       : q == '`' ? "backquote (`)" : "$( without its )";
    return invalid_argument("the command has an unbalanced " + what + " opened at offset " +
                            std::to_string(at) + "; nothing was run");
  };
  std::vector<size_t> opened;  // where each context began, for the message
  auto push = [&](char context) {
    stack.push_back(context);
    opened.push_back(i);
  };
  auto pop = [&] {
    stack.pop_back();
    opened.pop_back();
  };
  bool word_start = true;
  while (i < n) {
    char c = command[i];
    char ctx = top();
    if (ctx == '\'') {
      if (c == '\'') {
        pop();
      }
      ++i;
      continue;
    }
    if (c == '\\') {
      if (i + 1 >= n) return invalid_argument("the command ends with a lone backslash");
      i += 2;
      word_start = false;
      continue;
    }
    if (ctx == '"') {
      if (c == '"') {
        pop();
      } else if (c == '`') {
        push('`');
      } else if (c == '$' && i + 1 < n && command[i + 1] == '(') {
        push('(');
        ++i;
      }
      ++i;
      continue;
    }
    // Unquoted (top level, inside `...` or $(...)).
    if (c == '#' && word_start) {
      while (i < n && command[i] != '\n') ++i;
      continue;
    }
    if (c == '\n' && !heredocs.empty() && ctx == '\0') {
      ++i;
      for (const auto& [delim, strip] : heredocs) {
        bool found = false;
        while (i < n) {
          size_t end = command.find('\n', i);
          if (end == std::string_view::npos) end = n;
          std::string_view line = command.substr(i, end - i);
          if (strip) {
            while (!line.empty() && line.front() == '\t') line.remove_prefix(1);
          }
          i = end < n ? end + 1 : n;
          if (line == delim) {
            found = true;
            break;
          }
        }
        if (!found) {
          return invalid_argument("the here-document ending with '" + delim +
                                  "' has no closing line; nothing was run");
        }
      }
      heredocs.clear();
      word_start = true;
      continue;
    }
    if (c == '<' && i + 2 < n && command[i + 1] == '<' && command[i + 2] == '<') {
      i += 3;  // a here-string (bash): the word follows as usual
      word_start = true;
      continue;
    }
    if (c == '<' && ctx == '\0' && i + 2 < n && command[i + 1] == '<') {
      size_t j = i + 2;
      bool strip = false;
      if (command[j] == '-') {
        strip = true;
        ++j;
      }
      while (j < n && (command[j] == ' ' || command[j] == '\t')) ++j;
      std::string delim;
      while (j < n && !std::strchr(" \t\n;&|<>()", command[j])) {
        if (command[j] != '\'' && command[j] != '"' && command[j] != '\\') delim += command[j];
        ++j;
      }
      if (delim.empty()) return invalid_argument("a here-document (<<) has no delimiter word");
      heredocs.emplace_back(delim, strip);
      i = j;
      word_start = false;
      continue;
    }
    if (c == '\'' || c == '"') {
      push(c);
    } else if (c == '`') {
      if (ctx == '`') {
        pop();
      } else {
        push('`');
      }
    } else if (c == '$' && i + 1 < n && command[i + 1] == '(') {
      push('(');
      ++i;
    } else if (c == ')' && ctx == '(') {
      pop();
    }
    word_start = std::strchr(" \t\n;&|()<>", c) != nullptr;
    ++i;
  }
  if (!stack.empty()) return open_error(stack.back(), opened.back());
  if (!heredocs.empty()) {
    return invalid_argument("the here-document ending with '" + heredocs.front().first +
                            "' has no body; nothing was run");
  }
  return Status();
}

// ---------------------------------------------------------------- rules

std::string describe_violation(const ShellViolation& v) {
  std::string rule = v.rule == "default" ? "the default level" : v.rule;
  return std::string(file_op_name(v.op)) + " of '" + v.path + "' " +
         (v.needs_approval ? "needs a person's approval" : "is not allowed") + " (" + rule + ")";
}

namespace {

std::optional<ShellViolation> violation_of(const WorkspaceRules& rules, const std::string& path,
                                           FileOp op) {
  RuleDecision d = rules.decide(path, op);
  if (d.decision == doc::PermissionDecision::kAllowed) return std::nullopt;
  return ShellViolation{path, op, d.reason,
                        d.decision == doc::PermissionDecision::kNeedsApproval};
}

}  // namespace

std::vector<ShellViolation> check_changes(const ShellChanges& changes,
                                          const WorkspaceRules& rules) {
  std::vector<ShellViolation> out;
  auto check = [&](const std::vector<std::string>& paths, FileOp op) {
    for (const std::string& p : paths) {
      if (auto v = violation_of(rules, p, op)) out.push_back(std::move(*v));
    }
  };
  check(changes.created, FileOp::kCreate);
  check(changes.modified, FileOp::kOverwrite);
  check(changes.deleted, FileOp::kDelete);
  std::sort(out.begin(), out.end(),
            [](const ShellViolation& a, const ShellViolation& b) { return a.path < b.path; });
  return out;
}

bool is_protected(const WorkspaceRules& rules, std::string_view path) {
  for (FileOp op : {FileOp::kOverwrite, FileOp::kDelete}) {
    RuleDecision d = rules.decide(path, op);
    if (d.decision == doc::PermissionDecision::kDenied) return true;
    // An approval that the rule asks for the op itself (not only for delete).
    if (op == FileOp::kOverwrite && d.decision == doc::PermissionDecision::kNeedsApproval) {
      return true;
    }
  }
  return false;
}

// ---------------------------------------------------------------- snapshots

std::optional<FileMeta> stat_meta(const std::string& root, const std::string& path) {
  struct stat st;
  if (::lstat((root + "/" + path).c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  FileMeta m;
  m.size = st.st_size;
  m.mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
  m.inode = st.st_ino;
  m.links = st.st_nlink;
  return m;
}

FileMetaIndex::FileMetaIndex(std::string root, Ignored ignored)
    : root_(std::move(root)), ignored_(std::move(ignored)) {
  while (root_.size() > 1 && root_.back() == '/') root_.pop_back();
}

void FileMetaIndex::walk(const std::string& dir, std::map<std::string, FileMeta>* out) const {
  std::vector<std::string> stack{dir};
  while (!stack.empty()) {
    std::string rel = std::move(stack.back());
    stack.pop_back();
    std::string full = rel.empty() ? root_ : root_ + "/" + rel;
    int dfd = ::open(full.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dfd < 0) continue;
    DIR* listing = ::fdopendir(dfd);
    if (!listing) {
      ::close(dfd);
      continue;
    }
    while (const dirent* ent = ::readdir(listing)) {
      std::string name = ent->d_name;
      if (name == "." || name == "..") continue;
      struct stat st;
      if (::fstatat(dfd, ent->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
      std::string child = join(rel, name);
      bool is_dir = S_ISDIR(st.st_mode);
      if (ignored_ && ignored_(child, is_dir)) continue;
      if (is_dir) {
        stack.push_back(child);
      } else if (S_ISREG(st.st_mode)) {
        FileMeta m;
        m.size = st.st_size;
        m.mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
        m.inode = st.st_ino;
        m.links = st.st_nlink;
        (*out)[child] = m;
      }
    }
    ::closedir(listing);
  }
}

Status FileMetaIndex::build() {
  struct stat st;
  if (::stat(root_.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return unavailable("cannot index '" + root_ + "': " + std::strerror(errno));
  }
  files_.clear();
  walk("", &files_);
  built_ = true;
  ++generation_;
  return Status();
}

void FileMetaIndex::drop_under(const std::string& dir) {
  auto it = files_.lower_bound(dir + "/");
  while (it != files_.end() && under(it->first, dir)) it = files_.erase(it);
}

void FileMetaIndex::refresh(const std::vector<FileChange>& changes) {
  if (!built_) return;
  for (const FileChange& c : changes) {
    if (c.kind == FileChange::Kind::kRescan) {
      (void)build();
      return;
    }
    std::vector<std::string> paths{c.path};
    if (c.kind == FileChange::Kind::kRenamed) paths.push_back(c.from);
    for (const std::string& p : paths) (void)update({p});
  }
}

ShellChanges FileMetaIndex::update(const std::vector<std::string>& paths) {
  ShellChanges out;
  auto settle = [&](const std::string& p, std::optional<FileMeta> now) {
    auto it = files_.find(p);
    if (!now) {
      if (it != files_.end()) {
        out.deleted.push_back(p);
        files_.erase(it);
        ++generation_;
      }
      return;
    }
    if (it == files_.end()) {
      if (auto h = hash_file(root_ + "/" + p)) now->hash = *h;
      out.created.push_back(p);
      files_.emplace(p, std::move(*now));
      ++generation_;
      return;
    }
    if (it->second == *now) return;
    if (auto h = hash_file(root_ + "/" + p)) now->hash = *h;
    bool same_bytes = !now->hash.empty() && now->hash == it->second.hash;
    if (!same_bytes) out.modified.push_back(p);
    it->second = std::move(*now);
  };
  // Other names of multiply linked files among the paths.
  std::vector<std::string> all = paths;
  std::vector<uint64_t> linked;
  for (const std::string& p : paths) {
    if (p == "." || p.empty()) continue;
    auto now = stat_meta(root_, p);
    auto known = files_.find(p);
    if (now && now->links > 1) linked.push_back(now->inode);
    if (known != files_.end() && known->second.links > 1) linked.push_back(known->second.inode);
  }
  if (!linked.empty()) {
    for (const auto& [path, meta] : files_) {
      if (std::find(linked.begin(), linked.end(), meta.inode) != linked.end()) all.push_back(path);
    }
  }
  for (const std::string& raw : all) {
    std::string p = raw == "." ? "" : raw;
    struct stat st;
    bool is_dir = ::lstat((p.empty() ? root_ : root_ + "/" + p).c_str(), &st) == 0 &&
                  S_ISDIR(st.st_mode);
    if (!p.empty() && ignored_ && ignored_(p, is_dir)) continue;
    // What the index held under it, compared with what is there now.
    std::map<std::string, FileMeta> now;
    if (is_dir) walk(p, &now);
    std::vector<std::string> known;
    for (auto it = files_.lower_bound(p.empty() ? p : p + "/");
         it != files_.end() && (p.empty() || under(it->first, p)); ++it) {
      known.push_back(it->first);
    }
    for (const std::string& k : known) {
      auto found = now.find(k);
      settle(k, found == now.end() ? std::nullopt : std::optional<FileMeta>(found->second));
    }
    for (auto& [k, m] : now) {
      if (!files_.count(k)) settle(k, m);
    }
    if (!is_dir && !p.empty()) settle(p, stat_meta(root_, p));
  }
  for (auto* v : {&out.created, &out.modified, &out.deleted}) {
    std::sort(v->begin(), v->end());
    v->erase(std::unique(v->begin(), v->end()), v->end());
  }
  return out;
}

Protection FileMetaIndex::protection(const WorkspaceRules& rules) {
  std::string key = std::string(doc::memory_permission_name(rules.default_level()));
  for (const PermissionRule& r : rules.rules()) {
    key += '\n' + r.glob + '\t' + std::string(doc::memory_permission_name(r.level));
    for (FileOp op : r.escalate) key += ',' + std::string(file_op_name(op));
  }
  if (key == protection_key_ && protection_generation_ == generation_) return protection_;
  Protection out;
  const auto& list = rules.rules();
  std::vector<std::string> whole;  // directories bound as a whole
  auto literal_prefix = [](const std::string& glob) {
    size_t meta = glob.find_first_of("*?[{\\");
    std::string lit = glob.substr(0, meta);
    if (meta != std::string::npos) {
      size_t slash = lit.rfind('/');
      lit = slash == std::string::npos ? "" : lit.substr(0, slash);
    }
    return lit;
  };
  auto overlaps = [&](const std::string& a, const std::string& b) {
    return a.empty() || b.empty() || a == b || under(a, b) || under(b, a);
  };
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string& g = list[i].glob;
    std::string probe_name = "\x01probe";
    bool dir_glob = g.size() > 3 && g.compare(g.size() - 3, 3, "/**") == 0 &&
                    g.substr(0, g.size() - 3).find_first_of("*?[{\\") == std::string::npos;
    std::string probe = g;
    for (char& c : probe) {
      if (c == '*' || c == '?' || c == '[' || c == ']' || c == '{' || c == '}') c = 'x';
    }
    RuleDecision d = rules.decide(probe, FileOp::kOverwrite);
    bool this_rule = d.reason.rfind("rule " + std::to_string(i + 1) + " ", 0) == 0;
    if (!this_rule || !is_protected(rules, probe)) continue;
    bool bound = false;
    if (dir_glob) {
      std::string dir = g.substr(0, g.size() - 3);
      bool shadowed = false;
      for (size_t j = 0; j < i && !shadowed; ++j) {
        shadowed = overlaps(literal_prefix(list[j].glob), dir);
      }
      struct stat st;
      if (!shadowed && is_protected(rules, dir + "/" + probe_name) &&
          ::lstat((root_ + "/" + dir).c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
        whole.push_back(dir);
        bound = true;
      }
    }
    if (!bound) {
      out.not_protected.push_back(g + " (rule " + std::to_string(i + 1) +
                                  "): files it matches that do not exist before the command");
    }
  }
  if (is_protected(rules, "\x01probe")) {
    out.not_protected.push_back(
        "the default level: files no rule matches that do not exist before the command");
  }
  std::sort(whole.begin(), whole.end());
  out.read_only = whole;
  for (const auto& entry : files_) {
    const std::string& path = entry.first;
    bool covered = std::any_of(whole.begin(), whole.end(),
                               [&](const std::string& d) { return under(path, d); });
    if (!covered && is_protected(rules, path)) out.read_only.push_back(path);
  }
  for (std::string_view config : {kConfigFileName, kIgnoreFileName}) {
    std::string c(config);
    if (!files_.count(c) && !stat_meta(root_, c)) {
      out.not_protected.push_back(c + " (weft's own configuration): created, it is removed after");
    } else if (!files_.count(c)) {
      out.read_only.push_back(c);
    }
  }
  protection_ = out;
  protection_key_ = std::move(key);
  protection_generation_ = generation_;
  return out;
}

}  // namespace weft::source
