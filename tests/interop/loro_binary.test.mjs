// Interop: Loro's binary format (FastUpdates, mode 4; FastSnapshot, mode 3)
// between loro-crdt 1.17.1 and weft, over the public Loro vector sets in
// ../shared/data/loro-vectors (read at test time, never copied here).
//
// For each session, loro-crdt rebuilds the final doc from its JSON history
// and exports it as binary updates, as a snapshot, and per peer (each peer's
// own changes as updates). The weft CLI must import each of those into the
// same value and version (`weft loro merge --with-version`), and loro-crdt
// must import what weft exports from them (`weft loro export --format
// binary|snapshot`) into the same value and version. Sessions with
// MovableList ops must be refused with a message naming MovableList.
//
//   WEFT_BIN=build/release/weft node --test tests/interop/loro_binary.test.mjs
// Skips when WEFT_BIN is unset or the shared vectors are absent
// (WEFT_SHARED_DIR overrides ../shared).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { LoroDoc } from 'loro-crdt';

const WEFT_BIN = process.env.WEFT_BIN;
const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const SHARED = process.env.WEFT_SHARED_DIR || path.resolve(REPO, '../shared');
const VECTORS = path.join(SHARED, 'data/loro-vectors');
const SETS = ['basic', 'ext', 'movable'];

function skipReason() {
  if (!WEFT_BIN) return 'WEFT_BIN is not set (point it at the weft CLI to run the Loro binary interop test)';
  if (!fs.existsSync(WEFT_BIN)) return `WEFT_BIN=${WEFT_BIN} does not exist`;
  const r = spawnSync(WEFT_BIN, ['loro', 'export', '--help'], { encoding: 'utf8' });
  if (r.status !== 0 || !r.stdout.includes('--format')) return `${WEFT_BIN} has no 'weft loro export --format'`;
  if (!fs.existsSync(VECTORS)) return `the shared Loro vectors are absent (${VECTORS}): skipping`;
  return null;
}

function sessions(set) {
  const dir = path.join(VECTORS, set);
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir).filter((f) => f.startsWith('session-')).sort().map((f) => path.join(dir, f));
}

// Numbers compare by value (weft prints 5 for loro's 5.0 and vice versa).
function deepEq(a, b) {
  if (typeof a === 'number' && typeof b === 'number') return a === b;
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((x, i) => deepEq(x, b[i]));
  if (a && typeof a === 'object') {
    if (!b || typeof b !== 'object' || Array.isArray(b)) return false;
    const ka = Object.keys(a);
    return ka.length === Object.keys(b).length && ka.every((k) => k in b && deepEq(a[k], b[k]));
  }
  return a === b;
}

const versionOf = (doc) => Object.fromEntries([...doc.oplogVersion().toJSON()].map(([p, c]) => [String(p), c]));

function weft(args) {
  return spawnSync(WEFT_BIN, args, { encoding: 'utf8', maxBuffer: 64 << 20 });
}

// weft's value and version after merging `files`.
function weftMerge(files) {
  const r = weft(['loro', 'merge', '--with-version', ...files]);
  if (r.status !== 0) return { error: r.stderr.trim() || `exit ${r.status}` };
  return JSON.parse(r.stdout);
}

const usesMovable = (v) => JSON.stringify(v.final.all_updates).includes(':MovableList');

function checkSession(file, tmp, totals) {
  const v = JSON.parse(fs.readFileSync(file, 'utf8'));
  const name = path.basename(file);
  const doc = new LoroDoc();
  doc.importJsonUpdates(v.final.all_updates);
  const want = { value: doc.toJSON(), version: versionOf(doc) };
  const inputs = {
    updates: doc.export({ mode: 'update' }),
    snapshot: doc.export({ mode: 'snapshot' }),
  };
  const paths = {};
  for (const [k, bytes] of Object.entries(inputs)) {
    paths[k] = path.join(tmp, `${k}.bin`);
    fs.writeFileSync(paths[k], bytes);
  }
  // Each peer's changes as separate updates (loro-crdt's updates-in-range),
  // merged in peer order: weft parks what waits for another peer's changes.
  const peerFiles = [];
  for (const [peer, end] of Object.entries(want.version)) {
    const f = path.join(tmp, `peer-${peerFiles.length}.bin`);
    fs.writeFileSync(f, doc.export({ mode: 'updates-in-range', spans: [{ id: { peer, counter: 0 }, len: end }] }));
    peerFiles.push(f);
  }

  if (usesMovable(v)) {
    const got = weftMerge([paths.updates]);
    assert.ok(got.error, `${name}: weft imported MovableList ops instead of refusing them`);
    assert.match(got.error, /MovableList/, `${name}: refusal does not name MovableList`);
    totals.refused++;
    return;
  }

  for (const [label, files] of [['updates', [paths.updates]], ['snapshot', [paths.snapshot]], ['per-peer updates', peerFiles]]) {
    const got = weftMerge(files);
    assert.ok(!got.error, `${name}: weft failed to import loro's ${label}: ${got.error}`);
    assert.ok(deepEq(got.value, want.value), `${name}: weft's value after loro's ${label} differs\nweft: ${JSON.stringify(got.value)}\nloro: ${JSON.stringify(want.value)}`);
    assert.ok(deepEq(got.version, want.version), `${name}: weft's version after loro's ${label} differs`);
  }

  for (const [fmt, src, loroBytes] of [['binary', paths.updates, inputs.updates], ['snapshot', paths.snapshot, inputs.snapshot]]) {
    const out = path.join(tmp, `weft-${fmt}.bin`);
    const r = weft(['loro', 'export', src, '--format', fmt, '--out', out]);
    assert.equal(r.status, 0, `${name}: weft loro export --format ${fmt} failed: ${r.stderr}`);
    const bytes = fs.readFileSync(out);
    const back = new LoroDoc();
    back.import(bytes);
    assert.ok(deepEq(back.toJSON(), want.value), `${name}: loro's value after weft's ${fmt} differs\nloro: ${JSON.stringify(back.toJSON())}\nwant: ${JSON.stringify(want.value)}`);
    assert.ok(deepEq(versionOf(back), want.version), `${name}: loro's version after weft's ${fmt} differs`);
    totals[fmt].weft += bytes.length;
    totals[fmt].loro += loroBytes.length;
  }
  totals.passed++;
}

for (const set of SETS) {
  test(`Loro binary round trip: ${set} vectors`, (t) => {
    const reason = skipReason();
    if (reason) return t.skip(reason);
    const files = sessions(set);
    if (files.length === 0) return t.skip(`no sessions in ${path.join(VECTORS, set)}`);
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'weft-loro-binary-'));
    const totals = { passed: 0, refused: 0, binary: { weft: 0, loro: 0 }, snapshot: { weft: 0, loro: 0 } };
    try {
      for (const f of files) checkSession(f, tmp, totals);
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true });
    }
    t.diagnostic(`${set}: ${totals.passed} sessions round-tripped, ${totals.refused} refused (MovableList); ` +
      `bytes weft/loro: updates ${totals.binary.weft}/${totals.binary.loro}, snapshot ${totals.snapshot.weft}/${totals.snapshot.loro}`);
    assert.equal(totals.passed + totals.refused, files.length);
    if (set !== 'movable') assert.equal(totals.refused, 0);
  });
}
