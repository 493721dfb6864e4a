// `weft block ls|show|history|render|create --db FILE ...`: inspect and create
// blocks in a SQLite block database (store/); `weft block new` and `weft block
// edit|append|search|read|undo|redo|rollback|rm ID` act on a workspace root's blocks through its
// kernel (block_kernel_command.cc). Every subcommand takes --json for
// machine-readable output.
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/block_kernel_command.h"
#include "cli/command_registry.h"
#include "weft/base/input_file.h"
#include "weft/doc/schema_json.h"
#include "weft/store/memory_cache.h"

namespace weft::cli {
namespace {

using nlohmann::json;

struct StoreOptions {
  std::string db;
  bool as_json = false;
  std::string agent;
  std::string label;
};

void add_common(CLI::App* cmd, StoreOptions& c, bool with_block) {
  cmd->add_option("--db", c.db, "Block database (SQLite)")->required();
  cmd->add_flag("--json", c.as_json, "Print JSON");
  if (with_block) {
    cmd->add_option("AGENT", c.agent, "Owning agent id")->required();
    cmd->add_option("LABEL", c.label, "Block label")->required();
  }
}

Result<std::shared_ptr<store::BlockStore>> open_db(const std::string& path, bool read_only) {
  store::StoreOptions o;
  o.read_only = read_only;
  auto opened = store::BlockStore::open(path, o);
  if (!opened.ok()) return opened.status().with_context("--db");
  auto s = std::move(*opened);
  return std::shared_ptr<store::BlockStore>(std::move(s));
}

std::string iso_time(int64_t ms) {
  std::time_t secs = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

json info_json(const store::BlockInfo& b) {
  json j = {{"id", b.id},
            {"agent", b.agent_id},
            {"label", b.label},
            {"description", b.description},
            {"type", std::string(store::block_type_name(b.block_type))},
            {"permission", std::string(doc::memory_permission_name(b.permission))},
            {"char_limit", b.char_limit},
            {"last_seq", b.last_seq},
            {"created", iso_time(b.created_at_ms)},
            {"updated", iso_time(b.updated_at_ms)},
            {"deleted", b.deleted}};
  j["schema"] = json::parse(b.schema_json, nullptr, false);
  j["metadata"] = json::parse(b.metadata_json, nullptr, false);
  return j;
}

void print_json(const json& j) {
  std::cout << j.dump(-1, ' ', false, json::error_handler_t::replace) << "\n";
}

// Loads the block's document; on failure reports and returns null.
std::shared_ptr<doc::StructuredDocument> load_doc(store::MemoryCache& cache, const StoreOptions& c) {
  auto d = cache.get(c.agent, c.label);
  if (!d.ok()) {
    fail(d.status());
    return nullptr;
  }
  for (const auto& p : cache.problems()) std::cerr << "weft: warning: " << p << "\n";
  return *d;
}

void setup_ls(CLI::App* block) {
  struct Args {
    StoreOptions c;
    std::string agent, prefix, type;
    bool deleted = false;
  };
  auto a = std::make_shared<Args>();
  auto* cmd = block->add_subcommand("ls", "List blocks");
  add_common(cmd, a->c, false);
  cmd->add_option("--agent", a->agent, "Only this agent's blocks");
  cmd->add_option("--prefix", a->prefix, "Only labels starting with this");
  cmd->add_option("--type", a->type, "core, working, archival or log");
  cmd->add_flag("--deleted", a->deleted, "Include deleted blocks");
  cmd->callback([a] {
    store::BlockFilter f;
    if (!a->agent.empty()) f.agent_id = a->agent;
    if (!a->prefix.empty()) f.label_prefix = a->prefix;
    if (!a->type.empty()) {
      auto t = store::parse_block_type(a->type);
      if (!t.ok()) return (void)fail(t.status());
      f.block_type = *t;
    }
    f.include_deleted = a->deleted;
    auto s = open_db(a->c.db, true);
    if (!s.ok()) return (void)fail(s.status());
    auto list = (*s)->list_blocks(f);
    if (!list.ok()) return (void)fail(list.status());
    for (const auto& p : list->problems) std::cerr << "weft: warning: " << p << "\n";
    if (a->c.as_json) {
      json arr = json::array();
      for (const auto& b : list->blocks) arr.push_back(info_json(b));
      print_json(arr);
    } else {
      for (const auto& b : list->blocks) {
        auto schema = doc::schema_from_json(b.schema_json);
        std::cout << b.agent_id << "\t" << b.label << "\t" << store::block_type_name(b.block_type)
                  << "\t" << doc::memory_permission_name(b.permission) << "\t"
                  << (schema.ok() ? doc::schema_kind_name(schema->kind()) : "?") << "\t"
                  << b.last_seq << (b.deleted ? "\tdeleted" : "") << "\n";
      }
    }
    // The readable blocks are listed; a skipped corrupt row still fails the
    // command, so a script notices the damage.
    set_exit_code(list->problems.empty() ? kExitOk : kExitBadData);
  });
}

void setup_show_render(CLI::App* block) {
  auto c = std::make_shared<StoreOptions>();
  auto* show = block->add_subcommand("show", "Show a block's metadata and rendered content");
  add_common(show, *c, true);
  show->callback([c] {
    auto s = open_db(c->db, true);
    if (!s.ok()) return (void)fail(s.status());
    auto info = (*s)->get_block(c->agent, c->label);
    if (!info.ok()) return (void)fail(info.status());
    store::MemoryCache cache(*s);
    auto d = load_doc(cache, *c);
    if (!d) return;
    if (c->as_json) {
      json j = info_json(*info);
      j["version"] = json::parse(d->version().to_json_string(), nullptr, false);
      j["content"] = d->render();
      j["chars"] = d->content_chars();
      print_json(j);
    } else {
      std::cout << "block " << info->label << " (" << info->id << ") of agent " << info->agent_id
                << "\n  type " << store::block_type_name(info->block_type) << ", permission "
                << doc::memory_permission_name(info->permission) << ", char limit "
                << (info->char_limit ? std::to_string(info->char_limit) : "none") << ", "
                << d->content_chars() << " chars, " << info->last_seq << " updates\n"
                << "  schema " << info->schema_json << "\n";
      if (!info->description.empty()) std::cout << "  " << info->description << "\n";
      std::cout << "---\n" << d->render();
    }
    set_exit_code(kExitOk);
  });

  auto r = std::make_shared<StoreOptions>();
  auto* render = block->add_subcommand("render", "Print the block as an agent sees it");
  add_common(render, *r, true);
  render->callback([r] {
    auto s = open_db(r->db, true);
    if (!s.ok()) return (void)fail(s.status());
    store::MemoryCache cache(*s);
    auto d = load_doc(cache, *r);
    if (!d) return;
    if (r->as_json) {
      print_json({{"label", d->label()}, {"content", d->render()}});
    } else {
      std::cout << d->render();
    }
    set_exit_code(kExitOk);
  });
}

void setup_block_history(CLI::App* block) {
  auto c = std::make_shared<StoreOptions>();
  auto* cmd = block->add_subcommand("history", "List a block's stored updates and its changes");
  add_common(cmd, *c, true);
  cmd->callback([c] {
    auto s = open_db(c->db, true);
    if (!s.ok()) return (void)fail(s.status());
    auto info = (*s)->get_block(c->agent, c->label);
    if (!info.ok()) return (void)fail(info.status());
    auto rows = (*s)->history(info->id);
    if (!rows.ok()) return (void)fail(rows.status());
    store::MemoryCache cache(*s);
    auto d = load_doc(cache, *c);
    if (!d) return;
    auto changes = d->with_doc([](crdt::Doc& doc) { return doc.changes(); });
    if (c->as_json) {
      json stored = json::array(), ch = json::array();
      for (const auto& h : *rows) {
        stored.push_back(
            {{"kind", h.kind == store::HistoryEntry::Kind::kSnapshot ? "snapshot" : "update"},
             {"seq", h.seq},
             {"bytes", h.bytes},
             {"time", iso_time(h.created_at_ms)}});
      }
      for (const auto& m : changes) {
        ch.push_back({{"id", m.id.to_string()},
                      {"ops", m.len},
                      {"lamport", m.lamport},
                      {"timestamp", m.timestamp},
                      {"message", m.message ? json(*m.message) : json(nullptr)}});
      }
      print_json({{"label", info->label}, {"stored", stored}, {"changes", ch}});
    } else {
      for (const auto& h : *rows) {
        std::cout << (h.kind == store::HistoryEntry::Kind::kSnapshot ? "snapshot upto " : "update ")
                  << h.seq << "\t" << h.bytes << " bytes\t" << iso_time(h.created_at_ms) << "\n";
      }
      std::cout << "--- " << changes.size() << " changes\n";
      for (const auto& m : changes) {
        std::cout << m.id.to_string() << "\t" << m.len << " ops\t"
                  << (m.timestamp ? iso_time(m.timestamp * 1000) : "-") << "\t"
                  << m.message.value_or("") << "\n";
      }
    }
    set_exit_code(kExitOk);
  });
}

Result<std::string> schema_arg(const std::string& arg) {
  if (arg.empty()) return std::string(R"({"type":"text"})");
  if (arg[0] != '@') return arg;
  auto text = read_regular_file(arg.substr(1), "schema file");
  if (!text.ok()) return text.status().with_context("--schema");
  return text;
}

void setup_create(CLI::App* block) {
  struct Args {
    StoreOptions c;
    std::string schema, description, type = "working", permission = "read_write", text;
    std::string metadata = "{}";
    uint64_t char_limit = 0;
    bool has_text = false;
  };
  auto a = std::make_shared<Args>();
  auto* cmd = block->add_subcommand("create", "Create a block");
  add_common(cmd, a->c, true);
  cmd->add_option("--schema", a->schema, "Schema JSON, or @FILE (default: text)");
  cmd->add_option("--description", a->description, "What the block is for");
  cmd->add_option("--type", a->type, "core, working, archival or log");
  cmd->add_option("--permission", a->permission,
                  "read_only, partner, human, append, read_write or admin");
  cmd->add_option("--char-limit", a->char_limit, "Maximum characters (0: none)");
  cmd->add_option("--metadata", a->metadata, "Metadata JSON object");
  auto* text_opt = cmd->add_option("--text", a->text, "Initial text (text schema)");
  cmd->callback([a, text_opt] {
    auto schema_text = schema_arg(a->schema);
    if (!schema_text.ok()) return (void)fail(schema_text.status());
    auto schema = doc::schema_from_json(*schema_text);
    if (!schema.ok()) return (void)fail(schema.status());
    auto type = store::parse_block_type(a->type);
    if (!type.ok()) return (void)fail(type.status());
    auto perm = doc::parse_memory_permission(a->permission);
    if (!perm.ok()) return (void)fail(perm.status());
    auto s = open_db(a->c.db, false);
    if (!s.ok()) return (void)fail(s.status());
    store::MemoryCache cache(*s);
    store::CreateBlockRequest r;
    r.agent_id = a->c.agent;
    r.label = a->c.label;
    r.description = a->description;
    r.block_type = *type;
    r.schema = *schema;
    r.permission = *perm;
    r.char_limit = a->char_limit;
    r.metadata_json = a->metadata;
    if (text_opt->count() > 0) r.initial_text = a->text;
    auto d = cache.create_block(r);
    if (!d.ok()) return (void)fail(d.status());
    auto info = (*s)->get_block(r.agent_id, r.label);
    if (!info.ok()) return (void)fail(info.status());
    if (a->c.as_json) {
      print_json(info_json(*info));
    } else {
      std::cout << "created block " << info->label << " (" << info->id << ")\n";
    }
    set_exit_code(kExitOk);
  });
}

void setup_block(CLI::App& app) {
  auto* block = app.add_subcommand(
      "block",
      "Blocks: ls/show/history/render/create in a block database (--db); new/edit/append/"
      "search/read/undo/redo/rollback/rm in a workspace's kernel (--root)");
  block->require_subcommand(1);
  setup_ls(block);
  setup_show_render(block);
  setup_block_history(block);
  setup_create(block);
  setup_block_kernel_commands(block);
}

}  // namespace
}  // namespace weft::cli

WEFT_REGISTER_COMMAND("block", 40, weft::cli::setup_block);
