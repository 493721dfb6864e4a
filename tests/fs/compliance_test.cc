// The protocol compliance suite: one typed test per behaviour of the seed's
// Filesystem protocol, run against every backend (backends.h).
#include <string>

#include "backends.h"
#include "weft/base/utf.h"

namespace weft::fs::testing {
namespace {

template <typename B>
using Compliance = FsTest<B>;
TYPED_TEST_SUITE(Compliance, AllBackends, BackendNames);

#define EXPECT_CODE(expr, c) EXPECT_EQ((expr).code(), StatusCode::c)

TYPED_TEST(Compliance, RootAndReadOnlyFlag) {
  if (TypeParam::kOnDisk) {
    EXPECT_EQ(this->fs().root(), std::filesystem::canonical(this->backend_.root()).string());
  } else {
    EXPECT_EQ(this->fs().root(), "/");
  }
  EXPECT_FALSE(this->fs().read_only());
  EXPECT_EQ(this->fs().limits().max_write_chars, 48'000);
  EXPECT_EQ(this->fs().limits().max_path_depth, 16);
  EXPECT_EQ(this->fs().limits().max_segment_length, 80);
  EXPECT_EQ(this->fs().limits().default_read_lines, 2'000);
  EXPECT_EQ(this->fs().limits().max_grep_matches, 1'000);
}

TYPED_TEST(Compliance, ReadErrors) {
  EXPECT_CODE(this->fs().read("missing.txt").status(), kNotFound);
  ASSERT_TRUE(this->fs().mkdir("d").ok());
  EXPECT_CODE(this->fs().read("d").status(), kIsADirectory);
  EXPECT_CODE(this->fs().read_bytes("d").status(), kIsADirectory);
  EXPECT_CODE(this->fs().read(".").status(), kIsADirectory);
  this->put("f.txt", "x\n");
  EXPECT_CODE(this->fs().read("f.txt", -1).status(), kInvalidArgument);
  EXPECT_CODE(this->fs().read("f.txt", 0, 0).status(), kInvalidArgument);
  EXPECT_CODE(this->fs().read_bytes("f.txt", -3).status(), kInvalidArgument);
  EXPECT_CODE(this->fs().read("f.txt/x").status(), kNotADirectory);
}

TYPED_TEST(Compliance, ReadPagination) {
  this->put("p.txt", "a\nb\nc\nd\ne");
  auto r = this->fs().read("p.txt", 1, 2);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->content, "b\nc\n");
  EXPECT_EQ(r->total_lines, 5);
  EXPECT_EQ(r->offset, 1);
  EXPECT_EQ(r->limit, 2);
  EXPECT_TRUE(r->truncated);
  EXPECT_EQ(r->path, "p.txt");
  auto tail = this->fs().read("p.txt", 3, 10);
  ASSERT_TRUE(tail.ok());
  EXPECT_EQ(tail->content, "d\ne");
  EXPECT_FALSE(tail->truncated);
  auto past = this->fs().read("p.txt", 9);
  ASSERT_TRUE(past.ok());
  EXPECT_EQ(past->content, "");
  EXPECT_FALSE(past->truncated);
  auto all = this->fs().read("p.txt");
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->limit, 2000);
  EXPECT_EQ(all->content, "a\nb\nc\nd\ne");
}

TYPED_TEST(Compliance, DefaultReadLimitIsConfigurable) {
  FsLimits limits;
  limits.default_read_lines = 3;
  auto fs = this->backend_.make(limits);
  ASSERT_TRUE(fs->write("l.txt", "1\n2\n3\n4\n").ok());
  auto r = fs->read("l.txt");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->content, "1\n2\n3\n");
  EXPECT_EQ(r->limit, 3);
  EXPECT_TRUE(r->truncated);
  EXPECT_EQ(r->total_lines, 4);
}

TYPED_TEST(Compliance, EmptyFileAndCrlf) {
  this->put("empty", "");
  auto e = this->fs().read("empty");
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->total_lines, 0);
  EXPECT_EQ(e->content, "");
  EXPECT_FALSE(e->truncated);
  auto st = this->fs().stat("empty");
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(st->size_bytes, 0);
  ASSERT_TRUE(this->fs().write("crlf.txt", "one\r\ntwo\r\nthree").ok());
  auto r = this->fs().read("crlf.txt", 1, 1);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->content, "two\r\n");
  EXPECT_EQ(r->total_lines, 3);
  EXPECT_EQ(this->get("crlf.txt"), "one\r\ntwo\r\nthree");
}

TYPED_TEST(Compliance, BinaryContent) {
  std::string all;
  for (int i = 0; i < 256; ++i) all.push_back(static_cast<char>(i));
  all += all;
  auto w = this->fs().write_bytes("bin/all.bin", all);
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_EQ(w->bytes_written, 512);
  EXPECT_EQ(this->get("bin/all.bin"), all);
  EXPECT_CODE(this->fs().read("bin/all.bin").status(), kInvalidArgument);
  auto part = this->fs().read_bytes("bin/all.bin", 250, 10);
  ASSERT_TRUE(part.ok());
  EXPECT_EQ(part->content, all.substr(250, 10));
  EXPECT_EQ(part->size_bytes, 512);
  EXPECT_TRUE(part->truncated);
  auto end = this->fs().read_bytes("bin/all.bin", 500);
  ASSERT_TRUE(end.ok());
  EXPECT_EQ(end->content.size(), 12u);
  EXPECT_FALSE(end->truncated);
  EXPECT_CODE(this->fs().write("bad.txt", std::string("\xFF\xFE")).status(), kInvalidArgument);
  EXPECT_FALSE(this->fs().exists("bad.txt"));
}

TYPED_TEST(Compliance, WriteModes) {
  auto c = this->fs().write("m.txt", "one", WriteMode::kCreate);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->mode, WriteMode::kCreate);
  EXPECT_EQ(c->bytes_written, 3);
  EXPECT_CODE(this->fs().write("m.txt", "again", WriteMode::kCreate).status(), kAlreadyExists);
  EXPECT_EQ(this->get("m.txt"), "one");
  auto a = this->fs().write("m.txt", "+two", WriteMode::kAppend);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->bytes_written, 4);
  EXPECT_EQ(this->get("m.txt"), "one+two");
  ASSERT_TRUE(this->fs().write("m.txt", "three").ok());
  EXPECT_EQ(this->get("m.txt"), "three");
  ASSERT_TRUE(this->fs().write("new.txt", "x", WriteMode::kAppend).ok());
  EXPECT_EQ(this->get("new.txt"), "x");
  EXPECT_EQ(write_mode_name(WriteMode::kAppend), "append");
  EXPECT_EQ(*parse_write_mode("create"), WriteMode::kCreate);
  EXPECT_CODE(parse_write_mode("truncate").status(), kInvalidArgument);
}

TYPED_TEST(Compliance, WriteParentsAndDirectories) {
  EXPECT_CODE(this->fs().write("no/such/dir.txt", "x", WriteMode::kOverwrite, false).status(),
              kNotFound);
  EXPECT_FALSE(this->fs().exists("no"));
  ASSERT_TRUE(this->fs().write("deep/er/f.txt", "x").ok());
  EXPECT_TRUE(this->fs().stat("deep/er")->is_directory);
  EXPECT_CODE(this->fs().write("deep/er", "x").status(), kIsADirectory);
  EXPECT_CODE(this->fs().write("deep/er/f.txt/g", "x").status(), kNotADirectory);
  EXPECT_CODE(this->fs().write(".", "x").status(), kIsADirectory);
}

TYPED_TEST(Compliance, WriteLimits) {
  std::string at(48'000, 'a');
  ASSERT_TRUE(this->fs().write("at.txt", at).ok());
  EXPECT_EQ(this->get("at.txt"), at);
  EXPECT_CODE(this->fs().write("over.txt", at + "a").status(), kResourceExhausted);
  EXPECT_FALSE(this->fs().exists("over.txt"));
  std::string wide;
  for (int i = 0; i < 48'000; ++i) wide += "\xC3\xA9";  // é: 2 bytes, 1 character
  ASSERT_TRUE(this->fs().write("wide.txt", wide).ok());
  EXPECT_CODE(this->fs().write_bytes("wide.bin", wide).status(), kResourceExhausted);
  // A failed write leaves the old content intact.
  EXPECT_CODE(this->fs().write("at.txt", at + "b").status(), kResourceExhausted);
  EXPECT_EQ(this->get("at.txt"), at);
  // Big files grow by appends past the per-write limit.
  ASSERT_TRUE(this->fs().write("at.txt", at, WriteMode::kAppend).ok());
  ASSERT_TRUE(this->fs().write("at.txt", at, WriteMode::kAppend).ok());
  auto r = this->fs().read_bytes("at.txt");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->size_bytes, 144'000);
  FsLimits small;
  small.max_write_chars = 10;
  auto fs = this->backend_.make(small);
  EXPECT_CODE(fs->write("s.txt", "01234567890").status(), kResourceExhausted);
  EXPECT_TRUE(fs->write("s.txt", "0123456789").ok());
}

TYPED_TEST(Compliance, ReadOnlyInstance) {
  this->put("keep.txt", "k");
  auto ro = this->backend_.make({}, /*read_only=*/true);
  ASSERT_NE(ro, nullptr);
  EXPECT_TRUE(ro->read_only());
  if (TypeParam::kOnDisk) EXPECT_EQ(ro->read("keep.txt")->content, "k");
  EXPECT_CODE(ro->write("x.txt", "x").status(), kPermissionDenied);
  EXPECT_CODE(ro->write_bytes("x.txt", "x").status(), kPermissionDenied);
  EXPECT_CODE(ro->mkdir("d"), kPermissionDenied);
  EXPECT_CODE(ro->remove("keep.txt"), kPermissionDenied);
  EXPECT_CODE(ro->move("keep.txt", "k2"), kPermissionDenied);
  EXPECT_CODE(ro->copy("keep.txt", "k2"), kPermissionDenied);
  EXPECT_FALSE(ro->exists("x.txt"));
}

TYPED_TEST(Compliance, PathNormalisation) {
  this->put("a/b.txt", "b");
  EXPECT_EQ(this->fs().read("./a/../a//b.txt")->path, "a/b.txt");
  EXPECT_EQ(this->get("a/./b.txt"), "b");
  std::string abs = this->fs().root() == "/" ? "/a/b.txt" : this->fs().root() + "/a/b.txt";
  EXPECT_EQ(this->get(abs), "b");
  EXPECT_CODE(this->fs().read("../x").status(), kPermissionDenied);
  EXPECT_CODE(this->fs().read("a/../../x").status(), kPermissionDenied);
  if (TypeParam::kOnDisk) EXPECT_CODE(this->fs().read("/etc/passwd").status(), kPermissionDenied);
  EXPECT_CODE(this->fs().read(std::string("a\0b", 3)).status(), kInvalidArgument);
  std::string deep;
  for (int i = 0; i < 17; ++i) deep += "d/";
  EXPECT_CODE(this->fs().write(deep + "f", "x").status(), kInvalidArgument);
  std::string ok_deep;
  for (int i = 0; i < 15; ++i) ok_deep += "d/";
  EXPECT_TRUE(this->fs().write(ok_deep + "f", "x").ok());
  EXPECT_TRUE(this->fs().write(std::string(80, 's'), "x").ok());
  EXPECT_CODE(this->fs().write(std::string(81, 's'), "x").status(), kInvalidArgument);
  EXPECT_FALSE(this->fs().exists("../x"));
  EXPECT_FALSE(this->fs().exists(std::string("\0", 1)));
}

TYPED_TEST(Compliance, UnicodeNames) {
  const std::string dir =
      "donn\xC3\xA9"
      "es";
  const std::string name = dir + "/\xE6\x97\xA5\xE6\x9C\xAC.txt";
  ASSERT_TRUE(this->fs().write(name, "\xF0\x9F\x98\x80 smile\n").ok());
  EXPECT_EQ(this->fs().read(name)->content, "\xF0\x9F\x98\x80 smile\n");
  auto l = this->fs().list(dir);
  ASSERT_TRUE(l.ok());
  ASSERT_EQ(l->size(), 1u);
  EXPECT_EQ((*l)[0].path, name);
  auto g = this->fs().glob("**/*.txt");
  ASSERT_TRUE(g.ok());
  ASSERT_EQ(g->size(), 1u);
  EXPECT_EQ((*g)[0].path, name);
  auto m = this->fs().grep("smile");
  ASSERT_TRUE(m.ok());
  ASSERT_EQ(m->size(), 1u);
  EXPECT_EQ((*m)[0].match_start, 2);  // the emoji is one code point, then a space
  EXPECT_EQ((*m)[0].match_start_byte, 5);
}

TYPED_TEST(Compliance, ExistsAndStat) {
  this->put("s/f.txt", "12345");
  EXPECT_TRUE(this->fs().exists("s"));
  EXPECT_TRUE(this->fs().exists("s/f.txt"));
  EXPECT_TRUE(this->fs().exists("."));
  EXPECT_FALSE(this->fs().exists("s/g.txt"));
  EXPECT_FALSE(this->fs().exists("s/f.txt/x"));
  auto f = this->fs().stat("s/f.txt");
  ASSERT_TRUE(f.ok());
  EXPECT_TRUE(f->is_file);
  EXPECT_FALSE(f->is_directory);
  EXPECT_EQ(f->size_bytes, 5);
  EXPECT_EQ(f->path, "s/f.txt");
  EXPECT_TRUE(f->modified_at.has_value());
  auto d = this->fs().stat("s");
  ASSERT_TRUE(d.ok());
  EXPECT_TRUE(d->is_directory);
  EXPECT_EQ(this->fs().stat("")->path, ".");
  EXPECT_CODE(this->fs().stat("nope").status(), kNotFound);
}

TYPED_TEST(Compliance, List) {
  this->put("l/b.txt", "b");
  this->put("l/a.txt", "a");
  ASSERT_TRUE(this->fs().mkdir("l/c").ok());
  ASSERT_TRUE(this->fs().mkdir("empty").ok());
  auto l = this->fs().list("l");
  ASSERT_TRUE(l.ok());
  ASSERT_EQ(l->size(), 3u);
  EXPECT_EQ((*l)[0].name, "a.txt");
  EXPECT_EQ((*l)[0].path, "l/a.txt");
  EXPECT_TRUE((*l)[0].is_file);
  EXPECT_EQ((*l)[2].name, "c");
  EXPECT_TRUE((*l)[2].is_directory);
  EXPECT_TRUE(this->fs().list("empty")->empty());
  auto top = this->fs().list();
  ASSERT_TRUE(top.ok());
  EXPECT_EQ(top->size(), 2u);
  EXPECT_CODE(this->fs().list("l/a.txt").status(), kNotADirectory);
  EXPECT_CODE(this->fs().list("nope").status(), kNotFound);
}

TYPED_TEST(Compliance, Glob) {
  for (const char* p : {"a.h", "a.c", "x/b.h", "x/y/c.h", "x/y/d.txt", "x.h/e.h", "z/.hidden.h"}) {
    this->put(p, "x");
  }
  auto g = this->fs().glob("**/*.h");
  ASSERT_TRUE(g.ok()) << g.status();
  std::vector<std::string> paths;
  for (auto& m : *g) paths.push_back(m.path);
  EXPECT_EQ(paths,
            (std::vector<std::string>{"a.h", "x.h", "x.h/e.h", "x/b.h", "x/y/c.h", "z/.hidden.h"}));
  EXPECT_FALSE((*g)[1].is_file);  // "x.h" is a directory
  EXPECT_TRUE((*g)[0].is_file);
  auto top = this->fs().glob("*.h");
  ASSERT_TRUE(top.ok());
  EXPECT_EQ(top->size(), 2u);
  auto based = this->fs().glob("*.h", "x/y");
  ASSERT_TRUE(based.ok());
  ASSERT_EQ(based->size(), 1u);
  EXPECT_EQ((*based)[0].path, "x/y/c.h");
  auto braces = this->fs().glob("x/**/*.{h,txt}");
  ASSERT_TRUE(braces.ok());
  EXPECT_EQ(braces->size(), 3u);
  EXPECT_TRUE(this->fs().glob("*.none")->empty());
  EXPECT_CODE(this->fs().glob("[abc").status(), kInvalidArgument);
  EXPECT_CODE(this->fs().glob("*", "nope").status(), kNotFound);
  EXPECT_CODE(this->fs().glob("*", "a.h").status(), kNotADirectory);
}

TYPED_TEST(Compliance, Grep) {
  this->put("g/b.txt", "alpha\nbeta TODO x\ngamma\nTODO end\n");
  this->put("g/a.txt", "TODO first\n");
  this->put("g/a.txt.bak", "TODO bak\n");
  this->put("g/sub/c.py", "x = 1  # TODO\r\n");
  this->put("g/bin.dat", std::string("TODO\0binary", 11));
  auto m = this->fs().grep("TODO");
  ASSERT_TRUE(m.ok()) << m.status();
  ASSERT_EQ(m->size(), 5u);
  EXPECT_EQ((*m)[0].path, "g/a.txt");
  EXPECT_EQ((*m)[1].path, "g/a.txt.bak");
  EXPECT_EQ((*m)[2].path, "g/b.txt");
  EXPECT_EQ((*m)[2].line_number, 2);
  EXPECT_EQ((*m)[2].line_content, "beta TODO x");
  EXPECT_EQ((*m)[2].match_start, 5);
  EXPECT_EQ((*m)[2].match_end, 9);
  EXPECT_EQ((*m)[3].line_number, 4);
  EXPECT_EQ((*m)[4].path, "g/sub/c.py");
  EXPECT_EQ((*m)[4].line_content, "x = 1  # TODO");  // no "\r"
  auto re = this->fs().grep("^[a-z]+a$", "g");
  ASSERT_TRUE(re.ok());
  ASSERT_EQ(re->size(), 2u);
  EXPECT_EQ((*re)[0].line_content, "alpha");
  EXPECT_EQ((*re)[1].line_content, "gamma");
  auto globbed = this->fs().grep("TODO", ".", std::string("*.py"));
  ASSERT_TRUE(globbed.ok());
  ASSERT_EQ(globbed->size(), 1u);
  auto globbed_path = this->fs().grep("TODO", "g", std::string("sub/*.py"));
  ASSERT_TRUE(globbed_path.ok());
  EXPECT_EQ(globbed_path->size(), 1u);
  auto limited = this->fs().grep("TODO", ".", std::nullopt, 2);
  ASSERT_TRUE(limited.ok());
  ASSERT_EQ(limited->size(), 2u);
  EXPECT_EQ((*limited)[1].path, "g/a.txt.bak");
  auto one_file = this->fs().grep("TODO", "g/b.txt");
  ASSERT_TRUE(one_file.ok());
  EXPECT_EQ(one_file->size(), 2u);
  EXPECT_CODE(this->fs().grep("(unclosed").status(), kInvalidArgument);
  EXPECT_CODE(this->fs().grep("x", ".", std::nullopt, 0).status(), kInvalidArgument);
  EXPECT_CODE(this->fs().grep("x", "nope").status(), kNotFound);
  FsLimits few;
  few.max_grep_matches = 1;
  auto capped_fs = this->backend_.make(few);
  if (!TypeParam::kOnDisk) ASSERT_TRUE(capped_fs->write("a", "x\nx\n").ok());
  if (TypeParam::kOnDisk) ASSERT_TRUE(capped_fs->write("cap.txt", "x\nx\n").ok());
  auto capped = capped_fs->grep("x", ".", std::nullopt, 50);
  ASSERT_TRUE(capped.ok());
  EXPECT_EQ(capped->size(), 1u);
}

TYPED_TEST(Compliance, GrepOrderIsSortedPathOrder) {
  this->put("o/a/z.txt", "hit\n");
  this->put("o/a.txt", "hit\n");
  this->put("o/a-b.txt", "hit\nhit\n");
  auto m = this->fs().grep("hit");
  ASSERT_TRUE(m.ok());
  std::vector<std::string> paths;
  for (auto& x : *m) paths.push_back(x.path + ":" + std::to_string(x.line_number));
  EXPECT_EQ(paths,
            (std::vector<std::string>{"o/a-b.txt:1", "o/a-b.txt:2", "o/a.txt:1", "o/a/z.txt:1"}));
  auto two = this->fs().grep("hit", ".", std::nullopt, 3);
  ASSERT_TRUE(two.ok());
  ASSERT_EQ(two->size(), 3u);
  EXPECT_EQ((*two)[2].path, "o/a.txt");
}

TYPED_TEST(Compliance, Delete) {
  this->put("del/f.txt", "x");
  this->put("del/sub/g.txt", "y");
  EXPECT_CODE(this->fs().remove("del"), kIsADirectory);
  ASSERT_TRUE(this->fs().remove("del/f.txt").ok());
  EXPECT_FALSE(this->fs().exists("del/f.txt"));
  EXPECT_CODE(this->fs().remove("del/f.txt"), kNotFound);
  ASSERT_TRUE(this->fs().remove("del", /*recursive=*/true).ok());
  EXPECT_FALSE(this->fs().exists("del"));
  EXPECT_CODE(this->fs().remove("."), kPermissionDenied);
  EXPECT_CODE(this->fs().remove("../x"), kPermissionDenied);
}

TYPED_TEST(Compliance, Mkdir) {
  ASSERT_TRUE(this->fs().mkdir("m/n/o").ok());
  EXPECT_TRUE(this->fs().stat("m/n/o")->is_directory);
  EXPECT_TRUE(this->fs().mkdir("m/n/o").ok());
  EXPECT_CODE(this->fs().mkdir("m/n/o", true, false), kAlreadyExists);
  EXPECT_CODE(this->fs().mkdir("p/q", false), kNotFound);
  this->put("file", "x");
  EXPECT_CODE(this->fs().mkdir("file"), kAlreadyExists);
  EXPECT_CODE(this->fs().mkdir("file/sub"), kNotADirectory);
}

TYPED_TEST(Compliance, MoveAndCopy) {
  this->put("mv/a.txt", "A");
  this->put("mv/b.txt", "B");
  EXPECT_CODE(this->fs().move("mv/a.txt", "mv/b.txt"), kAlreadyExists);
  EXPECT_EQ(this->get("mv/b.txt"), "B");
  ASSERT_TRUE(this->fs().move("mv/a.txt", "mv/b.txt", /*overwrite=*/true).ok());
  EXPECT_EQ(this->get("mv/b.txt"), "A");
  EXPECT_FALSE(this->fs().exists("mv/a.txt"));
  ASSERT_TRUE(this->fs().move("mv/b.txt", "other/deeper/c.txt").ok());
  EXPECT_EQ(this->get("other/deeper/c.txt"), "A");
  EXPECT_CODE(this->fs().move("mv/none", "x"), kNotFound);
  ASSERT_TRUE(this->fs().copy("other", "copy").ok());
  EXPECT_EQ(this->get("copy/deeper/c.txt"), "A");
  EXPECT_EQ(this->get("other/deeper/c.txt"), "A");
  EXPECT_CODE(this->fs().copy("other", "copy"), kAlreadyExists);
  EXPECT_CODE(this->fs().move("other", "other/inside"), kInvalidArgument);
  EXPECT_CODE(this->fs().copy("other", "other/inside"), kInvalidArgument);
  EXPECT_CODE(this->fs().copy(".", "rootcopy"), kPermissionDenied);
  EXPECT_CODE(this->fs().move(".", "rootmove"), kPermissionDenied);
  ASSERT_TRUE(this->fs().copy("copy/deeper/c.txt", "c2.txt").ok());
  EXPECT_EQ(this->get("c2.txt"), "A");
  ASSERT_TRUE(this->fs().move("copy", "moved").ok());
  EXPECT_EQ(this->get("moved/deeper/c.txt"), "A");
  EXPECT_FALSE(this->fs().exists("copy"));
}

}  // namespace
}  // namespace weft::fs::testing
