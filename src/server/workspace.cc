// Workspace path rules (see include/weft/server/workspace.h).
#include "weft/server/workspace.h"

#include <utility>

#include "weft/fs/path.h"

namespace weft::server {
namespace {

// Percent-decodes a URI path; false on a malformed escape.
bool percent_decode(std::string_view in, std::string* out) {
  out->clear();
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] != '%') {
      out->push_back(in[i]);
      continue;
    }
    if (i + 2 >= in.size()) return false;
    auto hex = [](char c) -> int {
      if (c >= '0' && c <= '9') return c - '0';
      if (c >= 'a' && c <= 'f') return c - 'a' + 10;
      if (c >= 'A' && c <= 'F') return c - 'A' + 10;
      return -1;
    };
    int hi = hex(in[i + 1]), lo = hex(in[i + 2]);
    if (hi < 0 || lo < 0) return false;
    out->push_back(static_cast<char>(hi * 16 + lo));
    i += 2;
  }
  return true;
}

std::string percent_encode_path(std::string_view path) {
  static const char* kHex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : path) {
    bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                 c == '/' || c == '-' || c == '_' || c == '.' || c == '~';
    if (plain) {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

}  // namespace

Workspace::Workspace(std::shared_ptr<fs::Filesystem> fs,
                     std::shared_ptr<fs::SandboxWorkspace> sandbox,
                     std::shared_ptr<fs::ChangeLock> change_lock)
    : fs_(std::move(fs)), sandbox_(std::move(sandbox)), change_lock_(std::move(change_lock)) {}

void Workspace::set_kernel(std::shared_ptr<kernel::Kernel> kernel) {
  std::lock_guard lock(kernel_mu_);
  if (kernel_) return;  // set once
  kernel_ = std::move(kernel);
  kernel_ptr_.store(kernel_.get(), std::memory_order_release);
}

Result<ChangeGuard> Workspace::lock_for_change(const std::vector<std::string>& paths) const {
  ChangeGuard guard{std::unique_lock(change_mu_), {}};
  if (change_lock_ && !paths.empty()) {
    WEFT_ASSIGN_OR_RETURN(guard.across, change_lock_->lock_paths(paths));
  }
  return guard;
}

Result<std::string> Workspace::resolve(std::string_view path,
                                       const std::vector<std::string>& roots) const {
  WEFT_ASSIGN_OR_RETURN(fs::NormalPath normal,
                        fs::normalize_path(path, fs_->root(), fs_->limits()));
  if (roots.empty()) return normal.str();
  std::string allowed;
  for (const auto& root : roots) {
    auto prefix = fs::normalize_path(root, fs_->root(), fs_->limits());
    if (prefix.ok() && normal.within(*prefix)) return normal.str();
    allowed += (allowed.empty() ? "" : ", ") + root;
  }
  return permission_denied("path '" + std::string(path) +
                           "' is outside the roots this client allowed (" + allowed + ")");
}

std::vector<std::string> Workspace::map_roots(const std::vector<std::string>& uris) const {
  std::vector<std::string> out;
  std::string root = fs_->root();
  for (const auto& uri : uris) {
    auto path = path_of_uri(uri);
    if (path.ok()) {
      out.push_back(*path);
      continue;
    }
    // A client root that contains the workspace allows all of it.
    std::string decoded;
    if (uri.rfind("file://", 0) == 0 && percent_decode(uri.substr(7), &decoded)) {
      while (decoded.size() > 1 && decoded.back() == '/') decoded.pop_back();
      if (root == decoded || root.rfind(decoded + "/", 0) == 0 || decoded == "/") {
        out.push_back(".");
      }
    }
  }
  return out;
}

std::string Workspace::uri_of(std::string_view relative) const {
  std::string root = fs_->root();
  std::string full = relative == "." ? root
                     : root == "/"   ? "/" + std::string(relative)
                                     : root + "/" + std::string(relative);
  return "file://" + percent_encode_path(full);
}

Result<std::string> Workspace::path_of_uri(std::string_view uri) const {
  if (uri.rfind("file://", 0) != 0) {
    return invalid_argument("'" + std::string(uri) +
                            "' is not a file:// URI of this workspace (see resources/list)");
  }
  std::string decoded;
  if (!percent_decode(uri.substr(7), &decoded)) {
    return invalid_argument("malformed percent-escape in URI '" + std::string(uri) + "'");
  }
  WEFT_ASSIGN_OR_RETURN(fs::NormalPath normal,
                        fs::normalize_path(decoded, fs_->root(), fs_->limits()));
  return normal.str();
}

}  // namespace weft::server
