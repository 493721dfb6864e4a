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

import { makeText, median, processCpuMs, throughput, warmUp } from './bench_util.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const weft = process.argv[2];
const quick = process.argv.includes('--quick');
const ROUNDS = quick ? 3 : 5;  // alternating rounds per measurement
const READS = quick ? 200 : 3000;  // in all rounds, per server
const EDITS = quick ? 100 : 1000;
const WARM_MS = quick ? 200 : 1000;  // warm-up per server, at least
const WARM_CALLS = quick ? 20 : 200;
const CONCURRENCY = 8;
const GREP_FILES = 20_000;

async function connect(command, args, env = {}) {
  const transport = new StdioClientTransport({ command, args, env: { ...process.env, ...env }, stderr: 'ignore' });
  const client = new Client({ name: 'weft-bench', version: '1.0.0' });
  await client.connect(transport);
  client.serverPid = transport.pid;
  return client;
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

// Alternates the sides ({name, call, client}: weft, the peer, optional others)
// for `rounds` rounds after warming each up (so none pays the client's JIT
// warm-up) and reports the median of each; `ratio` is weft / peer.
async function paired(rounds, total, concurrency, sides, warmCalls) {
  for (const side of sides) await warmUp(warmCalls, concurrency, side.call, WARM_MS);
  const runs = sides.map(() => []);
  for (let r = 0; r < rounds; ++r) {
    for (let s = 0; s < sides.length; ++s) {
      runs[s].push(await measured(sides[s].client, total, concurrency, sides[s].call));
    }
  }
  const med = (xs, k) => median(xs.map((x) => x[k]));
  const cpu = (xs) => ({ client: +med(xs, 'client_cpu_ms').toFixed(3), server: +med(xs, 'server_cpu_ms').toFixed(3) });
  const out = {};
  for (let s = 0; s < sides.length; ++s) out[sides[s].name] = med(runs[s], 'rate');
  out.ratio = +(out.weft / out.server_filesystem).toFixed(2);
  out.rounds = {};
  out.cpu_ms_per_call = {};
  for (let s = 0; s < sides.length; ++s) {
    out.rounds[sides[s].name] = runs[s].map((x) => x.rate);
    out.cpu_ms_per_call[sides[s].name] = cpu(runs[s]);
  }
  return out;
}

async function timeMs(fn) {
  const start = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - start) / 1e6;
}

// The exact bytes weft answers `call` ({name, arguments}) with, after its
// leading `{"id":<id>,`: what the canned server replays.
function recordWeftResponse(dir, env, call) {
  const messages = [
    { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'weft-bench', version: '1.0.0' } } },
    { jsonrpc: '2.0', method: 'notifications/initialized' },
    { jsonrpc: '2.0', id: 2, method: 'tools/call', params: call },
  ];
  const res = spawnSync(weft, ['mcp', '--root', dir], {
    input: messages.map((m) => JSON.stringify(m) + '\n').join(''), env: { ...process.env, ...env },
    maxBuffer: 64 << 20,
  });
  const prefix = '{"id":2,';
  const line = res.stdout.toString('utf8').split('\n').find((l) => l.startsWith(prefix));
  if (!line || JSON.parse(line).result?.isError) throw new Error(`weft gave no result for ${JSON.stringify(call)}`);
  return line.slice(prefix.length);
}

async function benchPair(dir) {
  const file = path.join(dir, 'file100k.txt');
  fs.writeFileSync(file, makeText(100 * 1024));
  const weftEnv = { XDG_STATE_HOME: path.join(dir, '..', 'state') };
  const weftRead = { name: 'fs_read', arguments: { path: 'file100k.txt', limit: 100000 } };
  const canned = path.join(dir, '..', 'canned_read.json');
  fs.writeFileSync(canned, recordWeftResponse(dir, weftEnv, weftRead));
  const weftClient = await connect(weft, ['mcp', '--root', dir], weftEnv);
  const peerClient = await connect(process.execPath,
    [path.join(here, 'node_modules/@modelcontextprotocol/server-filesystem/dist/index.js'), dir]);
  const cannedClient = await connect(process.execPath, [path.join(here, 'canned_server.mjs'), canned]);
  const out = {};
  try {
    // Alternating rounds; same calls, same file, same client. The third side is
    // the client ceiling: a server replaying weft's bytes at no cost.
    const reads = [
      { name: 'weft', client: weftClient, call: () => weftClient.callTool(weftRead) },
      { name: 'server_filesystem', client: peerClient,
        call: () => peerClient.callTool({ name: 'read_text_file', arguments: { path: file } }) },
      { name: 'client_ceiling', client: cannedClient, call: () => cannedClient.callTool(weftRead) },
    ];
    out.read_100k_calls_per_s = await paired(ROUNDS, Math.ceil(READS / ROUNDS), CONCURRENCY, reads, WARM_CALLS);
    const r = out.read_100k_calls_per_s;
    r.client_ceiling_ratio = +(r.client_ceiling / r.server_filesystem).toFixed(2);
    r.weft_of_ceiling = +(r.weft / r.client_ceiling).toFixed(2);
    // The client's floor: a call whose request and result are tiny (ping), so
    // its cost is the client's and the transport's, not the servers'.
    out.ping_calls_per_s = await paired(ROUNDS, Math.ceil(READS / ROUNDS), CONCURRENCY, [
      { name: 'weft', client: weftClient, call: () => weftClient.ping() },
      { name: 'server_filesystem', client: peerClient, call: () => peerClient.ping() },
    ], WARM_CALLS);
    // Edits toggle a unique marker, one at a time (each depends on the previous);
    // an even count per round leaves the marker as it was for the other server.
    const perRound = 2 * Math.ceil(EDITS / ROUNDS / 2);
    const toggle = (i) => [`MARKER_${i % 2}`, `MARKER_${(i + 1) % 2}`];
    let wi = 0;
    let pi = 0;
    out.edit_100k_calls_per_s = await paired(ROUNDS, perRound, 1, [
      { name: 'weft', client: weftClient, call: () => {
        const [a, b] = toggle(wi++);
        return weftClient.callTool({ name: 'fs_edit', arguments: { path: 'file100k.txt', edits: [{ old_string: a, new_string: b }] } });
      } },
      { name: 'server_filesystem', client: peerClient, call: () => {
        const [a, b] = toggle(pi++);
        return peerClient.callTool({ name: 'edit_file', arguments: { path: file, edits: [{ oldText: a, newText: b }] } });
      } },
    ], WARM_CALLS);
  } finally {
    await weftClient.close();
    await peerClient.close();
    await cannedClient.close();
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
