// check_regular_file / read_regular_file: what a person-named path is, and a
// read that never blocks on a FIFO.
#include "weft/base/input_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>

#include "support/test_support.h"

namespace weft {
namespace {

TEST(InputFileTest, RegularFileIsRead) {
  weft::testing::TempDir dir;
  std::string p = (dir.path() / "a.txt").string();
  std::ofstream(p) << "hello";
  EXPECT_TRUE(check_regular_file(p, "text file").ok());
  auto r = read_regular_file(p, "text file");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(*r, "hello");
  auto small = read_regular_file(p, "text file", 3);
  EXPECT_EQ(small.status().code(), StatusCode::kResourceExhausted);
}

TEST(InputFileTest, OtherKindsAreNamedAndAFifoNeverBlocks) {
  weft::testing::TempDir dir;
  std::string fifo = (dir.path() / "fifo").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // No writer ever opens the FIFO: a blocking open would hang here.
  auto r = read_regular_file(fifo, "document file");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(r.status().message(), "'" + fifo + "' is a FIFO (named pipe), not a document file");
  EXPECT_EQ(check_regular_file(fifo, "x").code(), StatusCode::kInvalidArgument);
  auto d = read_regular_file(dir.path().string(), "document file");
  EXPECT_NE(d.status().message().find("is a directory, not a document file"), std::string::npos);
  EXPECT_NE(read_regular_file("/dev/null", "x").status().message().find("character device"),
            std::string::npos);
  auto missing = read_regular_file((dir.path() / "none").string(), "x");
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace weft
