"""The module surface: exports, result types, exception mapping, other interpreters."""

from __future__ import annotations

import dataclasses
import datetime as dt
import os
import shutil
import subprocess
import sys
import uuid

import pytest

import weft

SEED_EXCEPTIONS = {
    "read missing": (lambda fs: fs.read("missing"), FileNotFoundError),
    "read directory": (lambda fs: fs.read("dir"), IsADirectoryError),
    "list file": (lambda fs: fs.list("file.txt"), NotADirectoryError),
    "escape": (lambda fs: fs.read("../x"), PermissionError),
    "create existing": (lambda fs: fs.write("file.txt", "x", mode="create"), FileExistsError),
    "over limit": (lambda fs: fs.write("big", "x" * 48_001), ValueError),
    "restore unknown": (lambda fs: fs.restore(dataclasses.replace(fs.snapshot(),
                                                                  commit_ref="mem-99999")),
                        RuntimeError),
}


@pytest.mark.parametrize("case", sorted(SEED_EXCEPTIONS))
def test_seed_exception_table(case):
    fs = weft.InMemoryFilesystem()
    fs.mkdir("dir")
    fs.write("file.txt", "x")
    call, expected = SEED_EXCEPTIONS[case]
    with pytest.raises(expected) as info:
        call(fs)
    assert str(info.value), "every error carries a message a person can act on"


def test_os_errors_carry_errno():
    import errno
    fs = weft.InMemoryFilesystem()
    with pytest.raises(FileNotFoundError) as info:
        fs.read("missing.txt")
    assert info.value.errno == errno.ENOENT
    assert "missing.txt" in str(info.value)


def test_exports():
    for name in weft.__all__:
        assert hasattr(weft, name), name
    assert issubclass(weft.SnapshotRestoreError, weft.SnapshotError)
    assert issubclass(weft.SnapshotError, RuntimeError)
    for cls in (weft.InMemoryFilesystem, weft.HostFilesystem, weft.SandboxWorkspace):
        assert issubclass(cls, weft.NativeFilesystem)


def test_backends_satisfy_the_protocols(tmp_path):
    for fs in (weft.InMemoryFilesystem(), weft.HostFilesystem(str(tmp_path))):
        assert isinstance(fs, weft.Filesystem)
        assert isinstance(fs, weft.SnapshotableFilesystem)


def test_snapshot_record_coercion():
    snap = weft.FilesystemSnapshot(snapshot_id="12345678-1234-4234-8234-123456789abc",
                                   created_at="2026-11-26T01:02:03.123456Z",
                                   commit_ref="mem-1", root_path="/")
    assert snap.snapshot_id == uuid.UUID("12345678-1234-4234-8234-123456789abc")
    assert snap.created_at == dt.datetime(2026, 11, 26, 1, 2, 3, 123456, tzinfo=dt.timezone.utc)
    assert snap.to_dict()["created_at"] == "2026-11-26T01:02:03.123456Z"
    naive = dataclasses.replace(snap, created_at=dt.datetime(2026, 1, 1))
    assert naive.created_at.tzinfo is dt.timezone.utc
    with pytest.raises(ValueError):
        weft.FilesystemSnapshot.from_dict({"snapshot_id": str(uuid.uuid4())})
    with pytest.raises(ValueError):
        weft.FilesystemSnapshot(snapshot_id="not-a-uuid", created_at=dt.datetime.now(),
                                commit_ref="x", root_path="/")


def test_snapshot_record_survives_restore_through_json():
    fs = weft.InMemoryFilesystem()
    fs.write("a.txt", "1")
    record = fs.snapshot(tag="t").to_json()
    fs.write("a.txt", "2")
    fs.restore(weft.FilesystemSnapshot.from_json(record))
    assert fs.read("a.txt").content == "1"


def test_pathlike_paths(tmp_path):
    import pathlib
    fs = weft.InMemoryFilesystem()
    fs.write(pathlib.PurePosixPath("a/b.txt"), "x")
    assert fs.read(pathlib.PurePosixPath("a") / "b.txt").content == "x"
    with pytest.raises(TypeError):
        fs.read(b"a/b.txt")
    with pytest.raises(TypeError):
        fs.read(42)


def other_interpreters():
    seen = {os.path.realpath(sys.executable)}
    found = []
    for name in ("python3", "python3.11"):
        path = shutil.which(name)
        if path and os.path.realpath(path) not in seen:
            seen.add(os.path.realpath(path))
            found.append(path)
    return found


@pytest.mark.parametrize("interpreter", other_interpreters() or [None])
def test_imports_in_other_interpreters_on_path(interpreter):
    if interpreter is None:
        pytest.skip("no other python3 on PATH")
    code = ("import weft; fs = weft.InMemoryFilesystem(); fs.write('a', 'b'); "
            "print(fs.read('a').content)")
    done = subprocess.run([interpreter, "-c", code], capture_output=True, text=True, timeout=60,
                          check=False)
    version = subprocess.run([interpreter, "-c", "import sys; print(sys.version_info[:2])"],
                             capture_output=True, text=True, check=False).stdout.strip()
    if version != str(sys.version_info[:2]):
        pytest.skip(f"{interpreter} is Python {version}; the module is built for "
                    f"{sys.version_info[:2]}")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "b\n"


def test_results_pickle_for_session_storage(tmp_path):
    import pickle
    fs = weft.HostFilesystem(str(tmp_path), git_dir=str(tmp_path.parent / f"{tmp_path.name}.git"))
    fs.write("a.txt", "x\n")
    values = [fs.snapshot(tag="t"), fs.read("a.txt"), fs.read_bytes("a.txt"), fs.stat("a.txt"),
              fs.list()[0], fs.glob("*")[0], fs.grep("x")[0], fs.write("b", "y"), fs.limits,
              weft.HostMount("src", include_glob=("*.py",))]
    for value in values:
        assert pickle.loads(pickle.dumps(value)) == value
