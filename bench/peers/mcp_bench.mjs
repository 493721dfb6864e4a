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
  return client;
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
    // Warm up both.
    await weftClient.callTool({ name: 'fs_read', arguments: { path: 'file100k.txt' } });
    await peerClient.callTool({ name: 'read_text_file', arguments: { path: file } });
    out.read_100k_calls_per_s = {
      weft: await throughput(READS, CONCURRENCY, () =>
        weftClient.callTool({ name: 'fs_read', arguments: { path: 'file100k.txt', limit: 100000 } })),
      server_filesystem: await throughput(READS, CONCURRENCY, () =>
        peerClient.callTool({ name: 'read_text_file', arguments: { path: file } })),
    };
    // Edits toggle a unique marker, one at a time (each depends on the previous).
    const toggle = (i) => [`MARKER_${i % 2}`, `MARKER_${(i + 1) % 2}`];
    out.edit_100k_calls_per_s = {
      weft: await throughput(EDITS, 1, (i) => {
        const [a, b] = toggle(i);
        return weftClient.callTool({ name: 'fs_edit', arguments: { path: 'file100k.txt', edits: [{ old_string: a, new_string: b }] } });
      }),
    };
    if (EDITS % 2) throw new Error('EDITS must be even');
    out.edit_100k_calls_per_s.server_filesystem = await throughput(EDITS, 1, (i) => {
      const [a, b] = toggle(i);
      return peerClient.callTool({ name: 'edit_file', arguments: { path: file, edits: [{ oldText: a, newText: b }] } });
    });
    for (const k of ['read_100k_calls_per_s', 'edit_100k_calls_per_s']) {
      out[k].ratio = +(out[k].weft / out[k].server_filesystem).toFixed(2);
    }
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
