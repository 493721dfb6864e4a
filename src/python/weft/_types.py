"""Result and option types of the weft filesystem protocol (seed 004).

Every result is a frozen, slotted dataclass: immutable, hashable, comparable
and cheap, so callers can keep it in session state. The compiled extension
(weft._weft) builds these objects; user code may build them too (for example
a FilesystemSnapshot read back from storage, to restore in a new process).
"""

from __future__ import annotations

import datetime as _dt
import json as _json
import os as _os
import uuid as _uuid
from dataclasses import dataclass
from typing import Any, Literal

WriteMode = Literal["create", "overwrite", "append"]

_UTC = _dt.timezone.utc


@dataclass(slots=True, frozen=True)
class FileStat:
    """Metadata for a file or directory (path relative to the root, "." = root)."""

    path: str
    is_file: bool
    is_directory: bool
    size_bytes: int
    created_at: _dt.datetime | None = None
    modified_at: _dt.datetime | None = None
    # "file", "directory", "symlink", "fifo", "socket", "char_device",
    # "block_device" or "other" (links are never followed).
    type: str = "file"
    symlink_target: str | None = None  # a symlink's target as stored


@dataclass(slots=True, frozen=True)
class FileEntry:
    """One directory listing entry. A symlink (host backends) is neither file nor directory.

    `name` may hold control characters; escape it before printing it in text.
    """

    name: str
    path: str
    is_file: bool
    is_directory: bool
    type: str = "file"  # as FileStat.type
    symlink_target: str | None = None


@dataclass(slots=True, frozen=True)
class GlobMatch:
    """One glob result; `path` is relative to the root."""

    path: str
    is_file: bool


@dataclass(slots=True, frozen=True)
class GrepMatch:
    """First match of the pattern on one line.

    line_number is 1-based; line_content excludes the line terminator;
    match_start/match_end index line_content as a Python str.
    """

    path: str
    line_number: int
    line_content: str
    match_start: int
    match_end: int
    # A line over the line cap (256 KiB by default) is shown as a window around the match:
    # its whole length in bytes, and where line_content starts in it.
    line_length_bytes: int = 0
    line_content_offset_byte: int = 0


@dataclass(slots=True, frozen=True)
class ReadResult:
    """A page of lines of a text file (content keeps line endings exactly)."""

    content: str
    path: str
    total_lines: int
    offset: int
    limit: int
    truncated: bool
    # Lines in `content` (a page stops early after 1 MiB), and the lines cut
    # at the line cap (256 KiB by default) as (0-based line, whole length in bytes).
    lines: int = 0
    cut_lines: tuple[tuple[int, int], ...] = ()


@dataclass(slots=True, frozen=True)
class ReadBytesResult:
    """A byte range of a file; size_bytes is the whole file's size."""

    content: bytes
    path: str
    size_bytes: int
    offset: int
    limit: int
    truncated: bool


@dataclass(slots=True, frozen=True)
class WriteResult:
    """Confirmation of a write: bytes written by this call and the mode used."""

    path: str
    bytes_written: int
    mode: WriteMode


@dataclass(slots=True, frozen=True)
class HydrateStats:
    """What hydrate_from_host copied: files, bytes, and entries skipped (symlinks, ...)."""

    files: int
    bytes: int
    skipped: int


@dataclass(slots=True, frozen=True)
class ExecResult:
    """Outcome of SandboxWorkspace.exec().

    exit_code is 128+N when the command was killed by signal N; stdout/stderr
    are decoded as UTF-8 (undecodable bytes replaced) and bounded by
    max_output_bytes (truncated tells).
    """

    exit_code: int
    stdout: str
    stderr: str
    timed_out: bool
    truncated: bool

    @property
    def ok(self) -> bool:
        """True when the command ran to completion and exited with status 0."""
        return self.exit_code == 0 and not self.timed_out


@dataclass(slots=True, frozen=True)
class FilesystemLimits:
    """Per-instance limits; the defaults are the seed's recommended values."""

    max_write_chars: int = 48_000  # code points per write(); bytes per write_bytes()
    max_path_depth: int = 16  # segments in a path
    max_segment_length: int = 80  # bytes per path segment
    default_read_lines: int = 2_000  # read() lines when limit is None
    max_grep_matches: int = 1_000  # default and cap of grep(max_matches=)
    max_read_file_bytes: int = 256 << 20  # largest file read()/grep() loads


@dataclass(slots=True, frozen=True)
class HostMount:
    """A host file or directory to copy into a workspace (hydration).

    host_path is absolute, or relative to the first allowed root holding it.
    mount_path is where it lands in the workspace; None means the same
    relative path for a relative host_path ("src/" lands in "src") and the
    root for an absolute one. Globs are matched against paths relative to
    host_path ("*.py" only at its top level, "**/*.py" at any depth); a file is copied when it matches some include_glob (or there is
    none) and no exclude_glob. max_bytes bounds the total copied.
    """

    host_path: str | _os.PathLike[str]
    mount_path: str | None = None
    include_glob: tuple[str, ...] = ()
    exclude_glob: tuple[str, ...] = ()
    max_bytes: int | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "host_path", _os.fspath(self.host_path))
        for name in ("include_glob", "exclude_glob"):
            value = getattr(self, name)
            object.__setattr__(self, name, (value,) if isinstance(value, str) else tuple(value))


@dataclass(slots=True, frozen=True)
class FilesystemSnapshot:
    """Immutable capture of filesystem state, storable in session state.

    commit_ref is a git commit id (host and sandbox backends) or a version id
    "mem-N" (in-memory). git_dir is the external snapshot store, which lets a
    new process restore given only this record. Strings are accepted for
    snapshot_id (a UUID) and created_at (ISO-8601); a naive created_at is UTC.
    """

    snapshot_id: _uuid.UUID
    created_at: _dt.datetime
    commit_ref: str
    root_path: str
    git_dir: str | None = None
    tag: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.snapshot_id, _uuid.UUID):
            object.__setattr__(self, "snapshot_id", _uuid.UUID(str(self.snapshot_id)))
        created = self.created_at
        if isinstance(created, str):
            created = _dt.datetime.fromisoformat(created.replace("Z", "+00:00"))
        if not isinstance(created, _dt.datetime):
            raise TypeError(f"created_at must be a datetime, not {type(created).__name__}")
        if created.tzinfo is None:
            created = created.replace(tzinfo=_UTC)
        object.__setattr__(self, "created_at", created)

    def to_dict(self) -> dict[str, str | None]:
        """A JSON-ready dict (same fields and formats as the C++ snapshot_to_json)."""
        stamp = self.created_at.astimezone(_UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        return {"snapshot_id": str(self.snapshot_id), "created_at": stamp,
                "commit_ref": self.commit_ref, "root_path": self.root_path,
                "git_dir": self.git_dir, "tag": self.tag}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> FilesystemSnapshot:
        """Inverse of to_dict(); ValueError names a missing field."""
        try:
            return cls(snapshot_id=data["snapshot_id"], created_at=data["created_at"],
                       commit_ref=data["commit_ref"], root_path=data["root_path"],
                       git_dir=data.get("git_dir"), tag=data.get("tag"))
        except KeyError as error:
            raise ValueError(f"snapshot record lacks field {error.args[0]!r}") from None

    def to_json(self) -> str:
        """The record as a JSON object string."""
        return _json.dumps(self.to_dict(), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> FilesystemSnapshot:
        """Parses to_json() output (or the CLI's `weft fs snapshot --json`)."""
        return cls.from_dict(_json.loads(text))


class SnapshotError(RuntimeError):
    """Base class for snapshot errors (taking or restoring a snapshot failed)."""


class SnapshotRestoreError(SnapshotError):
    """Failed to restore from a snapshot (unknown, foreign or unreadable record).

    The workspace is left as it was before the call.
    """
