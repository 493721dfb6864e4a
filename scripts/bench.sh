#!/usr/bin/env bash
# Builds weft in Release and runs one benchmark suite, printing its figures.
#   scripts/bench.sh traces --json    CRDT engine on ../shared/data/traces (+ Node peers)
#   scripts/bench.sh fs --json        filesystem protocol vs ripgrep / fd / git
#   scripts/bench.sh store --json     SQLite block store
#   scripts/bench.sh mcp --json       MCP server vs @modelcontextprotocol/server-filesystem
#   scripts/bench.sh mcp_load --json [--sessions 300] [--seconds 20] [--interval-ms 0]
#                                     concurrent HTTP sessions doing fs_read: errors, lost
#                                     sessions, latency percentiles, server peak RSS
#   scripts/bench.sh sync --json [--quick]
#                                     live sync: fan-out vs loro-websocket SimpleServer,
#                                     disk -> client, idle connections, Loro binary codec
#   scripts/bench.sh kernel --json [--quick]
#                                     workspace kernel: fs_edit through the kernel (and a
#                                     second process) vs server-filesystem, watch latency,
#                                     startup on 20,000 files, RSS with 1,000 blocks,
#                                     1 MB reconcile; JSON lines, one per measurement
#   scripts/bench.sh web --json       the web page in headless chromium: opening a 1 MB
#                                     file, agent edit -> page latency, bundle size
#   scripts/bench.sh fanin --json [--lags 20,200,1000,3000]
#                                     a sync room's doc importing 100 editors' updates
#                                     merged late: kept tracker vs partial replays only
# A suite is bench/<name>.sh when that exists, else the binary weft_<name>_bench.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$#" -lt 1 ]; then
  echo "usage: scripts/bench.sh SUITE [--json] [args...]" >&2
  ls bench/*.sh bench/*_bench.cc 2>/dev/null | sed 's|bench/||; s|_bench.cc||; s|\.sh||' >&2
  exit 2
fi
suite="$1"
shift
scripts/install-deps.sh >/dev/null
WEFT_BUILD_BENCH=ON scripts/build.sh release >/dev/null
export WEFT_BUILD="$PWD/build/release"
if [ -x "bench/$suite.sh" ]; then
  exec "bench/$suite.sh" "$@"
elif [ -x "build/release/bench/weft_${suite}_bench" ]; then
  exec "build/release/bench/weft_${suite}_bench" "$@"
else
  echo "bench.sh: no benchmark suite named '$suite'" >&2
  exit 2
fi
