// The page `weft serve` serves (web/, docs/web.md), in headless Debian
// chromium driven by puppeteer-core: two pages type into one file while an
// agent edits it over MCP (fs_edit), then the file on disk, both editors and
// the history panel must agree; every route is used with the keyboard alone
// and checked by axe-core (labels, contrast); files it cannot edit say why
// (read only, binary, too large); a lost connection says it is reconnecting,
// keeps the typing and sends it once the server is back, and a server that
// refuses the page (restarted with a new token) is named as such. Screenshots go to
// $WEFT_WEB_SHOTS (default build/web-test/).
//   WEFT_BIN=build/release/weft node --test tests/web/
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';

import puppeteer from 'puppeteer-core';

const require = createRequire(import.meta.url);
const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '../..');
const WEFT_BIN = process.env.WEFT_BIN ?? path.join(repo, 'build/release/weft');
const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
const SHOTS = process.env.WEFT_WEB_SHOTS ?? path.join(repo, 'build/web-test');
const SKIP = !existsSync(WEFT_BIN) ? `no weft binary at ${WEFT_BIN} (set WEFT_BIN)`
  : !existsSync(CHROMIUM) ? `no chromium at ${CHROMIUM} (scripts/install-deps.sh installs it)` : false;

let server, base, token = '', browser, dir, ws;

function write(rel, text) {
  mkdirSync(path.dirname(path.join(ws, rel)), { recursive: true });
  writeFileSync(path.join(ws, rel), text);
}

async function until(what, fn, ms = 10_000) {
  const end = Date.now() + ms;
  let last;
  while (Date.now() < end) {
    try {
      last = await fn();
      if (last) return last;
    } catch (e) {
      last = e;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what} (last: ${last})`);
}

// Starts `weft serve` on `root` with its state under `state`; resolves once
// it prints its address. `port` 0 picks a free one; `tokenFile` keeps the
// access token across restarts.
async function startServer(root, state, { port = 0, tokenFile } = {}) {
  const args = ['serve', '--root', root, '--port', String(port)];
  if (tokenFile) args.push('--token-file', tokenFile);
  const proc = spawn(WEFT_BIN, args, {
    env: { ...process.env, XDG_STATE_HOME: state },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const banner = await new Promise((resolve, reject) => {
    let out = '';
    proc.stdout.on('data', (d) => {
      out += d;
      if (/endpoint: http:\/\/127\.0\.0\.1:\d+\/mcp/.test(out) && /Ctrl-C/.test(out)) resolve(out);
    });
    proc.on('exit', (code) => reject(new Error(`weft serve exited with ${code}: ${out}`)));
  });
  return {
    proc,
    base: banner.match(/http:\/\/127\.0\.0\.1:\d+/)[0],
    token: tokenFile ? readFileSync(tokenFile, 'utf8').trim() : banner.match(/[?&]token=([0-9a-f]+)/)?.[1] ?? '',
  };
}

async function stopServer(proc) {
  if (proc.exitCode !== null || proc.signalCode !== null) return;
  const exited = new Promise((resolve) => proc.once('exit', resolve));
  proc.kill('SIGTERM');
  await exited;
}

before(async () => {
  if (SKIP) return;
  dir = mkdtempSync(path.join(os.tmpdir(), 'weft-web-'));
  ws = path.join(dir, 'ws');
  write('notes/shared.md', 'line one\nline two\nline three\n');
  write('vendor/lib.c', 'int x;\n');
  write('ask/plan.md', 'plan\n');
  write('bin/blob.bin', Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0, 0, 1, 2]));
  write('weft.toml', '[permissions]\nrules = [\n  { glob = "vendor/**", level = "read_only" },\n'
    + '  { glob = "ask/**", level = "human" },\n]\n');
  ({ proc: server, base, token } = await startServer(ws, path.join(dir, 'state')));
  browser = await puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
  });
  mkdirSync(SHOTS, { recursive: true });
});

after(async () => {
  await browser?.close();
  server?.kill('SIGTERM');
  if (dir) rmSync(dir, { recursive: true, force: true });
});

// The page answers at all (the transport routes / to the web handler).
async function assertPageServed() {
  const res = await fetch(`${base}/`);
  assert.equal(res.status, 200, 'weft serve does not serve the page at /');
  assert.match(res.headers.get('content-type') ?? '', /text\/html/);
}

// `context`: the person's own browser window (and storage). Two people in
// tabs of one window would leave the first tab hidden, where chromium runs no
// rendering steps, so puppeteer's clicks there never complete. `at`: the
// server, when not the one every test shares.
async function openPage(route, name, context = browser, at = { base, token }) {
  const page = await context.newPage();
  await page.setViewport({ width: 1280, height: 800 });
  page.on('pageerror', (e) => console.error(`[${name}] page error: ${e.message}`));
  // The first visit carries the token; the page keeps it.
  await page.goto(`${at.base}/?token=${at.token}`, { waitUntil: 'networkidle0' });
  await page.evaluate((n) => localStorage.setItem('weft.name', n), name);
  await page.goto(`${at.base}${route}`, { waitUntil: 'domcontentloaded' });
  return page;
}

// Waits for the editor to be live; false when it reported that live
// editing could not start.
async function liveEditing(page) {
  const handle = await page.waitForFunction(() => (window.weft?.ready ? 'live'
    : document.querySelector('.banner .notice.error')?.textContent) || false, { timeout: 15_000 });
  const state = await handle.jsonValue();
  if (state !== 'live') console.error(`editor not live: ${state}`);
  return state === 'live';
}

async function editorText(page) {
  return page.evaluate(() => window.weft?.view.state.doc.toString());
}

let mcpSession = '';
async function mcp(method, params, id = 1) {
  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  if (token) headers.authorization = `Bearer ${token}`;
  if (mcpSession) headers['mcp-session-id'] = mcpSession;
  const res = await fetch(`${base}/mcp`, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id, method, params }) });
  mcpSession = res.headers.get('mcp-session-id') ?? mcpSession;
  const raw = await res.text();
  const json = raw.startsWith('{') ? JSON.parse(raw) : JSON.parse(raw.split('\n').filter((l) => l.startsWith('data:')).pop().slice(5));
  if (json.error) throw new Error(JSON.stringify(json.error));
  return json.result;
}

async function agentEdit(file, oldString, newString) {
  if (!mcpSession) {
    await mcp('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'web-test-agent', version: '1' } });
  }
  const r = await mcp('tools/call', { name: 'fs_edit', arguments: { path: file, edits: [{ old_string: oldString, new_string: newString }] } }, 2);
  assert.ok(!r.isError, JSON.stringify(r));
}

test('two pages and an agent edit one file; file, editors and history agree', { skip: SKIP }, async () => {
  await assertPageServed();
  const a = await openPage('/edit/notes/shared.md', 'ada', await browser.createBrowserContext());
  const b = await openPage('/edit/notes/shared.md', 'bob', await browser.createBrowserContext());
  for (const p of [a, b]) assert.ok(await liveEditing(p), 'the editor did not go live over /sync');
  assert.equal(await editorText(a), 'line one\nline two\nline three\n');

  // Both people type at once, at different places, while the agent edits.
  await a.click('.cm-content');
  await a.keyboard.down('Control'); await a.keyboard.press('Home'); await a.keyboard.up('Control');
  const typingA = a.keyboard.type('Ada was here. ', { delay: 5 });
  await b.click('.cm-content');
  await b.keyboard.down('Control'); await b.keyboard.press('End'); await b.keyboard.up('Control');
  const typingB = b.keyboard.type('Bob adds a line.\n', { delay: 5 });
  await agentEdit('notes/shared.md', 'line two', 'line TWO (agent)');
  await Promise.all([typingA, typingB]);

  const disk = () => readFileSync(path.join(ws, 'notes/shared.md'), 'utf8');
  const final = await until('the pages and the file to converge', async () => {
    const [ta, tb, d] = [await editorText(a), await editorText(b), disk()];
    return ta === tb && tb === d && d.includes('Ada was here.') && d.includes('Bob adds a line.')
      && d.includes('line TWO (agent)') ? d : false;
  });
  assert.match(final, /^Ada was here\. line one\n/);

  // The history panel lists the agent's change and the people's.
  const authors = await until('the history panel to show every author', async () => {
    const text = await a.$eval('aside', (el) => el.textContent);
    return text.includes('agent:') && /human:|web|ada|bob/.test(text) ? text : false;
  });
  assert.ok(authors.includes('agent:'));

  // A change applied as one replace of the whole text (as loro-codemirror
  // applies a Loro "checkout" event) leaves the cursor where its text went,
  // not at the start of the file, or the next keystrokes land there.
  const head = await a.evaluate(async () => {
    const { view } = window.weft;
    view.dispatch({ selection: { anchor: 5 } });
    const text = view.state.doc.toString();
    view.dispatch({ changes: { from: 0, to: text.length, insert: `${text}(end)` } });
    await new Promise((r) => setTimeout(r, 0));
    return view.state.selection.main.head;
  });
  assert.equal(head, 5, 'a whole-text replace moved the cursor');
  await a.screenshot({ path: path.join(SHOTS, 'edit-two-pages.png') });
  await a.browserContext().close(); await b.browserContext().close();
});

test('files that cannot be edited say why', { skip: SKIP }, async () => {
  await assertPageServed();
  const page = await openPage('/edit/vendor/lib.c', 'ada');
  await page.waitForSelector('.banner .notice');
  assert.match(await page.$eval('.banner', (e) => e.textContent), /Read only: .*vendor\/\*\*/);
  await page.goto(`${base}/edit/bin/blob.bin`);
  await page.waitForSelector('.editor.placeholder');
  assert.match(await page.$eval('.editor', (e) => e.textContent), /binary file/);
  await page.close();
});

test('a file past the editor\'s limit says what it is instead of opening', { skip: SKIP }, async () => {
  // 17 MiB of text: valid UTF-8, so only its size keeps it out of the editor
  // (16 MiB, the kernel's block limit).
  write('logs/huge.log', Buffer.alloc(17 << 20, 'a log line\n'));
  const info = await (await fetch(`${base}/api/file?path=logs/huge.log`,
    { headers: { authorization: `Bearer ${token}` } })).json();
  assert.equal(info.kind, 'too_large', JSON.stringify(info));
  const page = await openPage('/edit/logs/huge.log', 'ada');
  await page.waitForSelector('.editor.placeholder');
  const text = await page.$eval('.editor', (e) => e.textContent);
  assert.match(text, /logs\/huge\.log is 17\.0 MB, more than the 16\.0 MB the editor opens/);
  assert.equal(await page.$('.cm-editor'), null, 'an editor was opened on a too-large file');
  assert.equal(await page.$eval('.connection', (e) => e.textContent), '', 'no connection state for a file not edited live');
  await page.close();
});

test('a lost connection says it is reconnecting, keeps the typing and sends it', { skip: SKIP }, async () => {
  // A server of its own, restarted on the same port, root, state and token.
  const root = path.join(dir, 'ws-reconnect');
  const state = path.join(dir, 'state-reconnect');
  const tokenFile = path.join(dir, 'reconnect.token');
  mkdirSync(path.join(root, 'notes'), { recursive: true });
  writeFileSync(path.join(root, 'notes/live.md'), 'first line\n');
  writeFileSync(tokenFile, '0123456789abcdef0123456789abcdef\n');
  let s = await startServer(root, state, { tokenFile });
  let page;
  try {
    page = await openPage('/edit/notes/live.md', 'ada', browser, s);
    assert.ok(await liveEditing(page), 'the editor did not go live over /sync');
    const connection = () => page.$eval('.connection', (e) => `${e.dataset.state}: ${e.textContent}`);
    assert.equal(await connection(), 'live: Live');

    await stopServer(s.proc);
    await until('the page to say it is reconnecting', async () => /^lost: Reconnecting… your typing is kept$/.test(await connection()), 5_000);
    await page.click('.cm-content');
    await page.keyboard.down('Control'); await page.keyboard.press('End'); await page.keyboard.up('Control');
    await page.keyboard.type('typed offline\n', { delay: 5 });
    assert.equal(await editorText(page), 'first line\ntyped offline\n', 'the editor did not keep the typing');
    assert.equal(readFileSync(path.join(root, 'notes/live.md'), 'utf8'), 'first line\n');
    assert.match(await connection(), /^lost: Reconnecting/, 'typing offline changed the connection state');
    await page.screenshot({ path: path.join(SHOTS, 'edit-reconnecting.png') });

    s = await startServer(root, state, { port: Number(new URL(s.base).port), tokenFile });
    const disk = () => readFileSync(path.join(root, 'notes/live.md'), 'utf8');
    await until('the typing to reach the file after reconnecting',
      async () => disk() === 'first line\ntyped offline\n' && (await connection()) === 'live: Live', 15_000);
    assert.equal(await editorText(page), disk());

    // Restarted with another token, the server refuses the page: it must say
    // so rather than claim to be reconnecting, and keep what is typed.
    await stopServer(s.proc);
    writeFileSync(tokenFile, 'fedcba9876543210fedcba9876543210\n');
    s = await startServer(root, state, { port: Number(new URL(s.base).port), tokenFile });
    await until('the page to say the server refused it', async () => (await connection()).startsWith('refused: Disconnected'), 10_000);
    assert.match(await page.$eval('.banner', (e) => e.textContent), /printed a new address with a new token/);
    await page.keyboard.type('after restart', { delay: 5 });
    assert.equal(await editorText(page), 'first line\ntyped offline\nafter restart');
    await page.screenshot({ path: path.join(SHOTS, 'edit-refused.png') });
  } finally {
    await page?.close();
    await stopServer(s.proc);
  }
});

test('every route works from the keyboard and passes axe', { skip: SKIP }, async () => {
  await assertPageServed();
  await agentEdit('ask/plan.md', 'plan', 'a better plan');  // queued for approval (rule "human")
  await agentEdit('notes/shared.md', 'line three', 'line 3');  // a change in the history
  const axeSource = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
  const page = await openPage('/', 'ada');
  const check = async (label) => {
    await page.evaluate(axeSource);
    const result = await page.evaluate(() => window.axe.run(document, { resultTypes: ['violations'] }));
    const bad = result.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
    assert.deepEqual(bad, [], `${label}: axe violations`);
    await page.screenshot({ path: path.join(SHOTS, `${label}.png`) });
  };
  const tabTo = async (predicate, label, max = 40) => {
    for (let i = 0; i < max; i++) {
      await page.keyboard.press('Tab');
      if (await page.evaluate(predicate)) return;
    }
    throw new Error(`Tab never reached ${label}`);
  };

  // The tree: open a directory and a file with the keyboard.
  await page.waitForSelector('button.dir');
  await check('tree');
  await tabTo(() => document.activeElement?.textContent === 'notes/', 'the notes/ folder');
  await page.keyboard.press('Enter');
  await page.waitForSelector('a.file[href="/edit/notes/shared.md"]');
  await tabTo(() => document.activeElement?.getAttribute('href') === '/edit/notes/shared.md', 'shared.md');
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => location.pathname === '/edit/notes/shared.md');
  assert.ok(await liveEditing(page), 'the editor did not go live over /sync');
  await check('edit');

  // History, by its link, then its diff button.
  await page.goto(`${base}/history/notes/shared.md`);
  await page.waitForSelector('ol.changes button');
  await tabTo(() => document.activeElement?.textContent === 'Diff', 'a Diff button');
  await page.keyboard.press('Enter');
  await page.waitForSelector('pre.diff');
  await check('history');

  // Approvals: approve the agent's change with the keyboard.
  await page.goto(`${base}/approvals`);
  await page.waitForSelector('li.approval');
  await check('approvals');
  await tabTo(() => document.activeElement?.textContent === 'Approve', 'Approve');
  await page.keyboard.press('Enter');
  await page.waitForSelector('li.approval .notice');
  assert.equal(readFileSync(path.join(ws, 'ask/plan.md'), 'utf8'), 'a better plan\n');

  // A phone-sized screen.
  await page.setViewport({ width: 390, height: 844, isMobile: true });
  await page.goto(`${base}/edit/notes/shared.md`);
  assert.ok(await liveEditing(page), 'the editor did not go live over /sync');
  await check('edit-phone');
  await page.close();
});
