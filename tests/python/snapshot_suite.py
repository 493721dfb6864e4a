"""SnapshotProtocolTests: snapshot/restore/snapshots contract for every backend.

Concrete test modules subclass it with the same `make_filesystem(tmp_path)`
factory as FilesystemProtocolTests.
"""

from __future__ import annotations

import abc
import dataclasses
import datetime as dt
import uuid

import pytest

import weft


class SnapshotProtocolTests(abc.ABC):
    """The SnapshotableFilesystem contract (seed 004, "Filesystem Snapshots")."""

    @abc.abstractmethod
    def make_filesystem(self, tmp_path):
        """Returns a fresh, empty, writable filesystem for one test."""

    @pytest.fixture
    def fs(self, tmp_path):
        return self.make_filesystem(tmp_path)

    def test_snapshot_record(self, fs):
        fs.write("a.txt", "x")
        before = dt.datetime.now(dt.timezone.utc)
        snap = fs.snapshot(tag="initial")
        assert isinstance(snap, weft.FilesystemSnapshot)
        assert isinstance(snap.snapshot_id, uuid.UUID)
        assert isinstance(snap.created_at, dt.datetime) and snap.created_at.tzinfo is not None
        assert abs((snap.created_at - before).total_seconds()) < 60
        assert isinstance(snap.commit_ref, str) and snap.commit_ref
        assert snap.root_path == fs.root
        assert snap.tag == "initial"
        assert fs.snapshot().tag is None

    def test_snapshot_is_frozen_and_serialisable(self, fs):
        snap = fs.snapshot(tag="t")
        with pytest.raises(dataclasses.FrozenInstanceError):
            snap.tag = "other"
        assert weft.FilesystemSnapshot.from_json(snap.to_json()) == snap
        assert weft.FilesystemSnapshot.from_dict(snap.to_dict()) == snap
        assert hash(snap) == hash(weft.FilesystemSnapshot.from_json(snap.to_json()))

    def test_snapshots_lists_oldest_first(self, fs):
        assert list(fs.snapshots()) == []
        first = fs.snapshot(tag="one")
        fs.write("a.txt", "x")
        second = fs.snapshot(tag="two")
        listed = fs.snapshots()
        assert [s.snapshot_id for s in listed] == [first.snapshot_id, second.snapshot_id]
        assert [s.tag for s in listed] == ["one", "two"]
        assert len({s.snapshot_id for s in listed}) == 2

    def test_seed_usage_example(self, fs):
        fs.write("config.py", "DEBUG = True")
        snapshot_v1 = fs.snapshot(tag="initial")
        fs.write("config.py", "DEBUG = False")
        fs.write("tests.py", "import pytest")
        snapshot_v2 = fs.snapshot(tag="with-tests")
        assert fs.restore(snapshot_v1) is None
        assert fs.read("config.py").content == "DEBUG = True"
        assert not fs.exists("tests.py")
        fs.restore(snapshot_v2)
        assert fs.read("config.py").content == "DEBUG = False"
        assert fs.exists("tests.py")

    def test_restore_undoes_edits_creations_and_deletions(self, fs):
        fs.write("keep.txt", "original\n")
        fs.write("gone/later.txt", "will be deleted then restored\n")
        fs.write("dir/nested/deep.txt", "deep\n")
        snap = fs.snapshot()
        fs.write("keep.txt", "edited\n")
        fs.delete("gone", recursive=True)
        fs.write("new/file.txt", "new\n")
        fs.mkdir("new_empty_dir")
        fs.delete("dir/nested/deep.txt")
        fs.restore(snap)
        assert fs.read("keep.txt").content == "original\n"
        assert fs.read("gone/later.txt").content == "will be deleted then restored\n"
        assert fs.read("dir/nested/deep.txt").content == "deep\n"
        assert not fs.exists("new/file.txt")
        assert not fs.exists("new")
        assert not fs.exists("new_empty_dir")
        assert sorted(e.name for e in fs.list()) == ["dir", "gone", "keep.txt"]

    def test_restore_replaces_file_with_directory_and_back(self, fs):
        fs.write("x", "a file")
        snap_file = fs.snapshot()
        fs.delete("x")
        fs.write("x/inside.txt", "now a directory")
        snap_dir = fs.snapshot()
        fs.restore(snap_file)
        assert fs.stat("x").is_file and fs.read("x").content == "a file"
        fs.restore(snap_dir)
        assert fs.stat("x").is_directory
        assert fs.read("x/inside.txt").content == "now a directory"

    def test_restore_preserves_exact_content(self, fs):
        blob = bytes(range(256))
        fs.write_bytes("bin/blob.bin", blob)
        fs.write("crlf.txt", "a\r\nb\r\n")
        fs.write("empty.txt", "")
        fs.write("données/été.txt", "unicode ✓")
        snap = fs.snapshot()
        fs.write_bytes("bin/blob.bin", b"changed")
        fs.write("crlf.txt", "a\nb\n")
        fs.delete("empty.txt")
        fs.delete("données", recursive=True)
        fs.restore(snap)
        assert fs.read_bytes("bin/blob.bin").content == blob
        assert fs.read_bytes("crlf.txt").content == b"a\r\nb\r\n"
        assert fs.exists("empty.txt") and fs.stat("empty.txt").size_bytes == 0
        assert fs.read("données/été.txt").content == "unicode ✓"

    def test_restore_is_strict_about_ignored_files(self, fs):
        fs.write(".gitignore", "*.log\nbuild/\n")
        fs.write("kept.log", "ignored by git, present at snapshot time\n")
        snap = fs.snapshot()
        fs.write("later.log", "created after the snapshot\n")
        fs.write("build/out.o", "artifact")
        fs.write("kept.log", "edited")
        fs.restore(snap)
        assert not fs.exists("later.log")
        assert not fs.exists("build")
        # A file present at snapshot time is part of the snapshot, ignored or not.
        assert fs.read("kept.log").content == "ignored by git, present at snapshot time\n"

    # Git-backed snapshots (Host, Sandbox) do not record empty directories, as
    # with the seed's `git reset --hard` + `git clean -xfd`; InMemory keeps them.
    restores_empty_directories = True

    def test_empty_directories_across_restore(self, fs):
        fs.mkdir("empty/inner")
        fs.write("full/f.txt", "x")
        snap = fs.snapshot()
        fs.delete("empty", recursive=True)
        fs.restore(snap)
        assert fs.read("full/f.txt").content == "x"
        assert fs.exists("empty/inner") is self.restores_empty_directories

    def test_restore_removes_directory_emptied_after_a_later_snapshot(self, fs):
        before = fs.snapshot()
        fs.write("d/f.txt", "x")
        fs.snapshot()
        fs.delete("d/f.txt")  # "d" is now empty and did not exist at `before`
        fs.restore(before)
        assert not fs.exists("d")

    def test_restore_twice_and_snapshot_after_restore(self, fs):
        fs.write("a.txt", "1")
        s1 = fs.snapshot()
        fs.write("a.txt", "2")
        fs.restore(s1)
        fs.restore(s1)
        assert fs.read("a.txt").content == "1"
        fs.write("b.txt", "after restore")
        s2 = fs.snapshot()
        fs.restore(s1)
        assert not fs.exists("b.txt")
        fs.restore(s2)
        assert fs.read("b.txt").content == "after restore"

    def test_restore_empty_snapshot_clears_tree(self, fs):
        empty = fs.snapshot(tag="empty")
        fs.write("a/b/c.txt", "x")
        fs.write("top.txt", "y")
        fs.restore(empty)
        assert list(fs.list()) == []

    def test_restore_unknown_commit_is_refused_and_leaves_tree(self, fs):
        fs.write("a.txt", "before")
        real = fs.snapshot()
        fs.write("a.txt", "current")
        bogus = dataclasses.replace(real, commit_ref="0" * 40 if real.git_dir else "mem-999999")
        with pytest.raises(weft.SnapshotRestoreError) as info:
            fs.restore(bogus)
        assert str(info.value)
        assert isinstance(info.value, RuntimeError)
        assert fs.read("a.txt").content == "current"

    def test_restore_record_of_another_root_is_refused(self, fs, tmp_path):
        other_root = tmp_path / "another-root"
        other_root.mkdir()
        other = weft.HostFilesystem(str(other_root), git_dir=str(tmp_path / "other.git"))
        other.write("theirs.txt", "not ours")
        foreign = other.snapshot()
        fs.write("ours.txt", "ours")
        with pytest.raises(weft.SnapshotRestoreError):
            fs.restore(foreign)
        assert fs.read("ours.txt").content == "ours"
        assert not fs.exists("theirs.txt")

    def test_restore_requires_a_snapshot(self, fs):
        with pytest.raises(TypeError):
            fs.restore("mem-1")
