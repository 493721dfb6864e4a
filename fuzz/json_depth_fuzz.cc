// Fuzzes every way JSON from outside enters weft with generated deep and wide
// JSON: the input bytes drive a small grammar, so a few bytes open a hundred
// thousand levels, and others write wide siblings, strings full of brackets,
// quotes and escapes, truncations and stray closers. Each text goes, bare and
// inside its envelope, to the MCP parse path (through a tool call that copies
// and dumps its arguments), the Loro JSON importer and Value::from_json_string,
// the block-schema parser, the block store's metadata (written and read
// back), and the snapshot record. Nothing may crash; a doc that imported a
// value must export a binary snapshot that imports again.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "weft/crdt/doc.h"
#include "weft/doc/schema_json.h"
#include "weft/fs/types.h"
#include "weft/server/mcp_server.h"
#include "weft/store/block_store.h"

namespace {

using weft::server::Json;

constexpr size_t kMaxText = 1 << 18;  // generated text stops growing here (52k+ levels)

// Writes JSON text step by step; each input byte picks the next step.
class Generator {
 public:
  explicit Generator(std::string_view input) : in_(input) {}

  std::string run() {
    bool truncated = false;
    while (pos_ < in_.size() && out_.size() < kMaxText && !truncated) {
      switch (next() % 14) {
        case 0:
          open('[');
          break;
        case 1:
          open('{');
          break;
        case 2:
          close();
          break;
        case 3:
          open_many('[', (size_t{next()} + 1) * 600);  // up to 153,600 levels
          break;
        case 4:
          open_many('{', (size_t{next()} + 1) * 400);  // up to 102,400 levels
          break;
        case 5:
          value(tricky_string());
          break;
        case 6:
          value(std::to_string(next()) + (next() % 2 ? ".5e3" : ""));
          break;
        case 7:
          value(next() % 2 ? "true" : "null");
          break;
        case 8:
          wide((size_t{next()} + 1) * 50);
          break;
        case 9:
          truncated = true;  // leave levels open: invalid JSON
          break;
        case 10:
          close_all();
          break;
        case 11:
          out_ += next() % 2 ? ']' : '}';  // a stray closer
          break;
        case 12:
          out_ += static_cast<char>(next());  // a raw byte
          break;
        default:
          value("\"" + std::string(next() % 8, 'a') + "\"");
          break;
      }
    }
    if (!truncated) close_all();
    if (out_.empty()) out_ = "null";
    return std::move(out_);
  }

 private:
  uint8_t next() { return pos_ < in_.size() ? static_cast<uint8_t>(in_[pos_++]) : 0; }

  // Starts a value at the current level: a comma after a sibling, a key in an object.
  void begin_value() {
    if (stack_.empty()) return;
    if (!first_.back()) out_ += ',';
    first_.back() = false;
    if (stack_.back() == '{') out_ += "\"k\":";
  }
  void value(const std::string& text) {
    begin_value();
    out_ += text;
  }
  void open(char bracket) {
    begin_value();
    out_ += bracket;
    stack_.push_back(bracket);
    first_.push_back(true);
  }
  void open_many(char bracket, size_t n) {
    for (size_t i = 0; i < n && out_.size() < kMaxText; ++i) open(bracket);
  }
  void close() {
    if (stack_.empty()) return;
    out_ += stack_.back() == '[' ? ']' : '}';
    stack_.pop_back();
    first_.pop_back();
  }
  void close_all() {
    while (!stack_.empty()) close();
  }
  void wide(size_t n) {
    for (size_t i = 0; i < n && out_.size() < kMaxText; ++i) {
      if (i % 3 == 0) {
        value("[1,{\"a\":[]}]");
      } else {
        value(i % 3 == 1 ? "\"[{\\\"\"" : "0");
      }
    }
  }
  // A valid string of brackets, quotes and backslashes (escaped as needed),
  // sometimes with a \u escape of a bracket.
  std::string tricky_string() {
    static constexpr char kChars[] = {'[', ']', '{', '}', '"', '\\', ':', ','};
    std::string s = "\"";
    for (size_t n = next() % 32; n > 0; --n) {
      char c = kChars[next() % sizeof(kChars)];
      if (c == '"' || c == '\\') s += '\\';
      s += c;
    }
    if (next() % 4 == 0) s += "\\u005b\\u007d";
    return s + "\"";
  }

  std::string_view in_;
  size_t pos_ = 0;
  std::string out_;
  std::vector<char> stack_;  // '[' or '{' per open level
  std::vector<bool> first_;  // per open level: no value yet
};

// A server with one tool that copies, compares and dumps its arguments.
std::unique_ptr<weft::server::McpServer> make_server() {
  auto tools = std::make_shared<weft::server::ToolRegistry>();
  weft::server::ToolSpec spec;
  spec.name = "echo";
  spec.description = "Copies and dumps its arguments.";
  spec.input_schema = Json::parse(R"({"type":"object"})");
  spec.handler = [](const Json& args,
                    weft::server::ToolContext&) -> weft::Result<weft::server::ToolOutput> {
    Json copy = args;
    if (copy != args) __builtin_trap();
    return weft::server::ToolOutput{copy.dump(-1, ' ', false, Json::error_handler_t::replace),
                                    nullptr, nullptr};
  };
  tools->add(std::move(spec)).ignore_error();
  weft::server::ServerOptions options;
  options.max_message_bytes = 4 * kMaxText;
  return std::make_unique<weft::server::McpServer>(options, tools);
}

void mcp(const std::string& text) {
  static std::unique_ptr<weft::server::McpServer> server = make_server();
  weft::server::Session session([](const Json&) {});
  auto sink = [](const Json&) {};
  const std::string init =
      R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18",)"
      R"("capabilities":{},"clientInfo":{"name":"fuzz","version":"1"}}})";
  (void)server->handle_text(init, session, sink);
  for (const std::string& message :
       {text, R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo",)"
              R"("arguments":{"v":)" +
                  text + "}}}"}) {
    auto reply = server->handle_text(message, session, sink);
    if (reply) (void)weft::server::serialize(*reply);
  }
}

void loro(const std::string& text) {
  const std::string envelope =
      R"({"schema_version":1,"peers":["5"],"changes":[{"id":"0@0","timestamp":0,"deps":[],)"
      R"("lamport":0,"msg":null,"ops":[{"container":"cid:root-m:Map","content":{"type":"insert",)"
      R"("key":"k","value":)" +
      text + R"(},"counter":0}]}]})";
  for (const std::string* input : {&text, &envelope}) {
    weft::crdt::Doc doc(1);
    if (!doc.import(*input).ok()) continue;
    (void)doc.to_json_string();
    weft::crdt::Doc again(2);
    if (!again.import(doc.export_snapshot()).ok()) __builtin_trap();
    if (again.to_json_string() != doc.to_json_string()) __builtin_trap();
  }
  auto value = weft::crdt::Value::from_json_string(text);
  if (value.ok()) (void)value->to_json_string();
}

void schema(const std::string& text) {
  (void)weft::doc::schema_from_json(text).status();
  (void)weft::doc::schema_from_json(
      R"({"type":"map","fields":[{"name":"f","type":"list","default":)" + text + "}]}")
      .status();
}

void metadata(const std::string& text) {
  static std::shared_ptr<weft::store::BlockStore> store;
  static std::string id;
  if (!store) {
    auto opened = weft::store::BlockStore::open(":memory:");
    if (!opened.ok()) return;
    store = std::move(*opened);
    weft::store::NewBlock nb;
    nb.agent_id = "fuzz";
    nb.label = "meta";
    auto info = store->create_block(nb);
    if (!info.ok()) __builtin_trap();
    id = info->id;
  }
  for (const std::string& meta : {text, "{\"m\":" + text + "}"}) {
    weft::store::BlockPatch patch;
    patch.metadata_json = meta;
    if (!store->update_block(id, patch).ok()) continue;
    auto info = store->get_block("fuzz", "meta");
    if (!info.ok()) __builtin_trap();
    // What `weft block show --json` does with it.
    Json parsed = Json::parse(info->metadata_json, nullptr, false);
    Json copy = parsed;
    (void)copy.dump(-1, ' ', false, Json::error_handler_t::replace);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text = Generator(std::string_view(reinterpret_cast<const char*>(data), size)).run();
  mcp(text);
  loro(text);
  schema(text);
  metadata(text);
  (void)weft::fs::snapshot_from_json(text).status();
  return 0;
}
