// Helpers shared by the Node benchmarks that drive MCP servers over stdio
// (mcp_bench.mjs, kernel_bench.mjs).
import fs from 'node:fs';

// ~`bytes` of numbered lines, the middle one a unique marker `MARKER_0`.
export function makeText(bytes) {
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

// CPU milliseconds (user + system) a process has used, from /proc (10 ms ticks).
export function processCpuMs(pid) {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 1000 / 100;
}

// Calls/s of `total` calls of `fn(i)` with `concurrency` in flight; a result
// with isError throws.
export async function throughput(total, concurrency, fn) {
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

// Brings the client (one process drives every server) to steady state: V8's
// JIT and the buffers of the SDK's read path keep improving over the first
// ~3,000 calls, so each side is called for at least `warmMs` and `minCalls`
// calls, in even-sized batches (edits toggle back).
export async function warmUp(minCalls, concurrency, fn, warmMs) {
  const start = process.hrtime.bigint();
  let done = 0;
  const batch = 2 * Math.max(10, Math.ceil(minCalls / 20));
  while (done < minCalls || Number(process.hrtime.bigint() - start) / 1e6 < warmMs) {
    await throughput(batch, concurrency, fn);
    done += batch;
  }
}

export function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}
