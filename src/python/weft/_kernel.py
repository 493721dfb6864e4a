"""weft.Kernel: a workspace root's blocks (conversation, file and memory blocks) from Python.

    import weft
    with weft.Kernel("/path/to/project", agent="planner") as k:
        root = k.create("user", content="Plan the release\\n")
        reply = k.create("model", parent_id=root.block_id)
        k.append(reply.block_id, "First, ...\\n")
        print(k.read(reply.block_id).content)

One kernel runs per root (the first weft process on it; see docs/kernel.md):
a weft.Kernel becomes that kernel or forwards its calls to the one a
`weft mcp` or another weft.Kernel already runs, so they all see the same
blocks. Every method is one of the kernel's block tools (block_create,
block_read, ...), with the tools' arguments and rules; changes are attributed
to "agent:<agent>". Results are the frozen dataclasses below, built from the
tool's structuredContent.

Errors: a missing block raises BlockNotFoundError (a FileNotFoundError and a
KeyError); PermissionError (the block's permission, weft.toml's rules),
FileExistsError, ValueError (bad arguments, limits) and RuntimeError (nothing
to undo, an expected_text that no longer matches, the kernel unreachable)
follow the filesystem table of docs/python.md. A change that needs a
person's approval is not an error: its result has pending_approval set.

Thread safety: a Kernel may be shared between threads; every call releases
the GIL while the kernel works.
"""

from __future__ import annotations

import json as _json
import os as _os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Union


class BlockNotFoundError(FileNotFoundError, KeyError):
    """The block (or memory label, or parent) named does not exist."""

    def __str__(self) -> str:  # OSError's, not KeyError's repr of the message
        return FileNotFoundError.__str__(self)


# ---------------------------------------------------------------- results


@dataclass(slots=True, frozen=True)
class BlockWrite:
    """What a write did. pending_approval is set (and applied False) when weft.toml's rules
    send the change to a person first: the block stays unchanged until it is approved.
    buffered_bytes (append) counts text accepted but not committed yet (readers see it)."""

    block_id: str
    version: str
    changed: bool
    status: str
    applied: bool = True
    pending_approval: str | None = None
    buffered_bytes: int = 0


@dataclass(slots=True, frozen=True)
class PatchResult:
    """apply_patch(): success False (with one error per failing hunk) leaves the block
    unchanged; a dry run's diff shows what the patch would do."""

    block_id: str
    success: bool
    dry_run: bool = False
    errors: tuple[str, ...] = ()
    version: str | None = None
    applied: bool = False
    pending_approval: str | None = None
    diff: str | None = None


@dataclass(slots=True, frozen=True)
class BlockContent:
    """read(): the lines asked for (numbered "N\\t" when line_numbers), the block's
    line_count, and range, the [start, end) lines content holds."""

    block_id: str
    parent_id: str | None
    role: str
    kind: str
    status: str
    version: str
    line_count: int
    range: tuple[int, int]
    content: str
    metadata: dict[str, Any] = field(default_factory=dict, hash=False)
    dirty: bool = False
    permission: str = "read_write"
    deleted: bool = False
    deleted_by: str | None = None


@dataclass(slots=True, frozen=True)
class BlockRemoval:
    """delete(): the blocks deleted (the block, then those under it); empty with changed
    False when it was deleted already. pending_approval is set (applied False) when weft.toml's
    rules send a file's delete to a person first."""

    block_id: str
    deleted: tuple[str, ...]
    changed: bool
    applied: bool = True
    pending_approval: str | None = None


@dataclass(slots=True, frozen=True)
class BlockMatch:
    """One match: its 0-based line, content = that line with the context lines around it
    (starting at first_line), and the match's byte columns in its line."""

    line: int
    content: str
    first_line: int
    match_start: int
    match_end: int


@dataclass(slots=True, frozen=True)
class BlockSearch:
    """search(): literal is True when the query was not a valid RE2 regex (note says why)."""

    block_id: str
    matches: tuple[BlockMatch, ...]
    literal: bool = False
    truncated: bool = False
    note: str | None = None


@dataclass(slots=True, frozen=True)
class BlockSummary:
    """One block of list(): summary is the start of its text."""

    block_id: str
    parent_id: str | None
    role: str
    kind: str
    status: str
    path: str
    summary: str
    version: str
    dirty: bool = False
    depth: int = 1
    deleted: bool = False


@dataclass(slots=True, frozen=True)
class BlockListing:
    """list(): the blocks (iterable, sized) and whether more matched than were listed."""

    blocks: tuple[BlockSummary, ...]
    truncated: bool = False

    def __iter__(self) -> Iterator[BlockSummary]:
        return iter(self.blocks)

    def __len__(self) -> int:
        return len(self.blocks)


@dataclass(slots=True, frozen=True)
class KernelSearchHit:
    """The matches of search_all() in one block."""

    block_id: str
    kind: str
    role: str
    matches: tuple[BlockMatch, ...]
    truncated: bool = False
    path: str | None = None


@dataclass(slots=True, frozen=True)
class KernelSearch:
    """search_all(): hits per block; truncated when max_blocks stopped the search."""

    results: tuple[KernelSearchHit, ...]
    literal: bool = False
    truncated: bool = False
    match_count: int = 0
    blocks_searched: int = 0
    note: str | None = None


@dataclass(slots=True, frozen=True)
class BlockChange:
    """One change of history(), newest first."""

    version: str
    author: str
    message: str
    timestamp: int


@dataclass(slots=True, frozen=True)
class MemoryContent:
    """memory_read(): the block rendered as an agent sees it, and its schema."""

    block_id: str
    label: str
    rendered: str
    version: str
    schema: Any = field(default=None, hash=False)
    description: str = ""
    permission: str = "read_write"


# ---------------------------------------------------------------- edit operations


@dataclass(slots=True, frozen=True)
class LineInsert:
    """edit(): insert whole lines before `line` (0-based; line_count: at the end)."""

    line: int
    content: str

    def to_json(self) -> dict[str, Any]:
        return {"op": "insert", "line": self.line, "content": self.content}


@dataclass(slots=True, frozen=True)
class LineDelete:
    """edit(): delete lines [start_line, end_line)."""

    start_line: int
    end_line: int

    def to_json(self) -> dict[str, Any]:
        return {"op": "delete", "start_line": self.start_line, "end_line": self.end_line}


@dataclass(slots=True, frozen=True)
class LineReplace:
    """edit(): replace lines [start_line, end_line) with content; with expected_text the
    edit fails (RuntimeError) unless those lines are exactly it."""

    start_line: int
    end_line: int
    content: str
    expected_text: str | None = None

    def to_json(self) -> dict[str, Any]:
        op: dict[str, Any] = {"op": "replace", "start_line": self.start_line,
                              "end_line": self.end_line, "content": self.content}
        if self.expected_text is not None:
            op["expected_text"] = self.expected_text
        return op


LineEdit = Union[LineInsert, LineDelete, LineReplace, Mapping[str, Any]]


# ---------------------------------------------------------------- conversions


def _opt_str(value: Any) -> str | None:
    return value if isinstance(value, str) and value != "" else None


def _write(s: Mapping[str, Any]) -> BlockWrite:
    return BlockWrite(block_id=s.get("block_id", ""), version=s.get("version", ""),
                      changed=bool(s.get("changed", False)), status=s.get("status", ""),
                      applied=bool(s.get("applied", not s.get("pending_approval"))),
                      pending_approval=_opt_str(s.get("pending_approval")),
                      buffered_bytes=int(s.get("buffered_bytes", 0)))


def _match(m: Mapping[str, Any]) -> BlockMatch:
    return BlockMatch(line=int(m.get("line", 0)), content=m.get("content", ""),
                      first_line=int(m.get("first_line", m.get("line", 0))),
                      match_start=int(m.get("match_start", 0)),
                      match_end=int(m.get("match_end", 0)))


def _summary(b: Mapping[str, Any]) -> BlockSummary:
    return BlockSummary(block_id=b.get("block_id", ""), parent_id=_opt_str(b.get("parent_id")),
                        role=b.get("role", ""), kind=b.get("kind", ""),
                        status=b.get("status", ""), path=b.get("path", "") or "",
                        summary=b.get("summary", ""), version=b.get("version", ""),
                        dirty=bool(b.get("dirty", False)), depth=int(b.get("depth", 1)),
                        deleted=bool(b.get("deleted", False)))


def _edit_op(op: Any) -> dict[str, Any]:
    if isinstance(op, (LineInsert, LineDelete, LineReplace)):
        return op.to_json()
    if isinstance(op, Mapping):
        return dict(op)
    raise TypeError("an edit operation is a weft.LineInsert, LineDelete, LineReplace or a "
                    f"dict with 'op', not {type(op).__name__}")


def _args(**kwargs: Any) -> dict[str, Any]:
    return {k: v for k, v in kwargs.items() if v is not None}


# ---------------------------------------------------------------- the kernel


class Kernel:
    """The blocks of the workspace at `root` (an existing directory).

    state: the root's state directory (default: $XDG_STATE_HOME/weft/<hash of the root>,
    the one `weft mcp` uses, so both share one kernel); processes sharing a root must use
    the same one. agent: the client name; changes are attributed to "agent:<agent>", and
    undo()/redo() act on this agent's own changes. Raises FileNotFoundError /
    NotADirectoryError for a bad root, RuntimeError when the kernel cannot start.
    """

    def __init__(self, root: str | _os.PathLike[str], state: str | _os.PathLike[str] | None = None,
                 agent: str = "python") -> None:
        from weft._weft import _KernelLink  # type: ignore[attr-defined]  # private, unstubbed

        self._link = _KernelLink(root, state, agent)

    # ---- plumbing

    def _call(self, tool: str, arguments: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
        text, structured = self._link.call(tool, _json.dumps(arguments, ensure_ascii=False))
        parsed = _json.loads(structured)
        return text, parsed if isinstance(parsed, dict) else {}

    def call_tool(self, name: str, arguments: Mapping[str, Any] | None = None
                  ) -> tuple[str, dict[str, Any]]:
        """Runs any of the kernel's tools by name: (its text, its structuredContent)."""
        return self._call(name, dict(arguments or {}))

    @property
    def root(self) -> str:
        """The workspace root (absolute)."""
        return self._link.root

    @property
    def agent(self) -> str:
        return self._link.agent

    @property
    def is_kernel(self) -> bool:
        """True while this process runs the root's kernel (False: it forwards to another)."""
        return self._link.is_kernel

    @property
    def closed(self) -> bool:
        return self._link.closed

    def close(self) -> None:
        """Closes the connection; when this process ran the kernel, its pending appends are
        stored and another weft process on the root takes the kernel over. Idempotent."""
        self._link.close()

    def __enter__(self) -> Kernel:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        if self.closed:
            return "Kernel(<closed>)"
        return f"Kernel(root={self.root!r}, agent={self.agent!r})"

    # ---- lifecycle

    def create(self, role: str = "user", kind: str = "text", content: str | None = None, *,
               parent_id: str | None = None, metadata: Mapping[str, Any] | None = None,
               cell: str | None = None, permission: str | None = None) -> BlockWrite:
        """A new conversation block <cell>/<agent>/<seq> (role user, model, system or tool;
        kind text, thinking, tool_call or tool_result), or kind "file" with metadata
        {"path": ...}: a new file through the rules. permission (conversation blocks) binds
        every later write: read_only, append_only, read_write (the default), partner, human
        or admin."""
        return _write(self._call("block_create", _args(
            role=role, kind=kind, content=content, parent_id=parent_id,
            metadata=dict(metadata) if metadata is not None else None, cell=cell,
            permission=permission))[1])

    def delete(self, block_id: str, *, recursive: bool = False) -> BlockRemoval:
        """Deletes a block. A conversation block is marked deleted (read() still shows it,
        list() leaves it out, undo() by this agent restores it); one with children needs
        recursive=True. A memory block is deleted; a file block deletes its file through the
        rules."""
        s = self._call("block_delete", {"block_id": block_id, "recursive": recursive})[1]
        return BlockRemoval(block_id=s.get("block_id", block_id),
                            deleted=tuple(s.get("deleted", ())),
                            changed=bool(s.get("changed", False)),
                            applied=bool(s.get("applied", not s.get("pending_approval"))),
                            pending_approval=_opt_str(s.get("pending_approval")))

    def status(self, block_id: str, status: str) -> BlockWrite:
        """Sets a conversation block's status: pending, running, done or error."""
        return _write(self._call("block_status", {"block_id": block_id, "status": status})[1])

    # ---- content writes

    def append(self, block_id: str, text: str) -> BlockWrite:
        """Appends text (batched for conversation blocks; readers see it at once)."""
        return _write(self._call("block_append", {"block_id": block_id, "text": text})[1])

    def edit(self, block_id: str, operations: Iterable[LineEdit]) -> BlockWrite:
        """Line edits, all or nothing, each addressing the lines as they were before the
        batch (0-based, exclusive ends)."""
        ops = [_edit_op(op) for op in operations]
        return _write(self._call("block_edit", {"block_id": block_id, "operations": ops})[1])

    def splice(self, block_id: str, offset: int, delete_count: int, insert: str = "") -> BlockWrite:
        """Replaces delete_count bytes at byte offset with insert."""
        return _write(self._call("block_splice", _args(
            block_id=block_id, offset=offset, delete_count=delete_count,
            insert=insert or None))[1])

    def apply_patch(self, block_id: str, patch: str, *, dry_run: bool = False) -> PatchResult:
        """Applies a unified diff; a patch that does not apply is success=False, not an error."""
        s = self._call("block_apply_patch",
                       {"block_id": block_id, "patch": patch, "dry_run": dry_run})[1]
        return PatchResult(block_id=s.get("block_id", block_id),
                           success=bool(s.get("success", False)),
                           dry_run=bool(s.get("dry_run", dry_run)),
                           errors=tuple(s.get("errors", ())),
                           version=_opt_str(s.get("version")),
                           applied=bool(s.get("applied", False)),
                           pending_approval=_opt_str(s.get("pending_approval")),
                           diff=s.get("diff"))

    # ---- reading

    def read(self, block_id: str, *, line_numbers: bool = False,
             range: tuple[int, int] | None = None) -> BlockContent:  # noqa: A002
        """The block's text (lines [start, end) with range) and what it is."""
        args: dict[str, Any] = {"block_id": block_id, "line_numbers": line_numbers}
        if range is not None:
            start, end = range
            args["range"] = {"start": start, "end": end}
        s = self._call("block_read", args)[1]
        shown = s.get("range") or {}
        return BlockContent(block_id=s.get("block_id", block_id),
                            parent_id=_opt_str(s.get("parent_id")), role=s.get("role", ""),
                            kind=s.get("kind", ""), status=s.get("status", ""),
                            version=s.get("version", ""), line_count=int(s.get("line_count", 0)),
                            range=(int(shown.get("start", 0)), int(shown.get("end", 0))),
                            content=s.get("content", ""), metadata=s.get("metadata") or {},
                            dirty=bool(s.get("dirty", False)),
                            permission=s.get("permission", "read_write"),
                            deleted=bool(s.get("deleted", False)),
                            deleted_by=_opt_str(s.get("deleted_by")))

    def search(self, block_id: str, query: str, *, context_lines: int | None = None,
               max_matches: int | None = None) -> BlockSearch:
        """RE2 regex search in one block (taken literally when not a valid regex)."""
        s = self._call("block_search", _args(block_id=block_id, query=query,
                                             context_lines=context_lines,
                                             max_matches=max_matches))[1]
        return BlockSearch(block_id=s.get("block_id", block_id),
                           matches=tuple(_match(m) for m in s.get("matches", ())),
                           literal=bool(s.get("literal", False)),
                           truncated=bool(s.get("truncated", False)), note=_opt_str(s.get("note")))

    def list(self, *, parent_id: str | None = None, kind: str | None = None,
             status: str | None = None, path_prefix: str | None = None,
             depth: int | None = None, include_deleted: bool | None = None) -> BlockListing:
        """Children of parent_id (else the roots), this agent's memory blocks (kind "memory"),
        or file blocks (kind "file" or path_prefix); deleted blocks with include_deleted."""
        s = self._call("block_list", _args(parent_id=parent_id, kind=kind, status=status,
                                           path_prefix=path_prefix, depth=depth,
                                           include_deleted=include_deleted))[1]
        return BlockListing(blocks=tuple(_summary(b) for b in s.get("blocks", ())),
                            truncated=bool(s.get("truncated", False)))

    def search_all(self, query: str, *, kinds: Sequence[str] | None = None,
                   path_prefix: str | None = None, context_lines: int | None = None,
                   max_matches_per_block: int | None = None,
                   max_blocks: int | None = None) -> KernelSearch:
        """Searches every block (kernel_search), optionally only some kinds or paths."""
        s = self._call("kernel_search", _args(
            query=query, kinds=list(kinds) if kinds is not None else None,
            path_prefix=path_prefix, context_lines=context_lines,
            max_matches_per_block=max_matches_per_block, max_blocks=max_blocks))[1]
        hits = tuple(
            KernelSearchHit(block_id=h.get("block_id", ""), kind=h.get("kind", ""),
                            role=h.get("role", ""),
                            matches=tuple(_match(m) for m in h.get("matches", ())),
                            truncated=bool(h.get("truncated", False)),
                            path=_opt_str(h.get("path")))
            for h in s.get("results", ()))
        return KernelSearch(results=hits, literal=bool(s.get("literal", False)),
                            truncated=bool(s.get("truncated", False)),
                            match_count=int(s.get("match_count", 0)),
                            blocks_searched=int(s.get("blocks_searched", 0)),
                            note=_opt_str(s.get("note")))

    # ---- history

    def undo(self, block_id: str) -> BlockWrite:
        """Reverts this agent's newest change to the block (RuntimeError: nothing to undo)."""
        return _write(self._call("block_undo", {"block_id": block_id})[1])

    def redo(self, block_id: str) -> BlockWrite:
        return _write(self._call("block_redo", {"block_id": block_id})[1])

    def history(self, block_id: str, *, limit: int | None = None) -> tuple[BlockChange, ...]:
        """The block's changes, newest first."""
        s = self._call("block_history", _args(block_id=block_id, limit=limit))[1]
        return tuple(BlockChange(version=c.get("version", ""), author=c.get("author", ""),
                                 message=c.get("message", "") or "",
                                 timestamp=int(c.get("timestamp", 0)))
                     for c in s.get("changes", ()))

    def diff(self, block_id: str, *, from_version: str | None = None,
             to_version: str | None = None) -> str:
        """A unified diff between two versions (default: the last change); "" when equal."""
        args = _args(block_id=block_id)
        if from_version is not None:
            args["from"] = from_version
        if to_version is not None:
            args["to"] = to_version
        return self._call("block_diff", args)[1].get("diff", "")

    def rollback(self, block_id: str, version: str) -> BlockWrite:
        """Makes the block what it was at `version`, as a new change."""
        return _write(self._call("block_rollback", {"block_id": block_id, "version": version})[1])

    # ---- memory blocks (this agent's: memory:<agent>/<label>)

    def memory_create(self, label: str, schema: Mapping[str, Any] | str, *,
                      description: str | None = None,
                      initial_text: str | None = None) -> BlockWrite:
        """A memory block with a schema ({"type": "text"}, a map, list, log or composite)."""
        return _write(self._call("memory_create", _args(
            label=label, schema=dict(schema) if isinstance(schema, Mapping) else schema,
            description=description, initial_text=initial_text))[1])

    def memory_read(self, label: str) -> MemoryContent:
        s = self._call("memory_read", {"label": label})[1]
        return MemoryContent(block_id=s.get("block_id", ""), label=s.get("label", label),
                             rendered=s.get("rendered", ""), version=s.get("version", ""),
                             schema=s.get("schema"), description=s.get("description", "") or "",
                             permission=s.get("permission", "read_write"))

    def memory_update(self, label: str, value: Any, *, field: str | None = None,
                      section: str | None = None) -> BlockWrite:
        """Replaces a field's value (or the text of a text schema or section)."""
        return _write(self._call("memory_update", _args(label=label, field=field, section=section)
                                 | {"value": value})[1])

    def memory_append(self, label: str, item: Any, *, field: str | None = None,
                      section: str | None = None) -> BlockWrite:
        """Appends to a text, or pushes item onto a list / log."""
        return _write(self._call("memory_append", _args(label=label, field=field, section=section)
                                 | {"item": item})[1])
