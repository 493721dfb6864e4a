// Names and types in listings: display_name escapes what could forge a line
// of text output; list/stat/glob report fifos, sockets and symlinks as what
// they are; reading or grepping a fifo is refused at once instead of waiting
// for a writer.
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <fstream>

#include "backends.h"
#include "weft/fs/path.h"

namespace weft::fs::testing {
namespace {

namespace stdfs = std::filesystem;

TEST(DisplayName, EscapesControlsBackslashAndBadUtf8) {
  EXPECT_EQ(display_name("plain/name.txt"), "plain/name.txt");
  EXPECT_EQ(display_name("caf\xC3\xA9 \xE2\x82\xAC"), "caf\xC3\xA9 \xE2\x82\xAC");
  EXPECT_EQ(display_name("a\nb"), "a\\nb");
  EXPECT_EQ(display_name("a\r\tb"), "a\\r\\tb");
  EXPECT_EQ(display_name("back\\slash"), "back\\\\slash");
  EXPECT_EQ(display_name(std::string("nul\0x", 5)), "nul\\0x");
  EXPECT_EQ(display_name("\x1b[31mred\x7f"), "\\x1b[31mred\\x7f");
  EXPECT_EQ(display_name("bad\xFF\xC3"), "bad\\xff\\xc3");
  EXPECT_EQ(display_name("\xC2\x85"
                         "line\xE2\x80\xA8"
                         "sep\xE2\x80\xAE"
                         "rtl"),
            "\\u{0085}line\\u{2028}sep\\u{202E}rtl");
  // A forged listing line cannot survive: no newline is left.
  std::string forged = display_name("x\n[FILE] secret.txt");
  EXPECT_EQ(forged.find('\n'), std::string::npos);
  EXPECT_EQ(forged, "x\\n[FILE] secret.txt");
}

template <typename B>
using Types = FsTest<B>;
TYPED_TEST_SUITE(Types, DiskBackends, BackendNames);

TYPED_TEST(Types, FifoSocketAndSymlinkAreReportedAsThemselves) {
  const stdfs::path root = this->backend_.root();
  ASSERT_EQ(::mkfifo((root / "pipe").c_str(), 0600), 0);
  stdfs::create_symlink("../elsewhere/target", root / "link");
  { std::ofstream(root / "file.txt") << "text\n"; }
  int sock = ::socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(sock, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::string sock_path = (root / "sock").string();
  bool have_socket = sock_path.size() < sizeof addr.sun_path;
  if (have_socket) {
    std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", sock_path.c_str());
    have_socket = ::bind(sock, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  }

  auto listing = this->fs().list(".");
  ASSERT_TRUE(listing.ok()) << listing.status();
  std::map<std::string, FileEntry> by_name;
  for (const FileEntry& e : *listing) by_name[e.name] = e;
  EXPECT_EQ(by_name["pipe"].type, FileType::kFifo);
  EXPECT_FALSE(by_name["pipe"].is_file);
  EXPECT_EQ(by_name["link"].type, FileType::kSymlink);
  EXPECT_EQ(by_name["link"].symlink_target, "../elsewhere/target");
  EXPECT_EQ(by_name["file.txt"].type, FileType::kFile);
  if (have_socket) EXPECT_EQ(by_name["sock"].type, FileType::kSocket);

  auto st = this->fs().stat("pipe");
  ASSERT_TRUE(st.ok()) << st.status();
  EXPECT_EQ(st->type, FileType::kFifo);
  EXPECT_FALSE(st->is_file);
  st = this->fs().stat("link");
  ASSERT_TRUE(st.ok()) << st.status();
  EXPECT_EQ(st->type, FileType::kSymlink);
  EXPECT_EQ(st->symlink_target, "../elsewhere/target");
  st = this->fs().stat(".");
  ASSERT_TRUE(st.ok()) << st.status();
  EXPECT_EQ(st->type, FileType::kDirectory);
  EXPECT_EQ(file_type_name(FileType::kCharDevice), "char_device");
  EXPECT_EQ(file_type_name(FileType::kBlockDevice), "block_device");

  auto globbed = this->fs().glob("*");
  ASSERT_TRUE(globbed.ok()) << globbed.status();
  for (const GlobMatch& m : *globbed) {
    if (m.path == "pipe") EXPECT_EQ(m.type, FileType::kFifo);
    if (m.path == "link") EXPECT_EQ(m.type, FileType::kSymlink);
  }

  // No writer ever opens the fifo: these must fail at once, not wait.
  auto read = this->fs().read("pipe");
  EXPECT_EQ(read.status().code(), StatusCode::kPermissionDenied);
  EXPECT_NE(read.status().message().find("fifo"), std::string::npos) << read.status();
  EXPECT_EQ(this->fs().read_bytes("pipe").status().code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(this->fs().grep("x", "pipe").status().code(), StatusCode::kPermissionDenied);
  auto all = this->fs().grep("text", ".");
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_EQ(all->size(), 1u);
  ::close(sock);
}

TYPED_TEST(Types, ANewlineInANameIsListedExactly) {
  const stdfs::path root = this->backend_.root();
  { std::ofstream(root / "a\n[FILE] forged") << "x\n"; }
  auto listing = this->fs().list(".");
  ASSERT_TRUE(listing.ok()) << listing.status();
  ASSERT_EQ(listing->size(), 1u);
  EXPECT_EQ((*listing)[0].name, "a\n[FILE] forged");  // exact in the API
  EXPECT_EQ(display_name((*listing)[0].name), "a\\n[FILE] forged");
  auto read = this->fs().read((*listing)[0].path);  // the exact name reaches the file
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->content, "x\n");
}

}  // namespace
}  // namespace weft::fs::testing
