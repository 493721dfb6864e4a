// Fuzzes the weft binary decoder/importer: arbitrary bytes (and bytes that
// carry a valid header) must be rejected or imported, never crash, and a
// failed import must leave the doc unchanged.
#include <cstddef>
#include <cstdint>
#include <string>

#include "weft/crdt/doc.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string base = [] {
    weft::crdt::Doc d(7);
    (void)d.get_text("t").insert(0, "héllo😀");
    (void)d.get_list("l").push(weft::crdt::Value(1));
    (void)d.get_map("m").set("k", weft::crdt::Value("v"));
    (void)d.commit();
    return d.export_snapshot();
  }();
  std::string input(reinterpret_cast<const char*>(data), size);
  weft::crdt::Doc doc(1);
  (void)doc.import(base);
  const std::string before = doc.to_json_string();
  auto st = doc.import(input);
  if (!st.ok() && doc.to_json_string() != before) __builtin_trap();
  // Also try the input as a body behind a copy of a valid header (so the
  // decoder proper is reached despite the checksum).
  if (size > 16) {
    std::string framed = base.substr(0, 16) + input.substr(16);
    weft::crdt::Doc d2(2);
    (void)d2.import(framed);
    (void)d2.export_json_updates();
  }
  if (st.ok()) (void)doc.export_snapshot();
  return 0;
}
