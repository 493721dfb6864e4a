// bench/web.sh's measurements (see there). Prints one line per figure, JSON
// with --json.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import puppeteer from 'puppeteer-core';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '../..');
const json = process.argv.includes('--json');
const WEFT_BIN = process.env.WEFT_BIN ?? path.join(repo, 'build/release/weft');
const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';

function report(name, value, unit, extra = {}) {
  if (json) console.log(JSON.stringify({ suite: 'web', name, value, unit, ...extra }));
  else console.log(`${name}: ${value} ${unit}`);
}

const sizes = JSON.parse(readFileSync(path.join(repo, 'build/web/weft-web.bundle.sizes.json'), 'utf8'));
const gz = Object.entries(sizes).filter(([n]) => !n.endsWith('.wasm')).reduce((s, [, v]) => s + v.gzip, 0);
const wasmGz = sizes['loro_wasm_bg.wasm']?.gzip ?? 0;
report('bundle_gzip_kb', +(gz / 1024).toFixed(1), 'KB', {
  wasm_gzip_kb: +(wasmGz / 1024).toFixed(1),
  total_gzip_kb: +((gz + wasmGz) / 1024).toFixed(1),
});

if (!existsSync(WEFT_BIN) || !existsSync(CHROMIUM)) {
  console.error(`bench web: needs ${WEFT_BIN} and ${CHROMIUM}; only the bundle size was measured`);
  process.exit(0);
}

const dir = mkdtempSync(path.join(os.tmpdir(), 'weft-web-bench-'));
const ws = path.join(dir, 'ws');
mkdirSync(ws, { recursive: true });
const line = 'The quick brown fox jumps over the lazy dog, 0123456789 abcdefghij.\n';
writeFileSync(path.join(ws, 'big.txt'), line.repeat(Math.ceil((1 << 20) / line.length)));
writeFileSync(path.join(ws, 'live.md'), 'start\n');
const server = spawn(WEFT_BIN, ['serve', '--root', ws, '--port', '0'], {
  env: { ...process.env, XDG_STATE_HOME: path.join(dir, 'state') }, stdio: ['ignore', 'pipe', 'inherit'],
});
let browser;
try {
  const banner = await new Promise((resolve, reject) => {
    let out = '';
    server.stdout.on('data', (d) => { out += d; if (/Ctrl-C/.test(out)) resolve(out); });
    server.on('exit', (c) => reject(new Error(`weft serve exited with ${c}`)));
  });
  const base = banner.match(/http:\/\/127\.0\.0\.1:\d+/)[0];
  const token = banner.match(/[?&]token=([0-9a-f]+)/)?.[1] ?? '';
  const page0 = await fetch(`${base}/`);
  if (page0.status !== 200) throw new Error('weft serve does not serve the page yet (transport routing)');
  browser = await puppeteer.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu'] });
  const page = await browser.newPage();
  await page.goto(`${base}/?token=${token}`, { waitUntil: 'networkidle0' });

  const t0 = Date.now();
  await page.goto(`${base}/edit/big.txt`);
  await page.waitForFunction(() => window.weft?.ready && window.weft.view.state.doc.length > 1_000_000, { timeout: 60_000 });
  report('open_1mb_ms', Date.now() - t0, 'ms');

  await page.goto(`${base}/edit/live.md`);
  await page.waitForFunction(() => window.weft?.ready);
  let session = '';
  const mcp = async (method, params) => {
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    if (token) headers.authorization = `Bearer ${token}`;
    if (session) headers['mcp-session-id'] = session;
    const res = await fetch(`${base}/mcp`, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
    session = res.headers.get('mcp-session-id') ?? session;
    return res.text();
  };
  await mcp('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench', version: '1' } });
  const lags = [];
  let prev = 'start';
  for (let i = 0; i < 20; i++) {
    const next = `edit-${i}`;
    const seen = page.evaluate((marker) => new Promise((resolve) => {
      const check = () => window.weft.view.state.doc.toString().includes(marker);
      if (check()) return resolve(Date.now());
      const off = window.weft.doc.subscribe(() => { if (check()) { off(); resolve(Date.now()); } });
    }), next);
    await mcp('tools/call', { name: 'fs_edit', arguments: { path: 'live.md', edits: [{ old_string: prev, new_string: next }] } });
    const answered = Date.now();
    lags.push(Math.max(0, (await seen) - answered));
    prev = next;
  }
  lags.sort((a, b) => a - b);
  report('agent_to_page_p50_ms', lags[Math.floor(lags.length / 2)], 'ms', { p90: lags[Math.floor(lags.length * 0.9)] });
} finally {
  await browser?.close();
  server.kill('SIGTERM');
  rmSync(dir, { recursive: true, force: true });
}
