#!/usr/bin/env bash
# The web page's figures (docs/web.md), one JSON line each with --json:
#   open_1mb_ms           /edit/<path> on a 1 MB file until the editor holds it
#   agent_to_page_p50_ms  an agent's fs_edit answered -> the change in the page (p50 of 20)
#   bundle_gzip_kb        the page's script + CSS, gzip (the CRDT engine's WebAssembly
#                         apart: wasm_gzip_kb; both: total_gzip_kb)
# Needs the weft binary ($WEFT_BUILD, set by scripts/bench.sh) and Debian chromium.
set -euo pipefail
cd "$(dirname "$0")/.."
build="${WEFT_BUILD:-$PWD/build/release}"
(cd tests/web && { [ -d node_modules ] || npm ci --no-audit --no-fund --loglevel=error; })
WEFT_BIN="$build/weft" exec node tests/web/bench_web.mjs "$@"
