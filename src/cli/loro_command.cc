// `weft loro merge` and `weft loro export`: merge Loro JSON updates, Loro
// binary updates/snapshots or weft binary updates/snapshots (detected by
// content) into a fresh doc and print its value, or write its whole history
// as Loro JSON updates or Loro binary (--format).
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli/command_registry.h"
#include "weft/base/input_file.h"
#include "weft/crdt/doc.h"

namespace weft::cli {
namespace {

// Imports `path` into `doc`; import errors are reported as bad input data.
int import_file(crdt::Doc& doc, const std::string& path) {
  auto data = read_regular_file(path, "Loro JSON, Loro binary or weft binary file");
  if (!data.ok()) return fail(data.status());
  auto st = doc.import(*data);
  if (!st.ok()) {
    std::cerr << "weft: " << path << ": " << st.status().to_string() << "\n";
    int code = st.status().code() == StatusCode::kUnimplemented ? kExitFailure : kExitBadData;
    set_exit_code(code);
    return code;
  }
  return kExitOk;
}

std::string value_line(const crdt::Doc& doc, bool with_version) {
  if (!with_version) return doc.to_json_string();
  return "{\"value\":" + doc.to_json_string() +
         ",\"version\":" + doc.oplog_version().to_json_string() + "}";
}

void setup_loro(CLI::App& app) {
  auto* loro = app.add_subcommand("loro", "Merge and export Loro JSON or binary updates");
  loro->require_subcommand(1);

  struct MergeArgs {
    std::vector<std::string> files;
    bool each = false;
    bool with_version = false;
  };
  auto margs = std::make_shared<MergeArgs>();
  auto* merge = loro->add_subcommand(
      "merge", "Import FILEs in order into a fresh doc and print its value as one JSON line");
  merge->add_option("FILE", margs->files, "Loro JSON / binary or weft binary files")->required();
  merge->add_flag("--each", margs->each, "Print the value after each file");
  merge->add_flag("--with-version", margs->with_version,
                  "Print {\"value\":...,\"version\":{peer:end}}");
  merge->callback([margs] {
    crdt::Doc doc(1);
    for (const auto& f : margs->files) {
      if (import_file(doc, f) != kExitOk) return;
      if (margs->each) std::cout << value_line(doc, margs->with_version) << "\n";
    }
    if (!margs->each) std::cout << value_line(doc, margs->with_version) << "\n";
    set_exit_code(kExitOk);
  });

  struct ExportArgs {
    std::vector<std::string> files;
    std::string out;
    std::string format = "json";
  };
  auto eargs = std::make_shared<ExportArgs>();
  auto* exp = loro->add_subcommand("export",
                                   "Merge FILEs and write the whole history as Loro updates");
  exp->add_option("FILE", eargs->files, "Loro JSON / binary or weft binary files")->required();
  exp->add_option("--out", eargs->out, "Output file")->required();
  exp->add_option("--format", eargs->format,
                  "json: Loro JSON updates; binary: Loro FastUpdates; snapshot: Loro FastSnapshot")
      ->check(CLI::IsMember({"json", "binary", "snapshot"}));
  exp->callback([eargs] {
    crdt::Doc doc(1);
    for (const auto& f : eargs->files) {
      if (import_file(doc, f) != kExitOk) return;
    }
    std::ofstream out(eargs->out, std::ios::binary | std::ios::trunc);
    if (eargs->format == "binary") {
      out << doc.export_loro_updates();
    } else if (eargs->format == "snapshot") {
      out << doc.export_loro_snapshot();
    } else {
      out << doc.export_json_updates();
    }
    out.close();
    if (!out) {
      fail(unavailable("cannot write '" + eargs->out + "'"));
      return;
    }
    set_exit_code(kExitOk);
  });
}

}  // namespace
}  // namespace weft::cli

WEFT_REGISTER_COMMAND("loro", 60, weft::cli::setup_loro);
