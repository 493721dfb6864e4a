// WebRoutes (web_routes.h): the page's routes, the bundle, and the JSON API
// over a real kernel.
#include "weft/server/web_routes.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <boost/beast/http.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "support/test_support.h"
#include "weft/fs/filesystem.h"
#include "weft/kernel/kernel.h"
#include "weft/server/web_assets.h"

namespace weft::server {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using Json = nlohmann::json;

struct Env {
  weft::testing::TempDir dir;
  std::shared_ptr<Workspace> workspace;
  std::shared_ptr<kernel::Kernel> kernel;

  std::filesystem::path root() const { return dir.path() / "root"; }
  void write(const std::string& rel, const std::string& text) {
    std::filesystem::create_directories((root() / rel).parent_path());
    std::ofstream(root() / rel, std::ios::binary) << text;
  }
  explicit Env(bool with_kernel = true) {
    std::filesystem::create_directories(root());
    write("weft.toml",
          "[permissions]\nrules = [\n  { glob = \"vendor/**\", level = \"read_only\" },\n"
          "  { glob = \"ask/**\", level = \"human\" },\n]\n");
    write("notes/a.md", "one\ntwo\n");
    write("vendor/lib.c", "int x;\n");
    write("ask/plan.md", "plan\n");
    write("bin/blob", std::string("\x7f" "ELF\0\0\1", 7));
    fs::HostOptions host;
    host.durability = fs::WriteDurability::kAtomicRename;
    auto filesystem = fs::make_host_filesystem(root().string(), host);
    EXPECT_TRUE(filesystem.ok());
    std::shared_ptr<fs::Filesystem> shared(std::move(*filesystem));
    workspace = std::make_shared<Workspace>(shared);
    if (with_kernel) {
      kernel::KernelOptions options;
      options.state_dir = (dir.path() / "state").string();
      options.watch = false;
      auto k = kernel::Kernel::open(shared, options);
      EXPECT_TRUE(k.ok()) << k.status();
      kernel = std::move(*k);
      workspace->set_kernel(kernel);
    }
  }
};

WebRequest get(std::string target, std::string token = "") {
  WebRequest r{"GET", std::move(target), {}, ""};
  if (!token.empty()) r.headers.emplace_back("authorization", "Bearer " + token);
  return r;
}

WebRequest post(std::string target, Json body) {
  return WebRequest{"POST", std::move(target), {{"Content-Type", "application/json"}},
                    body.dump()};
}

Json json_of(const std::optional<WebResponse>& r) {
  EXPECT_TRUE(r.has_value());
  if (!r) return Json();
  EXPECT_EQ(r->content_type, "application/json") << r->body;
  return Json::parse(r->body, nullptr, false);
}

source::Attribution agent(std::string name) { return {"agent:" + name, "fs_edit", std::nullopt}; }

kernel::TextTransform replace_with(std::string text) {
  return [text](const std::optional<std::string>&) -> Result<std::string> { return text; };
}

TEST(WebTargets, RecognisesThePageRoutesOnly) {
  for (const char* t : {"/", "/?token=x", "/edit/a.md", "/history/docs/x.md", "/approvals",
                        "/assets/app.js", "/api/tree?path=."}) {
    EXPECT_TRUE(is_web_target(t)) << t;
  }
  for (const char* t : {"/mcp", "/sync", "/edit", "/approvalsx", "/favicon.ico", ""}) {
    EXPECT_FALSE(is_web_target(t)) << t;
  }
}

TEST(WebBundle, ParsesEntriesAndRejectsDamage) {
  const std::string good =
      "WEFTWEB1\nindex.html\ttext/html\tidentity\t5\nhello"
      "app.js\ttext/javascript\tidentity\t3\nx=1";
  auto b = parse_web_bundle(good);
  ASSERT_TRUE(b.ok()) << b.status();
  ASSERT_EQ(b->files.size(), 2u);
  EXPECT_EQ(b->files.at("index.html").bytes, "hello");
  EXPECT_EQ(b->files.at("app.js").content_type, "text/javascript");
  EXPECT_FALSE(b->etag.empty());

  EXPECT_EQ(parse_web_bundle("NOPE\n").status().code(), StatusCode::kDataLoss);
  auto truncated = parse_web_bundle("WEFTWEB1\na\ttext/plain\tidentity\t50\nshort");
  EXPECT_EQ(truncated.status().code(), StatusCode::kDataLoss);
  EXPECT_THAT(std::string(truncated.status().message()), HasSubstr("truncated"));
  EXPECT_EQ(parse_web_bundle("WEFTWEB1\na\ttext/plain\tbrotli\t1\nx").status().code(),
            StatusCode::kDataLoss);
  EXPECT_EQ(parse_web_bundle("WEFTWEB1\na\ttext/plain\tidentity\t1x\nx").status().code(),
            StatusCode::kDataLoss);
}

TEST(WebBundle, EmbeddedBundleHasThePage) {
  const WebBundle& b = embedded_web_bundle();
  ASSERT_TRUE(b.files.count("index.html")) << "the embedded bundle has no index.html";
  const WebAsset& index = b.files.at("index.html");
  std::string html(index.bytes);
  if (index.gzipped) {
    auto plain = gunzip(index.bytes);
    ASSERT_TRUE(plain.ok()) << plain.status();
    html = *plain;
  }
  EXPECT_THAT(html, HasSubstr("<html"));
}

TEST(Gunzip, RejectsWhatIsNotGzip) {
  EXPECT_EQ(gunzip("plain text").status().code(), StatusCode::kDataLoss);
}

TEST(WebRoutes, ServesThePageOnEveryBookmarkableRoute) {
  Env env;
  WebRoutes routes(env.workspace, {});
  for (const char* t : {"/", "/edit/notes/a.md", "/history/notes/a.md", "/approvals"}) {
    auto r = routes.handle(get(t));
    ASSERT_TRUE(r.has_value()) << t;
    EXPECT_EQ(r->status, 200) << t;
    EXPECT_THAT(r->content_type, HasSubstr("text/html")) << t;
  }
  EXPECT_FALSE(routes.handle(get("/mcp")).has_value());
  auto missing = routes.handle(get("/assets/nope.js"));
  ASSERT_TRUE(missing.has_value());
  EXPECT_EQ(missing->status, 404);
  auto wrong = routes.handle(WebRequest{"DELETE", "/", {}, ""});
  ASSERT_TRUE(wrong.has_value());
  EXPECT_EQ(wrong->status, 405);
}

TEST(WebRoutes, AnswersNotModifiedForTheSameEtag) {
  Env env;
  WebRoutes routes(env.workspace, {});
  auto first = routes.handle(get("/"));
  ASSERT_TRUE(first.has_value());
  std::string etag;
  for (const auto& [k, v] : first->headers) {
    if (k == "ETag") etag = v;
  }
  ASSERT_FALSE(etag.empty());
  WebRequest again = get("/");
  again.headers.emplace_back("If-None-Match", etag);
  EXPECT_EQ(routes.handle(again)->status, 304);
}

TEST(WebRoutes, ApiNeedsTheTokenWhenOneIsSet) {
  Env env;
  WebRoutesOptions options;
  options.authorize = bearer_authorizer("s3cret");
  WebRoutes routes(env.workspace, options);
  EXPECT_EQ(routes.handle(get("/api/session"))->status, 401);
  EXPECT_EQ(routes.handle(get("/api/session", "wrong"))->status, 401);
  EXPECT_EQ(routes.handle(get("/api/session", "s3cret"))->status, 200);
  // The page itself holds no data and needs no token.
  EXPECT_EQ(routes.handle(get("/"))->status, 200);
  // An empty token accepts nothing.
  WebRoutesOptions empty;
  empty.authorize = bearer_authorizer("");
  EXPECT_EQ(WebRoutes(env.workspace, empty).handle(get("/api/session", ""))->status, 401);
}

TEST(WebRoutes, TreeListsFilesWithTheirState) {
  Env env;
  ASSERT_TRUE(env.kernel->change_text("ask/plan.md", agent("claude"), source::FileOp::kOverwrite,
                                      replace_with("new plan\n"))
                  .ok());
  WebRoutes routes(env.workspace, {});
  Json root = json_of(routes.handle(get("/api/tree?path=.")));
  ASSERT_TRUE(root["entries"].is_array()) << root.dump();
  std::map<std::string, Json> by_name;
  for (const auto& e : root["entries"]) by_name[e["name"]] = e;
  ASSERT_TRUE(by_name.count("ask"));
  EXPECT_TRUE(by_name["ask"]["dir"].get<bool>());
  EXPECT_EQ(by_name["ask"]["below"]["pending"], 1) << by_name["ask"].dump();
  // Directories come first.
  EXPECT_TRUE(root["entries"][0]["dir"].get<bool>());

  Json ask = json_of(routes.handle(get("/api/tree?path=ask")));
  ASSERT_EQ(ask["entries"].size(), 1u);
  EXPECT_EQ(ask["entries"][0]["permission"], "human");
  EXPECT_EQ(ask["entries"][0]["state"]["pending_approvals"].size(), 1u) << ask.dump();

  EXPECT_EQ(routes.handle(get("/api/tree?path=../outside"))->status, 403);
}

TEST(WebRoutes, FileInfoSaysWhatTheFileIs) {
  Env env;
  env.write("big.txt", std::string(2048, 'a'));
  WebRoutesOptions options;
  options.max_editor_bytes = 1024;
  WebRoutes routes(env.workspace, options);
  Json text = json_of(routes.handle(get("/api/file?path=notes/a.md")));
  EXPECT_EQ(text["kind"], "text");
  EXPECT_FALSE(text["read_only"].get<bool>());
  Json locked = json_of(routes.handle(get("/api/file?path=vendor/lib.c")));
  EXPECT_TRUE(locked["read_only"].get<bool>());
  EXPECT_THAT(locked["rule"].get<std::string>(), HasSubstr("vendor/**")) << locked.dump();
  Json human = json_of(routes.handle(get("/api/file?path=ask/plan.md")));
  EXPECT_TRUE(human["needs_approval"].get<bool>());
  EXPECT_EQ(json_of(routes.handle(get("/api/file?path=bin/blob")))["kind"], "binary");
  EXPECT_EQ(json_of(routes.handle(get("/api/file?path=big.txt")))["kind"], "too_large");
  EXPECT_EQ(json_of(routes.handle(get("/api/file?path=nope.md")))["kind"], "missing");
  EXPECT_EQ(json_of(routes.handle(get("/api/file?path=notes")))["kind"], "directory");
  EXPECT_EQ(routes.handle(get("/api/file"))->status, 400);
  EXPECT_EQ(routes.handle(get("/api/file?path=%zz"))->status, 400);
}

TEST(WebRoutes, HistoryDiffAndRollback) {
  Env env;
  auto v1 = env.kernel->change_text("notes/a.md", agent("claude"), source::FileOp::kOverwrite,
                                    replace_with("one\nTWO\n"));
  ASSERT_TRUE(v1.ok()) << v1.status();
  auto v2 = env.kernel->change_text("notes/a.md", agent("codex"), source::FileOp::kOverwrite,
                                    replace_with("one\nTWO\nthree\n"));
  ASSERT_TRUE(v2.ok()) << v2.status();
  WebRoutes routes(env.workspace, {});
  Json h = json_of(routes.handle(get("/api/history?path=notes%2Fa.md&limit=10")));
  ASSERT_GE(h["entries"].size(), 2u) << h.dump();
  EXPECT_EQ(h["entries"][0]["author"], "agent:codex");
  EXPECT_GT(h["entries"][0]["timestamp"].get<int64_t>(), 0);

  Json d = json_of(routes.handle(get("/api/diff?path=notes/a.md&to=" + v2->version)));
  EXPECT_THAT(d["diff"].get<std::string>(), HasSubstr("+three")) << d.dump();
  EXPECT_EQ(routes.handle(get("/api/history?path=notes/a.md&limit=0"))->status, 400);

  EXPECT_EQ(routes.handle(post("/api/rollback", {{"path", "notes/a.md"}, {"version", v1->version}}))
                ->status,
            400);  // no person
  auto back = routes.handle(post(
      "/api/rollback", {{"path", "notes/a.md"}, {"version", v1->version}, {"person", "alice"}}));
  ASSERT_EQ(back->status, 200) << back->body;
  EXPECT_EQ(weft::testing::read_file(env.root() / "notes/a.md"), "one\nTWO\n");
  Json after = json_of(routes.handle(get("/api/history?path=notes/a.md")));
  EXPECT_EQ(after["entries"][0]["author"], "human:alice");
  EXPECT_EQ(routes.handle(get("/api/rollback"))->status, 405);
}

TEST(WebRoutes, HistoryGroupsAWritersRunOfChanges) {
  Env env;
  // Three quick changes by one agent, then one by a person: two entries.
  std::string text = weft::testing::read_file(env.root() / "notes/a.md");
  std::vector<std::string> versions;
  for (const char* line : {"alpha\n", "beta\n", "gamma\n"}) {
    text += line;
    auto r = env.kernel->change_text("notes/a.md", agent("claude"), source::FileOp::kOverwrite,
                                     replace_with(text));
    ASSERT_TRUE(r.ok()) << r.status();
    versions.push_back(r->version);
  }
  auto person = env.kernel->change_text("notes/a.md", source::Attribution{"human:ada", "edit", std::nullopt},
                                        source::FileOp::kOverwrite, replace_with(text + "delta\n"));
  ASSERT_TRUE(person.ok()) << person.status();
  WebRoutes routes(env.workspace, {});

  Json h = json_of(routes.handle(get("/api/history?path=notes/a.md")));
  const Json& entries = h["entries"];
  ASSERT_GE(entries.size(), 2u) << h.dump();
  EXPECT_EQ(entries[0]["author"], "human:ada");
  EXPECT_EQ(entries[0]["changes"], 1);
  EXPECT_EQ(entries[1]["author"], "agent:claude");
  EXPECT_EQ(entries[1]["changes"], 3) << h.dump();
  EXPECT_EQ(entries[1]["version"], versions.back());
  EXPECT_LE(entries[1]["first_timestamp"].get<int64_t>(), entries[1]["timestamp"].get<int64_t>());

  // The run's diff covers its three changes, and nothing of the person's.
  Json d = json_of(routes.handle(get("/api/diff?path=notes/a.md&from=" +
                                     entries[1]["from"].get<std::string>() +
                                     "&to=" + entries[1]["version"].get<std::string>())));
  const std::string diff = d["diff"].get<std::string>();
  EXPECT_THAT(diff, HasSubstr("+alpha"));
  EXPECT_THAT(diff, HasSubstr("+gamma"));
  EXPECT_THAT(diff, Not(HasSubstr("+delta")));

  // The oldest entry starts from the file's beginning (or its first import).
  const Json& oldest = entries.back();
  auto first = routes.handle(get("/api/diff?path=notes/a.md&from=" +
                                 oldest["from"].get<std::string>() +
                                 "&to=" + oldest["version"].get<std::string>()));
  EXPECT_EQ(first->status, 200) << first->body;

  // changes=1 lists each change alone; limit counts entries, not changes.
  Json each = json_of(routes.handle(get("/api/history?path=notes/a.md&changes=1")));
  EXPECT_EQ(each["entries"].size(), entries.size() + 2) << each.dump();
  EXPECT_EQ(each["entries"][1]["changes"], 1);
  Json one = json_of(routes.handle(get("/api/history?path=notes/a.md&limit=2")));
  ASSERT_EQ(one["entries"].size(), 2u);
  EXPECT_EQ(one["entries"][1]["changes"], 3);
}

TEST(WebRoutes, ApproveAndRejectAsAPerson) {
  Env env;
  auto first = env.kernel->change_text("ask/plan.md", agent("claude"), source::FileOp::kOverwrite,
                                       replace_with("approved plan\n"));
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_FALSE(first->pending_approval.empty());
  WebRoutes routes(env.workspace, {});
  Json list = json_of(routes.handle(get("/api/approvals")));
  ASSERT_EQ(list["approvals"].size(), 1u);
  EXPECT_THAT(list["approvals"][0]["diff"].get<std::string>(), HasSubstr("+approved plan"));

  const std::string id = first->pending_approval;
  EXPECT_EQ(routes.handle(post("/api/approvals/" + id + "/approve", {{"person", "bad name!"}}))
                ->status,
            400);
  auto ok = routes.handle(post("/api/approvals/" + id + "/approve", {{"person", "alice"}}));
  ASSERT_EQ(ok->status, 200) << ok->body;
  EXPECT_EQ(weft::testing::read_file(env.root() / "ask/plan.md"), "approved plan\n");
  EXPECT_EQ(json_of(routes.handle(get("/api/approvals")))["approvals"].size(), 0u);

  auto second = env.kernel->change_text("ask/plan.md", agent("claude"), source::FileOp::kOverwrite,
                                        replace_with("worse plan\n"));
  ASSERT_TRUE(second.ok());
  auto no = routes.handle(
      post("/api/approvals/" + second->pending_approval + "/reject", {{"person", "bob"}}));
  ASSERT_EQ(no->status, 200) << no->body;
  EXPECT_EQ(weft::testing::read_file(env.root() / "ask/plan.md"), "approved plan\n");
  Json all = json_of(routes.handle(get("/api/approvals?all=1")));
  ASSERT_EQ(all["approvals"].size(), 2u);
  EXPECT_EQ(routes.handle(post("/api/approvals/apr_000000000000/approve", {{"person", "a"}}))
                ->status,
            404);
}

TEST(WebRoutes, ApiWithoutAKernelSaysSo) {
  Env env(/*with_kernel=*/false);
  WebRoutes routes(env.workspace, {});
  auto r = routes.handle(get("/api/history?path=notes/a.md"));
  EXPECT_EQ(r->status, 503);
  EXPECT_THAT(r->body, HasSubstr("kernel"));
  Json file = json_of(routes.handle(get("/api/file?path=notes/a.md")));
  EXPECT_TRUE(file["read_only"].get<bool>());
}

TEST(WebRequestOf, CopiesMethodTargetHeadersAndBody) {
  namespace http = boost::beast::http;
  http::request<http::string_body> req{http::verb::post, "/api/rollback?x=1", 11};
  req.set(http::field::authorization, "Bearer t");
  req.body() = "{}";
  WebRequest w = web_request_of(req);
  EXPECT_EQ(w.method, "POST");
  EXPECT_EQ(w.target, "/api/rollback?x=1");
  EXPECT_EQ(w.header("AUTHORIZATION"), "Bearer t");
  EXPECT_EQ(w.body, "{}");
}

TEST(WebResponse, SerializesHeadersAndBody) {
  WebResponse r{200, "text/plain", {{"ETag", "\"x\""}}, "hello"};
  std::string bytes = serialize_web_response(r, true, false);
  EXPECT_THAT(bytes, HasSubstr("HTTP/1.1 200 OK\r\n"));
  EXPECT_THAT(bytes, HasSubstr("Content-Length: 5\r\n"));
  EXPECT_THAT(bytes, HasSubstr("ETag: \"x\"\r\n"));
  EXPECT_EQ(bytes.substr(bytes.size() - 9), "\r\n\r\nhello");
  std::string head = serialize_web_response(r, false, true);
  EXPECT_THAT(head, HasSubstr("Connection: close"));
  EXPECT_EQ(head.substr(head.size() - 4), "\r\n\r\n");
}

}  // namespace
}  // namespace weft::server
