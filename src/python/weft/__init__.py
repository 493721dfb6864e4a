"""weft: the workspace filesystem protocol of seed 004, backed by weft's C++ fs layer.

    import weft
    fs = weft.InMemoryFilesystem()                 # or weft.HostFilesystem("/path/to/root")
    fs.write("notes.txt", "hello\n")
    snap = fs.snapshot(tag="before")
    fs.restore(snap)

Backends: InMemoryFilesystem, HostFilesystem (confined to a directory, git
snapshots outside it) and SandboxWorkspace (an overlay directory where exec()
runs commands under bubblewrap). Errors are the built-in exceptions of the
seed's table (FileNotFoundError, IsADirectoryError, NotADirectoryError,
PermissionError, FileExistsError, ValueError, RuntimeError) plus
SnapshotError / SnapshotRestoreError (both RuntimeError). Every blocking call
releases the GIL; instances may be shared between threads.

weft.Doc is a CRDT document (Loro's model): root Text, Map, List and Counter
containers, commits, sync through weft binary or Loro JSON updates, versions
(VersionVector, Frontiers), checkout and events (see docs/python.md).

    doc = weft.Doc()
    doc.get_text("title").insert(0, "hello")
    doc.commit()
    other = weft.Doc()
    other.import_(doc.export_updates())
"""

from weft._types import (ExecResult, FileEntry, FileStat, FilesystemLimits, FilesystemSnapshot,
                         GlobMatch, GrepMatch, HostMount, HydrateStats, ReadBytesResult,
                         ReadResult, SnapshotError, SnapshotRestoreError, WriteMode, WriteResult)
from weft._doc import (ID, ChangeMeta, ContainerDiff, DocEvent, Frontiers, IdSpan, ImportStatus,
                       VersionVector)
from weft._weft import (Container, Counter, Doc, HostFilesystem, InMemoryFilesystem, List, Map,
                        NativeFilesystem, SandboxWorkspace, Subscription, Text, UndoManager,
                        sandbox_available)
from weft.protocol import Filesystem, SnapshotableFilesystem, WorkspaceSection
from weft._kernel import (BlockChange, BlockContent, BlockListing, BlockMatch,
                          BlockNotFoundError, BlockRemoval, BlockSearch, BlockSummary, BlockWrite,
                          Kernel,
                          KernelSearch, KernelSearchHit, LineDelete, LineInsert, LineReplace,
                          MemoryContent, PatchResult)

__all__ = [
    "ExecResult", "FileEntry", "FileStat", "Filesystem", "FilesystemLimits",
    "FilesystemSnapshot", "GlobMatch", "GrepMatch", "HostFilesystem", "HostMount",
    "HydrateStats", "InMemoryFilesystem", "NativeFilesystem", "ReadBytesResult", "ReadResult",
    "SandboxWorkspace", "SnapshotError", "SnapshotRestoreError", "SnapshotableFilesystem",
    "WorkspaceSection", "WriteMode", "WriteResult", "sandbox_available",
    # CRDT documents
    "ChangeMeta", "Container", "ContainerDiff", "Counter", "Doc", "DocEvent", "Frontiers", "ID",
    "IdSpan", "ImportStatus", "List", "Map", "Subscription", "Text", "UndoManager",
    "VersionVector",
]
__all__ += [  # weft.Kernel (weft/_kernel.py)
    "BlockChange", "BlockContent", "BlockListing", "BlockMatch", "BlockNotFoundError",
    "BlockRemoval", "BlockSearch", "BlockSummary", "BlockWrite", "Kernel", "KernelSearch", "KernelSearchHit",
    "LineDelete", "LineInsert", "LineReplace", "MemoryContent", "PatchResult",
]
