// Live-sync benchmark (run by bench/sync.sh): weft serve's /sync endpoint and
// loro-websocket's SimpleServer, measured in the same run with the same
// unmodified LoroWebsocketClient connections.
//
//   node sync_bench.mjs WEFT_BINARY [--quick]
//
// Prints one JSON object:
//  - fanout.{weft,peer}: 100 clients in one room, 1,000 updates/s in total
//    (each a real Loro update from the sender's own LoroDoc); the relay
//    latency is the time from a client's send to another client's receipt,
//    over every (update, receiver) pair; the server's CPU per update from
//    /proc.
//  - disk_to_client_ms: a file written on disk -> a LoroAdaptor client's doc
//    has the new text (weft only: SimpleServer has no disk).
//  - idle: 1,000 idle joined connections: server RSS and thread growth.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { WebSocket } from 'ws';
import { LoroDoc } from 'loro-crdt';
import { processCpuMs, median } from './bench_util.mjs';

globalThis.WebSocket = WebSocket;
process.setMaxListeners(0);  // every client listens for online/offline
const { LoroWebsocketClient } = await import('loro-websocket/client');
const { LoroAdaptor } = await import('loro-adaptors/loro');

const weftBinary = process.argv[2];
const quick = process.argv.includes('--quick');
const kClients = 100;
const kUpdatesPerSecond = 1000;
const kSeconds = quick ? 3 : 10;
const kIdle = quick ? 200 : 1000;
const token = 'bench-token-' + Math.random().toString(16).slice(2);
const auth = new TextEncoder().encode(token);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const emptyVersion = new LoroDoc().oplogVersion().encode();

function percentile(sorted, p) {
  if (!sorted.length) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
}

function rssKb(pid) {
  const m = fs.readFileSync(`/proc/${pid}/status`, 'utf8').match(/VmRSS:\s+(\d+)/);
  return Number(m[1]);
}
function threads(pid) {
  const m = fs.readFileSync(`/proc/${pid}/status`, 'utf8').match(/Threads:\s+(\d+)/);
  return Number(m[1]);
}

// Waits for `pattern` in a child's output; returns the first match.
function waitFor(child, pattern, what) {
  return new Promise((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(() => reject(new Error(`${what}: no start after 20 s:\n${seen}`)), 20000);
    const on = (chunk) => {
      seen += chunk.toString();
      const m = seen.match(pattern);
      if (m) { clearTimeout(timer); resolve(m); }
    };
    child.stdout.on('data', on);
    child.stderr.on('data', on);
    child.on('exit', (code) => reject(new Error(`${what} exited (${code}):\n${seen}`)));
  });
}

async function startWeft() {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'weft-sync-bench-'));
  const state = fs.mkdtempSync(path.join(os.tmpdir(), 'weft-sync-state-'));
  fs.writeFileSync(path.join(root, 'room.md'), 'start\n');
  fs.writeFileSync(path.join(root, 'disk.md'), 'start\n');
  const child = spawn(weftBinary, ['serve', '--root', root, '--state', state, '--port', '0'],
                      { env: { ...process.env, WEFT_TOKEN: token }, stdio: ['ignore', 'pipe', 'pipe'] });
  const m = await waitFor(child, /https?:\/\/[^\s/]+:(\d+)/, 'weft serve');
  return { child, port: Number(m[1]), root, room: 'file:room.md', cleanup() {
    child.kill('SIGTERM');
    fs.rmSync(root, { recursive: true, force: true });
    fs.rmSync(state, { recursive: true, force: true });
  } };
}

async function startPeer() {
  const script = `
    import { WebSocket } from 'ws';
    globalThis.WebSocket = WebSocket;
    const { SimpleServer } = await import('loro-websocket/server');
    const server = new SimpleServer({ port: 0, host: '127.0.0.1',
      authenticate: async (_room, _crdt, a) => new TextDecoder().decode(a) === ${JSON.stringify(token)} ? 'write' : null });
    await server.start();
    console.log('listening on port ' + server.wss.address().port);`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script],
                      { cwd: path.dirname(new URL(import.meta.url).pathname), stdio: ['ignore', 'pipe', 'pipe'] });
  const m = await waitFor(child, /listening on port (\d+)/, 'SimpleServer');
  return { child, port: Number(m[1]), room: 'bench-room', cleanup() { child.kill('SIGTERM'); } };
}

// A CrdtDocAdaptor that sends updates from its own LoroDoc and only records
// the receipt time of what it gets (so the clients' cost stays small and the
// same for both servers).
class TimingAdaptor {
  constructor(peer, sent, latencies) {
    this.crdtType = '%LOR';
    this.doc = new LoroDoc();
    this.doc.setPeerId(BigInt(peer));
    this.text = this.doc.getText('content');
    this.from = this.doc.oplogVersion();
    this.sent = sent;
    this.latencies = latencies;
    this.recording = false;
  }
  setCtx(ctx) { this.ctx = ctx; }
  async handleJoinOk() {}
  async waitForReachingServerVersion() {}
  applyUpdate(updates) {
    const now = performance.now();
    for (const u of updates) {
      const key = Buffer.from(u).toString('base64');
      const t = this.sent.get(key);
      if (t !== undefined && this.recording) this.latencies.push(now - t);
    }
  }
  cmpVersion() { return 0; }
  getVersion() { return emptyVersion; }
  destroy() {}
  send(i) {
    this.text.insert(0, String.fromCharCode(97 + (i % 26)));
    this.doc.commit();
    const bytes = this.doc.export({ mode: 'update', from: this.from });
    this.from = this.doc.oplogVersion();
    this.sent.set(Buffer.from(bytes).toString('base64'), performance.now());
    this.ctx.send([bytes]);
  }
}

async function fanout(server) {
  const sent = new Map();
  const latencies = [];
  const clients = [];
  const adaptors = [];
  for (let i = 0; i < kClients; ++i) {
    const client = new LoroWebsocketClient({ url: `ws://127.0.0.1:${server.port}/sync?token=${token}`, disablePing: true });
    await client.waitConnected();
    const adaptor = new TimingAdaptor(1000 + i, sent, latencies);
    await client.join({ roomId: server.room, crdtAdaptor: adaptor, auth });
    clients.push(client);
    adaptors.push(adaptor);
  }
  // Warm-up second, then the measured run.
  let next = 0;
  const tick = 10;  // ms; kUpdatesPerSecond / 100 updates per tick
  async function run(seconds, record) {
    for (const a of adaptors) a.recording = record;
    const start = performance.now();
    let due = 0;
    while (performance.now() - start < seconds * 1000) {
      const target = Math.floor((performance.now() - start) * kUpdatesPerSecond / 1000);
      for (; due < target; ++due) {
        adaptors[next % kClients].send(next);
        ++next;
      }
      await sleep(tick);
    }
    return due;
  }
  await run(1, false);
  await sleep(300);
  const cpu0 = processCpuMs(server.child.pid);
  const updates = await run(kSeconds, true);
  // Late deliveries count: wait (at most 20 s) for every receiver to get every update.
  const expectedDeliveries = updates * (kClients - 1);
  for (const t0 = performance.now(); latencies.length < expectedDeliveries && performance.now() - t0 < 20000;) {
    await sleep(20);
  }
  const cpu1 = processCpuMs(server.child.pid);
  for (const c of clients) c.destroy();
  latencies.sort((a, b) => a - b);
  return {
    updates, deliveries: latencies.length,
    delivered_ratio: +(latencies.length / expectedDeliveries).toFixed(4),
    relay_p50_ms: +percentile(latencies, 0.5).toFixed(2), relay_p99_ms: +percentile(latencies, 0.99).toFixed(2),
    cpu_us_per_update: +((cpu1 - cpu0) * 1000 / updates).toFixed(1),
  };
}

async function diskToClient(server) {
  const client = new LoroWebsocketClient({ url: `ws://127.0.0.1:${server.port}/sync?token=${token}`, disablePing: true });
  await client.waitConnected();
  const doc = new LoroDoc();
  const adaptor = new LoroAdaptor(doc);
  const room = await client.join({ roomId: 'file:disk.md', crdtAdaptor: adaptor, auth });
  await room.waitForReachingServerVersion?.();
  const times = [];
  for (let i = 0; i < (quick ? 10 : 40); ++i) {
    const text = `disk write ${i}\n`;
    const start = performance.now();
    fs.writeFileSync(path.join(server.root, 'disk.md'), text);
    while (doc.getText('content').toString() !== text) {
      if (performance.now() - start > 5000) throw new Error(`disk write ${i} never reached the client`);
      await sleep(0.5);
    }
    times.push(performance.now() - start);
    await sleep(50);
  }
  client.destroy();
  return { disk_to_client_p50_ms: +median(times).toFixed(2), samples: times.length };
}

async function idle(server) {
  const rss0 = rssKb(server.child.pid);
  const threads0 = threads(server.child.pid);
  const sockets = [];
  for (let i = 0; i < kIdle; ++i) {
    const ws = new WebSocket(`ws://127.0.0.1:${server.port}/sync`, { headers: { Authorization: `Bearer ${token}` } });
    await new Promise((resolve, reject) => { ws.once('open', resolve); ws.once('error', reject); });
    sockets.push(ws);
  }
  await sleep(500);
  const rss1 = rssKb(server.child.pid);
  const threads1 = threads(server.child.pid);
  for (const ws of sockets) ws.terminate();
  return { connections: kIdle, idle_conn_kb: +((rss1 - rss0) / kIdle).toFixed(1),
           idle_conn_threads: +((threads1 - threads0) / kIdle).toFixed(3), server_threads: threads1 };
}

const result = {};
{
  const peer = await startPeer();
  try { result.peer = { fanout: await fanout(peer), idle: await idle(peer) }; } finally { peer.cleanup(); }
}
if (weftBinary !== '-') {
  const weft = await startWeft();
  try {
    result.weft = { fanout: await fanout(weft), disk: await diskToClient(weft), idle: await idle(weft) };
  } finally { weft.cleanup(); }
}
console.log(JSON.stringify(result));
process.exit(0);
