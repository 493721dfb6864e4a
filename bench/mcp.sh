#!/usr/bin/env bash
# MCP server benchmark (run by `scripts/bench.sh mcp --json`):
#  - over stdio with the official SDK client, weft mcp vs
#    @modelcontextprotocol/server-filesystem in the same run: calls/s of
#    fs_read / read_text_file and fs_edit / edit_file on a 100 KB file, and
#    the client ceiling for the read (bench/peers/canned_server.mjs replaying
#    weft's recorded result bytes: what the SDK client alone can do);
#  - fs_grep on a 20,000-file tree vs ripgrep (rg -l);
#  - fs_edit of a 1 MB file inside the server (bench/mcp_edit_bench.cc).
# Prints one JSON object. Needs node, bench/peers/node_modules (npm ci) and rg.
set -euo pipefail
cd "$(dirname "$0")/.."
build="${WEFT_BUILD:-$PWD/build/release}"
quick=""
for arg in "$@"; do
  [ "$arg" = "--quick" ] && quick="--quick"
done
if [ ! -d bench/peers/node_modules/@modelcontextprotocol/server-filesystem ]; then
  (cd bench/peers && npm ci --no-audit --no-fund --loglevel=error)
fi
inside="{}"
if [ -x "$build/bench/weft_mcp_edit_bench" ]; then
  inside="$("$build/bench/weft_mcp_edit_bench" 200)"
fi
peers="$(cd bench/peers && node mcp_bench.mjs "$build/weft" $quick)"
node -e '
const [inside, peers] = [JSON.parse(process.argv[1]), JSON.parse(process.argv[2])];
const os = require("os");
console.log(JSON.stringify({suite: "mcp", date: new Date().toISOString(),
  machine: `${os.cpus()[0].model} x${os.cpus().length}, ${Math.round(os.totalmem() / 2**30)} GiB, ${os.platform()} ${os.release()}`,
  node: process.version, ...peers, ...inside}, null, 2));
' "$inside" "$peers"
