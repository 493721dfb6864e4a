// The block tools over stdio with the official SDK client: a conversation
// (user block, a model block streamed with 500 block_append calls, a
// tool_call and a tool_result below it) while a person, amy, edits a line in
// the middle of the streamed block through the kernel API: `weft block edit`
// and `weft block read` run as separate processes on the same root (their
// calls reach the kernel of the `weft mcp` over the kernel link, attributed
// to human:amy). The final texts, the DAG, the history naming both authors
// and per-author undo are checked.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { test } from 'node:test';
import { promisify } from 'node:util';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

import { WEFT_BIN, SKIP, makeWorkspace } from './mcp_scenario.mjs';

async function connect(w, name) {
  const transport = new StdioClientTransport({
    command: WEFT_BIN,
    args: ['mcp', '--root', w.ws],
    env: { ...process.env, XDG_STATE_HOME: w.stateHome },
    stderr: 'pipe',
  });
  const client = new Client({ name, version: '1.0.0' }, { capabilities: {} });
  await client.connect(transport);
  return client;
}

async function ok(client, name, args) {
  const res = await client.callTool({ name, arguments: args });
  assert.ok(!res.isError, `${name} failed: ${res.content?.[0]?.text}`);
  assert.ok(res.structuredContent, `${name} has no structuredContent`);
  return res.structuredContent;
}

async function readText(client, blockId) {
  return (await ok(client, 'block_read', { block_id: blockId, line_numbers: false })).content;
}

const execFileP = promisify(execFile);

// `weft ARGS --root WS` as the person `user` (WEFT_USER): {code, stdout, stderr}.
async function weftAs(w, user, args) {
  try {
    const { stdout, stderr } = await execFileP(WEFT_BIN, [...args, '--root', w.ws], {
      env: { ...process.env, XDG_STATE_HOME: w.stateHome, WEFT_USER: user },
    });
    return { code: 0, stdout, stderr };
  } catch (e) {
    return { code: e.code ?? 1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

test('blocks: streamed conversation with a person editing through the CLI meanwhile',
  { skip: SKIP, timeout: 120_000 }, async () => {
    const w = makeWorkspace();
    const model = await connect(w, 'model');
    try {
      const tools = (await model.listTools()).tools.map((t) => t.name);
      for (const t of ['block_create', 'block_append', 'block_edit', 'block_list', 'kernel_search',
        'memory_create']) {
        assert.ok(tools.includes(t), `${t} is published`);
      }
      const user = await ok(model, 'block_create',
        { role: 'user', kind: 'text', content: 'Write fifty numbered lines.\n' });
      assert.equal(user.block_id, 'main/model/1');
      const reply = await ok(model, 'block_create',
        { parent_id: user.block_id, role: 'model', kind: 'text' });
      const id = reply.block_id;

      // 500 appends: 50 lines of 10 chunks each ("L07 w0 w1 ... w9\n").
      const chunk = (i) => {
        const line = Math.floor(i / 10);
        const word = i % 10;
        return (word === 0 ? `L${String(line).padStart(2, '0')}` : '') + ` w${word}` +
          (word === 9 ? '\n' : '');
      };
      const expected = [];
      for (let i = 0; i < 500; i++) {
        const line = Math.floor(i / 10);
        expected[line] = (expected[line] ?? '') + chunk(i);
      }
      let edited = false;
      for (let i = 0; i < 500; i++) {
        const r = await ok(model, 'block_append', { block_id: id, text: chunk(i) });
        assert.equal(r.block_id, id);
        if (i === 254 && !edited) {
          // Amy, a person at the command line, fixes line 10 while the model streams.
          const current = await weftAs(w, 'amy', ['block', 'read', id, '--lines', '10:11']);
          assert.equal(current.code, 0, current.stderr);
          assert.equal(current.stdout, expected[10]);
          const stale = await weftAs(w, 'amy', ['block', 'edit', id, '--replace', '10:11',
            '--text', 'nope\n', '--expect', 'not the text\n']);
          assert.notEqual(stale.code, 0, 'a stale --expect is refused');
          assert.match(stale.stderr + stale.stdout, /L10 w0 w1/, 'the error shows the current line');
          const fixed = await weftAs(w, 'amy', ['block', 'edit', id, '--replace', '10:11',
            '--text', 'L10 fixed by amy\n', '--expect', current.stdout, '--json']);
          assert.equal(fixed.code, 0, fixed.stderr);
          assert.equal(JSON.parse(fixed.stdout).block_id, id);
          expected[10] = 'L10 fixed by amy\n';
          edited = true;
        }
      }
      await ok(model, 'block_status', { block_id: id, status: 'done' });
      const call = await ok(model, 'block_create', { parent_id: id, role: 'model', kind: 'tool_call',
        content: '{"tool":"fs_read","path":"src/a.txt"}\n', metadata: { tool_name: 'fs_read' } });
      const result = await ok(model, 'block_create', { parent_id: call.block_id, role: 'tool',
        kind: 'tool_result', content: 'hello\n' });

      // The final text, as the model and the person see it.
      const want = expected.join('');
      assert.equal(await readText(model, id), want);
      const seen = await weftAs(w, 'amy', ['block', 'read', id]);
      assert.equal(seen.code, 0, seen.stderr);
      assert.equal(seen.stdout, want);
      const info = await ok(model, 'block_read', { block_id: id });
      assert.equal(info.line_count, 50);
      assert.equal(info.status, 'done');
      assert.equal(info.parent_id, user.block_id);

      // The DAG: user -> model reply -> tool_call -> tool_result.
      const tree = await ok(model, 'block_list', { parent_id: user.block_id, depth: 3 });
      assert.deepEqual(tree.blocks.map((b) => [b.block_id, b.parent_id, b.kind, b.depth]), [
        [id, user.block_id, 'text', 1],
        [call.block_id, id, 'tool_call', 2],
        [result.block_id, call.block_id, 'tool_result', 3],
      ]);
      const roots = await ok(model, 'block_list', {});
      assert.ok(roots.blocks.some((b) => b.block_id === user.block_id));

      // History names both authors (the person as human:amy, through the CLI
      // too); the model's undo takes back only its own appends since amy's
      // edit (one unit), and amy's line stays.
      const history = await ok(model, 'block_history', { block_id: id, limit: 1000 });
      const authors = new Set(history.changes.map((c) => c.author));
      assert.ok(authors.has('human:amy') && authors.has('agent:model'), [...authors].join(','));
      assert.equal(history.changes.filter((c) => c.author === 'human:amy').length, 1);
      await ok(model, 'block_undo', { block_id: id });
      const afterUndo = await readText(model, id);
      assert.ok(afterUndo.includes('L10 fixed by amy\n'));
      assert.ok(!afterUndo.includes('L49'), 'the appends after the edit are undone');
      assert.ok(afterUndo.startsWith(expected.slice(0, 10).join('')));
      await ok(model, 'block_redo', { block_id: id });
      assert.equal(await readText(model, id), want);

      // One search reaches the conversation and the files.
      const found = await ok(model, 'kernel_search', { query: 'fixed by amy|hello' });
      const ids = found.results.map((r) => r.block_id);
      assert.ok(ids.includes(id) && ids.includes(result.block_id), ids.join(','));

      // The person deletes the tool result from the command line: the model
      // no longer lists it but can still read it; amy's undo restores it.
      const rm = await weftAs(w, 'amy', ['block', 'rm', result.block_id, '--json']);
      assert.equal(rm.code, 0, rm.stderr);
      assert.deepEqual(JSON.parse(rm.stdout).deleted, [result.block_id]);
      assert.equal((await ok(model, 'block_list', { parent_id: call.block_id })).blocks.length, 0);
      const gone = await ok(model, 'block_read', { block_id: result.block_id });
      assert.equal(gone.deleted, true);
      assert.equal(gone.deleted_by, 'human:amy');
      const notMine = await model.callTool({ name: 'block_undo',
        arguments: { block_id: result.block_id } });
      assert.ok(notMine.isError, 'the model cannot undo the person\'s delete');
      const back = await weftAs(w, 'amy', ['block', 'undo', result.block_id]);
      assert.equal(back.code, 0, back.stderr);
      assert.equal((await ok(model, 'block_list', { parent_id: call.block_id })).blocks.length, 1);
    } finally {
      await model.close();
    }
  });
