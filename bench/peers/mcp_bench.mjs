// MCP throughput over stdio with the official SDK client: weft mcp vs
// @modelcontextprotocol/server-filesystem doing the same calls in the same
// run, plus fs_grep on a 20,000-file tree vs ripgrep. Prints one JSON object.
//   node mcp_bench.mjs <weft binary> [--quick]
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const weft = process.argv[2];
const quick = process.argv.includes('--quick');
const READS = quick ? 200 : 1000;
const EDITS = quick ? 100 : 400;
const CONCURRENCY = 8;
const GREP_FILES = 20_000;

function makeText(bytes) {
  const lines = [];
  let size = 0;
  for (let i = 0; size < bytes; ++i) {
    const line = `line ${i}: the quick brown fox jumps over the lazy dog ${i * 7919 % 1000}`;
    lines.push(line);
    size += line.length + 1;
  }
  lines[Math.floor(lines.length / 2)] = 'MARKER_0';
  return lines.join('\n') + '\n';
}

async function connect(command, args, env = {}) {
  const transport = new StdioClientTransport({ command, args, env: { ...process.env, ...env }, stderr: 'ignore' });
  const client = new Client({ name: 'weft-bench', version: '1.0.0' });
  await client.connect(transport);
  client.serverPid = transport.pid;
  return client;
}

// CPU milliseconds (user + system) a process has used, from /proc (10 ms ticks).
function processCpuMs(pid) {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 1000 / 100;
}

// Calls/s of `total` calls with `concurrency` in flight, plus the CPU each call
// cost in this (client) process and in the server process.
async function measured(client, total, concurrency, fn) {
  const client0 = process.cpuUsage();
  const server0 = processCpuMs(client.serverPid);
  const rate = await throughput(total, concurrency, fn);
  const used = process.cpuUsage(client0);
  return {
    rate,
    client_cpu_ms: (used.user + used.system) / 1000 / total,
    server_cpu_ms: (processCpuMs(client.serverPid) - server0) / total,
  };
}

// Alternates weft and the peer for `rounds` rounds (after a warm-up of both, so
// neither pays the client's JIT warm-up) and reports the median of each.
async function paired(rounds, total, concurrency, weftCall, peerCall, weftClient, peerClient) {
  const warm = 2 * Math.max(10, Math.ceil(total / 20));  // even: edits toggle back
  await throughput(warm, concurrency, weftCall);
  await throughput(warm, concurrency, peerCall);
  const w = [];
  const p = [];
  for (let r = 0; r < rounds; ++r) {
    w.push(await measured(weftClient, total, concurrency, weftCall));
    p.push(await measured(peerClient, total, concurrency, peerCall));
  }
  const med = (xs, k) => median(xs.map((x) => x[k]));
  const cpu = (xs) => ({ client: +med(xs, 'client_cpu_ms').toFixed(3), server: +med(xs, 'server_cpu_ms').toFixed(3) });
  const out = { weft: med(w, 'rate'), server_filesystem: med(p, 'rate') };
  out.ratio = +(out.weft / out.server_filesystem).toFixed(2);
  out.rounds = { weft: w.map((x) => x.rate), server_filesystem: p.map((x) => x.rate) };
  out.cpu_ms_per_call = { weft: cpu(w), server_filesystem: cpu(p) };
  return out;
}

async function throughput(total, concurrency, fn) {
  let next = 0;
  const start = process.hrtime.bigint();
  async function worker() {
    while (next < total) {
      const i = next++;
      const r = await fn(i);
      if (r.isError) throw new Error(JSON.stringify(r.content).slice(0, 300));
    }
  }
  await Promise.all(Array.from({ length: concurrency }, worker));
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  return Math.round(total / seconds);
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

async function timeMs(fn) {
  const start = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - start) / 1e6;
}

async function benchPair(dir) {
  const file = path.join(dir, 'file100k.txt');
  fs.writeFileSync(file, makeText(100 * 1024));
  const weftClient = await connect(weft, ['mcp', '--root', dir], { XDG_STATE_HOME: path.join(dir, '..', 'state') });
  const peerClient = await connect(process.execPath,
    [path.join(here, 'node_modules/@modelcontextprotocol/server-filesystem/dist/index.js'), dir]);
  const out = {};
  try {
    // 3 alternating rounds each; same calls, same file, same client.
    const ROUNDS = 3;
    out.read_100k_calls_per_s = await paired(ROUNDS, Math.ceil(READS / ROUNDS), CONCURRENCY,
      () => weftClient.callTool({ name: 'fs_read', arguments: { path: 'file100k.txt', limit: 100000 } }),
      () => peerClient.callTool({ name: 'read_text_file', arguments: { path: file } }),
      weftClient, peerClient);
    // The client's floor: a call whose request and result are tiny (ping), so
    // its cost is the client's and the transport's, not the servers'.
    out.ping_calls_per_s = await paired(ROUNDS, Math.ceil(READS / ROUNDS), CONCURRENCY,
      () => weftClient.ping(), () => peerClient.ping(), weftClient, peerClient);
    // Edits toggle a unique marker, one at a time (each depends on the previous);
    // an even count per round leaves the marker as it was for the other server.
    const perRound = 2 * Math.ceil(EDITS / ROUNDS / 2);
    const toggle = (i) => [`MARKER_${i % 2}`, `MARKER_${(i + 1) % 2}`];
    let wi = 0;
    let pi = 0;
    out.edit_100k_calls_per_s = await paired(ROUNDS, perRound, 1,
      () => {
        const [a, b] = toggle(wi++);
        return weftClient.callTool({ name: 'fs_edit', arguments: { path: 'file100k.txt', edits: [{ old_string: a, new_string: b }] } });
      },
      () => {
        const [a, b] = toggle(pi++);
        return peerClient.callTool({ name: 'edit_file', arguments: { path: file, edits: [{ oldText: a, newText: b }] } });
      },
      weftClient, peerClient);
  } finally {
    await weftClient.close();
    await peerClient.close();
  }
  return out;
}

async function benchGrep(dir) {
  const tree = path.join(dir, 'tree');
  for (let d = 0; d < GREP_FILES / 100; ++d) {
    const sub = path.join(tree, `pkg${d}`, 'src');
    fs.mkdirSync(sub, { recursive: true });
    for (let f = 0; f < 100; ++f) {
      const body = [];
      for (let l = 0; l < 40; ++l) body.push(`fn item_${d}_${f}_${l}() { return ${l * f}; } // filler text`);
      if ((d * 100 + f) % 97 === 0) body.push('// NEEDLE_TOKEN found here');
      fs.writeFileSync(path.join(sub, `file${f}.rs`), body.join('\n') + '\n');
    }
  }
  const client = await connect(weft, ['mcp', '--root', tree], { XDG_STATE_HOME: path.join(dir, '..', 'state') });
  const weftMs = [];
  const rgMs = [];
  let weftFiles = 0;
  let rgFiles = 0;
  try {
    for (let i = 0; i < 5; ++i) {
      let r;
      weftMs.push(await timeMs(async () => {
        r = await client.callTool({ name: 'fs_grep', arguments: { pattern: 'NEEDLE_TOKEN', output_mode: 'files_with_matches', max_matches: 10000 } });
      }));
      weftFiles = r.structuredContent.files.length;
      rgMs.push(await timeMs(async () => {
        const res = spawnSync('rg', ['-l', 'NEEDLE_TOKEN', '.'], { cwd: tree, encoding: 'utf8' });
        rgFiles = res.stdout.trim().split('\n').length;
      }));
    }
  } finally {
    await client.close();
  }
  if (weftFiles !== rgFiles) throw new Error(`grep disagreement: weft ${weftFiles} files, rg ${rgFiles}`);
  const w = median(weftMs);
  const g = median(rgMs);
  return { files: GREP_FILES, matching_files: weftFiles, weft_fs_grep_ms: +w.toFixed(1), rg_ms: +g.toFixed(1), ratio: +(w / g).toFixed(2) };
}

const base = fs.mkdtempSync(path.join(os.tmpdir(), 'weft-mcp-bench-'));
const dir = path.join(base, 'ws');
fs.mkdirSync(dir);
try {
  const pair = await benchPair(dir);
  const grep = await benchGrep(dir);
  const rgVersion = execFileSync('rg', ['--version'], { encoding: 'utf8' }).split('\n')[0];
  console.log(JSON.stringify({ ...pair, grep_20k_files: grep, concurrency_reads: CONCURRENCY, rg: rgVersion }, null, 2));
} finally {
  fs.rmSync(base, { recursive: true, force: true });
}
