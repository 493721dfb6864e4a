// The workspace tools against a temporary host directory: semantics agents
// rely on (fs_edit uniqueness and all-or-nothing, CRLF kept, fs_patch
// atomicity and dry run, read paging) and the path policy (outside the root,
// symlinks, client roots).
#include "weft/server/workspace_tools.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "support/test_support.h"
#include "weft/server/workspace_server.h"

namespace weft::server {
namespace {

namespace stdfs = std::filesystem;

class WorkspaceToolsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ws_dir_ = tmp_.path() / "ws";
    stdfs::create_directories(ws_dir_ / "src");
    stdfs::create_directories(tmp_.path() / "outside");
    write("src/a.py", "x = 1\nprint(x)\nprint(x)\n");
    write("crlf.txt", "one\r\ntwo\r\n");
    std::ofstream(tmp_.path() / "outside" / "secret.txt") << "secret\n";
    stdfs::create_symlink(tmp_.path() / "outside", ws_dir_ / "out");
    setenv("XDG_STATE_HOME", (tmp_.path() / "state").c_str(), 1);
    WorkspaceServerOptions options;
    options.root = ws_dir_.string();
    auto built = make_workspace_server(options);
    ASSERT_TRUE(built.ok()) << built.status();
    built_ = std::move(*built);
  }

  void write(const std::string& rel, const std::string& body) {
    std::ofstream(ws_dir_ / rel, std::ios::binary) << body;
  }
  std::string read(const std::string& rel) { return weft::testing::read_file(ws_dir_ / rel); }
  Json call(const std::string& tool, const Json& args, std::vector<std::string> roots = {}) {
    const ToolSpec* spec = built_.tools->find(tool);
    EXPECT_NE(spec, nullptr) << tool;
    if (!spec) return Json();
    ToolContext ctx(built_.workspace.get(), std::move(roots), nullptr, nullptr, nullptr);
    return built_.tools->call(*spec, args, ctx);
  }
  static std::string text(const Json& result) { return result["content"][0]["text"]; }
  static bool failed(const Json& result) { return result.value("isError", false); }

  weft::testing::TempDir tmp_;
  stdfs::path ws_dir_;
  WorkspaceServer built_;
};

TEST_F(WorkspaceToolsTest, ReadNumbersLinesAndPages) {
  Json r = call("fs_read", {{"path", "src/a.py"}, {"offset", 2}, {"limit", 1}});
  ASSERT_FALSE(failed(r)) << text(r);
  EXPECT_EQ(r["structuredContent"]["lines"], 1);
  EXPECT_EQ(r["structuredContent"]["line_ending"], "lf");
  EXPECT_EQ(r["structuredContent"]["total_lines"], 3);
  EXPECT_EQ(r["structuredContent"]["truncated"], true);
  EXPECT_NE(text(r).find("     2\tprint(x)\n"), std::string::npos);
  EXPECT_NE(text(r).find("offset 3"), std::string::npos);
}

TEST_F(WorkspaceToolsTest, EditRefusesAmbiguityWithLinesAndWritesNothing) {
  Json r = call("fs_edit", {{"path", "src/a.py"},
                            {"edits",
                             {{{"old_string", "x = 1"}, {"new_string", "x = 2"}},
                              {{"old_string", "print(x)"}, {"new_string", "p(x)"}}}}});
  EXPECT_TRUE(failed(r));
  EXPECT_NE(text(r).find("2 times"), std::string::npos) << text(r);
  EXPECT_NE(text(r).find("lines 2 and 3"), std::string::npos) << text(r);
  EXPECT_EQ(read("src/a.py"), "x = 1\nprint(x)\nprint(x)\n");  // all or nothing
}

TEST_F(WorkspaceToolsTest, EditReplaceAllDryRunAndDiff) {
  Json args = {
      {"path", "src/a.py"},
      {"edits", {{{"old_string", "print(x)"}, {"new_string", "log(x)"}, {"replace_all", true}}}},
      {"dry_run", true}};
  Json dry = call("fs_edit", args);
  ASSERT_FALSE(failed(dry)) << text(dry);
  EXPECT_EQ(read("src/a.py"), "x = 1\nprint(x)\nprint(x)\n");
  EXPECT_NE(dry["structuredContent"]["diff"].get<std::string>().find("+log(x)"), std::string::npos);
  args["dry_run"] = false;
  Json real = call("fs_edit", args);
  EXPECT_EQ(real["structuredContent"]["replacements"], Json::array({2}));
  EXPECT_EQ(read("src/a.py"), "x = 1\nlog(x)\nlog(x)\n");
}

TEST_F(WorkspaceToolsTest, EditKeepsCrlf) {
  Json r = call("fs_edit", {{"path", "crlf.txt"},
                            {"edits", {{{"old_string", "one\ntwo"}, {"new_string", "1\n2"}}}}});
  ASSERT_FALSE(failed(r)) << text(r);
  EXPECT_EQ(read("crlf.txt"), "1\r\n2\r\n");
}

TEST_F(WorkspaceToolsTest, PatchAppliesByContextAndStalePatchChangesNothing) {
  write("p.txt", "a\nb\nc\nd\ne\n");
  Json ok =
      call("fs_patch", {{"patch", "--- a/p.txt\n+++ b/p.txt\n@@ -1,3 +1,3 @@\n c\n-d\n+D\n e\n"}});
  ASSERT_FALSE(failed(ok)) << text(ok);
  EXPECT_EQ(read("p.txt"), "a\nb\nc\nD\ne\n");
  std::string stale =
      "--- a/p.txt\n+++ b/p.txt\n@@ -1 +1 @@\n-a\n+A\n"
      "--- a/src/a.py\n+++ b/src/a.py\n@@ -1 +1 @@\n-nope\n+yes\n";
  Json bad = call("fs_patch", {{"patch", stale}});
  EXPECT_TRUE(failed(bad));
  EXPECT_EQ(read("p.txt"), "a\nb\nc\nD\ne\n");  // the first file was not touched
  Json dry = call("fs_patch", {{"patch", stale}, {"dry_run", true}});
  EXPECT_FALSE(failed(dry));
  EXPECT_EQ(dry["structuredContent"]["files"][0]["hunks"][0]["applies"], true);
  EXPECT_EQ(dry["structuredContent"]["files"][1]["hunks"][0]["applies"], false);
}

TEST_F(WorkspaceToolsTest, PathsOutsideTheRootAndSymlinksAreRefused) {
  for (const char* p : {"../outside/secret.txt", "out/secret.txt", "out"}) {
    Json r = call("fs_read", {{"path", p}});
    EXPECT_TRUE(failed(r)) << p;
    EXPECT_NE(text(r).find("permission denied"), std::string::npos) << text(r);
  }
  std::string absolute_outside = (tmp_.path() / "outside" / "secret.txt").string();
  EXPECT_TRUE(failed(call("fs_read", {{"path", absolute_outside}})));
  EXPECT_TRUE(failed(call("fs_write", {{"path", "out/new.txt"}, {"content", "x"}})));
  EXPECT_FALSE(stdfs::exists(tmp_.path() / "outside" / "new.txt"));
  Json abs_inside = call("fs_read", {{"path", (ws_dir_ / "src" / "a.py").string()}});
  EXPECT_FALSE(failed(abs_inside)) << text(abs_inside);
}

TEST_F(WorkspaceToolsTest, ClientRootsNarrowAccess) {
  EXPECT_FALSE(failed(call("fs_read", {{"path", "src/a.py"}}, {"src"})));
  Json r = call("fs_read", {{"path", "crlf.txt"}}, {"src"});
  EXPECT_TRUE(failed(r));
  EXPECT_NE(text(r).find("outside the roots"), std::string::npos);
  auto mapped = built_.workspace->map_roots({"file://" + (ws_dir_ / "src").string(), "file:///etc",
                                             "https://x", "file://" + tmp_.path().string()});
  EXPECT_EQ(mapped, (std::vector<std::string>{"src", "."}));
}

TEST_F(WorkspaceToolsTest, WriteModesGrepAndFileOps) {
  EXPECT_FALSE(failed(call("fs_write", {{"path", "d/e/f.txt"}, {"content", "hi\n"}})));
  EXPECT_TRUE(
      failed(call("fs_write", {{"path", "d/e/f.txt"}, {"content", "x"}, {"mode", "create"}})));
  EXPECT_FALSE(failed(
      call("fs_write", {{"path", "d/e/f.txt"}, {"content", "there\n"}, {"mode", "append"}})));
  EXPECT_EQ(read("d/e/f.txt"), "hi\nthere\n");
  Json g = call("fs_grep", {{"pattern", "print(x)"}, {"literal", true}, {"output_mode", "count"}});
  EXPECT_EQ(g["structuredContent"]["files"][0]["count"], 2);
  EXPECT_FALSE(failed(call("fs_copy", {{"source", "d"}, {"destination", "d2"}})));
  EXPECT_FALSE(failed(call("fs_move", {{"source", "d2/e/f.txt"}, {"destination", "g.txt"}})));
  EXPECT_EQ(read("g.txt"), "hi\nthere\n");
  EXPECT_TRUE(failed(call("fs_delete", {{"path", "d"}})));
  EXPECT_FALSE(failed(call("fs_delete", {{"path", "d"}, {"recursive", true}})));
  EXPECT_FALSE(stdfs::exists(ws_dir_ / "d"));
  EXPECT_TRUE(failed(call("fs_delete", {{"path", "."}, {"recursive", true}})));
  Json l = call("fs_list", {{"depth", 3}, {"ignore", {"*.py"}}});
  EXPECT_EQ(text(l).find("a.py"), std::string::npos);
  EXPECT_NE(text(l).find("[LINK] out"), std::string::npos);
}

TEST_F(WorkspaceToolsTest, ReadOnlyRegistryHasNoWritingTools) {
  ToolRegistry registry;
  ASSERT_TRUE(add_workspace_tools(registry, {/*read_only=*/true, /*shell=*/true}).ok());
  for (const auto& tool : registry.tools()) {
    EXPECT_TRUE(tool.annotations.read_only) << tool.name;
  }
  EXPECT_EQ(registry.find("fs_write"), nullptr);
  EXPECT_EQ(registry.find("shell_exec"), nullptr);
  EXPECT_NE(registry.find("fs_grep"), nullptr);
}

}  // namespace
}  // namespace weft::server

namespace weft::server {
namespace {

TEST_F(WorkspaceToolsTest, ConcurrentEditsOfOneFileAllLand) {
  std::string body;
  for (int i = 0; i < 16; ++i) body += "marker" + std::to_string(i) + ";\n";
  write("many.txt", body);
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int i = 0; i < 16; ++i) {
    threads.emplace_back([this, i, &failures] {
      Json r = call("fs_edit", {{"path", "many.txt"},
                                {"edits",
                                 {{{"old_string", "marker" + std::to_string(i) + ";"},
                                   {"new_string", "done" + std::to_string(i) + ";"}}}}});
      if (r.value("isError", false)) ++failures;
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  std::string after = read("many.txt");
  for (int i = 0; i < 16; ++i) {
    EXPECT_NE(after.find("done" + std::to_string(i) + ";"), std::string::npos) << i;
  }
}

TEST_F(WorkspaceToolsTest, ReadOfAHugeLineIsCutAndSaysSo) {
  {
    std::ofstream out(ws_dir_ / "big.txt", std::ios::binary);
    std::string block(1 << 20, 'a');
    for (int i = 0; i < 32; ++i)
      out.write(block.data(), static_cast<std::streamsize>(block.size()));
    out << "\nsecond line\n";
  }
  Json r = call("fs_read", {{"path", "big.txt"}, {"limit", 1}});
  ASSERT_FALSE(failed(r)) << text(r);
  EXPECT_LT(text(r).size(), 8192u);
  EXPECT_NE(text(r).find("[line truncated: 33554432 bytes total]"), std::string::npos);
  EXPECT_EQ(r["structuredContent"]["cut_lines"][0]["line"], 1);
  EXPECT_EQ(r["structuredContent"]["cut_lines"][0]["length_bytes"], 33554432);
  EXPECT_EQ(r["structuredContent"]["total_lines"], 2);
  EXPECT_EQ(r["structuredContent"]["truncated"], true);
  Json g = call("fs_grep", {{"pattern", "a+$"}, {"path", "big.txt"}});
  ASSERT_FALSE(failed(g)) << text(g);
  EXPECT_LT(text(g).size(), 8192u);
  EXPECT_NE(text(g).find("[line truncated: 33554432 bytes total"), std::string::npos) << text(g);
  EXPECT_EQ(g["structuredContent"]["matches"][0]["line_length_bytes"], 33554432);
  Json c = call("fs_grep", {{"pattern", "second"}, {"path", "big.txt"}, {"context", 1}});
  ASSERT_FALSE(failed(c)) << text(c);
  EXPECT_LT(text(c).size(), 8192u);
  EXPECT_NE(text(c).find("big.txt-1-aaaa"), std::string::npos) << text(c).substr(0, 200);
  EXPECT_NE(text(c).find("[line truncated: 33554432 bytes total]"), std::string::npos);
  EXPECT_NE(text(c).find("big.txt:2:second line"), std::string::npos);
}

TEST_F(WorkspaceToolsTest, EditRefusesAFileOverTheWriteLimitBeforeReadingIt) {
  {
    std::ofstream out(ws_dir_ / "huge.txt", std::ios::binary);
    out.seekp((64ll << 20) + 10);
    out << "x";
  }
  Json r = call("fs_edit",
                {{"path", "huge.txt"}, {"edits", {{{"old_string", "x"}, {"new_string", "y"}}}}});
  EXPECT_TRUE(failed(r));
  EXPECT_NE(text(r).find("fs_edit rewrites files of at most 67108864 bytes"), std::string::npos)
      << text(r);
}

TEST_F(WorkspaceToolsTest, ListingsEscapeNamesAndReportTypes) {
  write("evil\n[FILE] forged.txt", "x\n");
  ASSERT_EQ(::mkfifo((ws_dir_ / "pipe").c_str(), 0600), 0);
  Json l = call("fs_list", {});
  ASSERT_FALSE(failed(l)) << text(l);
  EXPECT_NE(text(l).find("[FILE] evil\\n[FILE] forged.txt\n"), std::string::npos) << text(l);
  EXPECT_EQ(text(l).find("\n[FILE] forged.txt"), std::string::npos) << text(l);
  EXPECT_NE(text(l).find("[FIFO] pipe\n"), std::string::npos) << text(l);
  EXPECT_NE(text(l).find("[LINK] out -> "), std::string::npos) << text(l);
  bool exact = false;
  for (const Json& e : l["structuredContent"]["entries"]) {
    if (e["path"] == "evil\n[FILE] forged.txt") exact = e["type"] == "file";
    if (e["path"] == "pipe") {
      EXPECT_EQ(e["type"], "fifo");
    }
    if (e["path"] == "out") {
      EXPECT_EQ(e["type"], "symlink");
    }
  }
  EXPECT_TRUE(exact) << l["structuredContent"].dump();

  Json g = call("fs_glob", {{"pattern", "*"}});
  EXPECT_NE(text(g).find("evil\\n[FILE] forged.txt\n"), std::string::npos) << text(g);
  EXPECT_NE(text(g).find("pipe|\n"), std::string::npos) << text(g);
  Json grep = call("fs_grep", {{"pattern", "x"}, {"output_mode", "files_with_matches"}});
  EXPECT_NE(text(grep).find("evil\\n[FILE] forged.txt\n"), std::string::npos) << text(grep);

  Json st = call("fs_stat", {{"path", "pipe"}});
  ASSERT_FALSE(failed(st)) << text(st);
  EXPECT_EQ(st["structuredContent"]["type"], "fifo");
  EXPECT_NE(text(st).find("type: fifo"), std::string::npos);
  st = call("fs_stat", {{"path", "out"}});
  ASSERT_FALSE(failed(st)) << text(st);
  EXPECT_EQ(st["structuredContent"]["type"], "symlink");
  EXPECT_EQ(st["structuredContent"]["symlink_target"], (tmp_.path() / "outside").string());
  st = call("fs_stat", {{"path", "evil\n[FILE] forged.txt"}});
  ASSERT_FALSE(failed(st)) << text(st);
  EXPECT_NE(text(st).find("path: evil\\n[FILE] forged.txt\n"), std::string::npos) << text(st);

  // A fifo is refused at once, never waited on.
  Json r = call("fs_read", {{"path", "pipe"}});
  EXPECT_TRUE(failed(r));
  EXPECT_NE(text(r).find("fifo"), std::string::npos) << text(r);
  EXPECT_TRUE(failed(call("fs_grep", {{"pattern", "x"}, {"path", "pipe"}})));
}

TEST_F(WorkspaceToolsTest, ResourceReadRefusesFifosAndFilesOverTheCap) {
  auto resources = make_workspace_resources(built_.workspace);
  ASSERT_EQ(::mkfifo((ws_dir_ / "pipe").c_str(), 0600), 0);
  auto fifo = resources->read(built_.workspace->uri_of("pipe"), {});
  ASSERT_FALSE(fifo.ok());
  EXPECT_NE(std::string(fifo.status().message()).find("fifo, not a regular file"),
            std::string::npos)
      << fifo.status();
  {
    std::ofstream out(ws_dir_ / "big.txt", std::ios::binary);
    out.seekp((16ll << 20) + 1);
    out << "x";
  }
  auto big = resources->read(built_.workspace->uri_of("big.txt"), {});
  EXPECT_EQ(big.status().code(), StatusCode::kResourceExhausted) << big.status();
  auto small = resources->read(built_.workspace->uri_of("src/a.py"), {});
  ASSERT_TRUE(small.ok()) << small.status();
  EXPECT_EQ((*small)[0]["text"], "x = 1\nprint(x)\nprint(x)\n");
}

}  // namespace
}  // namespace weft::server
