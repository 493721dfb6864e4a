// weft serve over Streamable HTTP with the official SDK client, plus raw
// HTTP checks: Origin, sessions, DELETE, SSE responses and the stateless era.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { test, before, after } from 'node:test';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

import { WEFT_BIN, SKIP, ALL_TOOLS, makeWorkspace, runScenario } from './mcp_scenario.mjs';

let server;
let url;
let w;

before(async () => {
  if (SKIP) return;
  w = makeWorkspace();
  server = spawn(WEFT_BIN, ['serve', '--root', w.ws, '--port', '0'], {
    env: { ...process.env, XDG_STATE_HOME: w.stateHome }, stdio: ['ignore', 'pipe', 'inherit'],
  });
  url = await new Promise((resolve, reject) => {
    let out = '';
    server.stdout.on('data', (d) => {
      out += d;
      const m = out.match(/endpoint: (http:\/\/127\.0\.0\.1:\d+\/mcp)/);
      if (m) resolve(m[1]);
    });
    server.on('exit', (code) => reject(new Error(`weft serve exited with ${code}: ${out}`)));
  });
  assert.match(url, /127\.0\.0\.1/);
});

after(() => {
  if (server) server.kill('SIGTERM');
});

const JSON_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

async function post(body, headers = {}) {
  const res = await fetch(url, { method: 'POST', headers: { ...JSON_HEADERS, ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body) });
  const raw = await res.text();
  return { res, raw, json: raw && res.headers.get('content-type')?.includes('json') ? JSON.parse(raw) : null };
}

async function initialize() {
  const { res } = await post({ jsonrpc: '2.0', id: 1, method: 'initialize', params: {
    protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
  assert.equal(res.status, 200);
  return res.headers.get('mcp-session-id');
}

test('http: SDK client session touches every tool and error path', { skip: SKIP }, async () => {
  const client = new Client({ name: 'weft-interop-http', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(url));
  await client.connect(transport);
  try {
    assert.ok(transport.sessionId, 'the server issued an Mcp-Session-Id');
    await runScenario(client, w);
    // Progress notifications arrive on the SSE response of a long call.
    const progress = [];
    await client.callTool({ name: 'fs_grep', arguments: { pattern: 'main' } }, undefined,
      { onprogress: (p) => progress.push(p) });
    assert.ok(progress.length >= 1);
    await transport.terminateSession();
  } finally {
    await client.close();
  }
});

test('http: foreign Origin is refused with 403', { skip: SKIP }, async () => {
  const { res } = await post({ jsonrpc: '2.0', id: 1, method: 'ping' }, { origin: 'https://evil.example' });
  assert.equal(res.status, 403);
  const local = await post({ jsonrpc: '2.0', id: 1, method: 'initialize', params: {
    protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } } },
  { origin: 'http://localhost:3000' });
  assert.equal(local.res.status, 200);
});

test('http: sessions: missing id 400, unknown id 404, DELETE ends one', { skip: SKIP }, async () => {
  const missing = await post({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
  assert.equal(missing.res.status, 400);
  const unknown = await post({ jsonrpc: '2.0', id: 2, method: 'tools/list' }, { 'mcp-session-id': 'nope' });
  assert.equal(unknown.res.status, 404);
  const sid = await initialize();
  const headers = { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-11-25' };
  const note = await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, headers);
  assert.equal(note.res.status, 202);
  const list = await post({ jsonrpc: '2.0', id: 3, method: 'tools/list' }, headers);
  assert.equal(list.json.result.tools.length, ALL_TOOLS.length);
  const badVersion = await post({ jsonrpc: '2.0', id: 4, method: 'ping' },
    { 'mcp-session-id': sid, 'mcp-protocol-version': '1999-01-01' });
  assert.equal(badVersion.res.status, 400);
  const garbage = await post('{oops', headers);
  assert.equal(garbage.res.status, 400);
  assert.equal(garbage.json.error.code, -32700);
  const del = await fetch(url, { method: 'DELETE', headers: { 'mcp-session-id': sid } });
  assert.equal(del.status, 200);
  const after = await post({ jsonrpc: '2.0', id: 5, method: 'ping' }, headers);
  assert.equal(after.res.status, 404);
  const get = await fetch(url, { method: 'GET', headers: { accept: 'text/event-stream' } });
  assert.equal(get.status, 405);
});

test('http: tools/call answers with an SSE stream when accepted', { skip: SKIP }, async () => {
  const sid = await initialize();
  const { res, raw } = await post({ jsonrpc: '2.0', id: 9, method: 'tools/call', params: {
    name: 'fs_grep', arguments: { pattern: '^one' }, _meta: { progressToken: 'p1' } } },
  { 'mcp-session-id': sid });
  assert.match(res.headers.get('content-type'), /text\/event-stream/);
  const events = raw.split('\n').filter((l) => l.startsWith('data: ')).map((l) => JSON.parse(l.slice(6)));
  assert.ok(events.some((e) => e.method === 'notifications/progress' && e.params.progressToken === 'p1'));
  assert.equal(events.at(-1).id, 9);
  assert.equal(events.at(-1).result.structuredContent.matches[0].path, 'crlf.txt');
});

const modernMeta = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
};

test('http: 2026-07-28 requests are stateless and header-checked', { skip: SKIP }, async () => {
  const headers = { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'server/discover' };
  const discover = await post({ jsonrpc: '2.0', id: 1, method: 'server/discover', params: { _meta: modernMeta } }, headers);
  assert.equal(discover.res.status, 200);
  assert.equal(discover.res.headers.get('mcp-session-id'), null);
  assert.ok(discover.json.result.supportedVersions.includes('2026-07-28'));
  const call = await post({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: {
    _meta: modernMeta, name: 'fs_stat', arguments: { path: 'crlf.txt' } } },
  { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'fs_stat', accept: 'application/json' });
  assert.equal(call.json.result.resultType, 'complete');
  assert.equal(call.json.result.structuredContent.type, 'file');
  const mismatch = await post({ jsonrpc: '2.0', id: 3, method: 'tools/list', params: { _meta: modernMeta } },
    { 'mcp-protocol-version': '2025-11-25', 'mcp-method': 'tools/list' });
  assert.equal(mismatch.res.status, 400);
  assert.equal(mismatch.json.error.code, -32020);
  const unsupported = await post({ jsonrpc: '2.0', id: 4, method: 'tools/list', params: {
    _meta: { ...modernMeta, 'io.modelcontextprotocol/protocolVersion': '2030-01-01' } } });
  assert.equal(unsupported.json.error.code, -32022);
  const unknown = await post({ jsonrpc: '2.0', id: 5, method: 'nope/nope', params: { _meta: modernMeta } },
    { 'mcp-protocol-version': '2026-07-28' });
  assert.equal(unknown.res.status, 404);
  assert.equal(unknown.json.error.code, -32601);
});

test('http: client roots (asked for on the GET stream) narrow the workspace', { skip: SKIP }, async () => {
  const { ListRootsRequestSchema } = await import('@modelcontextprotocol/sdk/types.js');
  const client = new Client({ name: 'weft-interop-roots', version: '1.0.0' }, { capabilities: { roots: { listChanged: true } } });
  let asked = 0;
  client.setRequestHandler(ListRootsRequestSchema, async () => {
    asked += 1;
    return { roots: [{ uri: 'file://' + w.ws + '/src', name: 'src' }] };
  });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  try {
    for (let i = 0; i < 50 && asked === 0; ++i) await new Promise((r) => setTimeout(r, 100));
    assert.ok(asked >= 1, 'the server sent roots/list');
    await new Promise((r) => setTimeout(r, 100));
    const outside = await client.callTool({ name: 'fs_stat', arguments: { path: 'crlf.txt' } });
    assert.equal(outside.isError, true);
    const inside = await client.callTool({ name: 'fs_glob', arguments: { pattern: '*', path: 'src' } });
    assert.ok(!inside.isError);
  } finally {
    await client.close();
  }
});
