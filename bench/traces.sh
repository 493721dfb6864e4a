#!/usr/bin/env bash
# Traces suite (run by `scripts/bench.sh traces --json`): weft_traces_bench
# and the Node peers (loro-crdt, diamond-types-node) on ../shared/data/traces
# in the same run, then one JSON object per trace with both sides and the
# ratios the CRDT issue sets as bars. Extra args go to both benchmarks
# (--reps N, --only NAME). Without the trace data it prints a skip line.
#
# --rounds K (K > 1) runs one process per trace and side, alternating weft
# and the peers trace by trace, K times over, and keeps each figure's best.
# On a shared VM a whole process runs fast or slow (the same binary's best of
# 20 reps moved 1.0-1.75 ms between invocations), so one process per side
# can put a ratio off by 1.5x; many short alternating processes let both
# sides meet the same quiet spells.
set -euo pipefail
cd "$(dirname "$0")/.."
build="${WEFT_BUILD:-$PWD/build/release}"
shared="${WEFT_SHARED_DIR:-$PWD/../shared}"
dir="$shared/data/traces"
args=()
rounds=1
only=""
while [ $# -gt 0 ]; do
  case "$1" in
    --json) ;;
    --rounds) rounds="${2:-}"; [ $# -lt 2 ] || shift ;;
    --only) only="${2:-}"; [ $# -lt 2 ] || shift ;;
    *) args+=("$1") ;;
  esac
  shift
done
if ! [[ "$rounds" =~ ^[1-9][0-9]*$ ]]; then
  echo "traces.sh: --rounds takes a positive whole number, not '$rounds'" >&2
  exit 2
fi

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

peers_ok=1
if ! command -v node >/dev/null 2>&1; then
  echo "traces.sh: node is not installed; peer figures skipped" >&2
  peers_ok=0
elif [ ! -d bench/peers/node_modules/loro-crdt ] || [ ! -d bench/peers/node_modules/diamond-types-node ]; then
  (cd bench/peers && npm ci --silent) || peers_ok=0
fi
: >"$tmp/weft.jsonl"
: >"$tmp/peers.jsonl"
run_peers() {
  [ "$peers_ok" = 1 ] || return 0
  node bench/peers/traces.mjs --dir "$dir" "$@" >>"$tmp/peers.jsonl" || peers_ok=0
}
if [ "$rounds" = 1 ]; then
  only_args=()
  [ -z "$only" ] || only_args=(--only "$only")
  "$bin" --dir "$dir" "${args[@]}" "${only_args[@]}" >>"$tmp/weft.jsonl"
  run_peers "${args[@]}" "${only_args[@]}"
else
  # One process per trace: the trace list comes from the directory (and --only).
  names=()
  while IFS= read -r f; do
    n="$(basename "$f" .json.gz)"
    if [ -z "$only" ] || [[ ",$only," == *",$n,"* ]]; then names+=("$n"); fi
  done < <(find "$dir" -name '*.json.gz' | sort)
  for ((r = 1; r <= rounds; r++)); do
    for n in "${names[@]}"; do
      "$bin" --dir "$dir" "${args[@]}" --only "$n" >>"$tmp/weft.jsonl"
      run_peers "${args[@]}" --only "$n"
    done
  done
fi
[ "$peers_ok" = 1 ] || : >"$tmp/peers.jsonl"

python3 - "$tmp/weft.jsonl" "$tmp/peers.jsonl" <<'PY'
import json, sys

def merge(old, new):
    """Folds another round's row into one: the best (least) time of every
    *_ms figure, "correct" only if every round was, the rest from the first
    round; an error stays only while no round has produced that figure."""
    for key, value in new.items():
        if key.endswith("_ms") and isinstance(value, (int, float)):
            prev = old.get(key)
            old[key] = value if not isinstance(prev, (int, float)) else min(prev, value)
        elif key.endswith("correct") and isinstance(value, bool):
            old[key] = old.get(key, True) and value
        elif key not in old:
            old[key] = value
    old["rounds"] = old.get("rounds", 1) + 1
    return old

def load(path):
    rows = {}
    for line in open(path):
        line = line.strip()
        if line.startswith("{"):
            row = json.loads(line)
            name = row.get("trace", "?")
            rows[name] = merge(rows[name], row) if name in rows else row
    for row in rows.values():
        # loro_error / dt_error come from building a merge history; once one round built it,
        # the other rounds' errors are stale.
        for key in [k for k in row if k.endswith("_error")]:
            if key[: -len("_error")] + "_merge_ms" in row:
                del row[key]
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
