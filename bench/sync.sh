#!/usr/bin/env bash
# Live-sync suite (run by `scripts/bench.sh sync --json [--quick]`): weft
# serve's /sync endpoint against loro-websocket's SimpleServer with the same
# unmodified clients in the same run (bench/peers/sync_bench.mjs: fan-out of
# 100 clients at 1,000 updates/s, disk write -> client, 1,000 idle
# connections; SYNC_BENCH_CLIENTS=merging|forked|concurrent picks the
# editors' load, and a second fan-out on fresh servers runs
# SYNC_BENCH_SECOND_LOAD, default concurrent; see sync_bench.mjs), and the
# Loro binary codec on automerge-paper against loro-crdt
# (bench/loro_binary.sh). Prints JSON lines, one per measurement, each with
# its bars and whether they are met.
set -euo pipefail
cd "$(dirname "$0")/.."
build="${WEFT_BUILD:-$PWD/build/release}"
quick=""
for arg in "$@"; do
  [ "$arg" = "--quick" ] && quick="--quick"
done
if [ ! -d bench/peers/node_modules/loro-websocket ]; then
  (cd bench/peers && npm ci --no-audit --no-fund --loglevel=error)
fi
live="$(cd bench/peers && node sync_bench.mjs "$build/weft" $quick)"
binary="$(bench/loro_binary.sh --reps 5 | tail -1)"
commit="$(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
node -e '
const [live, binary, commit, quick] = [JSON.parse(process.argv[1]), JSON.parse(process.argv[2]),
  process.argv[3], process.argv[4] === "--quick"];
const os = require("os");
const head = { suite: "sync", date: new Date().toISOString(),
  machine: `${os.cpus()[0].model} x${os.cpus().length}, ${Math.round(os.totalmem() / 2**30)} GiB, ${os.platform()} ${os.release()}`,
  commit, node: process.version, quick };
const line = (measurement, fields) => console.log(JSON.stringify({ ...head, measurement, ...fields }));
// SYNC_BENCH_SKIP_PEER=1 measures weft alone: the peer fields are then null.
const w = live.weft, alone = !live.peer, p = live.peer ?? { fanout: {}, idle: {} };
line("fanout", {
  clients: 100, updates_per_s: 1000, load: w.fanout.load,
  relay_p50_ms: w.fanout.relay_p50_ms, relay_p99_ms: w.fanout.relay_p99_ms,
  peer_relay_p50_ms: p.fanout.relay_p50_ms, peer_relay_p99_ms: p.fanout.relay_p99_ms,
  cpu_us_per_update: w.fanout.cpu_us_per_update, peer_cpu_us_per_update: p.fanout.cpu_us_per_update,
  delivered_ratio: w.fanout.delivered_ratio, peer_delivered_ratio: p.fanout.delivered_ratio,
  client_cpu_us_per_update: w.fanout.client_cpu_us_per_update,
  peer_client_cpu_us_per_update: p.fanout.client_cpu_us_per_update,
  relay_bar: "weft p99 <= 1/5 of the peer, and less CPU per update",
  relay_bar_met: alone ? null : w.fanout.relay_p99_ms * 5 <= p.fanout.relay_p99_ms &&
    w.fanout.cpu_us_per_update < p.fanout.cpu_us_per_update && w.fanout.delivered_ratio === 1 });
// The second load (default concurrent), on fresh servers: its own bar.
if (w.fanout2) {
  const p2 = p.fanout2 ?? {};
  line("fanout_concurrent", {
    clients: 100, updates_per_s: 1000, load: w.fanout2.load,
    relay_p50_ms: w.fanout2.relay_p50_ms, relay_p99_ms: w.fanout2.relay_p99_ms,
    peer_relay_p50_ms: p2.relay_p50_ms, peer_relay_p99_ms: p2.relay_p99_ms,
    cpu_us_per_update: w.fanout2.cpu_us_per_update, peer_cpu_us_per_update: p2.cpu_us_per_update,
    delivered_ratio: w.fanout2.delivered_ratio, peer_delivered_ratio: p2.delivered_ratio,
    client_cpu_us_per_update: w.fanout2.client_cpu_us_per_update,
    peer_client_cpu_us_per_update: p2.client_cpu_us_per_update,
    relay_bar: "weft p99 <= 1/5 of the peer, and less CPU per update",
    relay_bar_met: alone ? null : w.fanout2.relay_p99_ms * 5 <= p2.relay_p99_ms &&
      w.fanout2.cpu_us_per_update < p2.cpu_us_per_update && w.fanout2.delivered_ratio === 1 });
}
line("disk_to_client", { disk_to_client_p50_ms: w.disk.disk_to_client_p50_ms, samples: w.disk.samples,
  disk_bar: "p50 <= 15 ms", disk_bar_met: w.disk.disk_to_client_p50_ms <= 15 });
line("idle_connections", { connections: w.idle.connections,
  idle_conn_kb: w.idle.idle_conn_kb, idle_conn_threads: w.idle.idle_conn_threads,
  peer_idle_conn_kb: p.idle.idle_conn_kb,
  idle_bar: "<= 64 KB and no thread each",
  idle_bar_met: w.idle.idle_conn_kb <= 64 && w.idle.idle_conn_threads === 0 });
if (binary.skipped) {
  line("binary", { skipped: binary.skipped });
} else {
  line("binary", { trace: binary.trace,
    binary_import_ms: binary.weft_import_ms, loro_binary_import_ms: binary.loro_import_ms,
    binary_export_bytes: binary.weft_update_bytes, loro_binary_export_bytes: binary.loro_update_bytes,
    import_bar: "weft >= 10x faster", import_bar_met: binary.import_speedup >= 10,
    export_bar: "within 1.1x of Loro", export_bar_met: binary.update_bytes_ratio <= 1.1 });
}' "$live" "$binary" "$commit" "$quick"
