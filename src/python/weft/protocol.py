"""typing.Protocol classes of seed 004, for type hints and isinstance checks.

weft's own backends (InMemoryFilesystem, HostFilesystem, SandboxWorkspace)
satisfy them; so can a test double such as a mock filesystem.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from weft._types import (FileEntry, FileStat, FilesystemSnapshot, GlobMatch, GrepMatch,
                         ReadBytesResult, ReadResult, WriteMode, WriteResult)


@runtime_checkable
class Filesystem(Protocol):
    """Unified filesystem protocol for workspace operations."""

    def read(self, path: str, *, offset: int = 0, limit: int | None = None,
             encoding: str = "utf-8") -> ReadResult: ...

    def read_bytes(self, path: str, *, offset: int = 0,
                   limit: int | None = None) -> ReadBytesResult: ...

    def exists(self, path: str) -> bool: ...

    def stat(self, path: str) -> FileStat: ...

    def list(self, path: str = ".") -> Sequence[FileEntry]: ...

    def glob(self, pattern: str, *, path: str = ".") -> Sequence[GlobMatch]: ...

    def grep(self, pattern: str, *, path: str = ".", glob: str | None = None,
             max_matches: int | None = None) -> Sequence[GrepMatch]: ...

    def write(self, path: str, content: str, *, mode: WriteMode = "overwrite",
              create_parents: bool = True) -> WriteResult: ...

    def write_bytes(self, path: str, content: bytes, *, mode: WriteMode = "overwrite",
                    create_parents: bool = True) -> WriteResult: ...

    def delete(self, path: str, *, recursive: bool = False) -> None: ...

    def mkdir(self, path: str, *, parents: bool = True, exist_ok: bool = True) -> None: ...

    @property
    def root(self) -> str: ...

    @property
    def read_only(self) -> bool: ...


@runtime_checkable
class SnapshotableFilesystem(Filesystem, Protocol):
    """Filesystem that supports snapshot and restore operations."""

    def snapshot(self, *, tag: str | None = None) -> FilesystemSnapshot: ...

    def restore(self, snapshot: FilesystemSnapshot) -> None: ...


@runtime_checkable
class WorkspaceSection(Protocol):
    """Something that owns a workspace filesystem (seed: a prompt section)."""

    @property
    def filesystem(self) -> Filesystem: ...
