// Fuzzes the block-schema JSON parser and validator: any bytes must give a
// schema or an error, never a crash; a parsed schema must round-trip.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "weft/doc/schema_json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto schema = weft::doc::schema_from_json(text);
  if (schema.ok()) {
    auto again = weft::doc::schema_from_json(weft::doc::schema_to_json(*schema));
    if (!again.ok() || !(*again == *schema)) __builtin_trap();
    (void)schema->read_only_fields();
    (void)schema->is_section_read_only("a");
  }
  return 0;
}
