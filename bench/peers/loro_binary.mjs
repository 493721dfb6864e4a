// Peer figures for the loro_binary suite: loro-crdt replays a sequential
// trace (one commit per txn, as in traces.mjs), exports it as Loro binary
// FastUpdates into --out (the bytes weft_loro_binary_bench imports), and
// times its own import of those bytes (best of --reps, after a warm-up).
// Prints one JSON object. Traces with astral characters are not supported
// (loro-crdt's text positions count UTF-16 units).
//   node loro_binary.mjs TRACE.json.gz --out FILE [--reps N]
import fs from 'node:fs';
import zlib from 'node:zlib';
import { LoroDoc } from 'loro-crdt';

const args = process.argv.slice(2);
const file = args[0];
const out = args[args.indexOf('--out') + 1];
const reps = args.includes('--reps') ? Number(args[args.indexOf('--reps') + 1]) : 10;
if (!file || args.indexOf('--out') < 0 || !out) {
  console.error('usage: node loro_binary.mjs TRACE.json.gz --out FILE [--reps N]');
  process.exit(2);
}

const trace = JSON.parse(zlib.gunzipSync(fs.readFileSync(file)).toString('utf8'));
const doc = new LoroDoc();
doc.setPeerId(1);
const text = doc.getText('text');
if (trace.startContent) {
  text.insert(0, trace.startContent);
  doc.commit();
}
for (const txn of trace.txns) {
  for (const [pos, del, ins] of txn.patches) {
    if (del) text.delete(pos, del);
    if (ins) text.insert(pos, ins);
  }
  doc.commit();
}
const correct = text.toString() === trace.endContent;
const updates = doc.export({ mode: 'update' });
fs.writeFileSync(out, updates);

const load = () => {
  const d = new LoroDoc();
  d.import(updates);
  const n = d.getText('text').length;
  d.free();
  return n;
};
for (let i = 0; i < 3; i++) load();
let best = Infinity;
for (let i = 0; i < reps; i++) {
  const t0 = performance.now();
  load();
  best = Math.min(best, performance.now() - t0);
}
console.log(JSON.stringify({ loro_correct: correct, loro_update_bytes: updates.length, loro_import_ms: best }));
