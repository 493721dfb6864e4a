// Checked, non-blocking reads of files named by a person (see
// include/weft/base/input_file.h).
#include "weft/base/input_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace weft {
namespace {

std::string quoted(const std::string& path) { return "'" + path + "'"; }

Status errno_status(int err, const std::string& path) {
  std::string msg = "cannot read " + quoted(path) + ": " + std::strerror(err);
  if (err == ENOENT || err == ENOTDIR) return not_found(quoted(path) + " does not exist");
  if (err == EACCES || err == EPERM) return permission_denied(msg);
  return unavailable(msg);
}

Status check_mode(const struct stat& st, const std::string& path, std::string_view what) {
  if (S_ISREG(st.st_mode)) return Status();
  return invalid_argument(quoted(path) + " is " + file_kind_name(st.st_mode) + ", not a " +
                          std::string(what));
}

}  // namespace

const char* file_kind_name(unsigned mode) {
  if (S_ISREG(mode)) return "a regular file";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "not a regular file";
}

Status check_regular_file(const std::string& path, std::string_view what) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return errno_status(errno, path);
  return check_mode(st, path, what);
}

Result<std::string> read_regular_file(const std::string& path, std::string_view what,
                                      int64_t max_bytes) {
  // O_NONBLOCK: opening a FIFO returns at once instead of waiting for a writer.
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return errno_status(errno, path);
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st;
  if (::fstat(fd, &st) != 0) return errno_status(errno, path);
  WEFT_RETURN_IF_ERROR(check_mode(st, path, what));
  if (st.st_size > max_bytes) {
    return resource_exhausted(quoted(path) + " is " + std::to_string(st.st_size) +
                              " bytes, over the limit of " + std::to_string(max_bytes));
  }
  int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  std::string data;
  data.reserve(static_cast<size_t>(st.st_size));
  char buf[65536];
  while (true) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno_status(errno, path);
    if (n == 0) break;
    if (static_cast<int64_t>(data.size()) + n > max_bytes) {
      return resource_exhausted(quoted(path) + " grew over the limit of " +
                                std::to_string(max_bytes) + " bytes while being read");
    }
    data.append(buf, static_cast<size_t>(n));
  }
  return data;
}

}  // namespace weft
