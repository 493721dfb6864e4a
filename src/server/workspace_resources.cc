// Workspace files as MCP resources (resources/list, resources/read).
#include "server/tools/tool_util.h"
#include "weft/base/utf.h"
#include "weft/server/workspace_tools.h"

namespace weft::server {
namespace {

constexpr int64_t kMaxResourceBytes = 16ll << 20;

bool hidden_vcs(std::string_view path) {
  return path == ".git" || path.rfind(".git/", 0) == 0 ||
         path.find("/.git/") != std::string_view::npos;
}

class WorkspaceResources : public ResourceProvider {
 public:
  explicit WorkspaceResources(std::shared_ptr<Workspace> ws) : ws_(std::move(ws)) {}

  Result<std::vector<Json>> list(size_t offset, size_t limit, const std::vector<std::string>& roots,
                                 bool* more) override {
    WEFT_ASSIGN_OR_RETURN(auto matches, ws_->fs().glob("**", "."));
    std::vector<Json> page;
    size_t seen = 0;
    *more = false;
    for (const auto& m : matches) {
      if (!m.is_file || hidden_vcs(m.path)) continue;
      if (!roots.empty() && !ws_->resolve(m.path, roots).ok()) continue;
      if (seen++ < offset) continue;
      if (page.size() == limit) {
        *more = true;
        break;
      }
      size_t slash = m.path.rfind('/');
      page.push_back({{"uri", ws_->uri_of(m.path)},
                      {"name", m.path},
                      {"title", slash == std::string::npos ? m.path : m.path.substr(slash + 1)},
                      {"mimeType", tools::mime_type_for(m.path) == "application/octet-stream"
                                       ? "text/plain"
                                       : tools::mime_type_for(m.path)}});
    }
    return page;
  }

  Result<Json> read(const std::string& uri, const std::vector<std::string>& roots) override {
    WEFT_ASSIGN_OR_RETURN(std::string path, ws_->path_of_uri(uri));
    WEFT_ASSIGN_OR_RETURN(path, ws_->resolve(path, roots));
    WEFT_ASSIGN_OR_RETURN(fs::FileStat st, ws_->fs().stat(path));
    if (!st.is_file) {
      return not_found("resource '" + fs::display_name(uri) + "' is a " +
                       std::string(fs::file_type_name(st.type)) + ", not a regular file");
    }
    auto too_big = [&] {
      return resource_exhausted("resource '" + fs::display_name(uri) +
                                "' is over 16 MiB; use fs_read with offset");
    };
    if (st.size_bytes > kMaxResourceBytes) return too_big();
    // At most one byte over the cap is read, so a file that grew since the stat is caught
    // without loading it.
    WEFT_ASSIGN_OR_RETURN(auto bytes, ws_->fs().read_bytes(path, 0, kMaxResourceBytes + 1));
    if (static_cast<int64_t>(bytes.content.size()) > kMaxResourceBytes) return too_big();
    std::string mime = tools::mime_type_for(path);
    Json content = {{"uri", uri}};
    if (is_valid_utf8(bytes.content) && bytes.content.find('\0') == std::string::npos) {
      content["mimeType"] = mime == "application/octet-stream" ? "text/plain" : mime;
      content["text"] = std::move(bytes.content);
    } else {
      content["mimeType"] = mime;
      content["blob"] = tools::base64_encode(bytes.content);
    }
    return Json::array({std::move(content)});
  }

  Json templates() const override {
    return Json::array({{{"uriTemplate", "file://" + ws_->root() + "/{+path}"},
                         {"name", "workspace-file"},
                         {"title", "Workspace file"},
                         {"description", "Any file in the workspace by its relative path"}}});
  }

 private:
  std::shared_ptr<Workspace> ws_;
};

}  // namespace

std::shared_ptr<ResourceProvider> make_workspace_resources(std::shared_ptr<Workspace> workspace) {
  return std::make_shared<WorkspaceResources>(std::move(workspace));
}

}  // namespace weft::server
