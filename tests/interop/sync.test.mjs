// Live sync (ws://HOST:PORT/sync) with unmodified loro-websocket clients,
// LoroAdaptor and loro-crdt against `weft serve`: concurrent editors, an MCP
// agent and the disk converge on one file; a read-only room; offline edits
// across a restart of the server; a 5 MB document through fragments.
//
//   WEFT_BIN=build/release/weft node --test tests/interop/sync.test.mjs
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test, after } from 'node:test';

import { WebSocket } from 'ws';
import { LoroDoc } from 'loro-crdt';
import { LoroWebsocketClient } from 'loro-websocket';
import { LoroAdaptor } from 'loro-adaptors/loro';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

globalThis.WebSocket = WebSocket;

const WEFT_BIN = process.env.WEFT_BIN;
const SKIP = WEFT_BIN ? false : 'WEFT_BIN is not set (path to the weft binary); skipping live sync interop';
const TOKEN = 'f'.repeat(16) + '0123456789abcdef'.repeat(3);

const servers = [];
after(() => { for (const s of servers) s.kill('SIGTERM'); });

function workspace() {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), 'weft-sync-'));
  const ws = path.join(base, 'ws');
  fs.mkdirSync(path.join(ws, 'locked'), { recursive: true });
  fs.writeFileSync(path.join(ws, 'notes.md'), 'start\n');
  fs.writeFileSync(path.join(ws, 'locked', 'ro.md'), 'read me\n');
  fs.writeFileSync(path.join(ws, 'weft.toml'),
    '[permissions]\nrules = [\n  { glob = "locked/**", level = "read_only" },\n]\n');
  return { ws, stateHome: path.join(base, 'state') };
}

async function serve(w, port = 0) {
  const server = spawn(WEFT_BIN, ['serve', '--root', w.ws, '--port', String(port)], {
    env: { ...process.env, XDG_STATE_HOME: w.stateHome, WEFT_TOKEN: TOKEN, USER: 'amy' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  servers.push(server);
  const base = await new Promise((resolve, reject) => {
    let out = '';
    server.stdout.on('data', (d) => {
      out += d;
      const m = out.match(/endpoint: http:\/\/(127\.0\.0\.1:\d+)\/mcp/);
      if (m) resolve(m[1]);
    });
    server.on('exit', (code) => reject(new Error(`weft serve exited with ${code}: ${out}`)));
  });
  return { server, base, url: `ws://${base}/sync?token=${TOKEN}` };
}

async function stop(s) {
  const exited = new Promise((resolve) => s.server.on('exit', resolve));
  s.server.kill('SIGTERM');
  await exited;
}

async function editor(url, roomId, doc = new LoroDoc()) {
  const client = new LoroWebsocketClient({ url });
  await client.waitConnected();
  const room = await client.join({ roomId, crdtAdaptor: new LoroAdaptor(doc),
    auth: new TextEncoder().encode(TOKEN) });
  await room.waitForReachingServerVersion();
  return { client, room, doc, text: () => doc.getText('content').toString() };
}

async function until(what, check, ms = 15000) {
  const end = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function agent(base) {
  const client = new Client({ name: 'sync-agent', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`http://${base}/mcp`)));
  return client;
}

test('sync: two editors, an MCP agent and the disk converge on one file', { skip: SKIP }, async () => {
  const w = workspace();
  const s = await serve(w);
  const a = await editor(s.url, 'file:notes.md');
  const b = await editor(s.url, 'file:notes.md');
  assert.equal(a.text(), 'start\n');
  const mcp = await agent(s.base);
  try {
    a.doc.getText('content').insert(0, 'from A\n');
    a.doc.commit();
    b.doc.getText('content').insert(b.doc.getText('content').length, 'from B\n');
    b.doc.commit();
    const edited = await mcp.callTool({ name: 'fs_edit', arguments: {
      path: 'notes.md', edits: [{ old_string: 'start', new_string: 'START' }] } });
    assert.ok(!edited.isError, JSON.stringify(edited));
    await until('both edits and the agent', () => a.text().includes('from B') &&
      a.text().includes('START') && b.text().includes('from A'));
    // A write on disk reaches the block through the watcher, then the editors.
    const current = fs.readFileSync(path.join(w.ws, 'notes.md'), 'utf8');
    fs.writeFileSync(path.join(w.ws, 'notes.md'), current + 'from disk\n');
    await until('the disk edit', () => a.text().includes('from disk') && b.text().includes('from disk'));
    await until('convergence', () => {
      const disk = fs.readFileSync(path.join(w.ws, 'notes.md'), 'utf8');
      return a.text() === b.text() && disk === a.text();
    });
    const text = a.text();
    for (const line of ['from A', 'from B', 'START', 'from disk']) assert.ok(text.includes(line), text);
    const history = await mcp.callTool({ name: 'fs_history', arguments: { path: 'notes.md' } });
    assert.match(JSON.stringify(history), /human:amy/);
  } finally {
    await mcp.close();
    a.client.destroy();
    b.client.destroy();
    await stop(s);
  }
});

test('sync: a read-only room takes no edits', { skip: SKIP }, async () => {
  const w = workspace();
  const s = await serve(w);
  const e = await editor(s.url, 'file:locked/ro.md');
  try {
    assert.equal(e.text(), 'read me\n');
    e.doc.getText('content').insert(0, 'nope ');
    e.doc.commit();
    await new Promise((r) => setTimeout(r, 500));
    assert.equal(fs.readFileSync(path.join(w.ws, 'locked', 'ro.md'), 'utf8'), 'read me\n');
  } finally {
    e.client.destroy();
    await stop(s);
  }
});

test('sync: offline edits made while the server was down arrive after a restart', { skip: SKIP }, async () => {
  const w = workspace();
  let s = await serve(w);
  const port = Number(s.base.split(':')[1]);
  const e = await editor(s.url, 'file:notes.md');
  try {
    await stop(s);
    e.doc.getText('content').insert(0, 'offline\n');
    e.doc.commit();
    s = await serve(w, port);
    await until('the offline edit on disk', () =>
      fs.readFileSync(path.join(w.ws, 'notes.md'), 'utf8') === 'offline\nstart\n', 30000);
  } finally {
    e.client.destroy();
    await stop(s);
  }
});

test('sync: a 5 MB document travels through fragments both ways', { skip: SKIP }, async () => {
  const w = workspace();
  const s = await serve(w);
  const a = await editor(s.url, 'file:notes.md');
  try {
    const line = 'x'.repeat(99) + '\n';
    a.doc.getText('content').insert(0, line.repeat(50 * 1024));
    a.doc.commit();
    const expected = a.text();
    await until('the large file on disk', () => {
      const disk = fs.readFileSync(path.join(w.ws, 'notes.md'), 'utf8');
      return disk.length === expected.length && disk === expected;
    }, 60000);
    const b = await editor(s.url, 'file:notes.md');
    try {
      assert.equal(b.text(), expected);
    } finally {
      b.client.destroy();
    }
  } finally {
    a.client.destroy();
    await stop(s);
  }
});
