// The block tools (block_*, memory_*, kernel_search) through the tool
// registry of a real workspace server with its kernel: schemas, the
// structuredContent fields each result carries, the error texts, and the
// same calls from a second server on the root (forwarded to the kernel).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "support/test_support.h"
#include "weft/server/json_schema.h"
#include "weft/server/workspace_server.h"

namespace weft::server {
namespace {

namespace stdfs = std::filesystem;

class BlockToolsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ws_dir_ = tmp_.path() / "ws";
    stdfs::create_directories(ws_dir_ / "src");
    write("src/a.py", "x = 1\nprint(x)\nneedle here\n");
    write("notes.txt", "nothing\n");
    setenv("XDG_STATE_HOME", (tmp_.path() / "state").c_str(), 1);
    auto built = make_workspace_server(options());
    ASSERT_TRUE(built.ok()) << built.status();
    built_ = std::move(*built);
    ASSERT_NE(built_.workspace->kernel(), nullptr);
  }

  WorkspaceServerOptions options() {
    WorkspaceServerOptions o;
    o.root = ws_dir_.string();
    return o;
  }
  void write(const std::string& rel, const std::string& body) {
    std::ofstream(ws_dir_ / rel, std::ios::binary) << body;
  }
  std::string read(const std::string& rel) { return weft::testing::read_file(ws_dir_ / rel); }

  Json call_on(WorkspaceServer& server, const std::string& tool, const Json& args,
               const std::string& client = "claude") {
    const ToolSpec* spec = server.tools->find(tool);
    EXPECT_NE(spec, nullptr) << tool;
    if (!spec) return Json();
    ToolContext ctx(server.workspace.get(), {}, nullptr, nullptr, nullptr);
    ctx.set_client_name(client);
    Json r = server.tools->call(*spec, args, ctx);
    // Every successful result matches the tool's output schema.
    if (!r.value("isError", false) && !spec->output_schema.is_null()) {
      EXPECT_TRUE(r.contains("structuredContent")) << tool;
      Status valid = validate_json(spec->output_schema, r["structuredContent"]);
      EXPECT_TRUE(valid.ok()) << tool << ": " << valid;
    }
    return r;
  }
  Json call(const std::string& tool, const Json& args, const std::string& client = "claude") {
    return call_on(built_, tool, args, client);
  }
  static std::string text(const Json& r) { return r["content"][0]["text"]; }
  static bool failed(const Json& r) { return r.value("isError", false); }
  static Json sc(const Json& r) { return r["structuredContent"]; }

  std::string create(const Json& args, const std::string& client = "claude") {
    Json r = call("block_create", args, client);
    EXPECT_FALSE(failed(r)) << text(r);
    return sc(r).value("block_id", std::string());
  }

  weft::testing::TempDir tmp_;
  stdfs::path ws_dir_;
  WorkspaceServer built_;
};

TEST_F(BlockToolsTest, EveryBlockToolIsPublishedViaKernelWithValidSchemas) {
  for (const char* name :
       {"block_create", "block_status", "block_delete", "block_append", "block_edit",
        "block_splice",
        "block_apply_patch", "block_read", "block_search", "block_list", "block_history",
        "block_diff", "block_rollback", "block_undo", "block_redo", "memory_create",
        "memory_read", "memory_update", "memory_append", "kernel_search"}) {
    const ToolSpec* spec = built_.tools->find(name);
    ASSERT_NE(spec, nullptr) << name;
    EXPECT_TRUE(spec->via_kernel) << name;
    EXPECT_GT(spec->description.size(), 80u) << name;
    EXPECT_EQ(spec->input_schema["type"], "object") << name;
    EXPECT_EQ(spec->input_schema["additionalProperties"], false) << name;
    EXPECT_FALSE(spec->output_schema.is_null()) << name;
  }
}

TEST_F(BlockToolsTest, CreateAppendReadAndStatus) {
  std::string user = create({{"role", "user"}, {"kind", "text"}, {"content", "hello\n"}});
  EXPECT_EQ(user, "main/claude/1");
  Json r = call("block_create", {{"parent_id", user}, {"role", "model"}, {"kind", "text"}});
  ASSERT_FALSE(failed(r)) << text(r);
  std::string model = sc(r)["block_id"];
  EXPECT_TRUE(sc(r).contains("version"));
  EXPECT_EQ(sc(r)["status"], "pending");
  for (const char* chunk : {"Hel", "lo, ", "world"}) {
    Json a = call("block_append", {{"block_id", model}, {"text", chunk}});
    ASSERT_FALSE(failed(a)) << text(a);
    EXPECT_EQ(sc(a)["block_id"], model);
  }
  Json read = call("block_read", {{"block_id", model}, {"line_numbers", false}});
  ASSERT_FALSE(failed(read)) << text(read);
  EXPECT_EQ(sc(read)["content"], "Hello, world");
  EXPECT_EQ(sc(read)["role"], "model");
  EXPECT_EQ(sc(read)["kind"], "text");
  EXPECT_EQ(sc(read)["status"], "running");
  EXPECT_EQ(sc(read)["parent_id"], user);
  EXPECT_EQ(sc(read)["line_count"], 1);
  Json st = call("block_status", {{"block_id", model}, {"status", "done"}});
  ASSERT_FALSE(failed(st)) << text(st);
  EXPECT_EQ(sc(st)["status"], "done");
  Json list = call("block_list", {{"parent_id", user}});
  ASSERT_FALSE(failed(list)) << text(list);
  ASSERT_EQ(sc(list)["blocks"].size(), 1u);
  Json entry = sc(list)["blocks"][0];
  for (const char* key :
       {"block_id", "parent_id", "role", "kind", "status", "path", "summary", "version", "dirty"}) {
    EXPECT_TRUE(entry.contains(key)) << key;
  }
  EXPECT_EQ(entry["status"], "done");
  EXPECT_NE(text(list).find(model), std::string::npos);
}

TEST_F(BlockToolsTest, SchemaRefusesABadRoleBeforeTheKernel) {
  Json r = call("block_create", {{"role", "robot"}, {"kind", "text"}});
  EXPECT_TRUE(failed(r));
  EXPECT_NE(text(r).find("role"), std::string::npos) << text(r);
  Json missing = call("block_read", {{"block_id", "main/claude/99"}});
  EXPECT_TRUE(failed(missing));
  EXPECT_NE(text(missing).find("block_list"), std::string::npos) << text(missing);
  Json bad_id = call("block_read", {{"block_id", "what"}});
  EXPECT_TRUE(failed(bad_id));
  EXPECT_NE(text(bad_id).find("file:"), std::string::npos) << text(bad_id);
}

TEST_F(BlockToolsTest, EditIsAtomicAndShowsTheLinesOnAMismatch) {
  std::string id = create({{"role", "user"}, {"kind", "text"}, {"content", "a\nb\nc\nd\n"}});
  Json ok = call("block_edit", {{"block_id", id},
                                {"operations",
                                 {{{"op", "replace"},
                                   {"start_line", 1},
                                   {"end_line", 2},
                                   {"content", "B\n"},
                                   {"expected_text", "b\n"}},
                                  {{"op", "insert"}, {"line", 4}, {"content", "e\n"}},
                                  {{"op", "delete"}, {"start_line", 0}, {"end_line", 1}}}}});
  ASSERT_FALSE(failed(ok)) << text(ok);
  EXPECT_EQ(sc(ok)["changed"], true);
  Json read = call("block_read", {{"block_id", id}, {"line_numbers", false}});
  EXPECT_EQ(sc(read)["content"], "B\nc\nd\ne\n");
  // A stale expected_text fails the whole batch and shows the current text.
  Json stale = call("block_edit", {{"block_id", id},
                                   {"operations",
                                    {{{"op", "delete"}, {"start_line", 3}, {"end_line", 4}},
                                     {{"op", "replace"},
                                      {"start_line", 0},
                                      {"end_line", 1},
                                      {"content", "x\n"},
                                      {"expected_text", "b\n"}}}}});
  EXPECT_TRUE(failed(stale));
  EXPECT_NE(text(stale).find("is:\nB\n"), std::string::npos) << text(stale);
  Json out_of_range = call(
      "block_edit",
      {{"block_id", id},
       {"operations", {{{"op", "delete"}, {"start_line", 2}, {"end_line", 9}}}}});
  EXPECT_TRUE(failed(out_of_range));
  EXPECT_NE(text(out_of_range).find("4"), std::string::npos) << text(out_of_range);
  Json missing_content =
      call("block_edit", {{"block_id", id}, {"operations", {{{"op", "insert"}, {"line", 0}}}}});
  EXPECT_TRUE(failed(missing_content));
  EXPECT_NE(text(missing_content).find("content"), std::string::npos) << text(missing_content);
  read = call("block_read", {{"block_id", id}, {"line_numbers", false}});
  EXPECT_EQ(sc(read)["content"], "B\nc\nd\ne\n");
}

TEST_F(BlockToolsTest, SpliceRefusesTheMiddleOfACharacter) {
  std::string id = create({{"role", "user"}, {"kind", "text"}, {"content", "h\xC3\xA9llo"}});
  Json bad = call("block_splice", {{"block_id", id}, {"offset", 2}, {"delete_count", 0},
                                   {"insert", "x"}});
  EXPECT_TRUE(failed(bad));
  EXPECT_NE(text(bad).find("character"), std::string::npos) << text(bad);
  Json ok = call("block_splice", {{"block_id", id}, {"offset", 0}, {"delete_count", 1},
                                  {"insert", "H"}});
  ASSERT_FALSE(failed(ok)) << text(ok);
  EXPECT_EQ(sc(call("block_read", {{"block_id", id}, {"line_numbers", false}}))["content"],
            "H\xC3\xA9llo");
}

TEST_F(BlockToolsTest, ApplyPatchReportsSuccessAndErrors) {
  std::string id = create({{"role", "user"}, {"kind", "text"}, {"content", "one\ntwo\n"}});
  std::string patch = "--- a\n+++ b\n@@ -1,2 +1,2 @@\n one\n-two\n+TWO\n";
  Json dry = call("block_apply_patch", {{"block_id", id}, {"patch", patch}, {"dry_run", true}});
  ASSERT_FALSE(failed(dry)) << text(dry);
  EXPECT_EQ(sc(dry)["success"], true);
  Json applied = call("block_apply_patch", {{"block_id", id}, {"patch", patch}});
  ASSERT_FALSE(failed(applied)) << text(applied);
  EXPECT_EQ(sc(applied)["success"], true);
  EXPECT_FALSE(sc(applied)["version"].get<std::string>().empty());
  Json again = call("block_apply_patch", {{"block_id", id}, {"patch", patch}});
  ASSERT_FALSE(failed(again)) << text(again);
  EXPECT_EQ(sc(again)["success"], false);
  EXPECT_FALSE(sc(again)["errors"].empty());
}

TEST_F(BlockToolsTest, SearchSaysWhenTheQueryIsLiteral) {
  std::string id =
      create({{"role", "user"}, {"kind", "text"}, {"content", "alpha\nf(x\nbeta f(x\n"}});
  Json r = call("block_search", {{"block_id", id}, {"query", "f(x"}, {"context_lines", 0}});
  ASSERT_FALSE(failed(r)) << text(r);
  EXPECT_EQ(sc(r)["literal"], true);
  ASSERT_EQ(sc(r)["matches"].size(), 2u);
  EXPECT_EQ(sc(r)["matches"][1]["line"], 2);
  EXPECT_EQ(sc(r)["matches"][1]["match_start"], 5);
  EXPECT_EQ(sc(r)["matches"][1]["match_end"], 8);
  EXPECT_NE(text(r).find("literal"), std::string::npos);
  Json re = call("block_search", {{"block_id", id}, {"query", "^b\\w+"}});
  EXPECT_EQ(sc(re)["literal"], false);
  ASSERT_EQ(sc(re)["matches"].size(), 1u);
}

TEST_F(BlockToolsTest, UndoIsPerAgentAndHistoryDiffRollbackWork) {
  std::string id = create({{"role", "user"}, {"kind", "text"}, {"content", "one\n"}});
  call("block_append", {{"block_id", id}, {"text", "two\n"}});
  call("block_append", {{"block_id", id}, {"text", "amy\n"}}, "amy");
  Json undo = call("block_undo", {{"block_id", id}});
  ASSERT_FALSE(failed(undo)) << text(undo);
  EXPECT_EQ(sc(call("block_read", {{"block_id", id}, {"line_numbers", false}}))["content"],
            "one\namy\n");
  Json redo = call("block_redo", {{"block_id", id}});
  ASSERT_FALSE(failed(redo)) << text(redo);
  EXPECT_EQ(sc(call("block_read", {{"block_id", id}, {"line_numbers", false}}))["content"],
            "one\ntwo\namy\n");
  Json nothing = call("block_undo", {{"block_id", id}}, "nobody");
  EXPECT_TRUE(failed(nothing));
  EXPECT_NE(text(nothing).find("nothing to undo"), std::string::npos) << text(nothing);
  Json history = call("block_history", {{"block_id", id}});
  ASSERT_FALSE(failed(history)) << text(history);
  ASSERT_GE(sc(history)["changes"].size(), 3u);
  std::string first = sc(history)["changes"].back()["version"];
  Json diff = call("block_diff", {{"block_id", id}, {"from", first}});
  ASSERT_FALSE(failed(diff)) << text(diff);
  EXPECT_NE(sc(diff)["diff"].get<std::string>().find("+amy"), std::string::npos);
  Json back = call("block_rollback", {{"block_id", id}, {"version", first}});
  ASSERT_FALSE(failed(back)) << text(back);
  EXPECT_EQ(sc(call("block_read", {{"block_id", id}, {"line_numbers", false}}))["content"],
            "one\n");
}

TEST_F(BlockToolsTest, FileBlocksChangeTheFile) {
  Json r = call("block_edit", {{"block_id", "file:src/a.py"},
                               {"operations",
                                {{{"op", "replace"},
                                  {"start_line", 0},
                                  {"end_line", 1},
                                  {"content", "x = 2\n"}}}}});
  ASSERT_FALSE(failed(r)) << text(r);
  EXPECT_EQ(read("src/a.py"), "x = 2\nprint(x)\nneedle here\n");
  Json created = call("block_create", {{"role", "model"},
                                       {"kind", "file"},
                                       {"content", "new\n"},
                                       {"metadata", {{"path", "src/new.txt"}}}});
  ASSERT_FALSE(failed(created)) << text(created);
  EXPECT_EQ(sc(created)["block_id"], "file:src/new.txt");
  EXPECT_EQ(read("src/new.txt"), "new\n");
  Json outside = call("block_read", {{"block_id", "file:../etc/passwd"}});
  EXPECT_TRUE(failed(outside));
}

TEST_F(BlockToolsTest, MemoryBlocksRenderAndRefuseReadOnlyFields) {
  Json schema = {{"type", "map"},
                 {"fields",
                  {{{"name", "goal"}, {"type", "text"}},
                   {{"name", "owner"}, {"type", "text"}, {"read_only", true}}}}};
  Json c = call("memory_create", {{"label", "project"}, {"schema", schema}});
  ASSERT_FALSE(failed(c)) << text(c);
  EXPECT_EQ(sc(c)["block_id"], "memory:claude/project");
  Json u = call("memory_update", {{"label", "project"}, {"field", "goal"}, {"value", "ship"}});
  ASSERT_FALSE(failed(u)) << text(u);
  Json ro = call("memory_update", {{"label", "project"}, {"field", "owner"}, {"value", "me"}});
  EXPECT_TRUE(failed(ro));
  Json r = call("memory_read", {{"label", "project"}});
  ASSERT_FALSE(failed(r)) << text(r);
  EXPECT_NE(sc(r)["rendered"].get<std::string>().find("ship"), std::string::npos);
  EXPECT_NE(text(r).find("[read-only]"), std::string::npos) << text(r);
  Json log = call("memory_create", {{"label", "log"}, {"schema", "text"}});
  ASSERT_FALSE(failed(log)) << text(log);
  Json a = call("memory_append", {{"label", "log"}, {"item", "first note\n"}});
  ASSERT_FALSE(failed(a)) << text(a);
  EXPECT_NE(sc(call("memory_read", {{"label", "log"}}))["rendered"].get<std::string>().find(
                "first note"),
            std::string::npos);
  Json other = call("memory_read", {{"label", "project"}}, "someone-else");
  EXPECT_TRUE(failed(other));
  EXPECT_NE(text(other).find("memory_create"), std::string::npos) << text(other);
  Json bad = call("memory_create", {{"label", "x"}, {"schema", {{"type", "nope"}}}});
  EXPECT_TRUE(failed(bad));
  EXPECT_NE(text(bad).find("composite"), std::string::npos) << text(bad);
}

TEST_F(BlockToolsTest, KernelSearchFindsBlocksMemoryAndUntrackedFiles) {
  std::string id =
      create({{"role", "model"}, {"kind", "thinking"}, {"content", "a needle in thought\n"}});
  Json m = call("memory_create",
                {{"label", "notes"}, {"schema", "text"}, {"initial_text", "needle memo\n"}});
  ASSERT_FALSE(failed(m)) << text(m);
  Json r = call("kernel_search", {{"query", "needle"}});
  ASSERT_FALSE(failed(r)) << text(r);
  Json results = sc(r)["results"];
  std::vector<std::string> ids;
  for (const auto& h : results) ids.push_back(h["block_id"]);
  EXPECT_EQ(ids, (std::vector<std::string>{"memory:claude/notes", id, "file:src/a.py"}));
  Json file_hit = sc(r)["results"][2];
  EXPECT_EQ(file_hit["matches"][0]["line"], 2);
  EXPECT_EQ(file_hit["matches"][0]["match_start"], 0);
  EXPECT_EQ(file_hit["matches"][0]["match_end"], 6);
  Json only_files = call("kernel_search", {{"query", "needle"}, {"kinds", {"file"}}});
  EXPECT_EQ(sc(only_files)["results"].size(), 1u);
  Json literal = call("kernel_search", {{"query", "print(x"}});
  EXPECT_EQ(sc(literal)["literal"], true);
  EXPECT_EQ(sc(literal)["results"].size(), 1u);
  Json capped = call("kernel_search", {{"query", "needle"}, {"max_blocks", 1}});
  EXPECT_EQ(sc(capped)["results"].size(), 1u);
  EXPECT_EQ(sc(capped)["truncated"], true);
}

TEST_F(BlockToolsTest, KernelSearchStaysInTheClientsRoot) {
  std::string id = create({{"role", "user"}, {"kind", "text"}, {"content", "nothing in a block\n"}});
  const ToolSpec* spec = built_.tools->find("kernel_search");
  ASSERT_NE(spec, nullptr);
  ToolContext ctx(built_.workspace.get(), {"src"}, nullptr, nullptr, nullptr);
  ctx.set_client_name("claude");
  Json r = built_.tools->call(*spec, {{"query", "nothing|needle"}}, ctx);
  ASSERT_FALSE(failed(r)) << text(r);
  Json results = sc(r)["results"];
  std::vector<std::string> ids;
  for (const auto& h : results) ids.push_back(h["block_id"]);
  // notes.txt (outside src) is not searched; the conversation block is.
  EXPECT_EQ(ids, (std::vector<std::string>{id, "file:src/a.py"}));
  Json outside = built_.tools->call(*spec, {{"query", "x"}, {"path_prefix", "notes.txt"}}, ctx);
  EXPECT_TRUE(failed(outside));
}

TEST_F(BlockToolsTest, RulesRefuseOrAskForApproval) {
  // A second root with rules; its own kernel.
  stdfs::path root = tmp_.path() / "ruled";
  stdfs::create_directories(root / "locked");
  stdfs::create_directories(root / "ask");
  std::ofstream(root / "weft.toml")
      << "[permissions]\nrules = [\n  { glob = \"locked/**\", level = \"read_only\" },\n"
         "  { glob = \"ask/**\", level = \"human\" },\n]\n";
  std::ofstream(root / "locked/x.txt") << "x\n";
  std::ofstream(root / "ask/y.txt") << "y\n";
  WorkspaceServerOptions o;
  o.root = root.string();
  auto ruled = make_workspace_server(o);
  ASSERT_TRUE(ruled.ok()) << ruled.status();
  Json denied = call_on(*ruled, "block_append", {{"block_id", "file:locked/x.txt"}, {"text", "y\n"}});
  EXPECT_TRUE(failed(denied));
  EXPECT_NE(text(denied).find("read_only"), std::string::npos) << text(denied);
  Json ask = call_on(*ruled, "block_edit",
                     {{"block_id", "file:ask/y.txt"},
                      {"operations", {{{"op", "insert"}, {"line", 1}, {"content", "z\n"}}}}});
  ASSERT_FALSE(failed(ask)) << text(ask);
  EXPECT_EQ(sc(ask)["applied"], false);
  EXPECT_EQ(sc(ask)["pending_approval"].get<std::string>().rfind("apr_", 0), 0u);
  EXPECT_NE(text(ask).find("Do not retry"), std::string::npos) << text(ask);
  EXPECT_EQ(weft::testing::read_file(root / "ask/y.txt"), "y\n");
}

TEST_F(BlockToolsTest, ASecondServerOnTheRootForwardsToTheKernel) {
  auto second = make_workspace_server(options());
  ASSERT_TRUE(second.ok()) << second.status();
  ASSERT_NE(second->kernel_link, nullptr);
  EXPECT_FALSE(second->kernel_link->is_kernel());
  Json r = call_on(*second, "block_create",
                   {{"role", "user"}, {"kind", "text"}, {"content", "from afar\n"}}, "remote");
  ASSERT_FALSE(failed(r)) << text(r);
  std::string id = sc(r)["block_id"];
  EXPECT_EQ(id, "main/remote/1");
  // The kernel's process sees it; the front end reads it back through the link.
  Json here = call("block_read", {{"block_id", id}, {"line_numbers", false}});
  EXPECT_EQ(sc(here)["content"], "from afar\n");
  Json a = call_on(*second, "block_append", {{"block_id", id}, {"text", "more\n"}}, "remote");
  ASSERT_FALSE(failed(a)) << text(a);
  Json there =
      call_on(*second, "block_read", {{"block_id", id}, {"line_numbers", false}}, "remote");
  EXPECT_EQ(sc(there)["content"], "from afar\nmore\n");
  Json undo = call_on(*second, "block_undo", {{"block_id", id}}, "remote");
  ASSERT_FALSE(failed(undo)) << text(undo);
  EXPECT_EQ(sc(call("block_read", {{"block_id", id}, {"line_numbers", false}}))["content"],
            "from afar\n");
  Json s = call_on(*second, "kernel_search", {{"query", "afar"}}, "remote");
  ASSERT_FALSE(failed(s)) << text(s);
  EXPECT_EQ(sc(s)["results"].size(), 1u);
}

TEST_F(BlockToolsTest, DeleteMarksRestoresAndRefusesOthers) {
  std::string root = create({{"role", "user"}, {"kind", "text"}, {"content", "q\n"}});
  std::string child = create({{"parent_id", root}, {"role", "model"}, {"kind", "text"}});
  Json refused = call("block_delete", {{"block_id", root}});
  ASSERT_TRUE(failed(refused)) << refused.dump();
  EXPECT_NE(text(refused).find("recursive"), std::string::npos) << text(refused);
  EXPECT_NE(text(refused).find(child), std::string::npos) << text(refused);
  Json theirs = call("block_delete", {{"block_id", root}, {"recursive", true}}, "gemini");
  ASSERT_TRUE(failed(theirs)) << theirs.dump();
  EXPECT_NE(text(theirs).find("permission"), std::string::npos) << text(theirs);

  Json d = call("block_delete", {{"block_id", root}, {"recursive", true}});
  ASSERT_FALSE(failed(d)) << text(d);
  EXPECT_EQ(sc(d)["deleted"], Json::array({root, child}));
  EXPECT_TRUE(sc(d)["changed"].get<bool>());
  EXPECT_NE(text(d).find("block_undo"), std::string::npos) << text(d);
  Json read = call("block_read", {{"block_id", root}});
  ASSERT_FALSE(failed(read)) << text(read);
  EXPECT_TRUE(sc(read)["deleted"].get<bool>());
  EXPECT_EQ(sc(read)["deleted_by"], "agent:claude");
  EXPECT_NE(text(read).find("DELETED"), std::string::npos);
  EXPECT_EQ(sc(call("block_list", {{"kind", "text"}}))["blocks"].size(), 0u);
  Json all = call("block_list", {{"kind", "text"}, {"include_deleted", true}});
  ASSERT_EQ(sc(all)["blocks"].size(), 1u) << all.dump();
  EXPECT_TRUE(sc(all)["blocks"][0]["deleted"].get<bool>());
  Json append = call("block_append", {{"block_id", child}, {"text", "x\n"}});
  ASSERT_TRUE(failed(append));
  EXPECT_NE(text(append).find("deleted by agent:claude"), std::string::npos) << text(append);

  Json undo = call("block_undo", {{"block_id", root}});
  ASSERT_FALSE(failed(undo)) << text(undo);
  EXPECT_FALSE(sc(call("block_read", {{"block_id", child}}))["deleted"].get<bool>());
  EXPECT_EQ(sc(call("block_list", {{"kind", "text"}}))["blocks"].size(), 1u);

  // Memory and file blocks.
  ASSERT_FALSE(failed(call("memory_create", {{"label", "tmp"}, {"schema", {{"type", "text"}}}})));
  Json mem = call("block_delete", {{"block_id", "memory:claude/tmp"}});
  EXPECT_TRUE(failed(mem)) << mem.dump();  // read_write memory needs admin
  Json file = call("block_delete", {{"block_id", "file:notes.txt"}});
  ASSERT_FALSE(failed(file)) << text(file);
  EXPECT_EQ(sc(file)["deleted"], Json::array({"file:notes.txt"}));
  EXPECT_FALSE(stdfs::exists(ws_dir_ / "notes.txt"));
}

TEST_F(BlockToolsTest, CreateTakesAPermissionThatBindsOthers) {
  std::string fixed = create({{"role", "system"},
                              {"kind", "text"},
                              {"content", "be brief\n"},
                              {"permission", "read_only"}},
                             "amy");
  Json read = call("block_read", {{"block_id", fixed}});
  EXPECT_EQ(sc(read)["permission"], "read_only");
  Json edit = call("block_edit",
                   {{"block_id", fixed},
                    {"operations", {{{"op", "replace"}, {"start_line", 0}, {"end_line", 1},
                                     {"content", "be verbose\n"}}}}});
  ASSERT_TRUE(failed(edit)) << edit.dump();
  EXPECT_NE(text(edit).find("read_only"), std::string::npos) << text(edit);
  std::string log = create(
      {{"role", "tool"}, {"kind", "tool_result"}, {"content", "1\n"}, {"permission", "append_only"}},
      "amy");
  EXPECT_FALSE(failed(call("block_append", {{"block_id", log}, {"text", "2\n"}})));
  EXPECT_TRUE(failed(call("block_splice", {{"block_id", log}, {"offset", 0}, {"delete_count", 1}})));
  EXPECT_EQ(sc(call("block_read", {{"block_id", log}, {"line_numbers", false}}))["content"],
            "1\n2\n");
  Json bad = call("block_create", {{"role", "user"}, {"kind", "text"}, {"permission", "open"}});
  EXPECT_TRUE(failed(bad));
  Json file = call("block_create", {{"role", "user"},
                                    {"kind", "file"},
                                    {"metadata", {{"path", "new.txt"}}},
                                    {"permission", "read_only"}});
  ASSERT_TRUE(failed(file));
  EXPECT_NE(text(file).find("weft.toml"), std::string::npos) << text(file);
}

}  // namespace
}  // namespace weft::server
