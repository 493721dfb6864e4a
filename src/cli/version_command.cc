// `weft version`: prints the version and the formats this build speaks.
#include <iostream>

#include "cli/command_registry.h"

namespace weft::cli {
namespace {

void setup_version(CLI::App& app) {
  auto* cmd = app.add_subcommand("version", "Print weft's version and supported formats");
  cmd->callback([] {
    std::cout << "weft 0.1.0\n";
    set_exit_code(kExitOk);
  });
}

}  // namespace
}  // namespace weft::cli

WEFT_REGISTER_COMMAND("version", 100, weft::cli::setup_version);
