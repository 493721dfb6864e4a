// weft mcp over stdio with the official SDK client and the Inspector CLI,
// plus the stateless 2026-07-28 era spoken line by line.
import assert from 'node:assert/strict';
import { spawn, execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

import { WEFT_BIN, SKIP, READ_ONLY_TOOLS, makeWorkspace, runScenario, text } from './mcp_scenario.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));

async function connect(w, extraArgs = [], capabilities = {}) {
  const transport = new StdioClientTransport({
    command: WEFT_BIN,
    args: ['mcp', '--root', w.ws, ...extraArgs],
    env: { ...process.env, XDG_STATE_HOME: w.stateHome },
    stderr: 'pipe',
  });
  const client = new Client({ name: 'weft-interop', version: '1.0.0' }, { capabilities });
  await client.connect(transport);
  return client;
}

test('stdio: SDK client session touches every tool and error path', { skip: SKIP }, async () => {
  const w = makeWorkspace();
  const client = await connect(w);
  try {
    assert.equal(client.getServerVersion().name, 'weft');
    await runScenario(client, w);
  } finally {
    await client.close();
  }
});

test('stdio: --read-only publishes only non-writing tools', { skip: SKIP }, async () => {
  const w = makeWorkspace();
  const client = await connect(w, ['--read-only']);
  try {
    const names = (await client.listTools()).tools.map((t) => t.name);
    assert.deepEqual(names, READ_ONLY_TOOLS);
    await assert.rejects(client.callTool({ name: 'fs_write', arguments: { path: 'x', content: 'y' } }));
    assert.ok(!fs.existsSync(path.join(w.ws, 'x')));
  } finally {
    await client.close();
  }
});

test('stdio: client roots narrow the workspace', { skip: SKIP }, async () => {
  const w = makeWorkspace();
  const client = await connect(w, [], { roots: { listChanged: true } });
  const { ListRootsRequestSchema } = await import('@modelcontextprotocol/sdk/types.js');
  client.setRequestHandler(ListRootsRequestSchema, async () => ({
    roots: [{ uri: 'file://' + path.join(w.ws, 'src'), name: 'src' }],
  }));
  try {
    await client.sendRootsListChanged();
    await new Promise((r) => setTimeout(r, 300));
    const inside = await client.callTool({ name: 'fs_read', arguments: { path: 'src/main.py' } });
    assert.ok(!inside.isError, text(inside));
    const outside = await client.callTool({ name: 'fs_read', arguments: { path: 'crlf.txt' } });
    assert.equal(outside.isError, true);
    assert.match(text(outside), /outside the roots/);
  } finally {
    await client.close();
  }
});

test('stdio: --sandbox adds shell_exec running in bubblewrap', { skip: SKIP }, async (t) => {
  const w = makeWorkspace();
  let client;
  try {
    client = await connect(w, ['--sandbox']);
  } catch (e) {
    t.skip(`sandbox unavailable here: ${e.message}`);
    return;
  }
  try {
    const names = (await client.listTools()).tools.map((x) => x.name);
    assert.ok(names.includes('shell_exec'));
    const r = await client.callTool({ name: 'shell_exec', arguments: { command: 'cat crlf.txt | wc -l; pwd' } });
    if (r.isError && /unavailable/.test(text(r))) {
      t.skip('bubblewrap cannot create namespaces here');
      return;
    }
    assert.ok(!r.isError, text(r));
    assert.equal(r.structuredContent.exit_code, 0);
    assert.match(r.structuredContent.stdout, /3\n\/workspace/);
    const slow = await client.callTool({ name: 'shell_exec', arguments: { command: 'sleep 5', timeout_ms: 200 } });
    assert.equal(slow.structuredContent.timed_out, true);
  } finally {
    await client.close();
  }
});

// Raw line protocol: framing errors and the stateless era.
function rawSession(w) {
  const child = spawn(WEFT_BIN, ['mcp', '--root', w.ws], {
    env: { ...process.env, XDG_STATE_HOME: w.stateHome }, stdio: ['pipe', 'pipe', 'pipe'],
  });
  const lines = readline.createInterface({ input: child.stdout });
  const waiting = [];
  const queued = [];
  lines.on('line', (l) => {
    const m = JSON.parse(l);  // every stdout line must be JSON
    if (waiting.length) waiting.shift()(m); else queued.push(m);
  });
  return {
    send: (obj) => child.stdin.write((typeof obj === 'string' ? obj : JSON.stringify(obj)) + '\n'),
    next: () => (queued.length ? Promise.resolve(queued.shift()) : new Promise((r) => waiting.push(r))),
    end: () => new Promise((r) => { child.on('exit', (code) => r(code)); child.stdin.end(); }),
  };
}

const modernMeta = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
};

test('stdio: 2026-07-28 era is stateless; garbage and bad versions get errors', { skip: SKIP }, async () => {
  const w = makeWorkspace();
  const s = rawSession(w);
  s.send('{not json');
  assert.equal((await s.next()).error.code, -32700);
  s.send({ jsonrpc: '2.0', id: null, method: 'ping' });
  assert.equal((await s.next()).error.code, -32600);
  s.send([{ jsonrpc: '2.0', id: 1, method: 'ping' }]);
  assert.equal((await s.next()).error.code, -32600);  // no batches in the newest version
  s.send({ jsonrpc: '2.0', id: 2, method: 'server/discover', params: { _meta: modernMeta } });
  let m = await s.next();
  assert.ok(m.result.supportedVersions.includes('2026-07-28'));
  assert.equal(m.result.resultType, 'complete');
  s.send({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: {
    _meta: modernMeta, name: 'fs_read', arguments: { path: 'crlf.txt' } } });
  m = await s.next();
  assert.equal(m.result.resultType, 'complete');
  assert.equal(m.result.structuredContent.total_lines, 3);
  s.send({ jsonrpc: '2.0', id: 4, method: 'tools/list', params: {
    _meta: { ...modernMeta, 'io.modelcontextprotocol/protocolVersion': '2099-01-01' } } });
  m = await s.next();
  assert.equal(m.error.code, -32022);
  assert.deepEqual(m.error.data.supported, ['2026-07-28']);
  s.send({ jsonrpc: '2.0', id: 5, method: 'no/such/method' });
  assert.equal((await s.next()).error.code, -32601);
  s.send({ jsonrpc: '2.0', id: 6, method: 'tools/list', params: { cursor: 'bogus' } });
  assert.equal((await s.next()).error.code, -32602);
  s.send({ jsonrpc: '2.0', id: 7, method: 'initialize', params: {
    protocolVersion: '1999-01-01', capabilities: {}, clientInfo: { name: 'x', version: '1' } } });
  assert.equal((await s.next()).result.protocolVersion, '2025-11-25');
  s.send('x'.repeat(17 * 1024 * 1024));
  assert.equal((await s.next()).error.code, -32600);  // oversize, and the server keeps going
  s.send({ jsonrpc: '2.0', id: 8, method: 'ping' });
  assert.deepEqual((await s.next()).result, {});
  assert.equal(await s.end(), 0);  // EOF ends the process cleanly
});

test('stdio: Inspector CLI lists the tools', { skip: SKIP }, async () => {
  const w = makeWorkspace();
  const { stdout } = await promisify(execFile)('npx', ['--no-install', '@modelcontextprotocol/inspector',
    '--cli', WEFT_BIN, 'mcp', '--root', w.ws, '--method', 'tools/list'],
  { cwd: here, timeout: 60_000, env: { ...process.env, XDG_STATE_HOME: w.stateHome } });
  const names = JSON.parse(stdout).tools.map((t) => t.name);
  assert.ok(names.includes('fs_edit') && names.includes('fs_grep'));
});
