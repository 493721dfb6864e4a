// Fuzzes the Loro JSON updates importer: arbitrary text must be rejected or
// imported, never crash; a failed import leaves the doc unchanged; whatever
// was imported exports and re-imports to the same value; the docs'
// invariants hold after every step (Doc::check_invariants, deep).
#include <cstddef>
#include <cstdint>
#include <string>

#include "weft/crdt/doc.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string input(reinterpret_cast<const char*>(data), size);
  weft::crdt::Doc doc(1);
  (void)doc.get_text("t").insert(0, "ab");
  (void)doc.commit();
  const std::string before = doc.to_json_string();
  auto st = doc.import(input);
  if (!doc.check_invariants(true).ok()) __builtin_trap();
  if (!st.ok()) {
    if (doc.to_json_string() != before) __builtin_trap();
    return 0;
  }
  weft::crdt::Doc again(2);
  if (!again.import(doc.export_json_updates()).ok()) __builtin_trap();
  if (!again.check_invariants(true).ok()) __builtin_trap();
  if (again.to_json_string() != doc.to_json_string()) __builtin_trap();
  return 0;
}
