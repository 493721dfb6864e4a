#!/usr/bin/env bash
# Traces suite (run by `scripts/bench.sh traces --json`): weft_traces_bench
# and the Node peers (loro-crdt, diamond-types-node) on ../shared/data/traces
# in the same run, then one JSON object per trace with both sides and the
# ratios the CRDT issue sets as bars. Extra args go to both benchmarks
# (--reps N, --only NAME). Without the trace data it prints a skip line.
set -euo pipefail
cd "$(dirname "$0")/.."
build="${WEFT_BUILD:-$PWD/build/release}"
shared="${WEFT_SHARED_DIR:-$PWD/../shared}"
dir="$shared/data/traces"
args=()
for a in "$@"; do [ "$a" = "--json" ] || args+=("$a"); done

if [ ! -d "$dir" ]; then
  echo "{\"skipped\":\"trace directory $dir is absent (set WEFT_SHARED_DIR); nothing to measure\"}"
  exit 0
fi
bin="$build/bench/weft_traces_bench"
if [ ! -x "$bin" ]; then
  echo "traces.sh: $bin is missing; build with scripts/build.sh release weft_traces_bench" >&2
  exit 1
fi

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
"$bin" --dir "$dir" "${args[@]}" >"$tmp/weft.jsonl"

peers_ok=1
if ! command -v node >/dev/null 2>&1; then
  echo "traces.sh: node is not installed; peer figures skipped" >&2
  peers_ok=0
elif [ ! -d bench/peers/node_modules/loro-crdt ] || [ ! -d bench/peers/node_modules/diamond-types-node ]; then
  (cd bench/peers && npm ci --silent) || peers_ok=0
fi
if [ "$peers_ok" = 1 ]; then
  node bench/peers/traces.mjs --dir "$dir" "${args[@]}" >"$tmp/peers.jsonl" || peers_ok=0
fi
[ "$peers_ok" = 1 ] || : >"$tmp/peers.jsonl"

python3 - "$tmp/weft.jsonl" "$tmp/peers.jsonl" <<'PY'
import json, sys

def load(path):
    rows = {}
    for line in open(path):
        line = line.strip()
        if line.startswith("{"):
            row = json.loads(line)
            rows[row.get("trace", "?")] = row
    return rows

weft, peers = load(sys.argv[1]), load(sys.argv[2])

def ratio(a, b):
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and b > 0:
        return round(a / b, 3)
    return None

for name, row in weft.items():
    peer = peers.get(name, {})
    out = dict(row)
    out.update({k: v for k, v in peer.items() if k != "trace"})
    out["ratios"] = {
        # bars: weft/floor <= 5; dt/weft >= 5; loro/weft >= 50 (local replay)
        "weft_over_floor": ratio(row.get("weft_ms"), row.get("floor_ms")),
        "dt_over_weft": ratio(peer.get("dt_ms"), row.get("weft_ms")),
        "loro_over_weft": ratio(peer.get("loro_ms"), row.get("weft_ms")),
        # bars: dt/weft >= 2 and loro/weft >= 10 (merge into an empty doc)
        # (like for like: dt's merge from bytes against weft's, dt's checkout of
        # an op log in memory against weft's; dt_merge_over_weft mixes the two)
        "dt_merge_over_weft": ratio(peer.get("dt_merge_ms"), row.get("merge_ms")),
        "dt_bytes_merge_over_weft": ratio(peer.get("dt_merge_from_bytes_ms"), row.get("merge_ms")),
        "dt_merge_over_weft_replay": ratio(peer.get("dt_merge_ms"), row.get("replay_ms")),
        "loro_merge_over_weft": ratio(peer.get("loro_merge_ms"), row.get("merge_ms")),
        # bar: weft/dt <= 1 (full-history encoding)
        "bytes_over_dt": ratio(row.get("encoded_bytes"), peer.get("dt_bytes")),
    }
    print(json.dumps(out, separators=(",", ":")))
PY
