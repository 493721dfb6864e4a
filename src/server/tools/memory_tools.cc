// memory_create, memory_read, memory_update and memory_append: an agent's
// structured memory blocks (memory:<agent>/<label>), the caller's own.
#include "server/tools/block_tools.h"

namespace weft::server::tools {

namespace {

constexpr const char* kSchemaHelp =
    "The block's schema: \"text\", {\"type\":\"map\",\"fields\":[{\"name\":...,\"type\":"
    "\"text\"|\"number\"|...,\"read_only\":bool}]}, {\"type\":\"list\",\"item_schema\":...,"
    "\"max_items\":N}, {\"type\":\"log\",\"display_limit\":N} or {\"type\":\"composite\","
    "\"sections\":[{\"name\":...,\"schema\":...,\"read_only\":bool}]}";

Json label_prop() {
  return string_prop("Your memory block's label ([A-Za-z0-9._/-], 1-128 bytes)", 1);
}

std::optional<std::string> opt_string(const Json& args, const char* key) {
  if (!args.contains(key)) return std::nullopt;
  return arg_string(args, key);
}

Result<ToolOutput> run_memory_create(const Json& args, ToolContext& ctx) {
  WEFT_ASSIGN_OR_RETURN(kernel::Blocks * blocks, blocks_of(ctx));
  kernel::MemoryCreate r;
  r.label = arg_string(args, "label");
  const Json& schema = args["schema"];
  r.schema_json = schema.is_string() ? Json(schema.get<std::string>()).dump() : schema.dump();
  r.description = arg_string(args, "description");
  if (args.contains("initial_text")) r.initial_text = arg_string(args, "initial_text");
  auto w = blocks->memory_create(agent_of(ctx, "memory_create"), r);
  if (!w.ok()) {
    Status s = w.status();
    if (s.code() == StatusCode::kInvalidArgument) {
      return Status(s.code(), std::string(s.message()) + "\n" + kSchemaHelp);
    }
    return block_error(s, "");
  }
  return write_output(*w, "Created memory block");
}

Result<ToolOutput> run_memory_read(const Json& args, ToolContext& ctx) {
  WEFT_ASSIGN_OR_RETURN(kernel::Blocks * blocks, blocks_of(ctx));
  std::string label = arg_string(args, "label");
  auto c = blocks->memory_read(agent_of(ctx, "memory_read"), label);
  if (!c.ok()) {
    Status s = c.status();
    if (s.code() == StatusCode::kNotFound) {
      return not_found("you have no memory block '" + label + "': create it with memory_create " +
                       "(block_list kind memory lists yours)");
    }
    return block_error(s, label);
  }
  Json schema = Json::parse(c->schema_json, nullptr, false);
  Json s = {{"block_id", c->block_id},
            {"label", c->label},
            {"rendered", c->rendered},
            {"schema", schema.is_discarded() ? Json(c->schema_json) : schema},
            {"description", c->description},
            {"permission", std::string(doc::memory_permission_name(c->permission))},
            {"version", c->version}};
  std::string text = c->block_id + " (version " + c->version +
                     (c->description.empty() ? "" : ", " + c->description) +
                     "; parts marked [read-only] cannot be changed)\n" + c->rendered;
  if (!text.empty() && text.back() != '\n') text += "\n";
  return ToolOutput{std::move(text), std::move(s), nullptr};
}

Result<ToolOutput> run_memory_write(bool append, const Json& args, ToolContext& ctx) {
  WEFT_ASSIGN_OR_RETURN(kernel::Blocks * blocks, blocks_of(ctx));
  std::string label = arg_string(args, "label");
  auto who = agent_of(ctx, append ? "memory_append" : "memory_update");
  auto field = opt_string(args, "field");
  auto section = opt_string(args, "section");
  auto w = append ? blocks->memory_append(who, label, field, args["item"], section)
                  : blocks->memory_update(who, label, field, args["value"], section);
  if (!w.ok()) {
    Status s = w.status();
    if (s.code() == StatusCode::kNotFound &&
        s.message().find("memory_create") == std::string_view::npos) {
      return Status(s.code(), std::string(s.message()) +
                                  " (memory_read shows the block's fields and sections; "
                                  "memory_create makes a new block)");
    }
    return block_error(s, "memory:" + kernel::agent_name_of(ctx.origin()) + "/" + label);
  }
  return write_output(*w, append ? "Appended to" : "Updated");
}

ToolSpec memory_tool(std::string name, std::string title, std::string description, Json props,
                     std::vector<std::string> required, ToolHandler handler, bool read_only) {
  Json output = read_only ? object_schema({{"block_id", {{"type", "string"}}},
                                           {"label", {{"type", "string"}}},
                                           {"rendered", {{"type", "string"}}},
                                           {"schema", {{"type", {"object", "string"}}}},
                                           {"description", {{"type", "string"}}},
                                           {"permission", {{"type", "string"}}},
                                           {"version", {{"type", "string"}}}})
                          : write_schema();
  return block_tool(std::move(name), std::move(title), std::move(description), std::move(props),
                    std::move(required), std::move(output),
                    read_only ? read_only_hints() : write_hints(false, false), std::move(handler));
}

}  // namespace

ToolSpec memory_create_tool() {
  return memory_tool(
      "memory_create", "Create a memory block",
      "Create a structured memory block of yours (memory:<your name>/<label>) that lasts "
      "across sessions: free text, a map of named fields, a list, a log, or sections of "
      "these. Read it with memory_read; change it with memory_update and memory_append.",
      {{"label", label_prop()},
       {"schema", {{"type", {"object", "string"}}, {"description", kSchemaHelp}}},
       {"description", string_prop("What the block is for (shown by memory_read)")},
       {"initial_text", string_prop("Initial text (text schemas only)")}},
      {"label", "schema"}, [](const Json& a, ToolContext& c) { return run_memory_create(a, c); }, false);
}

ToolSpec memory_read_tool() {
  return memory_tool(
      "memory_read", "Read a memory block",
      "Read one of your memory blocks, rendered: fields and sections with their values, the "
      "parts you may not change marked [read-only]; with its schema and version.",
      {{"label", label_prop()}}, {"label"},
      [](const Json& a, ToolContext& c) { return run_memory_read(a, c); }, true);
}

ToolSpec memory_update_tool() {
  return memory_tool(
      "memory_update", "Update a memory block",
      "Set a value in one of your memory blocks: `field` names a map field (in `section` for a "
      "composite schema); omit it for a text block or text section, whose text becomes `value`. "
      "Read-only fields and sections are refused.",
      {{"label", label_prop()},
       {"field", string_prop("The map field to set (omit for text)", 1)},
       {"section", string_prop("The composite section holding the field or text", 1)},
       {"value", {{"description", "The new value (a string for text; as the field's type)"}}}},
      {"label", "value"},
      [](const Json& a, ToolContext& c) { return run_memory_write(false, a, c); }, false);
}

ToolSpec memory_append_tool() {
  return memory_tool(
      "memory_append", "Append to a memory block",
      "Add to one of your memory blocks: push `item` onto a list or log (the block, a `field`, "
      "or a `section`), or add text to a text block or text field.",
      {{"label", label_prop()},
       {"field", string_prop("The field to add to (omit for the block or section itself)", 1)},
       {"section", string_prop("The composite section to add to", 1)},
       {"item", {{"description", "The item to add (text to append, or a list/log entry)"}}}},
      {"label", "item"},
      [](const Json& a, ToolContext& c) { return run_memory_write(true, a, c); }, false);
}

}  // namespace weft::server::tools
