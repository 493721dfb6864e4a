// How `weft` subcommands plug into the CLI: each command file defines a setup
// function and registers it with WEFT_REGISTER_COMMAND, so adding a command
// means adding one file under src/cli/ (no edit of main.cc).
//
// Exit codes (documented in README.md and `weft --help`):
//   0 success; 1 the operation failed (message on stderr); 2 usage error;
//   3 not found; 4 permission denied; 5 corrupt or invalid input data;
//   6 unavailable (busy, locked, port in use).
//
// Thread safety: registration happens during static initialisation, before
// main(); everything else runs on the main thread.
#ifndef WEFT_CLI_COMMAND_REGISTRY_H_
#define WEFT_CLI_COMMAND_REGISTRY_H_

#include <CLI/CLI.hpp>

#include <functional>
#include <string>

#include "weft/base/status.h"

namespace weft::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitNotFound = 3;
inline constexpr int kExitPermission = 4;
inline constexpr int kExitBadData = 5;
inline constexpr int kExitUnavailable = 6;

// Help of the --state option of the commands that change a workspace.
inline constexpr const char* kStateHelp =
    "The workspace's state directory, holding the lock that keeps other weft processes on the "
    "same root from overwriting this one's edits (default: $XDG_STATE_HOME/weft/<hash of the "
    "root>, else ~/.local/state/weft/...). Processes sharing a root must use the same one";
inline constexpr const char* kEnforcementHelp =
    "How shell_exec holds commands to weft.toml's rules: strict (refuse predicted violations, "
    "protected paths read-only in the sandbox, revert what got through), warned (warn, report), "
    "audit (log only), none (skip). Default: weft.toml's [shell] enforcement, else strict";

// Adds one top-level subcommand (and its children) to `app`.
using CommandSetup = std::function<void(CLI::App& app)>;

// Registers `setup` under `name`; commands appear in `weft --help` sorted by
// `order`, then name. Returns true so it can initialise a static.
bool register_command(std::string name, int order, CommandSetup setup);

// Calls every registered setup on `app`.
void setup_commands(CLI::App& app);

// Commands report their result here; main() returns it.
void set_exit_code(int code);
int exit_code();

// Maps a failed Status onto the exit codes above.
int exit_code_for(const Status& status);

// Prints "weft: <message>" to stderr and records the matching exit code.
// Returns the exit code, for `return fail(status);` in command callbacks.
int fail(const Status& status);

}  // namespace weft::cli

#define WEFT_REGISTER_COMMAND(name, order, setup)                               \
  [[maybe_unused]] static const bool WEFT_STATUS_CONCAT_(weft_registered_command_, \
                                                         __COUNTER__) =          \
      ::weft::cli::register_command(name, order, setup)

#endif  // WEFT_CLI_COMMAND_REGISTRY_H_
