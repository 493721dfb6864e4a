"""HostFilesystem against the protocol suites, plus confinement and git-snapshot specifics."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

import weft
from protocol_suite import FilesystemProtocolTests
from snapshot_suite import SnapshotProtocolTests


def make_host(tmp_path, **kwargs):
    root = tmp_path / "root"
    root.mkdir(exist_ok=True)
    kwargs.setdefault("git_dir", str(tmp_path / "snapshots.git"))
    return weft.HostFilesystem(str(root), **kwargs)


class TestHostProtocol(FilesystemProtocolTests):

    def make_filesystem(self, tmp_path):
        return make_host(tmp_path)


class TestHostSnapshots(SnapshotProtocolTests):
    restores_empty_directories = False  # git records no empty directories

    def make_filesystem(self, tmp_path):
        return make_host(tmp_path)


@pytest.fixture
def host(tmp_path):
    fs = make_host(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("top secret\n")
    return fs, tmp_path / "root", outside


# --- construction -------------------------------------------------------------


def test_root_is_canonical_absolute(tmp_path):
    (tmp_path / "real").mkdir()
    os.symlink(tmp_path / "real", tmp_path / "alias")
    fs = weft.HostFilesystem(str(tmp_path / "alias"), git_dir=str(tmp_path / "g.git"))
    assert fs.root == os.path.realpath(tmp_path / "real")
    assert "HostFilesystem(root=" in repr(fs)


def test_fsync_false_keeps_writes_atomic_and_exact(tmp_path):
    fs = make_host(tmp_path, fsync=False)
    fs.write("a.txt", "one\r\ntwo\n")
    fs.write("a.txt", "three\n", mode="append")
    assert (tmp_path / "root" / "a.txt").read_bytes() == b"one\r\ntwo\nthree\n"
    assert not [p for p in os.listdir(tmp_path / "root") if p != "a.txt"]
    with pytest.raises(TypeError):
        make_host(tmp_path, fsync="maybe")


def test_seed_spelling_and_pathlike_root(tmp_path):
    (tmp_path / "r").mkdir()
    assert weft.HostFilesystem(_root=str(tmp_path / "r")).root == str(tmp_path / "r")
    assert weft.HostFilesystem(tmp_path / "r", read_only=True).read_only is True


def test_bad_roots(tmp_path):
    with pytest.raises(FileNotFoundError):
        weft.HostFilesystem(str(tmp_path / "missing"))
    (tmp_path / "file").write_text("x")
    with pytest.raises(NotADirectoryError):
        weft.HostFilesystem(str(tmp_path / "file"))
    (tmp_path / "root").mkdir()
    with pytest.raises(ValueError):
        weft.HostFilesystem(str(tmp_path / "root"), git_dir=str(tmp_path / "root" / ".snap"))


def test_writes_land_on_disk_and_disk_edits_are_seen(host):
    fs, root, _ = host
    fs.write("a/b.txt", "from weft\r\n")
    assert (root / "a" / "b.txt").read_bytes() == b"from weft\r\n"
    (root / "c.txt").write_bytes(b"from disk")
    assert fs.read("c.txt").content == "from disk"


def test_overwrite_keeps_file_mode(host):
    fs, root, _ = host
    fs.write("run.sh", "#!/bin/sh\necho one\n")
    os.chmod(root / "run.sh", 0o755)
    fs.write("run.sh", "#!/bin/sh\necho two\n")
    assert (root / "run.sh").stat().st_mode & 0o777 == 0o755
    fs.write("run.sh", "echo three\n", mode="append")
    assert (root / "run.sh").stat().st_mode & 0o777 == 0o755


def test_read_only_host(tmp_path):
    (tmp_path / "root").mkdir()
    (tmp_path / "root" / "a.txt").write_text("keep")
    fs = make_host(tmp_path)
    snap = fs.snapshot()
    ro = weft.HostFilesystem(str(tmp_path / "root"), read_only=True,
                             git_dir=str(tmp_path / "snapshots.git"))
    assert ro.read("a.txt").content == "keep"
    for call in (lambda: ro.write("a.txt", "x"), lambda: ro.write_bytes("n", b"x"),
                 lambda: ro.delete("a.txt"), lambda: ro.mkdir("d"),
                 lambda: ro.move("a.txt", "b.txt"), lambda: ro.copy("a.txt", "b.txt"),
                 lambda: ro.restore(snap)):
        with pytest.raises(PermissionError):
            call()
    assert (tmp_path / "root" / "a.txt").read_text() == "keep"
    assert sorted(os.listdir(tmp_path / "root")) == ["a.txt"]


# --- escapes ------------------------------------------------------------------


def test_absolute_paths(host):
    fs, root, outside = host
    with pytest.raises(PermissionError):
        fs.read(str(outside / "secret.txt"))
    with pytest.raises(PermissionError):
        fs.write(str(outside / "new.txt"), "pwned")
    with pytest.raises(PermissionError):
        fs.read("/etc/passwd")
    assert not (outside / "new.txt").exists()
    fs.write(str(root / "inside.txt"), "ok")  # absolute but inside the root
    assert fs.read("inside.txt").content == "ok"


def test_symlink_to_file_outside(host):
    fs, root, outside = host
    os.symlink(outside / "secret.txt", root / "link.txt")
    with pytest.raises(PermissionError):
        fs.read("link.txt")
    with pytest.raises(PermissionError):
        fs.read_bytes("link.txt")
    with pytest.raises(PermissionError):
        fs.write("link.txt", "pwned")
    with pytest.raises(PermissionError):
        fs.write("link.txt", "pwned", mode="append")
    assert (outside / "secret.txt").read_text() == "top secret\n"
    [entry] = fs.list()
    assert (entry.name, entry.is_file, entry.is_directory) == ("link.txt", False, False)
    assert (entry.type, entry.symlink_target) == ("symlink", str(outside / "secret.txt"))
    assert fs.stat("link.txt").type == "symlink"
    assert fs.exists("link.txt")
    assert fs.grep("secret") == []


def test_symlink_to_directory_outside(host):
    fs, root, outside = host
    os.symlink(outside, root / "linkdir")
    # Whatever the error, nothing outside the root is read or changed.
    attempts = [lambda: fs.read("linkdir/secret.txt"), lambda: fs.write("linkdir/new.txt", "x"),
                lambda: fs.mkdir("linkdir/sub"), lambda: fs.list("linkdir"),
                lambda: fs.delete("linkdir/secret.txt"),
                lambda: fs.copy("linkdir/secret.txt", "stolen.txt"),
                lambda: fs.write_bytes("linkdir/secret.txt", b"x", mode="append")]
    for attempt in attempts:
        with pytest.raises(OSError):
            attempt()
    assert "linkdir/secret.txt" not in {m.path for m in fs.glob("**/*")}
    assert fs.grep("secret") == []
    assert not fs.exists("stolen.txt")
    assert sorted(os.listdir(outside)) == ["secret.txt"]
    assert (outside / "secret.txt").read_text() == "top secret\n"


@pytest.mark.parametrize("op", ["read", "write", "mkdir", "list", "delete"])
def test_path_through_symlinked_directory_is_permission_error(host, op):
    # filesystem.h: an operation naming or passing through a symlink gets
    # kPermissionDenied, i.e. PermissionError.
    fs, root, outside = host
    os.symlink(outside, root / "linkdir")
    calls = {"read": lambda: fs.read("linkdir/secret.txt"),
             "write": lambda: fs.write("linkdir/new.txt", "x"),
             "mkdir": lambda: fs.mkdir("linkdir/sub"),
             "list": lambda: fs.list("linkdir"),
             "delete": lambda: fs.delete("linkdir/secret.txt")}
    with pytest.raises(PermissionError):
        calls[op]()


def test_symlink_inside_root_is_not_followed_either(host):
    fs, root, _ = host
    fs.write("real.txt", "real")
    os.symlink("real.txt", root / "alias.txt")
    with pytest.raises(PermissionError):
        fs.read("alias.txt")


def test_hard_link_to_outside_file(host):
    fs, root, outside = host
    try:
        os.link(outside / "secret.txt", root / "hard.txt")
    except OSError as error:
        pytest.skip(f"cannot create a hard link here: {error}")
    with pytest.raises(PermissionError):
        fs.read("hard.txt")
    with pytest.raises(PermissionError):
        fs.write("hard.txt", "pwned", mode="append")
    assert (outside / "secret.txt").read_text() == "top secret\n"


@pytest.mark.parametrize("path", ["../outside/secret.txt", "a/../../outside/secret.txt",
                                  "./../outside/secret.txt"])
def test_dot_dot_escapes(host, path):
    fs, _, outside = host
    with pytest.raises(PermissionError):
        fs.read(path)
    with pytest.raises(PermissionError):
        fs.write(path, "pwned")
    with pytest.raises(PermissionError):
        fs.delete(path)
    assert (outside / "secret.txt").read_text() == "top secret\n"


def test_non_utf8_file_names_are_listed_and_refused_clearly(host):
    fs, root, _ = host
    name = os.fsdecode(b"caf\xe9.txt")  # a Latin-1 name: not UTF-8
    (root / name).write_text("latin")
    [entry] = fs.list()
    assert entry.name == name  # decoded like os.fsdecode, so it round-trips
    with pytest.raises(ValueError, match="UTF-8"):
        fs.read(entry.path)
    assert (root / name).read_text() == "latin"


# --- git snapshots ------------------------------------------------------------


def test_snapshot_store_is_outside_root(host):
    fs, root, _ = host
    fs.write("a.txt", "x")
    snap = fs.snapshot()
    assert snap.git_dir and os.path.isabs(snap.git_dir)
    assert not os.path.realpath(snap.git_dir).startswith(os.path.realpath(root) + os.sep)
    assert os.path.isdir(snap.git_dir)
    assert os.listdir(root) == ["a.txt"]
    assert len(snap.commit_ref) == 40 and int(snap.commit_ref, 16) >= 0


def test_default_snapshot_store_under_xdg_state_home(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    (tmp_path / "root").mkdir()
    fs = weft.HostFilesystem(str(tmp_path / "root"))
    fs.write("a.txt", "x")
    snap = fs.snapshot()
    assert snap.git_dir.startswith(str(tmp_path / "state"))


def test_restore_from_a_new_process(host, tmp_path):
    fs, root, _ = host
    fs.write("config.py", "DEBUG = True\n")
    fs.write_bytes("data.bin", b"\0\1\2")
    record = fs.snapshot(tag="initial").to_json()
    fs.write("config.py", "DEBUG = False\n")
    fs.write("tests.py", "import pytest\n")
    fs.delete("data.bin")
    script = textwrap.dedent(f"""
        import json, sys, weft
        snap = weft.FilesystemSnapshot.from_json({record!r})
        fs = weft.HostFilesystem({str(root)!r})  # default git_dir: the record's is used
        fs.restore(snap)
        print(json.dumps("ok"))
    """)
    env = dict(os.environ, XDG_STATE_HOME=str(tmp_path / "elsewhere"))
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          env=env, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == "ok"
    assert fs.read("config.py").content == "DEBUG = True\n"
    assert not fs.exists("tests.py")
    assert fs.read_bytes("data.bin").content == b"\0\1\2"


def test_second_instance_on_same_store_lists_snapshots(tmp_path):
    first = make_host(tmp_path)
    first.write("a.txt", "1")
    s1 = first.snapshot(tag="one")
    second = make_host(tmp_path)
    assert [s.commit_ref for s in second.snapshots()] == [s1.commit_ref]
    first.write("a.txt", "2")
    second.restore(s1)
    assert first.read("a.txt").content == "1"


def test_snapshot_of_symlinks_and_restore_does_not_follow_them(host):
    fs, root, outside = host
    fs.write("a.txt", "x")
    snap = fs.snapshot()
    os.symlink(outside, root / "linkdir")
    fs.restore(snap)
    assert not os.path.lexists(root / "linkdir")
    assert (outside / "secret.txt").read_text() == "top secret\n"


COPY_ROOT_SCRIPT = """
import resource, sys, weft
resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))  # bounds a runaway copy quickly
fs = weft.HostFilesystem(sys.argv[1], git_dir=sys.argv[2])
fs.write("sub/f.txt", "x")
try:
    fs.copy(".", "sub/copy")
except Exception as error:
    print(type(error).__name__)
else:
    print("copied")
"""


# Run in a subprocess with 64 fds so that a regression (a copy of the root into
# itself recursing without bound) fails fast instead of filling the disk.
def test_copy_of_root_is_refused_in_a_bounded_process(tmp_path):
    (tmp_path / "root").mkdir()
    done = subprocess.run([sys.executable, "-c", COPY_ROOT_SCRIPT, str(tmp_path / "root"),
                           str(tmp_path / "g.git")], capture_output=True, text=True, timeout=120,
                          check=False)
    assert done.stdout.strip() == "PermissionError", done.stderr[-2000:]
    depth = max(len(os.path.relpath(d, tmp_path / "root").split(os.sep))
                for d, _, _ in os.walk(tmp_path / "root"))
    assert depth <= 16


def weft_cli():
    """The weft CLI of the same build ($WEFT_BIN, else <build>/weft beside <build>/python)."""
    import pathlib
    candidate = os.environ.get("WEFT_BIN") or str(pathlib.Path(weft.__file__).parents[2] / "weft")
    return candidate if os.access(candidate, os.X_OK) else None


@pytest.mark.skipif(weft_cli() is None, reason="the weft CLI is not built beside the module")
def test_snapshot_records_interoperate_with_the_cli(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    root = tmp_path / "root"
    root.mkdir()
    fs = weft.HostFilesystem(str(root))
    fs.write("a.txt", "one\n")
    (tmp_path / "py.json").write_text(fs.snapshot(tag="py").to_json())
    fs.write("a.txt", "two\n")
    fs.write("b.txt", "new\n")
    cli = [weft_cli(), "fs"]
    subprocess.run(cli + ["restore", "--root", str(root), str(tmp_path / "py.json")], check=True,
                   capture_output=True, timeout=60)
    assert fs.read("a.txt").content == "one\n" and not fs.exists("b.txt")
    made = subprocess.run(cli + ["snapshot", "--root", str(root), "--json"], check=True,
                          capture_output=True, text=True, timeout=60)
    record = weft.FilesystemSnapshot.from_json(made.stdout)
    fs.write("a.txt", "three\n")
    fs.restore(record)
    assert fs.read("a.txt").content == "one\n"
    assert [s.tag for s in fs.snapshots()] == ["py", None]


def test_fifo_is_refused_at_once_and_typed(host):
    fs, root, _ = host
    os.mkfifo(root / "pipe")
    with pytest.raises(PermissionError, match="fifo"):
        fs.read("pipe")  # no writer ever comes: must not wait for one
    assert fs.stat("pipe").type == "fifo"
    assert [(e.name, e.type, e.is_file) for e in fs.list()] == [("pipe", "fifo", False)]


def test_long_line_is_cut_with_its_length(host):
    fs, root, _ = host
    (root / "long.txt").write_text("x" * 300_000 + "NEEDLE\nshort\n")
    page = fs.read("long.txt")
    assert page.content == "x" * 262_144 + "\nshort\n"  # the default cap: 256 KiB
    assert (page.lines, page.total_lines, page.cut_lines) == (2, 2, ((0, 300_006),))
    [match] = fs.grep("NEEDLE")
    assert match.line_length_bytes == 300_006
    assert len(match.line_content) <= 262_144
    assert match.line_content[match.match_start:match.match_end] == "NEEDLE"
    assert match.line_content_offset_byte + match.match_start == 300_000
