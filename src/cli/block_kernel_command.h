// The kernel side of `weft block`: new, edit, append, search, read, undo,
// redo, rollback and rm act on a workspace root's blocks (conversation blocks,
// file:<path>, memory:<agent>/<label>) through the root's kernel, like
// `weft history` (cli/kernel_client.h). The rest of `weft block` works on a
// block database file (--db).
//
// Thread safety: main thread only.
#ifndef WEFT_CLI_BLOCK_KERNEL_COMMAND_H_
#define WEFT_CLI_BLOCK_KERNEL_COMMAND_H_

#include <CLI/CLI.hpp>

namespace weft::cli {

// Adds the subcommands above to `weft block`.
void setup_block_kernel_commands(CLI::App* block);

}  // namespace weft::cli

#endif  // WEFT_CLI_BLOCK_KERNEL_COMMAND_H_
