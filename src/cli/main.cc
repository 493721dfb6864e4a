// The `weft` command: a thin shell over the library layers. Each subcommand
// lives in its own file under src/cli/ and registers itself.
#include <CLI/CLI.hpp>

#include "cli/command_registry.h"
#include "weft/base/allocator.h"

int main(int argc, char** argv) {
  weft::keep_freed_memory_for_reuse();  // (the server and repeated loads reuse memory)
  CLI::App app{
      "weft: a workspace kernel of CRDT blocks for AI agents and the people beside them.\n"
      "Every file and every piece of agent memory is a block with full history,\n"
      "permission-gated edits, rollback and live sync.",
      "weft"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "weft 0.1.0");
  app.footer(
      "Exit codes: 0 ok; 1 the operation failed; 2 usage error; 3 not found;\n"
      "4 permission denied; 5 corrupt or invalid input data; 6 unavailable.\n"
      "Run `weft <command> --help` for a command's options.");
  weft::cli::setup_commands(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : weft::cli::kExitUsage;
  }
  return weft::cli::exit_code();
}
