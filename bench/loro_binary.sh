#!/usr/bin/env bash
# Loro binary suite (run by `scripts/bench.sh loro_binary --json`): loro-crdt
# replays a sequential trace and exports it as Loro FastUpdates, timing its
# own import of those bytes (bench/peers/loro_binary.mjs); weft imports the
# same bytes and exports them again (weft_loro_binary_bench), in the same
# run. Prints one JSON object per trace with both sides and the ratios the
# live-sync issue sets as bars (import >= 10x faster, export within 1.1x of
# Loro's bytes). Args: --reps N, --only NAME (default automerge-paper).
set -euo pipefail
cd "$(dirname "$0")/.."
build="${WEFT_BUILD:-$PWD/build/release}"
shared="${WEFT_SHARED_DIR:-$PWD/../shared}"
dir="$shared/data/traces/sequential"
reps=10
only="automerge-paper"
while [ $# -gt 0 ]; do
  case "$1" in
    --json) ;;
    --reps) reps="${2:-10}"; [ $# -lt 2 ] || shift ;;
    --only) only="${2:-}"; [ $# -lt 2 ] || shift ;;
    *) echo "loro_binary.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
  shift
done
if [ ! -d "$dir" ]; then
  echo "{\"skipped\":\"trace directory $dir is absent (set WEFT_SHARED_DIR); nothing to measure\"}"
  exit 0
fi
if [ ! -d bench/peers/node_modules ]; then
  (cd bench/peers && npm ci --no-audit --no-fund >/dev/null)
fi
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
IFS=',' read -r -a names <<<"$only"
for name in "${names[@]}"; do
  trace="$dir/$name.json.gz"
  if [ ! -f "$trace" ]; then
    echo "{\"trace\":\"$name\",\"skipped\":\"$trace is absent\"}"
    continue
  fi
  peer="$(node bench/peers/loro_binary.mjs "$trace" --out "$tmp/$name.loro" --reps "$reps")"
  weft="$("$build/bench/weft_loro_binary_bench" "$tmp/$name.loro" --reps "$reps")"
  node -e '
    const [name, peer, weft] = process.argv.slice(1);
    const p = JSON.parse(peer), w = JSON.parse(weft);
    const row = { trace: name, ...p, ...w,
      import_speedup: +(p.loro_import_ms / w.weft_import_ms).toFixed(2),
      update_bytes_ratio: +(w.weft_update_bytes / p.loro_update_bytes).toFixed(4) };
    console.log(JSON.stringify(row));' "$name" "$peer" "$weft"
done
