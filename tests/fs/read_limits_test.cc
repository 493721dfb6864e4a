// Reads and greps whose memory follows the answer, not the file: long lines
// are cut (and say how long they were), a page stops at its byte cap, a
// file is streamed in chunks (UTF-8 split across chunks still reads), and a
// read or grep of a large one-line file keeps peak RSS small.
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "backends.h"

namespace weft::fs::testing {
namespace {

FsLimits small_lines(int64_t line_bytes, int64_t read_bytes = 256 << 10) {
  FsLimits l;
  l.max_line_bytes = line_bytes;
  l.max_read_bytes = read_bytes;
  l.max_write_chars = 8 << 20;
  return l;
}

template <typename B>
class ReadLimits : public FsTest<B> {
 protected:
  // Replaces the backend's filesystem by one with `limits`.
  void remake(const FsLimits& limits) {
    this->fs_ = this->backend_.make(limits);
    ASSERT_NE(this->fs_, nullptr);
  }
};
TYPED_TEST_SUITE(ReadLimits, AllBackends, BackendNames);

TYPED_TEST(ReadLimits, LongLineIsCutAndReported) {
  this->remake(small_lines(100));
  this->put("f.txt", std::string(10'000, 'a') + "\nshort\n" + std::string(300, 'b'));
  auto r = this->fs().read("f.txt");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->content, std::string(100, 'a') + "\nshort\n" + std::string(100, 'b'));
  EXPECT_EQ(r->lines, 3);
  EXPECT_EQ(r->total_lines, 3);
  EXPECT_FALSE(r->truncated);
  ASSERT_EQ(r->cut_lines.size(), 2u);
  EXPECT_EQ(r->cut_lines[0].line, 0);
  EXPECT_EQ(r->cut_lines[0].length_bytes, 10'000);
  EXPECT_EQ(r->cut_lines[1].line, 2);
  EXPECT_EQ(r->cut_lines[1].length_bytes, 300);
}

TYPED_TEST(ReadLimits, CutKeepsUtf8AndCrlf) {
  this->remake(small_lines(101));
  std::string euros;
  for (int i = 0; i < 100; ++i) euros += "\xE2\x82\xAC";  // 300 bytes
  this->put("f.txt", euros + "\r\nnext\r\n");
  auto r = this->fs().read("f.txt");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->content, euros.substr(0, 99) + "\r\nnext\r\n");  // 99: a character boundary
  ASSERT_EQ(r->cut_lines.size(), 1u);
  EXPECT_EQ(r->cut_lines[0].length_bytes, 300);
}

TYPED_TEST(ReadLimits, PageStopsAtByteCapButReturnsOneLine) {
  this->remake(small_lines(4096, 1000));
  std::string body;
  for (int i = 0; i < 100; ++i) body += std::string(49, 'x') + "\n";  // 50 bytes a line
  this->put("f.txt", body);
  auto r = this->fs().read("f.txt", 10);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->lines, 20);
  EXPECT_EQ(r->content.size(), 1000u);
  EXPECT_EQ(r->total_lines, 100);
  EXPECT_TRUE(r->truncated);

  this->remake(small_lines(4096, 10));
  this->put("f.txt", body);  // InMemory starts empty again
  r = this->fs().read("f.txt", 99);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->lines, 1);  // over the cap, but a page holds at least one line
  EXPECT_FALSE(r->truncated);
}

TYPED_TEST(ReadLimits, Utf8SplitAcrossChunksReadsAndBadTailIsRefused) {
  this->remake(small_lines(4096));
  // 256 KiB is the host's chunk: a 3-byte character straddles it.
  std::string body(256 * 1024 - 1, 'a');
  body += "\xE2\x82\xAC\nend\n";
  this->put("f.txt", body);
  auto r = this->fs().read("f.txt", 1);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->content, "end\n");
  EXPECT_EQ(r->total_lines, 2);
  this->put("bad.txt", body + "\xE2\x82");  // ends inside a character
  EXPECT_EQ(this->fs().read("bad.txt").status().code(), StatusCode::kInvalidArgument);
  this->put("bad2.txt", body + "x\xFFy\n");
  EXPECT_EQ(this->fs().read("bad2.txt").status().code(), StatusCode::kInvalidArgument);
}

TYPED_TEST(ReadLimits, GrepShowsAWindowOfALongLine) {
  this->remake(small_lines(100));
  std::string line = std::string(10'000, 'a') + "NEEDLE" + std::string(10'000, 'b');
  this->put("f.txt", "first\n" + line + "\nlast NEEDLE\n");
  for (const char* pattern : {"NEEDLE", "NEE+DLE"}) {
    auto m = this->fs().grep(pattern, ".");
    ASSERT_TRUE(m.ok()) << m.status();
    ASSERT_EQ(m->size(), 2u) << pattern;
    const GrepMatch& g = (*m)[0];
    EXPECT_EQ(g.line_number, 2);
    EXPECT_LE(g.line_content.size(), 100u);
    EXPECT_EQ(g.line_length_bytes, 20'006);
    EXPECT_GT(g.line_content_offset_byte, 0);
    EXPECT_EQ(g.line_content.substr(static_cast<size_t>(g.match_start_byte), 6), "NEEDLE");
    EXPECT_EQ(line.substr(static_cast<size_t>(g.line_content_offset_byte), g.line_content.size()),
              g.line_content);
    EXPECT_EQ((*m)[1].line_content, "last NEEDLE");
    EXPECT_EQ((*m)[1].line_length_bytes, 11);
  }
}

// Peak RSS growth (VmHWM) of running `fn` in a forked child, in bytes; the
// child's high-water mark starts at its RSS at the fork.
template <typename Fn>
int64_t peak_rss_growth(Fn fn) {
  auto hwm = [] {
    std::ifstream in("/proc/self/status");
    std::string line;
    while (std::getline(in, line)) {
      if (line.rfind("VmHWM:", 0) == 0) return std::stoll(line.substr(6)) * 1024;
    }
    return -1ll;
  };
  int fds[2];
  if (::pipe(fds) != 0) return -1;
  pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    int64_t before = hwm();
    int64_t growth = fn() ? hwm() - before : -1;
    (void)!::write(fds[1], &growth, sizeof growth);
    ::_exit(0);
  }
  ::close(fds[1]);
  int64_t growth = -1;
  if (::read(fds[0], &growth, sizeof growth) != sizeof growth) growth = -1;
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return growth;
}

template <typename B>
using LargeFiles = FsTest<B>;
using HostBackends = ::testing::Types<HostBackend, HostFallbackBackend>;
TYPED_TEST_SUITE(LargeFiles, HostBackends, BackendNames);

constexpr int64_t kBigLine = 64ll << 20;
constexpr int64_t kRssBound = 16ll << 20;

// A file of one 64 MiB line of 'a' with "NEEDLE" at 40 MiB.
void write_big_line(const std::filesystem::path& file) {
  std::ofstream out(file, std::ios::binary);
  std::string block(1 << 20, 'a');
  for (int64_t i = 0; i < kBigLine / (1 << 20); ++i) {
    if (i == 40) block.replace(100, 6, "NEEDLE");
    out.write(block.data(), static_cast<std::streamsize>(block.size()));
    if (i == 40) block.replace(100, 6, "aaaaaa");
  }
}

TYPED_TEST(LargeFiles, ReadOfAHugeLineIsBoundedInMemory) {
  write_big_line(this->backend_.root() / "big.txt");
  ReadResult page;
  int64_t growth = peak_rss_growth([&] {
    auto r = this->fs().read("big.txt", 0, 1);
    if (!r.ok()) return false;
    return static_cast<int64_t>(r->content.size()) == this->fs().limits().max_line_bytes &&
           r->cut_lines.size() == 1 && r->cut_lines[0].length_bytes == kBigLine &&
           r->total_lines == 1 && !r->truncated;
  });
  EXPECT_GE(growth, 0) << "the read failed or returned the wrong page";
  EXPECT_LT(growth, kRssBound);
  // The same checks in this process, for a readable failure.
  auto r = this->fs().read("big.txt", 0, 1);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->content, std::string(static_cast<size_t>(this->fs().limits().max_line_bytes), 'a'));
  ASSERT_EQ(r->cut_lines.size(), 1u);
  EXPECT_EQ(r->cut_lines[0].length_bytes, kBigLine);

  auto bytes = this->fs().read_bytes("big.txt", 40ll << 20, 2048);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  EXPECT_EQ(bytes->content.substr(100, 6), "NEEDLE");
  EXPECT_EQ(bytes->size_bytes, kBigLine);
  EXPECT_TRUE(bytes->truncated);
  growth = peak_rss_growth([&] { return this->fs().read_bytes("big.txt", 0, 2048).ok(); });
  EXPECT_GE(growth, 0);
  EXPECT_LT(growth, kRssBound);
}

TYPED_TEST(LargeFiles, GrepOfAHugeLineIsBoundedInMemory) {
  write_big_line(this->backend_.root() / "big.txt");
  for (const char* pattern : {"NEEDLE", "NEE+DLE"}) {
    auto m = this->fs().grep(pattern, ".");
    ASSERT_TRUE(m.ok()) << m.status();
    ASSERT_EQ(m->size(), 1u) << pattern;
    const GrepMatch& g = (*m)[0];
    EXPECT_EQ(g.line_number, 1);
    EXPECT_EQ(g.line_length_bytes, kBigLine);
    EXPECT_LE(static_cast<int64_t>(g.line_content.size()), this->fs().limits().max_line_bytes);
    EXPECT_EQ(g.line_content_offset_byte + g.match_start_byte, (40ll << 20) + 100);
    EXPECT_EQ(g.line_content.substr(static_cast<size_t>(g.match_start_byte), 6), "NEEDLE");
  }
  // ^ holds at the line's start only, not at a window's.
  auto anchored = this->fs().grep("^NEEDLE", "big.txt");
  ASSERT_TRUE(anchored.ok()) << anchored.status();
  EXPECT_TRUE(anchored->empty());
  auto start = this->fs().grep("^aaa", "big.txt");
  ASSERT_TRUE(start.ok()) << start.status();
  EXPECT_EQ(start->size(), 1u);
  int64_t growth = peak_rss_growth([&] {
    auto r = this->fs().grep("NEE+DLE", ".");
    return r.ok() && r->size() == 1;
  });
  EXPECT_GE(growth, 0) << "grep failed or found the wrong matches";
  EXPECT_LT(growth, kRssBound);
}

}  // namespace
}  // namespace weft::fs::testing
