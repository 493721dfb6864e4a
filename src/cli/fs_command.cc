// `weft fs <op> --root DIR ...`: the filesystem protocol (weft/fs) on a host
// directory, for people (human output) and scripts (--json). Snapshots go to
// the default store ($XDG_STATE_HOME/weft/snapshots/...) unless --git-dir.
#include <fstream>
#include <iostream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/command_registry.h"
#include "weft/base/input_file.h"
#include "weft/fs/change_lock.h"
#include "weft/fs/filesystem.h"
#include "weft/fs/path.h"

namespace weft::cli {
namespace {

using nlohmann::json;
using namespace weft::fs;  // NOLINT: a CLI file over one layer

struct FsOptions {
  std::string root = ".";
  std::string git_dir;
  std::string state;
  bool json = false;
  bool read_only = false;
};

json to_json(const FileStat& s) {
  json j = {{"path", s.path},
            {"is_file", s.is_file},
            {"is_directory", s.is_directory},
            {"type", std::string(file_type_name(s.type))},
            {"size_bytes", s.size_bytes},
            {"created_at", s.created_at ? json(format_time(*s.created_at)) : json(nullptr)},
            {"modified_at", s.modified_at ? json(format_time(*s.modified_at)) : json(nullptr)}};
  if (s.symlink_target) j["symlink_target"] = *s.symlink_target;
  return j;
}

json to_json(const FilesystemSnapshot& s) { return json::parse(snapshot_to_json(s)); }

void emit(const json& j) {
  std::cout << j.dump(-1, ' ', false, json::error_handler_t::replace) << "\n";
}

// Opens the filesystem for a command; on error reports it and returns null.
// A command that `changes` the workspace takes the root's change lock.
std::unique_ptr<Filesystem> open_fs(const FsOptions& c, bool changes = false) {
  HostOptions o;
  o.read_only = c.read_only;
  if (!c.git_dir.empty()) o.git_dir = c.git_dir;
  if (changes && !c.read_only) {
    std::optional<std::string> state;
    if (!c.state.empty()) state = c.state;
    auto lock = open_root_change_lock(c.root, state);
    if (!lock.ok()) {
      fail(lock.status());
      return nullptr;
    }
    if (!lock->warning.empty()) std::cerr << "weft fs: warning: " << lock->warning << "\n";
    o.change_lock = std::move(lock->lock);
  }
  auto fs = make_host_filesystem(c.root, o);
  if (!fs.ok()) {
    fail(fs.status());
    return nullptr;
  }
  return std::move(*fs);
}

// Reports `s` (if an error) and records the exit code; true when OK.
bool done(const Status& s) {
  if (!s.ok()) {
    fail(s);
    return false;
  }
  set_exit_code(kExitOk);
  return true;
}

CLI::App* sub(CLI::App* parent, const std::shared_ptr<FsOptions>& c, const char* name,
              const char* help) {
  auto* cmd = parent->add_subcommand(name, help);
  cmd->add_option("--root", c->root, "Workspace root directory (default: .)");
  cmd->add_flag("--json", c->json, "Print JSON instead of human-readable text");
  cmd->add_flag("--read-only", c->read_only, "Refuse every change");
  cmd->add_option("--git-dir", c->git_dir, "Snapshot store (default: under $XDG_STATE_HOME/weft)");
  cmd->add_option("--state", c->state, kStateHelp);
  return cmd;
}

void setup_reads(CLI::App* fs_cmd) {
  {
    auto c = std::make_shared<FsOptions>();
    struct A {
      std::string path;
      int64_t offset = 0;
      int64_t limit = 0;
      bool bytes = false;
    };
    auto a = std::make_shared<A>();
    auto* cmd = sub(fs_cmd, c, "read", "Print a file (lines OFFSET.. of it)");
    cmd->add_option("PATH", a->path)->required();
    cmd->add_option("--offset", a->offset, "First line (0-based; bytes with --bytes)");
    cmd->add_option("--limit", a->limit, "Lines (bytes with --bytes) to print");
    cmd->add_flag("--bytes", a->bytes, "Read raw bytes (binary files)");
    cmd->callback([c, a] {
      auto fs = open_fs(*c);
      if (!fs) return;
      std::optional<int64_t> limit;
      if (a->limit) limit = a->limit;
      if (a->bytes) {
        auto r = fs->read_bytes(a->path, a->offset, limit);
        if (!done(r.status())) return;
        if (c->json) {
          emit({{"path", r->path},
                {"size_bytes", r->size_bytes},
                {"offset", r->offset},
                {"limit", r->limit},
                {"truncated", r->truncated},
                {"content", r->content}});
        } else {
          std::cout << r->content;
        }
        return;
      }
      auto r = fs->read(a->path, a->offset, limit);
      if (!done(r.status())) return;
      if (c->json) {
        json cut = json::array();
        for (const CutLine& l : r->cut_lines) {
          cut.push_back({{"line", l.line}, {"length_bytes", l.length_bytes}});
        }
        emit({{"path", r->path},
              {"content", r->content},
              {"total_lines", r->total_lines},
              {"offset", r->offset},
              {"limit", r->limit},
              {"lines", r->lines},
              {"truncated", r->truncated},
              {"cut_lines", std::move(cut)}});
      } else {
        std::cout << r->content;
        for (const CutLine& l : r->cut_lines) {
          std::cerr << "weft: line " << l.line << " (" << l.length_bytes
                    << " bytes) was cut; use --bytes to read all of it\n";
        }
        if (r->truncated) {
          std::cerr << "weft: showed lines " << r->offset << ".." << r->offset + r->lines << " of "
                    << r->total_lines << "; use --offset " << r->offset + r->lines << " for more\n";
        }
      }
    });
  }
  {
    auto c = std::make_shared<FsOptions>();
    auto path = std::make_shared<std::string>(".");
    auto* cmd = sub(fs_cmd, c, "ls", "List a directory");
    cmd->add_option("PATH", *path);
    cmd->callback([c, path] {
      auto fs = open_fs(*c);
      if (!fs) return;
      auto r = fs->list(*path);
      if (!done(r.status())) return;
      json out = json::array();
      for (const auto& e : *r) {
        if (c->json) {
          json j = {{"name", e.name},
                    {"path", e.path},
                    {"is_file", e.is_file},
                    {"is_directory", e.is_directory},
                    {"type", std::string(file_type_name(e.type))}};
          if (e.symlink_target) j["symlink_target"] = *e.symlink_target;
          out.push_back(std::move(j));
        } else {
          std::cout << display_name(e.name) << file_type_mark(e.type);
          if (e.symlink_target) std::cout << " -> " << display_name(*e.symlink_target);
          std::cout << "\n";
        }
      }
      if (c->json) emit(out);
    });
  }
  {
    auto c = std::make_shared<FsOptions>();
    auto path = std::make_shared<std::string>();
    auto* cmd = sub(fs_cmd, c, "stat", "Show a path's metadata");
    cmd->add_option("PATH", *path)->required();
    cmd->callback([c, path] {
      auto fs = open_fs(*c);
      if (!fs) return;
      auto r = fs->stat(*path);
      if (!done(r.status())) return;
      json j = to_json(*r);
      if (c->json) {
        emit(j);
      } else {
        std::cout << display_name(r->path) << ": " << file_type_name(r->type);
        if (r->symlink_target) std::cout << " -> " << display_name(*r->symlink_target);
        std::cout << ", " << r->size_bytes << " bytes, modified "
                  << (r->modified_at ? format_time(*r->modified_at) : "?") << "\n";
      }
    });
  }
  {
    auto c = std::make_shared<FsOptions>();
    struct A {
      std::string pattern, path = ".";
    };
    auto a = std::make_shared<A>();
    auto* cmd = sub(fs_cmd, c, "glob", "List paths matching a glob (** spans directories)");
    cmd->add_option("PATTERN", a->pattern)->required();
    cmd->add_option("--path", a->path, "Base directory");
    cmd->callback([c, a] {
      auto fs = open_fs(*c);
      if (!fs) return;
      auto r = fs->glob(a->pattern, a->path);
      if (!done(r.status())) return;
      json out = json::array();
      for (const auto& m : *r) {
        if (c->json) {
          out.push_back({{"path", m.path},
                         {"is_file", m.is_file},
                         {"type", std::string(file_type_name(m.type))}});
        } else {
          std::cout << display_name(m.path) << file_type_mark(m.type) << "\n";
        }
      }
      if (c->json) emit(out);
    });
  }
  {
    auto c = std::make_shared<FsOptions>();
    struct A {
      std::string pattern, path = ".", glob;
      int64_t max = 0;
    };
    auto a = std::make_shared<A>();
    auto* cmd = sub(fs_cmd, c, "grep", "Search file contents with an RE2 regex");
    cmd->add_option("PATTERN", a->pattern)->required();
    cmd->add_option("--path", a->path, "Base directory or file");
    cmd->add_option("--glob", a->glob, "Only files matching this glob");
    cmd->add_option("--max", a->max, "Most matches (default 1000)");
    cmd->callback([c, a] {
      auto fs = open_fs(*c);
      if (!fs) return;
      std::optional<std::string> g;
      if (!a->glob.empty()) g = a->glob;
      std::optional<int64_t> max;
      if (a->max) max = a->max;
      auto r = fs->grep(a->pattern, a->path, g, max);
      if (!done(r.status())) return;
      json out = json::array();
      for (const auto& m : *r) {
        if (c->json) {
          out.push_back({{"path", m.path},
                         {"line_number", m.line_number},
                         {"line_content", m.line_content},
                         {"match_start", m.match_start},
                         {"match_end", m.match_end},
                         {"line_length_bytes", m.line_length_bytes},
                         {"line_content_offset_byte", m.line_content_offset_byte}});
        } else {
          std::cout << display_name(m.path) << ":" << m.line_number << ":" << m.line_content;
          if (m.line_length_bytes > static_cast<int64_t>(m.line_content.size())) {
            std::cout << " [line truncated: " << m.line_length_bytes << " bytes total]";
          }
          std::cout << "\n";
        }
      }
      if (c->json) emit(out);
      if (r->empty()) set_exit_code(kExitFailure);  // like grep: no match is exit 1
    });
  }
}

void setup_writes(CLI::App* fs_cmd) {
  {
    auto c = std::make_shared<FsOptions>();
    struct A {
      std::string path, mode = "overwrite";
      std::optional<std::string> content;
      bool no_parents = false, bytes = false;
    };
    auto a = std::make_shared<A>();
    auto* cmd =
        sub(fs_cmd, c, "write", "Write a file atomically (content from --content or stdin)");
    cmd->add_option("PATH", a->path)->required();
    cmd->add_option("--content", a->content, "The content (default: read stdin)");
    cmd->add_option("--mode", a->mode, "create, overwrite or append")
        ->check(CLI::IsMember({"create", "overwrite", "append"}));
    cmd->add_flag("--no-parents", a->no_parents, "Fail if the parent directory is missing");
    cmd->add_flag("--bytes", a->bytes, "Write raw bytes (no UTF-8 check)");
    cmd->callback([c, a] {
      auto fs = open_fs(*c, /*changes=*/true);
      if (!fs) return;
      std::string content;
      if (a->content) {
        content = *a->content;
      } else {
        content.assign(std::istreambuf_iterator<char>(std::cin), {});
      }
      WriteMode mode = *parse_write_mode(a->mode);
      auto r = a->bytes ? fs->write_bytes(a->path, content, mode, !a->no_parents)
                        : fs->write(a->path, content, mode, !a->no_parents);
      if (!done(r.status())) return;
      if (c->json) {
        emit({{"path", r->path},
              {"bytes_written", r->bytes_written},
              {"mode", std::string(write_mode_name(r->mode))}});
      } else {
        std::cout << "wrote " << r->bytes_written << " bytes to " << r->path << " ("
                  << write_mode_name(r->mode) << ")\n";
      }
    });
  }
  {
    auto c = std::make_shared<FsOptions>();
    struct A {
      std::string path;
      bool recursive = false;
    };
    auto a = std::make_shared<A>();
    auto* cmd = sub(fs_cmd, c, "rm", "Delete a file (or a directory with -r)");
    cmd->add_option("PATH", a->path)->required();
    cmd->add_flag("-r,--recursive", a->recursive, "Delete a directory and its contents");
    cmd->callback([c, a] {
      auto fs = open_fs(*c, /*changes=*/true);
      if (fs && done(fs->remove(a->path, a->recursive)) && c->json) emit({{"deleted", a->path}});
    });
  }
  {
    auto c = std::make_shared<FsOptions>();
    struct A {
      std::string path;
      bool no_parents = false, fail_if_exists = false;
    };
    auto a = std::make_shared<A>();
    auto* cmd = sub(fs_cmd, c, "mkdir", "Create a directory (and its parents)");
    cmd->add_option("PATH", a->path)->required();
    cmd->add_flag("--no-parents", a->no_parents, "Fail if the parent is missing");
    cmd->add_flag("--fail-if-exists", a->fail_if_exists, "Fail if the directory exists");
    cmd->callback([c, a] {
      auto fs = open_fs(*c, /*changes=*/true);
      if (fs && done(fs->mkdir(a->path, !a->no_parents, !a->fail_if_exists)) && c->json) {
        emit({{"created", a->path}});
      }
    });
  }
  for (bool is_move : {true, false}) {
    auto c = std::make_shared<FsOptions>();
    struct A {
      std::string from, to;
      bool overwrite = false;
    };
    auto a = std::make_shared<A>();
    auto* cmd = sub(fs_cmd, c, is_move ? "mv" : "cp",
                    is_move ? "Move or rename a file or directory" : "Copy a file or directory");
    cmd->add_option("SOURCE", a->from)->required();
    cmd->add_option("DEST", a->to)->required();
    cmd->add_flag("--overwrite", a->overwrite, "Replace an existing destination file");
    cmd->callback([c, a, is_move] {
      auto fs = open_fs(*c, /*changes=*/true);
      if (!fs) return;
      Status s =
          is_move ? fs->move(a->from, a->to, a->overwrite) : fs->copy(a->from, a->to, a->overwrite);
      if (done(s) && c->json) emit({{"source", a->from}, {"destination", a->to}});
    });
  }
}

void setup_snapshots(CLI::App* fs_cmd) {
  {
    auto c = std::make_shared<FsOptions>();
    auto tag = std::make_shared<std::string>();
    auto* cmd = sub(fs_cmd, c, "snapshot", "Record the workspace in the snapshot store");
    cmd->add_option("--tag", *tag, "A label for the snapshot");
    cmd->callback([c, tag] {
      auto fs = open_fs(*c, /*changes=*/true);
      if (!fs) return;
      auto r = fs->snapshot(tag->empty() ? std::nullopt : std::optional<std::string>(*tag));
      if (!done(r.status())) return;
      if (c->json) {
        emit(to_json(*r));
      } else {
        std::cout << "snapshot " << r->snapshot_id << " commit " << r->commit_ref
                  << (r->tag ? " tag " + display_name(*r->tag) : "") << "\n";
      }
    });
  }
  {
    auto c = std::make_shared<FsOptions>();
    auto* cmd = sub(fs_cmd, c, "snapshots", "List the workspace's snapshots, oldest first");
    cmd->callback([c] {
      auto fs = open_fs(*c);
      if (!fs) return;
      auto r = fs->snapshots();
      if (!done(r.status())) return;
      json out = json::array();
      for (const auto& s : *r) {
        if (c->json) {
          out.push_back(to_json(s));
        } else {
          std::cout << format_time(s.created_at) << "  " << s.snapshot_id << "  "
                    << s.commit_ref.substr(0, 12) << "  " << display_name(s.tag.value_or(""))
                    << "\n";
        }
      }
      if (c->json) emit(out);
    });
  }
  {
    auto c = std::make_shared<FsOptions>();
    auto what = std::make_shared<std::string>();
    auto* cmd = sub(fs_cmd, c, "restore",
                    "Make the workspace exactly as in a snapshot (files created since vanish)");
    cmd->add_option("SNAPSHOT", *what,
                    "A snapshot id, tag or commit from `weft fs snapshots`, or a JSON record "
                    "file ('-' for stdin)")
        ->required();
    cmd->callback([c, what] {
      auto fs = open_fs(*c, /*changes=*/true);
      if (!fs) return;
      std::optional<FilesystemSnapshot> target;
      std::string text;
      if (*what == "-") {
        text.assign(std::istreambuf_iterator<char>(std::cin), {});
      } else if (Status kind = check_regular_file(*what, "snapshot record file");
                 kind.code() != StatusCode::kNotFound) {  // not a file: an id or a tag
        auto record = read_regular_file(*what, "snapshot record file");
        if (!done(record.status())) return;
        text = std::move(*record);
      }
      if (!text.empty()) {
        auto rec = snapshot_from_json(text);
        if (!done(rec.status())) return;
        target = *rec;
      } else {
        auto all = fs->snapshots();
        if (!done(all.status())) return;
        for (const auto& s : *all) {  // the newest match wins for a repeated tag
          if (s.snapshot_id == *what || s.tag == *what ||
              (what->size() >= 7 && s.commit_ref.rfind(*what, 0) == 0)) {
            target = s;
          }
        }
        if (!target) {
          done(not_found("no snapshot '" + *what + "'; see `weft fs snapshots --root " + c->root +
                         "`"));
          return;
        }
      }
      if (!done(fs->restore(*target))) return;
      if (c->json) {
        emit(to_json(*target));
      } else {
        std::cout << "restored " << target->snapshot_id << "\n";
      }
    });
  }
}

void setup_fs(CLI::App& app) {
  auto* fs_cmd = app.add_subcommand("fs", "Workspace files: read, write, search, snapshots");
  fs_cmd->require_subcommand(1);
  setup_reads(fs_cmd);
  setup_writes(fs_cmd);
  setup_snapshots(fs_cmd);
}

}  // namespace
}  // namespace weft::cli

WEFT_REGISTER_COMMAND("fs", 30, weft::cli::setup_fs);
