// A scripted MCP session against `weft mcp` / `weft serve`, shared by
// mcp_stdio.test.mjs and mcp_http.test.mjs: every tool, every error path.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export const WEFT_BIN = process.env.WEFT_BIN;
export const SKIP = WEFT_BIN ? false : 'WEFT_BIN is not set (path to the weft binary); skipping MCP interop';

export const ALL_TOOLS = [
  'fs_read', 'fs_read_media', 'fs_write', 'fs_edit', 'fs_patch', 'fs_list', 'fs_glob', 'fs_grep',
  'fs_stat', 'fs_delete', 'fs_mkdir', 'fs_move', 'fs_copy', 'fs_snapshot', 'fs_restore',
  'fs_snapshots', 'fs_history', 'fs_diff', 'fs_rollback', 'fs_undo', 'fs_redo', 'fs_status',
  'block_create', 'block_status', 'block_delete', 'block_append', 'block_edit', 'block_splice',
  'block_apply_patch', 'block_read', 'block_search', 'block_list', 'block_history', 'block_diff',
  'block_rollback', 'block_undo', 'block_redo', 'memory_create', 'memory_read', 'memory_update', 'memory_append',
  'kernel_search',
];
export const READ_ONLY_TOOLS = ['fs_read', 'fs_read_media', 'fs_list', 'fs_glob', 'fs_grep',
  'fs_stat', 'fs_snapshots'];

// A fresh workspace beside an "outside" directory, with symlinks leading out.
export function makeWorkspace() {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), 'weft-mcp-'));
  const ws = path.join(base, 'ws');
  const outside = path.join(base, 'outside');
  fs.mkdirSync(path.join(ws, 'src'), { recursive: true });
  fs.mkdirSync(outside);
  fs.writeFileSync(path.join(outside, 'secret.txt'), 'top secret\n');
  fs.symlinkSync(path.join(outside, 'secret.txt'), path.join(ws, 'file_link'));
  fs.symlinkSync(outside, path.join(ws, 'dir_link'));
  fs.writeFileSync(path.join(ws, 'src', 'main.py'),
    'def main():\n    print("hello")\n    print("hello")\n\nmain()\n');
  fs.writeFileSync(path.join(ws, 'crlf.txt'), 'one\r\ntwo\r\nthree\r\n');
  // A 1x1 PNG.
  fs.writeFileSync(path.join(ws, 'pixel.png'), Buffer.from(
    'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
    'base64'));
  // Snapshots go to a store outside the workspace, private to this run.
  const stateHome = path.join(base, 'state');
  return { base, ws, outside, stateHome };
}

export function text(result) {
  return result.content.filter((c) => c.type === 'text').map((c) => c.text).join('\n');
}

async function call(client, name, args) {
  return client.callTool({ name, arguments: args });
}

async function ok(client, name, args) {
  const r = await call(client, name, args);
  assert.ok(!r.isError, `${name} failed: ${text(r)}`);
  return r;
}

async function fails(client, name, args, pattern) {
  const r = await call(client, name, args);
  assert.equal(r.isError, true, `${name} should fail, got: ${text(r)}`);
  if (pattern) assert.match(text(r), pattern);
  return r;
}

// Runs every tool and every error path through `client` on workspace `w`.
export async function runScenario(client, w) {
  const listed = await client.listTools();
  const names = listed.tools.map((t) => t.name);
  assert.deepEqual(names, ALL_TOOLS);
  for (const t of listed.tools) {
    assert.equal(t.inputSchema.type, 'object');
    assert.equal(typeof t.annotations.readOnlyHint, 'boolean');
  }
  assert.equal(listed.tools.find((t) => t.name === 'fs_read').annotations.readOnlyHint, true);
  assert.equal(listed.tools.find((t) => t.name === 'fs_delete').annotations.destructiveHint, true);

  await client.ping();
  await client.setLoggingLevel('debug');

  // fs_write: create, refuse re-create, append, parents created.
  let r = await ok(client, 'fs_write', { path: 'notes/new/today.md', content: 'alpha\nbeta\n' });
  assert.equal(r.structuredContent.created, true);
  await fails(client, 'fs_write', { path: 'notes/new/today.md', content: 'x', mode: 'create' },
    /already exists/);
  await ok(client, 'fs_write', { path: 'notes/new/today.md', content: 'gamma\n', mode: 'append' });

  // fs_read: numbered lines, totals, paging.
  r = await ok(client, 'fs_read', { path: 'notes/new/today.md' });
  assert.match(text(r), /^\s+1\talpha\n\s+2\tbeta\n\s+3\tgamma\n$/);
  assert.equal(r.structuredContent.total_lines, 3);
  r = await ok(client, 'fs_read', { path: 'notes/new/today.md', offset: 2, limit: 1 });
  assert.match(text(r), /^\s+2\tbeta\n/);
  assert.equal(r.structuredContent.lines, 1);
  assert.equal(r.structuredContent.truncated, true);

  // fs_edit: non-unique fails with count and lines; replace_all; CRLF kept; dry run.
  r = await fails(client, 'fs_edit', {
    path: 'src/main.py', edits: [{ old_string: 'print("hello")', new_string: 'print("bye")' }],
  }, /2 times/);
  assert.match(text(r), /lines 2 and 3/);
  r = await ok(client, 'fs_edit', {
    path: 'src/main.py', dry_run: true,
    edits: [{ old_string: 'print("hello")', new_string: 'print("bye")', replace_all: true }],
  });
  assert.match(r.structuredContent.diff, /^-    print\("hello"\)$/m);
  assert.match(fs.readFileSync(path.join(w.ws, 'src/main.py'), 'utf8'), /hello/);
  r = await ok(client, 'fs_edit', {
    path: 'src/main.py',
    edits: [{ old_string: 'print("hello")', new_string: 'print("bye")', replace_all: true },
      { old_string: 'def main():', new_string: 'def main() -> None:' }],
  });
  assert.deepEqual(r.structuredContent.replacements, [2, 1]);
  assert.match(text(r), /\+def main\(\) -> None:/);
  await fails(client, 'fs_edit', {
    path: 'src/main.py',
    edits: [{ old_string: 'main()', new_string: 'run()' }, { old_string: 'absent', new_string: 'x' }],
  });
  assert.doesNotMatch(fs.readFileSync(path.join(w.ws, 'src/main.py'), 'utf8'), /run\(\)/);
  await ok(client, 'fs_edit', { path: 'crlf.txt', edits: [{ old_string: 'two\nthree', new_string: '2\n3' }] });
  assert.equal(fs.readFileSync(path.join(w.ws, 'crlf.txt'), 'utf8'), 'one\r\n2\r\n3\r\n');

  // fs_patch: drifted line numbers apply by context; dry run; stale patch fails atomically.
  fs.writeFileSync(path.join(w.ws, 'p.txt'), 'a\nb\nc\nd\ne\nf\ng\n');
  const patch = '--- a/p.txt\n+++ b/p.txt\n@@ -2,3 +2,3 @@\n c\n-d\n+D\n e\n';
  r = await ok(client, 'fs_patch', { patch, dry_run: true });
  assert.equal(r.structuredContent.applies, true);
  assert.equal(r.structuredContent.files[0].hunks[0].line, 3);
  await ok(client, 'fs_patch', { patch });
  assert.equal(fs.readFileSync(path.join(w.ws, 'p.txt'), 'utf8'), 'a\nb\nc\nD\ne\nf\ng\n');
  const stale = '--- a/p.txt\n+++ b/p.txt\n@@ -1,3 +1,3 @@\n x\n-y\n+Y\n z\n' +
    '--- /dev/null\n+++ b/created.txt\n@@ -0,0 +1 @@\n+new\n';
  r = await fails(client, 'fs_patch', { patch: stale }, /does not apply/);
  assert.ok(!fs.existsSync(path.join(w.ws, 'created.txt')));
  r = await ok(client, 'fs_patch', { patch: stale, dry_run: true });
  assert.equal(r.structuredContent.applies, false);
  assert.equal(r.structuredContent.files[0].hunks[0].applies, false);

  // Listing, globbing, grepping, stat.
  r = await ok(client, 'fs_list', { path: '.', depth: 2, sizes: true });
  assert.match(text(r), /\[DIR\]  src\//);
  assert.match(text(r), /\[LINK\] file_link/);
  r = await ok(client, 'fs_glob', { pattern: '**/*.py' });
  assert.deepEqual(r.structuredContent.matches, ['src/main.py']);
  r = await ok(client, 'fs_grep', { pattern: 'print\\("b.e"\\)' });
  assert.equal(r.structuredContent.matches.length, 2);
  r = await ok(client, 'fs_grep', { pattern: '(', literal: true, output_mode: 'files_with_matches' });
  assert.ok(r.structuredContent.files.includes('src/main.py'));
  r = await ok(client, 'fs_grep', { pattern: 'main', glob: '*.py', context: 1, output_mode: 'content' });
  assert.match(text(r), /src\/main.py-2-/);
  await fails(client, 'fs_grep', { pattern: '(unclosed' });
  r = await ok(client, 'fs_stat', { path: 'src/main.py' });
  assert.equal(r.structuredContent.type, 'file');

  // Media.
  r = await ok(client, 'fs_read_media', { path: 'pixel.png' });
  const image = r.content.find((c) => c.type === 'image');
  assert.equal(image.mimeType, 'image/png');
  assert.equal(Buffer.from(image.data, 'base64').length, fs.statSync(path.join(w.ws, 'pixel.png')).size);
  await fails(client, 'fs_read', { path: 'pixel.png' }, /fs_read_media/);

  // Snapshots around mkdir/copy/move/delete.
  r = await ok(client, 'fs_snapshot', { tag: 'before' });
  const snapId = r.structuredContent.snapshot_id;
  await ok(client, 'fs_mkdir', { path: 'a/b/c' });
  await ok(client, 'fs_copy', { source: 'src/main.py', destination: 'a/b/c/copy.py' });
  await fails(client, 'fs_copy', { source: 'src/main.py', destination: 'a/b/c/copy.py' }, /overwrite/);
  await ok(client, 'fs_move', { source: 'a/b/c/copy.py', destination: 'a/moved.py' });
  await fails(client, 'fs_delete', { path: 'a' }, /recursive/);
  await ok(client, 'fs_delete', { path: 'a', recursive: true });
  await ok(client, 'fs_delete', { path: 'src/main.py' });
  r = await ok(client, 'fs_snapshots', {});
  assert.ok(r.structuredContent.snapshots.some((s) => s.snapshot_id === snapId));
  await ok(client, 'fs_restore', { snapshot: 'before' });
  assert.ok(fs.existsSync(path.join(w.ws, 'src/main.py')));
  await fails(client, 'fs_restore', { snapshot: 'no-such-snapshot' }, /fs_snapshots/);

  // Paths outside the root and symlink escapes: refused, nothing written outside.
  await fails(client, 'fs_read', { path: '../outside/secret.txt' }, /permission denied/);
  await fails(client, 'fs_read', { path: path.join(w.outside, 'secret.txt') }, /permission denied/);
  await fails(client, 'fs_read', { path: 'file_link' }, /symbolic link/);
  await fails(client, 'fs_read', { path: 'dir_link/secret.txt' }, /symbolic link/);
  await fails(client, 'fs_write', { path: 'dir_link/evil.txt', content: 'x' });
  await fails(client, 'fs_write', { path: 'file_link', content: 'pwned' });
  await fails(client, 'fs_edit', { path: 'file_link', edits: [{ old_string: 'top', new_string: 'x' }] });
  await fails(client, 'fs_patch', { patch: '--- a/../outside/secret.txt\n+++ b/../outside/secret.txt\n@@ -1 +1 @@\n-top secret\n+pwned\n' });
  await fails(client, 'fs_copy', { source: 'file_link', destination: 'stolen.txt' });
  assert.equal(fs.readFileSync(path.join(w.outside, 'secret.txt'), 'utf8'), 'top secret\n');
  assert.deepEqual(fs.readdirSync(w.outside), ['secret.txt']);

  // Bad arguments: isError naming the field; unknown tool: protocol error.
  r = await fails(client, 'fs_read', { path: 42 }, /arguments\.path: expected a string/);
  await fails(client, 'fs_read', {}, /missing required property "path"/);
  await fails(client, 'fs_read', { path: 'x', bogus: true }, /unknown property "bogus"/);
  await fails(client, 'fs_edit', { path: 'src/main.py', edits: [] }, /at least 1 item/);
  await fails(client, 'fs_write', { path: 'x', content: 'y', mode: 'clobber' }, /must be one of/);
  await fails(client, 'fs_read', { path: 'missing.txt' }, /not found/);
  await assert.rejects(call(client, 'no_such_tool', {}), (e) => e.code === -32602 && /no_such_tool/.test(e.message));

  // Resources.
  const res = await client.listResources();
  const main = res.resources.find((x) => x.name === 'src/main.py');
  assert.ok(main, 'src/main.py listed as a resource');
  const read = await client.readResource({ uri: main.uri });
  assert.match(read.contents[0].text, /def main/);
  await assert.rejects(client.readResource({ uri: 'file:///etc/passwd' }));
}
