// `weft doc export` (weft binary snapshot or updates) and `weft doc info`.
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli/command_registry.h"
#include "weft/base/input_file.h"
#include "weft/crdt/doc.h"

namespace weft::cli {
namespace {

bool load_into(crdt::Doc& doc, const std::string& path, size_t* bytes = nullptr) {
  auto data = read_regular_file(path, "weft document file");
  if (!data.ok()) {
    fail(data.status());
    return false;
  }
  if (bytes) *bytes += data->size();
  auto st = doc.import(*data);
  if (!st.ok()) {
    std::cerr << "weft: " << path << ": " << st.status().to_string() << "\n";
    set_exit_code(st.status().code() == StatusCode::kUnimplemented ? kExitFailure : kExitBadData);
    return false;
  }
  return true;
}

void setup_doc(CLI::App& app) {
  auto* doc_cmd = app.add_subcommand("doc", "Inspect and convert CRDT documents");
  doc_cmd->require_subcommand(1);

  struct ExportArgs {
    std::vector<std::string> files;
    std::string out;
    std::string mode = "snapshot";
  };
  auto ea = std::make_shared<ExportArgs>();
  auto* exp = doc_cmd->add_subcommand("export", "Merge FILEs and write a weft binary file");
  exp->add_option("FILE", ea->files, "Loro JSON updates or weft binary files")->required();
  exp->add_option("--out", ea->out, "Output file")->required();
  exp->add_option("--mode", ea->mode, "snapshot or updates")
      ->check(CLI::IsMember({"snapshot", "updates"}));
  exp->callback([ea] {
    crdt::Doc doc(1);
    for (const auto& f : ea->files) {
      if (!load_into(doc, f)) return;
    }
    std::string bytes = ea->mode == "snapshot" ? doc.export_snapshot() : doc.export_updates();
    std::ofstream out(ea->out, std::ios::binary | std::ios::trunc);
    out << bytes;
    out.close();
    if (!out) {
      fail(unavailable("cannot write '" + ea->out + "'"));
      return;
    }
    set_exit_code(kExitOk);
  });

  auto file = std::make_shared<std::string>();
  auto* info = doc_cmd->add_subcommand("info", "Print a document's version, frontiers and sizes");
  info->add_option("FILE", *file, "Loro JSON updates or weft binary file")->required();
  info->callback([file] {
    crdt::Doc doc(1);
    size_t bytes = 0;
    if (!load_into(doc, *file, &bytes)) return;
    std::cout << "{\"version\":" << doc.oplog_version().to_json_string()
              << ",\"frontiers\":" << doc.oplog_frontiers().to_json_string()
              << ",\"changes\":" << doc.change_count() << ",\"ops\":" << doc.op_count()
              << ",\"file_bytes\":" << bytes
              << ",\"snapshot_bytes\":" << doc.export_snapshot().size()
              << ",\"json_bytes\":" << doc.export_json_updates().size() << "}\n";
    set_exit_code(kExitOk);
  });
}

}  // namespace
}  // namespace weft::cli

WEFT_REGISTER_COMMAND("doc", 61, weft::cli::setup_doc);
