// The workspace kernel through MCP (run by bench/kernel.sh; the in-process
// parts are bench/kernel_bench.cc). Prints one JSON object:
//  - edit: fs_edit of a 100 KB file over stdio with the official SDK client,
//    through `weft mcp` (the kernel: CRDT op + SQLite + atomic write), through
//    a second `weft mcp` on the same root (a front end forwarding over the
//    kernel link while the first stays connected), and
//    @modelcontextprotocol/server-filesystem's edit_file on the same file, in
//    alternating rounds of one run;
//  - startup: a 20,000-file workspace; spawn `weft mcp --root X --state S` to
//    the answer of tools/list (initialize first), and the process's RSS then;
//    with a fresh state directory and again with the same one;
//  - rss_1000_blocks: the kernel process's RSS after fs_edit of 1,000 distinct
//    files of ~4 KB (1,000 blocks loaded), and a restart on that state;
//  - the fs_edit loop through `weft mcp --no-kernel` on a copy (what the
//    kernel adds);
//  - blocks_mcp: block_append calls sent back to back by one client (each
//    awaited: a model streaming its output), from a minimal stdio client
//    (mcp_raw_client.mjs: the server's rate) and from the SDK client, and kernel_search over the
//    20,000-file tree plus 1,000 conversation blocks against `rg -j1` on the
//    same files (same query; rg's process start included, as is the MCP round
//    trip of kernel_search).
//   node kernel_bench.mjs <weft binary> [--quick]
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

import { makeText, median, processCpuMs, throughput, warmUp } from './bench_util.mjs';
import { RawMcpClient } from './mcp_raw_client.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const weft = process.argv[2];
const quick = process.argv.includes('--quick');
const ROUNDS = quick ? 3 : 5;
const EDITS = quick ? 120 : 2000;  // per side, over all rounds
const WARM_MS = quick ? 200 : 1000;
const WARM_CALLS = quick ? 20 : 200;
const STARTUP_DIRS = 200;
const STARTUP_FILES_PER_DIR = 100;
const STARTS = quick ? 1 : 3;  // each of: fresh state, second start
const BLOCK_FILES = 1000;
const APPENDS = quick ? 3000 : 20000;
const CONVERSATION_BLOCKS = 1000;
const SEARCH_RUNS = quick ? 3 : 7;

// An SDK client on a stdio server; its stderr is kept (to tell which process
// became the kernel).
async function connect(command, args) {
  const transport = new StdioClientTransport({ command, args, env: process.env, stderr: 'pipe' });
  const client = new Client({ name: 'weft-bench', version: '1.0.0' });
  client.stderrText = '';
  transport.stderr?.on('data', (d) => { client.stderrText += d.toString(); });
  await client.connect(transport);
  client.serverPid = transport.pid;
  return client;
}

// VmRSS and VmHWM of a process, in MB.
function memoryMb(pid) {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (key) => Number(status.match(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm'))[1]);
  return { rss: +(kb('VmRSS') / 1024).toFixed(1), hwm: +(kb('VmHWM') / 1024).toFixed(1) };
}

// Calls/s and CPU per call of the processes in `pids` (the server; for the
// front end also the kernel it forwards to).
async function measured(pids, total, fn) {
  const before = pids.map(processCpuMs);
  const rate = await throughput(total, 1, fn);
  return { rate, cpu: pids.map((p, i) => (processCpuMs(p) - before[i]) / total) };
}

async function benchEdit(base) {
  const dir = path.join(base, 'edit');
  const state = path.join(base, 'edit-state');
  fs.mkdirSync(dir);
  const file = path.join(dir, 'file100k.txt');
  fs.writeFileSync(file, makeText(100 * 1024));
  // The same edits without the kernel (tools change the file directly), on a
  // copy in a root of its own: what the kernel adds.
  const plainDir = path.join(base, 'edit-plain');
  fs.mkdirSync(plainDir);
  fs.copyFileSync(file, path.join(plainDir, 'file100k.txt'));
  const args = ['mcp', '--root', dir, '--state', state];
  const first = await connect(weft, args);
  const second = await connect(weft, args);
  const plain = await connect(weft, ['mcp', '--root', plainDir, '--state', path.join(base, 'plain-state'), '--no-kernel']);
  const peer = await connect(process.execPath,
    [path.join(here, 'node_modules/@modelcontextprotocol/server-filesystem/dist/index.js'), dir]);
  try {
    // Each edit toggles the unique marker, one call at a time; an even count per
    // round leaves the marker as the next side expects it.
    const toggle = (i) => [`MARKER_${i % 2}`, `MARKER_${(i + 1) % 2}`];
    const counters = [0, 0, 0, 0];
    const weftEdit = (client, k) => () => {
      const [a, b] = toggle(counters[k]++);
      return client.callTool({ name: 'fs_edit', arguments: { path: 'file100k.txt', edits: [{ old_string: a, new_string: b }] } });
    };
    const sides = [
      { name: 'weft', pids: [first.serverPid], call: weftEdit(first, 0) },
      { name: 'server_filesystem', pids: [peer.serverPid], call: () => {
        const [a, b] = toggle(counters[1]++);
        return peer.callTool({ name: 'edit_file', arguments: { path: file, edits: [{ oldText: a, newText: b }] } });
      } },
      { name: 'weft_second_process', pids: [second.serverPid, first.serverPid], call: weftEdit(second, 2) },
      { name: 'weft_no_kernel', pids: [plain.serverPid], call: weftEdit(plain, 3) },
    ];
    for (const side of sides) await warmUp(WARM_CALLS, 1, side.call, WARM_MS);
    const perRound = 2 * Math.ceil(EDITS / ROUNDS / 2);
    const runs = sides.map(() => []);
    for (let r = 0; r < ROUNDS; ++r) {
      for (let s = 0; s < sides.length; ++s) runs[s].push(await measured(sides[s].pids, perRound, sides[s].call));
    }
    const out = { edits_per_round: perRound, rounds: ROUNDS, file_bytes: fs.statSync(file).size };
    for (let s = 0; s < sides.length; ++s) {
      out[sides[s].name] = median(runs[s].map((x) => x.rate));
      out[`${sides[s].name}_rounds`] = runs[s].map((x) => x.rate);
      out[`${sides[s].name}_server_cpu_ms_per_call`] =
        sides[s].pids.map((_, i) => +median(runs[s].map((x) => x.cpu[i])).toFixed(3));
    }
    // The second process must have forwarded to the first (the kernel).
    out.first_is_kernel = first.stderrText.includes('became the kernel');
    out.second_is_kernel = second.stderrText.includes('became the kernel');
    if (!out.first_is_kernel || out.second_is_kernel) {
      throw new Error(`kernel election not as expected: first ${JSON.stringify(first.stderrText)}, second ${JSON.stringify(second.stderrText)}`);
    }
    return out;
  } finally {
    await second.close();
    await first.close();
    await peer.close();
    await plain.close();
  }
}

function makeTree(root, dirs, perDir) {
  for (let d = 0; d < dirs; ++d) {
    const sub = path.join(root, `pkg${d}`);
    fs.mkdirSync(sub, { recursive: true });
    for (let f = 0; f < perDir; ++f) {
      const body = [];
      for (let l = 0; l < 12; ++l) body.push(`fn item_${d}_${f}_${l}() { return ${l * f}; } // text`);
      fs.writeFileSync(path.join(sub, `file${f}.rs`), body.join('\n') + '\n');
    }
  }
}

// Spawns `weft mcp`, sends initialize + initialized + tools/list at once, and
// times the tools/list answer; RSS read then. The process exits on end of input.
function startOnce(root, state) {
  return new Promise((resolve, reject) => {
    const start = process.hrtime.bigint();
    const child = spawn(weft, ['mcp', '--root', root, '--state', state], { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    let result = null;
    child.stderr.on('data', (d) => { err += d; });
    child.stdout.on('data', (d) => {
      out += d;
      if (result || !out.split('\n').some((l) => l.startsWith('{') && JSON.parse(l).id === 2)) return;
      const ms = Number(process.hrtime.bigint() - start) / 1e6;
      const line = out.split('\n').find((l) => l.startsWith('{') && JSON.parse(l).id === 2);
      const tools = JSON.parse(line).result?.tools?.length ?? 0;
      result = { ms: +ms.toFixed(1), tools, ...memoryMb(child.pid) };
      child.stdin.end();
    });
    child.on('error', reject);
    child.on('exit', (code) => {
      if (!result) reject(new Error(`weft mcp exited (${code}) before answering: ${err}`));
      else resolve(result);
    });
    const messages = [
      { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'weft-bench', version: '1.0.0' } } },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id: 2, method: 'tools/list' },
    ];
    child.stdin.write(messages.map((m) => JSON.stringify(m) + '\n').join(''));
  });
}

async function benchStartup(base) {
  const root = path.join(base, 'tree');
  makeTree(root, STARTUP_DIRS, STARTUP_FILES_PER_DIR);
  const fresh = [];
  const again = [];
  for (let i = 0; i < STARTS; ++i) {
    const state = path.join(base, `startup-state-${i}`);
    fresh.push(await startOnce(root, state));
    again.push(await startOnce(root, state));
  }
  const pick = (runs) => {
    const m = median(runs.map((r) => r.ms));
    const r = runs.find((x) => x.ms === m);
    return { ms: r.ms, rss_mb: r.rss, hwm_mb: r.hwm, tools: r.tools, all_ms: runs.map((x) => x.ms) };
  };
  return { files: STARTUP_DIRS * STARTUP_FILES_PER_DIR, fresh_state: pick(fresh), second_start: pick(again) };
}

// RSS of the kernel process after fs_edit of 1,000 distinct files (1,000
// blocks loaded); then a restart on that state (1,000 blocks to list).
async function benchBlocks(base) {
  const root = path.join(base, 'blocks');
  const rel = [];
  for (let i = 0; i < BLOCK_FILES; ++i) {
    const r = `d${i % 10}/f${i}.txt`;
    rel.push(r);
    fs.mkdirSync(path.join(root, `d${i % 10}`), { recursive: true });
    fs.writeFileSync(path.join(root, r), makeText(4096).replace('MARKER_0', `MARKER_${i}_A`));
  }
  const state = path.join(base, 'blocks-state');
  const client = await connect(weft, ['mcp', '--root', root, '--state', state]);
  try {
    const idle = memoryMb(client.serverPid);
    const start = process.hrtime.bigint();
    await throughput(BLOCK_FILES, 4, (i) => client.callTool({ name: 'fs_edit',
      arguments: { path: rel[i], edits: [{ old_string: `MARKER_${i}_A`, new_string: `MARKER_${i}_B` }] } }));
    const seconds = Number(process.hrtime.bigint() - start) / 1e9;
    const status = await client.callTool({ name: 'fs_status', arguments: {} }).catch(() => null);
    const blocks = status?.structuredContent?.files?.length;
    const loaded = memoryMb(client.serverPid);
    return { files: BLOCK_FILES, file_bytes: 4096, rss_mb: loaded.rss, hwm_mb: loaded.hwm,
      idle_rss_mb: idle.rss, edit_seconds: +seconds.toFixed(2), blocks_in_status: blocks ?? null,
      root, state };
  } finally {
    await client.close();
  }
}

async function benchRestartWithBlocks(root, state) {
  const runs = [];
  for (let i = 0; i < STARTS; ++i) runs.push(await startOnce(root, state));
  const m = median(runs.map((r) => r.ms));
  const r = runs.find((x) => x.ms === m);
  return { blocks: BLOCK_FILES, ms: r.ms, rss_mb: r.rss, hwm_mb: r.hwm, tools: r.tools, all_ms: runs.map((x) => x.ms) };
}

function timeMs(fn) {
  const start = process.hrtime.bigint();
  const r = fn();
  return { ms: Number(process.hrtime.bigint() - start) / 1e6, r };
}

// block_append calls back to back into a new conversation block: calls/s and
// the server's CPU per call.
async function appendRate(client) {
  const created = await client.callTool({ name: 'block_create', arguments: { role: 'model', kind: 'text' } });
  if (created.isError) throw new Error(JSON.stringify(created.content));
  const id = created.structuredContent.block_id;
  const chunk = (i) => (i % 12 === 11 ? 'token\n' : 'token ');
  const append = (i) => client.callTool({ name: 'block_append', arguments: { block_id: id, text: chunk(i) } });
  await throughput(Math.min(500, APPENDS), 1, append);
  const cpu0 = processCpuMs(client.serverPid);
  const rate = await throughput(APPENDS, 1, append);
  return { rate, cpu: (processCpuMs(client.serverPid) - cpu0) / APPENDS };
}

async function benchBlocksMcp(base) {
  const root = path.join(base, 'tree');  // benchStartup's 20,000 files
  const state = path.join(base, 'blocks-mcp-state');
  const args = ['mcp', '--root', root, '--state', state];
  // The figure: a minimal stdio client, so that the server is what is
  // measured; then the official SDK client, whose own cost per call bounds it.
  const raw = await RawMcpClient.connect(weft, args);
  let rawAppend;
  try {
    rawAppend = await appendRate(raw);
  } finally {
    await raw.close();
  }
  const client = await connect(weft, args);
  try {
    const sdkAppend = await appendRate(client);
    // 1,000 conversation blocks beside the files.
    await throughput(CONVERSATION_BLOCKS, 4, (i) => client.callTool({ name: 'block_create',
      arguments: { role: i % 2 ? 'model' : 'user', kind: 'text',
        content: `message ${i}: the quick brown fox ${i * 7919 % 1000}\nsecond line of ${i}\n` } }));
    // A query that a handful of files and blocks match: the cost is the scan.
    const query = 'item_1[0-9]7_42_|message 99[0-9]:';
    const search = async () => {
      const start = process.hrtime.bigint();
      const r = await client.callTool({ name: 'kernel_search',
        arguments: { query, max_blocks: 1000 } });
      if (r.isError) throw new Error(JSON.stringify(r.content));
      return { ms: Number(process.hrtime.bigint() - start) / 1e6, hits: r.structuredContent.results.length };
    };
    await search();
    const ks = [];
    let hits = 0;
    for (let i = 0; i < SEARCH_RUNS; ++i) {
      const r = await search();
      ks.push(r.ms);
      hits = r.hits;
    }
    const rg = [];
    let rgFiles = 0;
    for (let i = 0; i < SEARCH_RUNS; ++i) {
      const t = timeMs(() => spawnSync('rg', ['-j1', '-l', '-e', query, root], { encoding: 'utf8' }));
      if (t.r.error) throw t.r.error;
      rg.push(t.ms);
      rgFiles = t.r.stdout.split('\n').filter(Boolean).length;
    }
    return { append_per_s_mcp: rawAppend.rate, appends: APPENDS,
      append_server_cpu_ms_per_call: +rawAppend.cpu.toFixed(4),
      append_per_s_mcp_sdk: sdkAppend.rate,
      append_sdk_server_cpu_ms_per_call: +sdkAppend.cpu.toFixed(4),
      kernel_search_ms: +median(ks).toFixed(2), rg_ms: +median(rg).toFixed(2),
      kernel_search_runs_ms: ks.map((x) => +x.toFixed(2)), rg_runs_ms: rg.map((x) => +x.toFixed(2)),
      search_files: STARTUP_DIRS * STARTUP_FILES_PER_DIR, search_blocks: CONVERSATION_BLOCKS,
      kernel_search_hits: hits, rg_files: rgFiles, query };
  } finally {
    await client.close();
  }
}

const base = fs.mkdtempSync(path.join(os.tmpdir(), 'weft-kernel-bench-'));
try {
  const edit = await benchEdit(base);
  const startup = await benchStartup(base);
  const blocksMcp = await benchBlocksMcp(base);
  const { root, state, ...blocks } = await benchBlocks(base);
  startup.with_1000_blocks = await benchRestartWithBlocks(root, state);
  console.log(JSON.stringify({ edit, startup, rss_1000_blocks: blocks, blocks_mcp: blocksMcp }));
} finally {
  fs.rmSync(base, { recursive: true, force: true });
}
