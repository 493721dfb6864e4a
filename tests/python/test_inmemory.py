"""InMemoryFilesystem against the protocol suites, plus in-memory specifics."""

from __future__ import annotations

import pytest

import weft
from protocol_suite import FilesystemProtocolTests
from snapshot_suite import SnapshotProtocolTests


class TestInMemoryProtocol(FilesystemProtocolTests):
    def make_filesystem(self, tmp_path):
        return weft.InMemoryFilesystem()


class TestInMemorySnapshots(SnapshotProtocolTests):
    def make_filesystem(self, tmp_path):
        return weft.InMemoryFilesystem()


def test_root_is_slash_and_absolute_paths_are_inside_it():
    fs = weft.InMemoryFilesystem()
    assert fs.root == "/"
    fs.write("/etc/conf.txt", "x")
    assert fs.read("etc/conf.txt").path == "etc/conf.txt"
    assert fs.exists("/etc/conf.txt")


def test_snapshot_record_has_version_id_and_no_git_dir():
    fs = weft.InMemoryFilesystem()
    snap = fs.snapshot()
    assert snap.git_dir is None
    assert snap.commit_ref.startswith("mem-")
    assert snap.root_path == "/"


def test_snapshot_of_another_instance_is_refused():
    a, b = weft.InMemoryFilesystem(), weft.InMemoryFilesystem()
    a.write("a.txt", "a")
    foreign = a.snapshot()
    b.write("b.txt", "b")
    with pytest.raises(weft.SnapshotRestoreError):
        b.restore(foreign)
    assert b.read("b.txt").content == "b" and not b.exists("a.txt")


def test_many_files_snapshot_and_restore():
    fs = weft.InMemoryFilesystem()
    for i in range(2_000):
        fs.write(f"d{i % 20}/f{i}.txt", f"{i}\n")
    snap = fs.snapshot()
    fs.delete("d3", recursive=True)
    fs.write("d4/f4.txt", "changed\n")
    fs.restore(snap)
    assert len(fs.glob("**/*.txt")) == 2_000
    assert fs.read("d4/f4.txt").content == "4\n"
    assert fs.read("d3/f3.txt").content == "3\n"


def test_read_only_in_memory():
    fs = weft.InMemoryFilesystem(read_only=True)
    assert fs.read_only is True
    for call in (lambda: fs.write("a", "x"), lambda: fs.write_bytes("a", b"x"),
                 lambda: fs.mkdir("d"), lambda: fs.delete("a")):
        with pytest.raises(PermissionError):
            call()
    assert list(fs.list()) == []


def test_custom_limits():
    limits = weft.FilesystemLimits(max_write_chars=10, max_path_depth=3, max_segment_length=8,
                                   default_read_lines=2, max_grep_matches=3)
    fs = weft.InMemoryFilesystem(limits=limits)
    assert fs.limits == limits
    fs.write("a.txt", "0123456789")
    with pytest.raises(ValueError):
        fs.write("a.txt", "0123456789X")
    with pytest.raises(ValueError):
        fs.write("a/b/c/d.txt", "x")
    with pytest.raises(ValueError):
        fs.write("123456789", "x")
    fs.write("l.txt", "1\n2\n3\n")
    page = fs.read("l.txt")
    assert (page.content, page.limit, page.truncated) == ("1\n2\n", 2, True)
    fs.write("g.txt", "x\nx\nx\nx\nx\n")
    assert len(fs.grep("x", max_matches=100)) == 3
    with pytest.raises(ValueError):
        weft.InMemoryFilesystem(limits=weft.FilesystemLimits(max_write_chars=0))
    with pytest.raises(TypeError):
        weft.InMemoryFilesystem(limits={"max_write_chars": 5})


def test_in_memory_is_not_constructible_with_positional_args():
    with pytest.raises(TypeError):
        weft.InMemoryFilesystem(True)
    with pytest.raises(TypeError):
        weft.NativeFilesystem()
