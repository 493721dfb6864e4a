#!/usr/bin/env bash
# Builds the web page into one bundle for the weft binary to embed:
#   web/build.sh OUT_FILE      (scripts/build.sh runs it with build/web/weft-web.bundle)
# Installs the npm packages (npm ci) when package-lock.json changed, and
# rebuilds only when a source is newer than OUT_FILE.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="$1"
case "$out" in /*) ;; *) out="$PWD/$out" ;; esac
cd "$here"

if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund --loglevel=error
  touch node_modules/.package-lock.json
fi

if [ -f "$out" ] && [ -z "$(find src index.html build.mjs package-lock.json -newer "$out" -print -quit)" ]; then
  exit 0
fi
node build.mjs "$out"
