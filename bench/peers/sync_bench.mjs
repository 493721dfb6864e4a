// Live-sync benchmark (run by bench/sync.sh): weft serve's /sync endpoint and
// loro-websocket's SimpleServer, measured in the same run with the same
// unmodified LoroWebsocketClient connections.
//
//   node sync_bench.mjs WEFT_BINARY [--quick]
//
// Prints one JSON object:
//  - fanout.{weft,peer}: 100 clients in one room, 1,000 updates/s in total
//    (each a real Loro update of an editor that merges what the server
//    sends it; SYNC_BENCH_CLIENTS selects the load, see fanoutWorker); the
//    relay latency is the time from a client's send to another client's
//    receipt, over every (update, receiver) pair; the server's CPU per
//    update from /proc, and the bench client's own (all its threads). The clients run in worker threads (SYNC_BENCH_WORKERS, default
//    the core count) so that the client side keeps up with 99,000
//    receipts/s; SYNC_BENCH_SKIP_PEER=1 measures weft alone (profiling).
//  - fanout2.{weft,peer}: the same on a fresh server under a second load,
//    SYNC_BENCH_SECOND_LOAD (default concurrent: the clients merge nothing,
//    so the servers rather than the clients are measured; '' skips it).
//  - disk_to_client_ms: a file written on disk -> a LoroAdaptor client's doc
//    has the new text (weft only: SimpleServer has no disk).
//  - idle: 1,000 idle joined connections: server RSS and thread growth.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
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
const token = isMainThread ? 'bench-token-' + Math.random().toString(16).slice(2) : workerData.token;
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
    import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
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

// The fan-out's clients live in worker threads (kWorkers of them, each with
// its own event loop and its share of the clients), so that receiving 99,000
// messages/s is spread over the cores and the client side does not measure
// itself. Times are process.hrtime (CLOCK_MONOTONIC), the same in every
// thread. An update is known by the marker it inserts (see fanoutWorker).
const kClientsMode = process.env.SYNC_BENCH_CLIENTS || 'merging';
const kSecondMode = process.env.SYNC_BENCH_SECOND_LOAD ?? 'concurrent';
const kWorkers = Math.max(1, Number(process.env.SYNC_BENCH_WORKERS || os.cpus().length));

async function fanout(server, mode = kClientsMode) {
  if (kClients % kWorkers !== 0) throw new Error(`${kClients} clients do not split over ${kWorkers} workers`);
  const counter = new Int32Array(new SharedArrayBuffer(4));  // receipts since the last reset
  const workers = [];
  for (let w = 0; w < kWorkers; ++w) {
    const worker = new Worker(new URL(import.meta.url), {
      workerData: { fanoutWorker: true, mode, w, workers: kWorkers, clients: kClients, port: server.port,
                    room: server.room, token, counter: counter.buffer, rate: kUpdatesPerSecond },
    });
    workers.push(worker);
  }
  const reply = (worker, msg) => new Promise((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
    worker.postMessage(msg);
  });
  await Promise.all(workers.map((wk) => reply(wk, { cmd: 'join' })));
  const nowMs = () => Number(process.hrtime.bigint()) / 1e6;
  // Runs `seconds` of sending in every worker from a common start; returns the updates sent.
  let base = 0;  // the first update number of the next run (markers are unique)
  async function run(seconds) {
    const start = nowMs() + 50;
    const sent = await Promise.all(workers.map((wk) => reply(wk, { cmd: 'run', start, seconds, base })));
    base += Math.ceil(seconds * kUpdatesPerSecond) + 1000;
    return sent.reduce((a, b) => a + b, 0);
  }
  // Waits until `done()` or no receipt for `quietMs`, at most `maxMs`.
  async function settle(done, quietMs, maxMs) {
    let last = Atomics.load(counter, 0), lastChange = performance.now();
    for (const t0 = performance.now(); !done() && performance.now() - t0 < maxMs;) {
      await sleep(20);
      const c = Atomics.load(counter, 0);
      if (c !== last) { last = c; lastChange = performance.now(); }
      else if (performance.now() - lastChange > quietMs) break;
    }
  }
  // Warm-up second; then wait for it to drain, so the measured run starts empty.
  await run(1);
  await settle(() => false, 300, 20000);
  await Promise.all(workers.map((wk) => reply(wk, { cmd: 'reset' })));
  Atomics.store(counter, 0, 0);
  const cpu0 = processCpuMs(server.child.pid), clientCpu0 = processCpuMs(process.pid);
  const measuredBase = base;
  const updates = await run(kSeconds);
  // Late deliveries count: wait (at most 20 s) for every receiver to get every update.
  const expectedDeliveries = updates * (kClients - 1);
  await settle(() => Atomics.load(counter, 0) >= expectedDeliveries, 5000, 20000);
  const cpu1 = processCpuMs(server.child.pid), clientCpu1 = processCpuMs(process.pid);
  const parts = await Promise.all(workers.map((wk) => reply(wk, { cmd: 'collect' })));
  await Promise.all(workers.map((wk) => wk.terminate()));
  const sentAt = new Map();
  for (const p of parts) for (let i = 0; i < p.sentKeys.length; ++i) sentAt.set(p.sentKeys[i], p.sentTimes[i]);
  // (The sender of update n is client (n - base) % kClients: its own copy, when a
  // server relays it back, is no delivery.)
  const senderOf = (n) => ((n % kClients) + kClients) % kClients;
  // A receipt's key is marker * 128 + client; the first receipt counts.
  const latencies = [];
  const seen = new Set();
  for (const p of parts) {
    for (let i = 0; i < p.recvKeys.length; ++i) {
      const key = p.recvKeys[i];
      if (seen.has(key) || senderOf(Math.floor(key / 128) - measuredBase) === key % 128) continue;
      seen.add(key);
      const t = sentAt.get(Math.floor(key / 128));
      if (t !== undefined) latencies.push(p.recvTimes[i] - t);
    }
  }
  latencies.sort((a, b) => a - b);
  return {
    updates, deliveries: latencies.length, workers: kWorkers,
    delivered_ratio: +(latencies.length / expectedDeliveries).toFixed(4),
    relay_p50_ms: +percentile(latencies, 0.5).toFixed(2), relay_p99_ms: +percentile(latencies, 0.99).toFixed(2),
    cpu_us_per_update: +((cpu1 - cpu0) * 1000 / updates).toFixed(1),
    load: mode, client_cpu_us_per_update: +((clientCpu1 - clientCpu0) * 1000 / updates).toFixed(1),
  };
}

// A worker of the fan-out: its share of the clients, each a CrdtDocAdaptor
// that sends real Loro updates and records what it receives (the same cost
// for both servers).
async function fanoutWorker(data) {
  const { w, workers, clients: total, port, room, rate } = data;
  const counter = new Int32Array(data.counter);
  const nowMs = () => Number(process.hrtime.bigint()) / 1e6;
  let sentKeys = [], sentTimes = [], recvKeys = [], recvTimes = [];
  // Editors merge what they receive, so an update depends on what its editor
  // has seen. Merging 99,000 updates/s into 100 docs is beyond loro-crdt in
  // Node on this machine (about 0.1-0.3 ms per imported change, more when
  // the changes are concurrent), so the worker keeps one `view` that imports
  // each update the server relays once. SYNC_BENCH_CLIENTS selects the load:
  //  - merging (default): the worker's clients type into the view, each
  //    under its own peer id. An update then depends on what the server
  //    relayed and on the updates this thread sent just before on its other
  //    connections (already on their way: the server may read them a moment
  //    later, and must wait for them).
  //  - forked: each client types into its own fork of the view, taken again
  //    before it types when older than SYNC_BENCH_REFRESH_MS (default 500)
  //    and the view holds the client's own last update (a fork without it
  //    would reuse its ids): an editor's dependencies are only what the
  //    server sent and its own updates, but between forks its updates are
  //    concurrent with what arrived since, and the forks and concurrent
  //    imports cost the client more than this machine has.
  //  - concurrent: each client types into its own LoroDoc and never merges,
  //    so every update is concurrent with all the others'.
  // Update n inserts the marker "#n;", which the receivers find in the bytes
  // (Loro stores inserted text as is), so an update is known however the
  // server re-encodes it.
  const mode = data.mode;
  if (!['merging', 'forked', 'concurrent'].includes(mode)) throw new Error(`SYNC_BENCH_CLIENTS=${mode}?`);
  const kRefreshMs = Number(process.env.SYNC_BENCH_REFRESH_MS || 500);
  const view = new LoroDoc();
  const viewText = view.getText('content');
  const merged = new Set();  // markers the view holds
  let runBase = 0;           // the first update number of the current run
  const kMarker = /#(\d+);/g;
  class TimingAdaptor {
    constructor(peer, index) {
      this.crdtType = '%LOR';
      this.peer = BigInt(peer);
      this.index = index;
      this.got = new Uint8Array(0);  // the run's updates received, by number - runBase
      if (mode === 'merging') {
        this.doc = view;
        this.text = viewText;
      } else {
        this.refresh(0);
      }
    }
    refresh(now) {
      this.doc = mode === 'forked' ? view.fork() : new LoroDoc();
      this.doc.setPeerId(this.peer);
      this.text = this.doc.getText('content');
      this.forkedAt = now;
      this.own = this.doc.oplogVersion().get(this.peer) ?? 0;  // the end of its own updates
    }
    setCtx(ctx) { this.ctx = ctx; }
    async handleJoinOk() {}
    async waitForReachingServerVersion() {}
    // As loro-adaptors' LoroAdaptor does, a message's updates go into the
    // doc in one importBatch (here only those the view lacks).
    applyUpdate(updates) {
      const now = nowMs();
      let received = 0;
      const fresh = [];
      for (const u of updates) {
        const bytes = Buffer.from(u.buffer, u.byteOffset, u.byteLength).toString('latin1');
        let isFresh = false;
        for (const m of bytes.matchAll(kMarker)) {
          const n = Number(m[1]);
          recvKeys.push(n * 128 + this.index);
          recvTimes.push(now);
          // What the main thread waits for: the first receipt of each of the
          // run's updates but the receiver's own (a server may send an update
          // again, or back to its sender, and those are no deliveries).
          const k = n - runBase;
          if (k >= 0 && k < this.got.length && k % total !== this.index && !this.got[k]) {
            this.got[k] = 1;
            ++received;
          }
          if (!merged.has(n)) { merged.add(n); isFresh = true; }
        }
        if (isFresh) fresh.push(u);
      }
      if (fresh.length > 0 && mode !== 'concurrent') {
        if (fresh.length === 1) view.import(fresh[0]); else view.importBatch(fresh);
      }
      Atomics.add(counter, 0, received);
    }
    cmpVersion() { return 0; }
    getVersion() { return emptyVersion; }
    destroy() {}
    // Types update i's marker at a pseudo-random place of the text (editors
    // type all over a document).
    send(i) {
      const now = nowMs();
      if (mode === 'forked' && now - this.forkedAt >= kRefreshMs &&
          (view.oplogVersion().get(this.peer) ?? 0) >= this.own) {
        this.refresh(now);
      }
      if (mode === 'merging') view.setPeerId(this.peer);
      const from = this.doc.oplogVersion();
      const length = this.text.length;
      this.text.insert(Math.floor(length * (((i * 7919) % 1009) / 1009)), `#${i};`);
      this.doc.commit();
      const bytes = this.doc.export({ mode: 'update', from });
      if (mode === 'forked') this.own = this.doc.oplogVersion().get(this.peer);
      if (mode === 'merging') merged.add(i);  // the view holds it
      sentKeys.push(i);
      sentTimes.push(nowMs());
      this.ctx.send([bytes]);
    }
  }
  // Client c lives in worker c % workers; update n is sent by client n % total.
  const mine = new Map();
  const connections = [];
  parentPort.on('message', async (msg) => {
    if (msg.cmd === 'join') {
      for (let c = w; c < total; c += workers) {
        const client = new LoroWebsocketClient({ url: `ws://127.0.0.1:${port}/sync?token=${token}`, disablePing: true });
        await client.waitConnected();
        const adaptor = new TimingAdaptor(1000 + c, c);
        await client.join({ roomId: room, crdtAdaptor: adaptor, auth });
        connections.push(client);
        mine.set(c, adaptor);
      }
      parentPort.postMessage('joined');
    } else if (msg.cmd === 'run') {
      let n = 0, sent = 0;
      runBase = msg.base;
      const count = Math.ceil(msg.seconds * rate) + 1;
      for (const a of mine.values()) a.got = new Uint8Array(count);
      while (nowMs() < msg.start) await sleep(1);
      for (;;) {
        const elapsed = nowMs() - msg.start;
        if (elapsed >= msg.seconds * 1000) break;
        const due = Math.floor(elapsed * rate / 1000);
        for (; n < due; ++n) {
          const adaptor = mine.get(n % total);
          if (adaptor) { adaptor.send(msg.base + n); ++sent; }
        }
        await sleep(5);
      }
      parentPort.postMessage(sent);
    } else if (msg.cmd === 'reset') {
      sentKeys = []; sentTimes = []; recvKeys = []; recvTimes = [];
      parentPort.postMessage('reset');
    } else if (msg.cmd === 'collect') {
      for (const c of connections) c.destroy();
      parentPort.postMessage({ sentKeys: Float64Array.from(sentKeys), sentTimes: Float64Array.from(sentTimes),
                               recvKeys: Float64Array.from(recvKeys), recvTimes: Float64Array.from(recvTimes) });
    }
  });
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

if (!isMainThread) {
  await fanoutWorker(workerData);
} else {
  const result = {};
  if (process.env.SYNC_BENCH_SKIP_PEER !== '1') {  // (for profiling weft alone)
    const peer = await startPeer();
    try { result.peer = { fanout: await fanout(peer), idle: await idle(peer) }; } finally { peer.cleanup(); }
    if (kSecondMode) {
      const again = await startPeer();
      try { result.peer.fanout2 = await fanout(again, kSecondMode); } finally { again.cleanup(); }
    }
  }
  if (weftBinary !== '-') {
    const weft = await startWeft();
    try {
      // The disk first: after the fan-out the server may still be busy with its backlog.
      const disk = await diskToClient(weft);
      result.weft = { fanout: await fanout(weft), disk, idle: await idle(weft) };
    } finally { weft.cleanup(); }
    if (kSecondMode) {
      const again = await startWeft();
      try { result.weft.fanout2 = await fanout(again, kSecondMode); } finally { again.cleanup(); }
    }
  }
  console.log(JSON.stringify(result));
  process.exit(0);
}
