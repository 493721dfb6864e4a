// Per-user and per-root state directories (see include/weft/fs/state_dir.h).
#include "weft/fs/state_dir.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "weft/base/hash.h"

namespace weft::fs {

std::string user_state_home() {
  if (const char* x = std::getenv("XDG_STATE_HOME"); x && *x == '/') return x;
  if (const char* h = std::getenv("HOME"); h && *h == '/') return std::string(h) + "/.local/state";
  return "/tmp";
}

std::string root_key(std::string_view canonical_root) {
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx",
                static_cast<unsigned long long>(hash64(canonical_root)));
  return hex;
}

std::string default_root_state_dir(std::string_view canonical_root) {
  return user_state_home() + "/weft/" + root_key(canonical_root);
}

Status ensure_private_dir(const std::string& dir) {
  auto refuse = [&](const std::string& why) {
    return unavailable("state directory '" + dir + "': " + why);
  };
  if (dir.empty() || dir[0] != '/') return refuse("not an absolute path");
  // Create each missing component; existing parents are left as they are.
  for (size_t slash = dir.find('/', 1);; slash = dir.find('/', slash + 1)) {
    std::string part = dir.substr(0, slash);
    if (!part.empty() && ::mkdir(part.c_str(), 0700) != 0 && errno != EEXIST) {
      return refuse("cannot create '" + part + "': " + std::strerror(errno));
    }
    if (slash == std::string::npos) break;
  }
  struct stat st;
  if (::lstat(dir.c_str(), &st) != 0) return refuse(std::strerror(errno));
  if (!S_ISDIR(st.st_mode)) return refuse("not a directory (a symbolic link or a file)");
  if (st.st_uid != ::geteuid()) return refuse("owned by another user");
  if ((st.st_mode & 07777) != 0700 && ::chmod(dir.c_str(), 0700) != 0) {
    return refuse(std::string("cannot make it private: ") + std::strerror(errno));
  }
  return Status();
}

}  // namespace weft::fs
