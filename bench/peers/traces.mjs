// Peer figures for the traces suite: loro-crdt and diamond-types-node replay
// the same ../shared/data/traces files as weft_traces_bench, in the same run.
// Prints one JSON object per trace.
//
//   node bench/peers/traces.mjs [--dir DIR] [--reps N] [--only NAME]
//
// Local replay: one commit per txn for Loro (as weft does); diamond-types has
// no transactions. Positions in the traces count code points: Loro's JS API
// counts UTF-16 units, so traces with astral characters get their positions
// converted beforehand (untimed). Concurrent traces: the history is built
// first (untimed), then merge_ms times merging it into an empty doc.
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { LoroDoc } from 'loro-crdt';
import dtPkg from 'diamond-types-node';

const { Doc: DtDoc, OpLog: DtOpLog } = dtPkg;
// History construction is setup, not a figure; give up on it past this budget.
const BUILD_BUDGET_MS = 1000 * Number(process.env.WEFT_TRACES_BUILD_BUDGET_S ?? 180);

function parseArgs() {
  const args = { dir: null, reps: 3, only: null };
  const argv = process.argv.slice(2);
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--dir') args.dir = argv[++i];
    else if (argv[i] === '--reps') args.reps = Math.max(1, Number(argv[++i]));
    else if (argv[i] === '--only') args.only = argv[++i];
  }
  if (!args.dir) {
    const shared = process.env.WEFT_SHARED_DIR || '../shared';
    args.dir = path.join(shared, 'data', 'traces');
  }
  return args;
}

function findTraces(dir) {
  const out = [];
  const walk = (d) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('.json.gz')) out.push(p);
    }
  };
  walk(dir);
  return out.sort();
}

// WebAssembly code is tiered up while it runs: diamond-types' first replays of
// a small trace in a fresh process took 70, 27, 16, 14 ms before settling near
// 5-9 ms. So every figure is timed after a warm-up of at least one call and
// up to 0.5 s (or 30 calls), which also makes a process that runs one trace
// (traces.sh --rounds) measure what a process that ran the others first did.
const WARM_UP_MS = 500;
const WARM_UP_MAX_CALLS = 30;

function bestOf(reps, fn) {
  const warmStart = performance.now();
  for (let calls = 0; calls < WARM_UP_MAX_CALLS; calls++) {
    if (calls > 0 && performance.now() - warmStart >= WARM_UP_MS) break;
    fn();
  }
  let best = Infinity;
  for (let i = 0; i < reps; i++) {
    const t0 = performance.now();
    fn();
    best = Math.min(best, performance.now() - t0);
  }
  return best;
}

const hasAstral = (s) => /[\u{10000}-\u{10FFFF}]/u.test(s);

// Converts code point positions to UTF-16 ones by replaying on an array of
// code points (untimed; only for traces with astral characters).
function toUtf16Txns(start, txns) {
  const doc = Array.from(start);
  return txns.map((txn) => ({
    ...txn,
    patches: txn.patches.map(([pos, del, ins]) => {
      let pos16 = 0;
      for (let i = 0; i < pos; i++) pos16 += doc[i].length;
      let del16 = 0;
      for (let i = pos; i < pos + del; i++) del16 += doc[i].length;
      doc.splice(pos, del, ...Array.from(ins));
      return [pos16, del16, ins];
    }),
  }));
}

function isLinear(trace) {
  return trace.txns.every((t, i) =>
    i === 0 ? (t.parents ?? []).length === 0 : (t.parents ?? []).length === 1 && t.parents[0] === i - 1);
}

function loroReplay(start, txns) {
  const doc = new LoroDoc();
  doc.setPeerId(1);
  const text = doc.getText('text');
  if (start) {
    text.insert(0, start);
    doc.commit();
  }
  for (const txn of txns) {
    for (const [pos, del, ins] of txn.patches) {
      if (del) text.delete(pos, del);
      if (ins) text.insert(pos, ins);
    }
    doc.commit();
  }
  return doc;
}

function dtReplay(start, txns) {
  const doc = new DtDoc('a');
  if (start) doc.ins(0, start);
  for (const txn of txns) {
    for (const [pos, del, ins] of txn.patches) {
      if (del) doc.del(pos, del);
      if (ins) doc.ins(pos, ins);
    }
  }
  return doc;
}

// Loro history for a concurrent trace: per-agent docs brought to each txn's
// parents by importing the missing txns' update blobs.
function loroBuildHistory(txns) {
  const merged = new LoroDoc();
  merged.setPeerId(1 << 30);
  const docs = new Map();
  const blobs = [];
  const frontiers = [];
  const byStart = new Map(); // peer -> [[startCounter, txnIndex]] in counter order
  const t0 = performance.now();
  txns.forEach((txn, i) => {
    if (performance.now() - t0 > BUILD_BUDGET_MS) {
      throw new Error(`building the history took over ${BUILD_BUDGET_MS / 1000} s; stopped at txn ${i}`);
    }
    const peer = String(txn.agent + 1);
    const parents = (txn.parents ?? []).flatMap((p) => frontiers[p]);
    let doc = docs.get(txn.agent);
    if (!doc) {
      doc = parents.length ? merged.forkAt(parents) : new LoroDoc();
      doc.setPeerId(txn.agent + 1);
      docs.set(txn.agent, doc);
    } else {
      const want = merged.frontiersToVV(parents).toJSON();
      const have = doc.oplogVersion().toJSON();
      const missing = [];
      for (const [p, end] of want) {
        const from = have.get(p) ?? 0;
        if (from >= end) continue;
        // txns of peer p whose counter range overlaps [from, end)
        for (const [s, j] of byStart.get(p) ?? []) {
          if (s < end && blobs[j].end > from) missing.push(j);
        }
      }
      missing.sort((a, b) => a - b);
      for (const j of missing) doc.import(blobs[j].bytes);
    }
    const before = doc.oplogVersion();
    const startCounter = before.toJSON().get(peer) ?? 0;
    const text = doc.getText('text');
    for (const [pos, del, ins] of txn.patches) {
      if (del) text.delete(pos, del);
      if (ins) text.insert(pos, ins);
    }
    doc.commit();
    frontiers[i] = doc.oplogFrontiers();
    const end = doc.oplogVersion().toJSON().get(peer) ?? 0;
    blobs[i] = { bytes: doc.export({ mode: 'update', from: before }), end };
    if (end > startCounter) {
      if (!byStart.has(peer)) byStart.set(peer, []);
      byStart.get(peer).push([startCounter, i]);
    }
    merged.import(blobs[i].bytes);
  });
  return merged;
}

// More agents than this: the Loro history is built directly (loroBuildDirect),
// as weft_traces_bench does (kMaxAuthorDocs).
const MAX_AUTHOR_DOCS = 16;

// Loro history built directly as JSON changes from the trace (code point
// positions at each txn's parents); a delete's start_id is a placeholder (the
// change's own first id), as in weft_traces_bench's build_direct.
function loroBuildDirect(txns) {
  const slots = new Map();
  const next = new Map();
  const peers = [];
  const changes = [];
  const frontier = [];
  const lamportEnd = [];
  txns.forEach((txn, i) => {
    if (!slots.has(txn.agent)) {
      slots.set(txn.agent, peers.length);
      peers.push(String(txn.agent + 1));
    }
    const slot = slots.get(txn.agent);
    const deps = [];
    let lamport = 0;
    for (const p of txn.parents ?? []) {
      for (const id of frontier[p]) if (!deps.includes(id)) deps.push(id);
      lamport = Math.max(lamport, lamportEnd[p]);
    }
    const start = next.get(txn.agent) ?? 0;
    let counter = start;
    const selfId = `${start}@${slot}`;
    const ops = [];
    for (const [pos, del, ins] of txn.patches) {
      if (del) {
        ops.push({ container: 'cid:root-text:Text', content: { type: 'delete', pos, len: del, start_id: selfId }, counter });
        counter += del;
      }
      if (ins) {
        ops.push({ container: 'cid:root-text:Text', content: { type: 'insert', pos, text: ins }, counter });
        counter += Array.from(ins).length;
      }
    }
    if (counter === start) {
      frontier[i] = deps;
      lamportEnd[i] = lamport;
      return;
    }
    changes.push({ id: selfId, timestamp: 0, deps, lamport, msg: null, ops });
    next.set(txn.agent, counter);
    frontier[i] = [`${counter - 1}@${slot}`];
    lamportEnd[i] = lamport + (counter - start);
  });
  const merged = new LoroDoc();
  merged.setPeerId(1 << 30);
  merged.importJsonUpdates({ schema_version: 1, start_version: {}, peers, changes });
  return merged;
}

// diamond-types history: every op added at its txn's parents.
function dtBuildHistory(txns) {
  const oplog = new DtOpLog();
  const last = [];
  txns.forEach((txn, i) => {
    oplog.setAgent(`agent${txn.agent}`);
    let parents = Uint32Array.from((txn.parents ?? []).flatMap((p) => last[p]));
    for (const [pos, del, ins] of txn.patches) {
      if (del) parents = Uint32Array.of(oplog.del(pos, del, parents));
      if (ins) parents = Uint32Array.of(oplog.ins(pos, ins, parents));
    }
    last[i] = Array.from(parents);
  });
  return oplog;
}

function benchTrace(file, reps) {
  const trace = JSON.parse(zlib.gunzipSync(fs.readFileSync(file)).toString('utf8'));
  const name = path.basename(file).replace(/\.json\.gz$/, '');
  const start = trace.startContent ?? '';
  const end = trace.endContent;
  const row = { trace: name, patches: trace.txns.reduce((n, t) => n + t.patches.length, 0) };
  const concurrent = trace.kind === 'concurrent';
  const linear = !concurrent || isLinear(trace);
  const astral = hasAstral(start) || trace.txns.some((t) => t.patches.some((p) => hasAstral(p[2])));
  const loroTxns = astral ? toUtf16Txns(start, trace.txns) : trace.txns;

  if (linear) {
    let doc;
    row.loro_ms = bestOf(reps, () => {
      doc?.free();
      doc = loroReplay(start, loroTxns);
    });
    row.loro_correct = doc.getText('text').toString() === end;
    const snapshot = doc.export({ mode: 'snapshot' });
    row.loro_bytes = snapshot.length;
    row.loro_load_ms = bestOf(reps, () => {
      const d = new LoroDoc();
      d.import(snapshot);
      d.getText('text').toString();
      d.free();
    });
    doc.free();

    let dt;
    row.dt_ms = bestOf(reps, () => {
      dt?.free();
      dt = dtReplay(start, trace.txns);
    });
    row.dt_correct = dt.get() === end;
    const bytes = dt.toBytes();
    row.dt_bytes = bytes.length;
    row.dt_load_ms = bestOf(reps, () => {
      const d = DtDoc.fromBytes(bytes);
      d.get();
      d.free();
    });
    dt.free();
  }
  if (concurrent) {
    try {
      const direct = new Set(trace.txns.map((t) => t.agent)).size > MAX_AUTHOR_DOCS;
      const merged = direct ? loroBuildDirect(trace.txns) : loroBuildHistory(loroTxns);
      if (direct) row.loro_history = 'direct';
      const updates = merged.export({ mode: 'update' });
      let textOut = '';
      row.loro_merge_ms = bestOf(reps, () => {
        const d = new LoroDoc();
        d.import(updates);
        textOut = d.getText('text').toString();
        d.free();
      });
      row.loro_merge_correct = textOut === end;
      if (!linear) row.loro_bytes = merged.export({ mode: 'snapshot' }).length;
      merged.free();
    } catch (e) {
      row.loro_error = String(e);
    }
    try {
      const oplog = dtBuildHistory(trace.txns);
      let textOut = '';
      // dt_merge_ms: diamond-types' Eg-walker replay of an op log already in
      // memory (no decoding; weft's replay_ms is the like-for-like figure);
      // dt_merge_from_bytes_ms: decoding the encoded history too (weft's merge_ms).
      row.dt_merge_ms = bestOf(reps, () => {
        const branch = oplog.checkout();
        textOut = branch.get();
        branch.free();
      });
      row.dt_merge_correct = textOut === end;
      const bytes = oplog.toBytes();
      if (!linear) row.dt_bytes = bytes.length;
      row.dt_merge_from_bytes_ms = bestOf(reps, () => {
        const d = DtDoc.fromBytes(bytes);
        d.get();
        d.free();
      });
      oplog.free();
    } catch (e) {
      row.dt_error = String(e);
    }
  }
  return row;
}

const args = parseArgs();
if (!fs.existsSync(args.dir)) {
  console.log(JSON.stringify({ skipped: `trace directory ${args.dir} is absent` }));
  process.exit(0);
}
for (const file of findTraces(args.dir)) {
  const name = path.basename(file).replace(/\.json\.gz$/, '');
  if (args.only && name !== args.only) continue;
  try {
    console.log(JSON.stringify(benchTrace(file, args.reps)));
  } catch (e) {
    console.log(JSON.stringify({ trace: name, error: String(e) }));
  }
}
