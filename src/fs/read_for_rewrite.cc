// read_for_rewrite (include/weft/fs/filesystem.h): a whole file, within the
// write limit it must be written back under.
#include "weft/fs/filesystem.h"
#include "weft/fs/path.h"

namespace weft::fs {

Result<std::string> read_for_rewrite(Filesystem& fs, std::string_view path, std::string_view tool) {
  const int64_t max = fs.limits().max_write_chars;
  auto too_big = [&](int64_t size) {
    return resource_exhausted("'" + display_name(path) + "' is " + std::to_string(size) +
                              " bytes; " + std::string(tool) + " rewrites files of at most " +
                              std::to_string(max) + " bytes (the workspace's write limit)");
  };
  WEFT_ASSIGN_OR_RETURN(FileStat st, fs.stat(path));
  if (st.is_file && st.size_bytes > max) return too_big(st.size_bytes);
  // One byte more than allowed tells a file that grew since the stat.
  WEFT_ASSIGN_OR_RETURN(ReadBytesResult bytes, fs.read_bytes(path, 0, max + 1));
  if (bytes.truncated || static_cast<int64_t>(bytes.content.size()) > max) {
    return too_big(bytes.size_bytes);
  }
  return std::move(bytes.content);
}

}  // namespace weft::fs
