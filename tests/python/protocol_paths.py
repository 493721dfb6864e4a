"""PathAndTreeTests: the path rules and tree operations of the protocol contract.

Base of FilesystemProtocolTests (protocol_suite.py): move/copy, unicode
names, path depth and segment limits, and escapes above the root, run
against every backend through the abstract factory.
"""

from __future__ import annotations

import abc

import pytest

MAX_DEPTH = 16
MAX_SEGMENT = 80

# Paths that climb above the root. (Absolute paths are accepted when they lie
# inside the root, so "/etc/passwd" is an escape only for disk backends: see
# test_host.py.)
ESCAPES = ["../outside.txt", "a/../../outside.txt", "..", "../..", "a/b/../../../outside.txt"]


class PathAndTreeTests(abc.ABC):
    """Path validation, escapes and tree operations every backend must pass."""

    @abc.abstractmethod
    def make_filesystem(self, tmp_path):
        """Returns a fresh, empty, writable filesystem for one test."""

    @pytest.fixture
    def fs(self, tmp_path):
        return self.make_filesystem(tmp_path)

    # --- move / copy (weft extensions beyond the seed) ------------------------

    def test_move_file_and_directory(self, fs):
        fs.write("a.txt", "x")
        assert fs.move("a.txt", "moved/b.txt") is None
        assert not fs.exists("a.txt") and fs.read("moved/b.txt").content == "x"
        fs.move("moved", "renamed")
        assert fs.read("renamed/b.txt").content == "x" and not fs.exists("moved")

    def test_move_errors(self, fs):
        with pytest.raises(FileNotFoundError):
            fs.move("missing", "dest")
        fs.write("a.txt", "a")
        fs.write("b.txt", "b")
        with pytest.raises(FileExistsError):
            fs.move("a.txt", "b.txt")
        assert fs.read("b.txt").content == "b"
        fs.move("a.txt", "b.txt", overwrite=True)
        assert fs.read("b.txt").content == "a" and not fs.exists("a.txt")
        fs.mkdir("d")
        with pytest.raises(ValueError):
            fs.move("d", "d/inside")
        with pytest.raises((PermissionError, ValueError)):
            fs.move("b.txt", "../escaped.txt")

    @pytest.mark.parametrize("destination", ["d/inside", "d/x/y", "d"])
    def test_copy_directory_into_itself_is_refused(self, fs, destination):
        fs.write("d/f.txt", "x")
        with pytest.raises((ValueError, FileExistsError)):
            fs.copy("d", destination, overwrite=destination != "d")
        assert [m.path for m in fs.glob("**/*")] == ["d", "d/f.txt"]

    # Copying the root ("." or a path that normalises to it) must be refused.
    def test_copy_of_root_is_refused(self, fs):
        fs.write("sub/f.txt", "x")
        with pytest.raises(PermissionError):
            fs.copy(".", "sub/copy")
        with pytest.raises(PermissionError):
            fs.copy("sub/..", "other")
        assert [m.path for m in fs.glob("**/*")] == ["sub", "sub/f.txt"]

    def test_copy_file_and_tree(self, fs):
        fs.write_bytes("src/a.bin", b"\0\1")
        fs.write("src/sub/b.txt", "b\r\n")
        assert fs.copy("src", "dst") is None
        assert fs.read_bytes("dst/a.bin").content == b"\0\1"
        assert fs.read_bytes("dst/sub/b.txt").content == b"b\r\n"
        assert fs.read("src/sub/b.txt").content == "b\r\n"
        fs.copy("src/a.bin", "dst/a.bin", overwrite=True)
        with pytest.raises(FileExistsError):
            fs.copy("src/a.bin", "dst/a.bin")
        with pytest.raises(FileNotFoundError):
            fs.copy("nope", "x")

    # --- unicode names and path limits ---------------------------------------

    @pytest.mark.parametrize("name", ["données/été.txt", "日本語/ファイル.md", "emoji 🎉.txt",
                                      "spaces in name.txt", "Ünïcödé/ß"])
    def test_unicode_names(self, fs, name):
        fs.write(name, "contenu ✓\n")
        assert fs.read(name).content == "contenu ✓\n"
        assert fs.stat(name).path == name
        parent, _, leaf = name.rpartition("/")
        assert leaf in [e.name for e in fs.list(parent or ".")]
        assert name in [m.path for m in fs.glob("**/*")]

    def test_path_depth_limit(self, fs):
        ok = "/".join(["d"] * (MAX_DEPTH - 1) + ["f.txt"])
        fs.write(ok, "x")
        too_deep = "/".join(["d"] * MAX_DEPTH + ["f.txt"])
        with pytest.raises(ValueError):
            fs.write(too_deep, "x")
        with pytest.raises(ValueError):
            fs.mkdir("/".join(["m"] * (MAX_DEPTH + 1)))

    def test_segment_length_limit(self, fs):
        fs.write("s" * MAX_SEGMENT, "x")
        with pytest.raises(ValueError):
            fs.write("s" * (MAX_SEGMENT + 1), "x")
        with pytest.raises(ValueError):
            fs.read("s" * (MAX_SEGMENT + 1))

    def test_nul_in_path_raises_value_error(self, fs):
        with pytest.raises(ValueError):
            fs.write("a\0b.txt", "x")
        assert fs.exists("a\0b") is False  # exists() never raises for a bad path

    # --- escapes --------------------------------------------------------------

    @pytest.mark.parametrize("path", ESCAPES)
    def test_escapes_are_refused(self, fs, path):
        with pytest.raises((PermissionError, ValueError)):
            fs.write(path, "pwned")
        with pytest.raises((PermissionError, ValueError)):
            fs.read(path)
        with pytest.raises((PermissionError, ValueError)):
            fs.stat(path)
        with pytest.raises((PermissionError, ValueError)):
            fs.delete(path, recursive=True)
        with pytest.raises((PermissionError, ValueError)):
            fs.list(path)
        assert fs.exists(path) is False
