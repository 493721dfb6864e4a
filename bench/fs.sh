#!/usr/bin/env bash
# Filesystem benchmark: weft's fs layer vs ripgrep (rg -j1), fd (fdfind -j1)
# and the git CLI on a copy of /usr/include, plus snapshot costs on a
# 20,000-file tree and in memory. Run through `scripts/bench.sh fs --json`
# (WEFT_BUILD points at a Release build with bench/weft_fs_bench).
# Prints one JSON object; --json is accepted for symmetry with other suites.
set -euo pipefail
build="${WEFT_BUILD:-build/release}"
bin="$build/bench/weft_fs_bench"
[ -x "$bin" ] || { echo "fs.sh: $bin is missing; build target weft_fs_bench" >&2; exit 2; }
src="${WEFT_FS_BENCH_TREE:-/usr/include}"
work="$(mktemp -d "${TMPDIR:-/tmp}/weft-fs-bench-XXXXXX")"
trap 'rm -rf "$work"' EXIT
literal="${WEFT_FS_BENCH_LITERAL:-EXPORT_SYMBOL}"
regex="${WEFT_FS_BENCH_REGEX:-struct [a-z_]+_ops}"

now() { date +%s.%N; }
# best of 3 wall-clock runs of a command, in seconds
best3() {
  local best=999999 t0 t1 d
  for _ in 1 2 3; do
    t0=$(now); "$@" >/dev/null 2>&1 || true; t1=$(now)
    d=$(echo "$t1 - $t0" | bc -l)
    best=$(echo "if ($d < $best) $d else $best" | bc -l)
  done
  printf '%.6f' "$best"
}
field() { python3 -c "import json,sys; print(json.load(sys.stdin)['$1'])"; }

t0=$(now)
cp -r --no-preserve=all "$src" "$work/tree"
copy_s=$(echo "$(now) - $t0" | bc -l)
files=$(find "$work/tree" -type f | wc -l)
rg -j1 -c x "$work/tree" >/dev/null 2>&1 || true  # warm the page cache

rg_lit=$(best3 rg -j1 -n --no-ignore --hidden -F "$literal" "$work/tree")
rg_re=$(best3 rg -j1 -n --no-ignore --hidden "$regex" "$work/tree")
weft_lit_json=$("$bin" grep "$work/tree" "$literal")
weft_re_json=$("$bin" grep "$work/tree" "$regex")
rg_lit_n=$(rg -j1 -n --no-ignore --hidden -F "$literal" "$work/tree" | wc -l)
rg_re_n=$(rg -j1 -n --no-ignore --hidden "$regex" "$work/tree" | wc -l)
if command -v fdfind >/dev/null; then
  fd_s=$(best3 fdfind -j1 --no-ignore --hidden -g '*.h' "$work/tree")
  fd_tool=fdfind
else
  fd_s=$(best3 find "$work/tree" -name '*.h')
  fd_tool=find
fi
find_s=$(best3 find "$work/tree" -name '*.h')
weft_glob_json=$("$bin" glob "$work/tree" '**/*.h')

t0=$(now)
git --git-dir="$work/cli.git" init -q
git --git-dir="$work/cli.git" --work-tree="$work/tree" add -A
git --git-dir="$work/cli.git" --work-tree="$work/tree" -c user.name=b -c user.email=b@b \
  commit -q -m bench
git_s=$(echo "$(now) - $t0" | bc -l)
weft_snap_json=$("$bin" snapshot "$work/tree" "$work/weft.git")
mkdir -p "$work/inc"
inc_json=$("$bin" incremental "$work/inc" 20000)
mem_json=$("$bin" memory 20000)

python3 - "$copy_s" "$files" "$rg_lit" "$rg_re" "$weft_lit_json" "$weft_re_json" "$fd_s" \
  "$fd_tool" "$find_s" "$weft_glob_json" "$git_s" "$weft_snap_json" "$inc_json" "$mem_json" \
  "$rg_lit_n" "$rg_re_n" "$literal" "$regex" <<'PY'
import json, sys, platform, os, datetime
(copy_s, files, rg_lit, rg_re, wl, wr, fd_s, fd_tool, find_s, wg, git_s, ws, inc, mem,
 rg_lit_n, rg_re_n, literal, regex) = sys.argv[1:]
wl, wr, wg, ws, inc, mem = map(json.loads, (wl, wr, wg, ws, inc, mem))
f = float
out = {
  "suite": "fs",
  "date": datetime.datetime.utcnow().strftime("%Y-%m-%dT%H:%M:%SZ"),
  "machine": f"{platform.machine()} {os.cpu_count()} cpus, {platform.release()}",
  "tree": {"source": "/usr/include", "files": int(files), "copy_seconds": round(f(copy_s), 3)},
  "grep_literal": {"pattern": literal, "weft_seconds": wl["seconds"], "weft_matches": wl["results"],
                   "rg_seconds": f(rg_lit), "rg_matches": int(rg_lit_n),
                   "ratio": round(wl["seconds"] / f(rg_lit), 2), "target_ratio": 1.5},
  "grep_regex": {"pattern": regex, "weft_seconds": wr["seconds"], "weft_matches": wr["results"],
                 "rg_seconds": f(rg_re), "rg_matches": int(rg_re_n),
                 "ratio": round(wr["seconds"] / f(rg_re), 2), "target_ratio": 1.5},
  "glob_h": {"weft_seconds": wg["seconds"], "weft_results": wg["results"],
             fd_tool + "_seconds": f(fd_s), "find_seconds": f(find_s),
             "ratio": round(wg["seconds"] / f(fd_s), 2), "target_ratio": 1.5},
  "first_snapshot": {"weft_seconds": ws["seconds"], "git_cli_seconds": round(f(git_s), 3),
                     "ratio": round(ws["seconds"] / f(git_s), 2), "target_ratio": 1.0,
                     "weft_unchanged_seconds": ws["unchanged_seconds"]},
  "incremental_snapshot": dict(inc, target_seconds=0.05),
  "memory_snapshot": dict(mem, target_seconds=0.001),
}
print(json.dumps(out, indent=1))
PY
