// fs_read_media: images, audio and other binary files as base64 content blocks.
#include "server/tools/tool_util.h"

namespace weft::server::tools {
namespace {

constexpr int64_t kMaxMediaBytes = 20ll << 20;

Result<ToolOutput> run_fs_read_media(const Json& args, ToolContext& ctx) {
  WEFT_ASSIGN_OR_RETURN(Workspace * ws, workspace_of(ctx));
  WEFT_ASSIGN_OR_RETURN(std::string path, resolve_arg(ctx, args, "path"));
  auto info = ws->fs().stat(path);
  if (!info.ok()) return explain(info.status(), path);
  if (info->is_directory) return is_a_directory("'" + path + "' is a directory; use fs_list");
  auto too_big = [&](int64_t size) {
    std::string why = "'";
    why += fs::display_name(path);
    why += "' has " + std::to_string(size) + " bytes; fs_read_media returns at most 20 MiB";
    return resource_exhausted(why);
  };
  if (info->size_bytes > kMaxMediaBytes) return too_big(info->size_bytes);
  // One byte over the cap at most: a file that grew since the stat is not loaded whole.
  auto bytes = ws->fs().read_bytes(path, 0, kMaxMediaBytes + 1);
  if (!bytes.ok()) return explain(bytes.status(), path);
  if (static_cast<int64_t>(bytes->content.size()) > kMaxMediaBytes) {
    return too_big(bytes->size_bytes);
  }
  std::string mime = mime_type_for(path);
  std::string data = base64_encode(bytes->content);
  Json block;
  if (mime.rfind("image/", 0) == 0) {
    block = {{"type", "image"}, {"data", std::move(data)}, {"mimeType", mime}};
  } else if (mime.rfind("audio/", 0) == 0) {
    block = {{"type", "audio"}, {"data", std::move(data)}, {"mimeType", mime}};
  } else {
    block = {
        {"type", "resource"},
        {"resource", {{"uri", ws->uri_of(path)}, {"mimeType", mime}, {"blob", std::move(data)}}}};
  }
  ToolOutput out;
  out.content = Json::array(
      {{{"type", "text"},
        {"text", path + ": " + mime + ", " + std::to_string(bytes->size_bytes) + " bytes"}},
       std::move(block)});
  return out;
}

}  // namespace

ToolSpec fs_read_media_tool() {
  ToolSpec t;
  t.name = "fs_read_media";
  t.title = "Read image or binary file";
  t.description =
      "Read an image, audio or other binary file (up to 20 MiB) as base64 content: an image or "
      "audio block with its MIME type guessed from the extension, otherwise an embedded resource "
      "blob. For text files use fs_read.";
  t.input_schema =
      object_schema({{"path", string_prop("File path in the workspace", 1)}}, {"path"});
  t.annotations = read_only_hints();
  t.handler = run_fs_read_media;
  return t;
}

}  // namespace weft::server::tools
