"""weft.Kernel: the block tools from Python, through the root's kernel link.

Each test gets its own workspace root and state directory, so the kernel it
opens is its own (the first Kernel on a root runs it; later ones forward).
"""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import threading

import pytest

import weft


@pytest.fixture
def root(tmp_path: pathlib.Path) -> pathlib.Path:
    r = tmp_path / "root"
    r.mkdir()
    return r


@pytest.fixture
def state(tmp_path: pathlib.Path) -> pathlib.Path:
    return tmp_path / "state"


@pytest.fixture
def kernel(root, state):
    with weft.Kernel(root, state=state, agent="tester") as k:
        yield k


def weft_binary() -> pathlib.Path:
    """The `weft` executable next to the python/ directory the module was built into."""
    env = os.environ.get("WEFT_BIN")
    if env:
        return pathlib.Path(env)
    return pathlib.Path(weft.__file__).resolve().parent.parent.parent / "weft"


# ---------------------------------------------------------------- lifecycle and writes


def test_create_append_read(kernel):
    w = kernel.create("user", content="hello\n")
    assert isinstance(w, weft.BlockWrite)
    assert w.block_id == "main/tester/1"
    assert w.applied and w.pending_approval is None
    a = kernel.append(w.block_id, "world\n")
    assert a.block_id == w.block_id
    c = kernel.read(w.block_id)
    assert isinstance(c, weft.BlockContent)
    assert c.content == "hello\nworld\n"
    assert (c.role, c.kind) == ("user", "text")
    assert c.line_count == 2
    assert c.parent_id is None
    numbered = kernel.read(w.block_id, line_numbers=True, range=(1, 2))
    assert numbered.content == "1\tworld\n"
    assert numbered.range == (1, 2)
    assert kernel.create("model").block_id == "main/tester/2"


def test_appends_are_visible_at_once_and_batched_into_one_undo(kernel):
    b = kernel.create("model", "thinking").block_id
    for piece in ["Let ", "me ", "think"]:
        kernel.append(b, piece)
    assert kernel.read(b).content == "Let me think"
    kernel.undo(b)
    assert kernel.read(b).content == ""


def test_status_and_metadata(kernel):
    w = kernel.create("tool", "tool_call", '{"cmd":"ls"}',
                      metadata={"tool_name": "shell", "n": 3})
    assert kernel.read(w.block_id).metadata["tool_name"] == "shell"
    s = kernel.status(w.block_id, "done")
    assert s.status == "done"
    assert kernel.read(w.block_id).status == "done"
    with pytest.raises(ValueError):
        kernel.status(w.block_id, "finished")
    with pytest.raises(ValueError):
        kernel.create("robot")


def test_edit_ops_all_or_nothing(kernel):
    b = kernel.create("user", content="a\nb\nc\nd\n").block_id
    kernel.edit(b, [weft.LineReplace(0, 1, "A\n"), weft.LineDelete(2, 3),
                    weft.LineInsert(4, "e\n"), {"op": "insert", "line": 1, "content": "x\n"}])
    assert kernel.read(b).content == "A\nx\nb\nd\ne\n"
    before = kernel.read(b)
    with pytest.raises(ValueError):  # overlapping ranges
        kernel.edit(b, [weft.LineDelete(0, 2), weft.LineReplace(1, 3, "z\n")])
    with pytest.raises(ValueError):  # past the end
        kernel.edit(b, [weft.LineDelete(10, 12)])
    with pytest.raises(RuntimeError):  # the guard no longer matches
        kernel.edit(b, [weft.LineReplace(0, 1, "Z\n", expected_text="a\n")])
    after = kernel.read(b)
    assert (after.content, after.version) == (before.content, before.version)
    kernel.edit(b, [weft.LineReplace(0, 1, "Z\n", expected_text="A\n")])
    assert kernel.read(b).content.startswith("Z\n")
    with pytest.raises(TypeError):
        kernel.edit(b, ["delete 0"])


def test_splice_and_apply_patch(kernel):
    b = kernel.create("user", content="hello world\n").block_id
    kernel.splice(b, 6, 5, "there")
    assert kernel.read(b).content == "hello there\n"
    with pytest.raises(ValueError):
        kernel.splice(b, 1000, 1)
    patch = "--- a\n+++ b\n@@ -1 +1 @@\n-hello there\n+goodbye\n"
    dry = kernel.apply_patch(b, patch, dry_run=True)
    assert isinstance(dry, weft.PatchResult)
    assert dry.success and dry.dry_run and "+goodbye" in (dry.diff or "")
    assert kernel.read(b).content == "hello there\n"
    done = kernel.apply_patch(b, patch)
    assert done.success and done.applied and done.version
    assert kernel.read(b).content == "goodbye\n"
    bad = kernel.apply_patch(b, patch)  # the context is gone now
    assert not bad.success and bad.errors
    assert kernel.read(b).content == "goodbye\n"


# ---------------------------------------------------------------- reading


def test_search_in_a_block(kernel):
    b = kernel.create("user", content="alpha\nbeta gamma\ndelta\n").block_id
    found = kernel.search(b, r"gam+a", context_lines=0)
    assert isinstance(found, weft.BlockSearch)
    assert not found.literal
    [m] = found.matches
    assert (m.line, m.match_start, m.match_end) == (1, 5, 10)
    assert m.content == "beta gamma\n" or m.content == "beta gamma"
    literal = kernel.search(b, "(unclosed")
    assert literal.literal and literal.matches == ()


def test_list_and_a_conversation_dag(kernel):
    root = kernel.create("user", content="question\n").block_id
    a = kernel.create("model", content="answer A\n", parent_id=root).block_id
    b = kernel.create("model", content="answer B\n", parent_id=root).block_id
    c = kernel.create("user", content="follow-up\n", parent_id=a).block_id
    roots = kernel.list()
    assert [s.block_id for s in roots if s.kind != "memory"] == [root]
    children = kernel.list(parent_id=root)
    assert isinstance(children, weft.BlockListing)
    assert [s.block_id for s in children] == [a, b]
    assert all(s.parent_id == root for s in children)
    deep = kernel.list(parent_id=root, depth=2)
    assert {s.block_id: s.depth for s in deep} == {a: 1, b: 1, c: 2}
    assert kernel.read(c).parent_id == a
    kernel.status(b, "done")
    assert [s.block_id for s in kernel.list(parent_id=root, status="done")] == [b]
    assert "answer A" in children.blocks[0].summary
    with pytest.raises(weft.BlockNotFoundError):
        kernel.list(parent_id="main/tester/99")


def test_file_blocks_and_search_all(kernel, root):
    (root / "notes.md").write_text("# Notes\nneedle here\n")
    kernel.create("user", content="a needle in a message\n")
    f = kernel.read("file:notes.md")
    assert f.kind == "file" and f.content == "# Notes\nneedle here\n"
    kernel.edit("file:notes.md", [weft.LineInsert(2, "more\n")])
    assert (root / "notes.md").read_text() == "# Notes\nneedle here\nmore\n"
    files = kernel.list(kind="file")
    assert "notes.md" in [s.path for s in files]
    found = kernel.search_all("needle")
    assert isinstance(found, weft.KernelSearch)
    ids = {h.block_id for h in found.results}
    assert "file:notes.md" in ids and "main/tester/1" in ids
    assert found.match_count >= 2
    only_files = kernel.search_all("needle", kinds=["file"])
    assert {h.block_id for h in only_files.results} == {"file:notes.md"}
    created = kernel.create("tool", "file", "new file\n", metadata={"path": "made.txt"})
    assert created.block_id == "file:made.txt"
    assert (root / "made.txt").read_text() == "new file\n"
    with pytest.raises(FileExistsError):
        kernel.create("tool", "file", "again\n", metadata={"path": "made.txt"})


# ---------------------------------------------------------------- history


def test_undo_redo_history_diff_rollback(kernel):
    b = kernel.create("user", content="one\n").block_id
    v1 = kernel.read(b).version
    kernel.append(b, "two\n")
    kernel.edit(b, [weft.LineReplace(0, 1, "ONE\n")])
    assert kernel.read(b).content == "ONE\ntwo\n"
    kernel.undo(b)
    assert kernel.read(b).content == "one\ntwo\n"
    kernel.redo(b)
    assert kernel.read(b).content == "ONE\ntwo\n"
    changes = kernel.history(b)
    assert changes and all(isinstance(c, weft.BlockChange) for c in changes)
    assert "tester" in changes[0].author
    assert "+ONE" in kernel.diff(b)
    assert "+two" in kernel.diff(b, from_version=v1)
    r = kernel.rollback(b, v1)
    assert r.changed
    assert kernel.read(b).content == "one\n"
    kernel.undo(b)  # the rollback is one unit
    assert kernel.read(b).content == "ONE\ntwo\n"


def test_nothing_to_undo_is_an_error(kernel):
    b = kernel.create("user").block_id
    with pytest.raises(RuntimeError, match="undo"):
        kernel.undo(b)


def test_undo_is_per_agent(root, state):
    with weft.Kernel(root, state=state, agent="amy") as amy, \
            weft.Kernel(root, state=state, agent="bob") as bob:
        b = amy.create("user", content="base\n").block_id
        bob.append(b, "bob\n")
        amy.append(b, "amy\n")
        bob.undo(b)  # bob's line goes; amy's later one stays
        assert amy.read(b).content == "base\namy\n"


def test_delete_marks_restores_and_needs_recursive(root, state):
    with weft.Kernel(root, state=state, agent="amy") as amy, \
            weft.Kernel(root, state=state, agent="bob") as bob:
        parent = amy.create("user", content="q\n").block_id
        child = amy.create("model", content="a\n", parent_id=parent).block_id
        with pytest.raises(RuntimeError, match="recursive"):
            amy.delete(parent)
        with pytest.raises(PermissionError):  # not bob's block
            bob.delete(parent, recursive=True)
        r = amy.delete(parent, recursive=True)
        assert isinstance(r, weft.BlockRemoval)
        assert r.deleted == (parent, child) and r.changed and r.applied
        assert parent not in [b.block_id for b in amy.list()]
        listed = {b.block_id: b.deleted for b in amy.list(include_deleted=True, kind="text")}
        assert listed == {parent: True}
        c = bob.read(child)
        assert c.deleted and c.deleted_by == "agent:amy" and c.content == "a\n"
        with pytest.raises(RuntimeError, match="deleted"):
            bob.append(child, "more\n")
        assert not amy.delete(parent).changed  # deleted already
        amy.undo(parent)
        assert not bob.read(child).deleted
        bob.append(child, "more\n")


def test_create_with_a_permission(root, state):
    with weft.Kernel(root, state=state, agent="amy") as amy, \
            weft.Kernel(root, state=state, agent="bob") as bob:
        fixed = amy.create("system", content="rules\n", permission="read_only").block_id
        assert bob.read(fixed).permission == "read_only"
        with pytest.raises(PermissionError):
            bob.append(fixed, "x\n")
        log = amy.create("tool", kind="tool_result", content="1\n",
                         permission="append_only").block_id
        bob.append(log, "2\n")
        with pytest.raises(PermissionError):
            bob.edit(log, [weft.LineDelete(0, 1)])
        assert bob.read(log).content == "1\n2\n"
        with pytest.raises(ValueError):
            amy.create("user", permission="whatever")


# ---------------------------------------------------------------- memory blocks


def test_memory_blocks(kernel):
    w = kernel.memory_create("scratch", {"type": "text"}, description="notes to self")
    assert w.block_id == "memory:tester/scratch"
    kernel.memory_append("scratch", "first\n")
    kernel.memory_append("scratch", "second\n")
    m = kernel.memory_read("scratch")
    assert isinstance(m, weft.MemoryContent)
    assert "first" in m.rendered and "second" in m.rendered
    assert m.description == "notes to self"
    kernel.memory_update("scratch", "replaced\n")
    assert "first" not in kernel.memory_read("scratch").rendered
    assert "memory:tester/scratch" in [s.block_id for s in kernel.list(kind="memory")]
    with pytest.raises(weft.BlockNotFoundError):
        kernel.memory_read("nothing-here")
    with pytest.raises(FileExistsError):
        kernel.memory_create("scratch", {"type": "text"})


# ---------------------------------------------------------------- errors


def test_missing_blocks_raise_block_not_found(kernel):
    with pytest.raises(weft.BlockNotFoundError) as info:
        kernel.read("main/tester/42")
    assert isinstance(info.value, FileNotFoundError)
    assert isinstance(info.value, KeyError)
    assert "main/tester/42" in str(info.value)
    with pytest.raises(KeyError):
        kernel.append("main/tester/42", "x")
    with pytest.raises(ValueError):  # not an id at all
        kernel.read("not an id")
    with pytest.raises(FileNotFoundError):
        kernel.create("user", parent_id="main/tester/42")


def test_rules_deny_and_approvals_are_a_field(root, state):
    (root / "weft.toml").write_text(
        '[permissions]\nrules = [\n'
        '  { glob = "locked/**", level = "read_only" },\n'
        '  { glob = "review/**", level = "human" },\n]\n')
    (root / "locked").mkdir()
    (root / "locked" / "a.txt").write_text("fixed\n")
    (root / "review").mkdir()
    (root / "review" / "b.txt").write_text("draft\n")
    with weft.Kernel(root, state=state, agent="agent1") as k:
        with pytest.raises(PermissionError):
            k.append("file:locked/a.txt", "more\n")
        w = k.append("file:review/b.txt", "more\n")
        assert w.pending_approval and w.pending_approval.startswith("apr_")
        assert not w.applied
        assert (root / "review" / "b.txt").read_text() == "draft\n"


def test_read_only_memory_fields_raise_permission_error(kernel):
    w = kernel.memory_create("fixed", {"type": "map", "fields": [
        {"name": "a", "type": "text", "read_only": True}, {"name": "b", "type": "text"}]})
    assert w.block_id == "memory:tester/fixed"
    kernel.memory_update("fixed", "free", field="b")
    with pytest.raises(PermissionError):
        kernel.memory_update("fixed", "x", field="a")
    assert "free" in kernel.memory_read("fixed").rendered


def test_closed_kernel_raises(root, state):
    k = weft.Kernel(root, state=state)
    assert not k.closed and k.is_kernel and k.root == str(root.resolve())
    k.close()
    k.close()  # idempotent
    assert k.closed and "closed" in repr(k)
    with pytest.raises(RuntimeError, match="closed"):
        k.create("user")


def test_bad_roots(tmp_path):
    with pytest.raises(FileNotFoundError):
        weft.Kernel(tmp_path / "missing", state=tmp_path / "s")
    (tmp_path / "file").write_text("")
    with pytest.raises(NotADirectoryError):
        weft.Kernel(tmp_path / "file", state=tmp_path / "s")
    with pytest.raises(ValueError):
        weft.Kernel(tmp_path, state=tmp_path / "s", agent="")


# ---------------------------------------------------------------- persistence and sharing


def test_blocks_and_undo_survive_a_restart(root, state):
    with weft.Kernel(root, state=state, agent="keeper") as k:
        parent = k.create("user", content="kept\n").block_id
        child = k.create("model", parent_id=parent).block_id
        k.append(child, "streamed ")
        k.append(child, "text")  # still buffered when the kernel closes
        k.edit(parent, [weft.LineInsert(1, "edited\n")])
    with weft.Kernel(root, state=state, agent="keeper") as k:
        assert k.read(child).content == "streamed text"
        assert k.read(child).parent_id == parent
        assert k.read(parent).content == "kept\nedited\n"
        k.undo(parent)
        assert k.read(parent).content == "kept\n"
        assert k.create("user").block_id == "main/keeper/3"  # seqs are never reused


def test_two_kernels_share_one_root(root, state):
    with weft.Kernel(root, state=state, agent="first") as a:
        with weft.Kernel(root, state=state, agent="second") as b:
            assert a.is_kernel and not b.is_kernel
            w = b.create("user", content="from b\n")
            assert w.block_id == "main/second/1"
            assert a.read(w.block_id).content == "from b\n"
            a.append(w.block_id, "from a\n")
            assert b.read(w.block_id).content == "from b\nfrom a\n"
        # b is gone; a still works
        assert a.read(w.block_id).line_count == 2
    # The kernel went with a: a new front end becomes it.
    with weft.Kernel(root, state=state, agent="third") as c:
        assert c.is_kernel
        assert c.read("main/second/1").content == "from b\nfrom a\n"


def test_threads_share_a_kernel(kernel):
    b = kernel.create("user").block_id
    errors: list[BaseException] = []

    def work(n: int) -> None:
        try:
            for i in range(20):
                kernel.append(b, f"{n}:{i}\n")
        except BaseException as error:  # noqa: BLE001
            errors.append(error)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert kernel.read(b).line_count == 80


def _mcp_call(proc: subprocess.Popen, request_id: int, method: str, params: dict) -> dict:
    assert proc.stdin and proc.stdout
    proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method,
                                 "params": params}) + "\n")
    proc.stdin.flush()
    while True:
        line = proc.stdout.readline()
        assert line, "weft mcp closed its output"
        reply = json.loads(line)
        if reply.get("id") == request_id:
            return reply


def test_a_weft_mcp_on_the_same_root_sees_python_blocks(root, state):
    binary = weft_binary()
    if not binary.exists():
        pytest.skip(f"the weft executable is not built at {binary}")
    with weft.Kernel(root, state=state, agent="py") as k:
        w = k.create("user", content="shared with mcp\n")
        proc = subprocess.Popen([str(binary), "mcp", "--root", str(root), "--state", str(state)],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        try:
            _mcp_call(proc, 1, "initialize", {
                "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "mcpagent", "version": "1"}})
            proc.stdin.write(json.dumps({"jsonrpc": "2.0",
                                         "method": "notifications/initialized"}) + "\n")
            proc.stdin.flush()
            read = _mcp_call(proc, 2, "tools/call", {"name": "block_read",
                                                     "arguments": {"block_id": w.block_id,
                                                                   "line_numbers": False}})
            assert not read["result"].get("isError"), read
            assert read["result"]["structuredContent"]["content"] == "shared with mcp\n"
            made = _mcp_call(proc, 3, "tools/call", {
                "name": "block_create",
                "arguments": {"role": "model", "kind": "text", "content": "from mcp\n",
                              "parent_id": w.block_id}})
            new_id = made["result"]["structuredContent"]["block_id"]
            assert new_id == "main/mcpagent/1"
            assert k.read(new_id).content == "from mcp\n"
            assert [s.block_id for s in k.list(parent_id=w.block_id)] == [new_id]
        finally:
            proc.stdin.close()
            proc.wait(timeout=30)
