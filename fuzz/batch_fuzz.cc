// Fuzzes JSON-RPC batches (protocol 2025-03-26) against the batch limits:
// the input bytes pick a batch of many, large or odd items (fs_read of a big
// file, long ids, invalid members, notifications, responses, initialize,
// duplicate ids), and the reply must respect max_batch_items and
// max_batch_reply_bytes: a batch over the item cap gets one error; otherwise
// the replies before the first "limit reached" error fit the byte cap, and
// no request after it ran. A cancelled group must owe nothing. Nothing may
// crash or throw.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "weft/fs/filesystem.h"
#include "weft/server/mcp_server.h"
#include "weft/server/workspace.h"
#include "weft/server/workspace_tools.h"

namespace {

using weft::server::Json;

constexpr size_t kMaxItems = 100;
constexpr size_t kMaxReplyBytes = 64 * 1024;

struct Fixture {
  std::shared_ptr<weft::server::Workspace> workspace;
  std::shared_ptr<weft::server::ToolRegistry> tools;
  std::unique_ptr<weft::server::McpServer> server;

  Fixture() {
    std::shared_ptr<weft::fs::Filesystem> fs = weft::fs::make_in_memory_filesystem({});
    std::string big;
    for (int i = 0; i < 2000; ++i) big += "line " + std::to_string(i) + std::string(70, 'x') + "\n";
    fs->write("big.txt", big).status().ignore_error();
    fs->write("small.txt", "one\ntwo\n").status().ignore_error();
    workspace = std::make_shared<weft::server::Workspace>(fs);
    tools = std::make_shared<weft::server::ToolRegistry>();
    weft::server::add_workspace_tools(*tools, {}).ignore_error();
    weft::server::ServerOptions options;
    options.max_batch_items = kMaxItems;
    options.max_batch_reply_bytes = kMaxReplyBytes;
    server = std::make_unique<weft::server::McpServer>(options, tools, nullptr, workspace.get());
  }
};

// Reads the input a byte at a time (zeros once it runs out).
struct Bytes {
  const uint8_t* data;
  size_t size;
  size_t at = 0;
  uint8_t next() { return at < size ? data[at++] : 0; }
  bool done() const { return at >= size; }
};

Json item(Bytes& in, size_t index) {
  const uint8_t kind = in.next();
  Json id = static_cast<int64_t>(index);
  switch (in.next() % 4) {
    case 0:
      break;
    case 1:
      id = std::string(in.next() * 16u, 'i');
      break;  // long string ids
    case 2:
      id = static_cast<int64_t>(in.next() % 4);
      break;  // duplicates
    default:
      id = "s" + std::to_string(index);
      break;
  }
  auto call = [&](const std::string& tool, Json args) {
    return Json{{"jsonrpc", "2.0"},
                {"id", id},
                {"method", "tools/call"},
                {"params", {{"name", tool}, {"arguments", std::move(args)}}}};
  };
  switch (kind % 12) {
    case 0:
      return {{"jsonrpc", "2.0"}, {"id", id}, {"method", "ping"}};
    case 1:
      return call("fs_read", {{"path", "big.txt"}});
    case 2:
      return call(
          "fs_read",
          {{"path", "big.txt"}, {"offset", 1 + in.next() * 7}, {"limit", 1 + in.next() * 8}});
    case 3:
      return call("fs_read", {{"path", "small.txt"}});
    case 4:
      return call("fs_grep", {{"pattern", "line 1"}, {"output_mode", "content"}});
    case 5:
      return {{"jsonrpc", "2.0"}, {"method", "notifications/progress"}};
    case 6:
      return {{"jsonrpc", "2.0"}, {"id", id}, {"result", Json::object()}};
    case 7:
      return {{"jsonrpc", "2.0"},
              {"id", id},
              {"method", "initialize"},
              {"params", {{"protocolVersion", "2025-03-26"}}}};
    case 8:
      return Json(static_cast<int64_t>(in.next()));  // not an object
    case 9:
      return {{"jsonrpc", "1.0"}, {"id", id}, {"method", "ping"}};
    case 10:
      return {{"jsonrpc", "2.0"}, {"id", id}, {"method", "tools/list"}};
    default:
      return {{"jsonrpc", "2.0"}, {"id", id}, {"method", std::string(in.next() * 32u, 'm')}};
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Fixture fixture;
  Bytes in{data, size};
  const bool cancelled = in.next() % 16 == 0;
  size_t count = in.next() * 2u;  // up to 510 items
  Json batch = Json::array();
  for (size_t i = 0; i < count; ++i) {
    if (in.done() && i > 0) {
      batch.push_back(batch[i % batch.size()]);  // repeat what the input gave
    } else {
      batch.push_back(item(in, i));
    }
  }
  const std::string text = batch.empty() ? "[]" : batch.dump();
  weft::server::Session session(nullptr);
  fixture.server->handle_text(
      R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-03-26"}})",
      session, nullptr);
  weft::server::CancelGroup group;
  if (cancelled) group.cancel();
  auto reply = fixture.server->handle_text(text, session, nullptr, &group);
  if (cancelled) {
    if (reply && !batch.empty() && count <= kMaxItems) __builtin_trap();  // owed nothing
    return 0;
  }
  if (!reply) return 0;
  if (count > kMaxItems) {
    if (!reply->is_object() || !reply->contains("error")) __builtin_trap();
    return 0;
  }
  if (!reply->is_array()) return 0;  // an empty batch: one Invalid Request
  if (reply->size() > count) __builtin_trap();
  size_t bytes = 2;
  bool full = false;
  for (const Json& r : *reply) {
    const bool limit_error =
        r.contains("error") &&
        r["error"]["message"].get<std::string>().find("reached the limit of") != std::string::npos;
    if (limit_error) full = true;
    if (!full) bytes += weft::server::serialize(r).size() + 1;
    if (full && r.contains("result")) __builtin_trap();  // ran after the limit
  }
  if (bytes > kMaxReplyBytes) __builtin_trap();
  return 0;
}
