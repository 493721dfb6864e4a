"""Issue 29 items 6 and 8: paths a person gives on the command line.

A FIFO given as --db hung `weft block`; a directory reported "internal: disk
I/O error" and a zero-length database a misleading schema message. Non-regular
files must be refused before anything opens them, wherever weft takes a path.
"""

from __future__ import annotations

import os
import subprocess

import pytest

import client

HANG_LIMIT_S = 5


def run_quick(args: list[str]) -> subprocess.CompletedProcess:
    try:
        return client.run_cli(args, timeout=HANG_LIMIT_S, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise AssertionError(f"`weft {' '.join(args)}` hung for {HANG_LIMIT_S} s") from None


def stderr_of(out: subprocess.CompletedProcess) -> str:
    return out.stderr.decode("utf-8", "replace")


@pytest.fixture
def fifo(tmp_path):
    path = tmp_path / "node.db"  # a name that says nothing of what it is
    os.mkfifo(path)
    return str(path)


@pytest.mark.parametrize("command", [
    ["block", "ls", "--db", "{p}"],
    ["block", "ls", "--db", "{p}", "--json"],
    ["block", "show", "--db", "{p}", "agent", "notes"],
    ["block", "create", "--db", "{p}", "agent", "notes", "--text", "hi"],
])
def test_fifo_as_db_is_refused_quickly(fifo, command):
    out = run_quick([a.format(p=fifo) for a in command])
    assert out.returncode > 0, out.returncode
    message = stderr_of(out).replace(fifo, "PATH").lower()  # the path itself says "fifo"
    assert any(w in message for w in ("fifo", "pipe", "regular file", "not a file")), message


@pytest.mark.parametrize("command", [
    ["doc", "info", "{p}"],
    ["loro", "merge", "{p}"],
    ["doc", "export", "{p}", "--out", "{out}", "--mode", "snapshot"],
])
def test_fifo_as_input_file_is_refused_quickly(fifo, tmp_path, command):
    out = run_quick([a.format(p=fifo, out=tmp_path / "out.bin") for a in command])
    assert out.returncode > 0, (out.returncode, stderr_of(out))


@pytest.mark.parametrize("command", [["mcp", "--root", "{p}"], ["serve", "--root", "{p}",
                                                                 "--port", "0"]])
def test_fifo_as_root_is_refused_quickly(fifo, command):
    out = run_quick([a.format(p=fifo) for a in command])
    assert out.returncode > 0, (out.returncode, stderr_of(out))


@pytest.mark.parametrize("sub", [["ls"], ["create", "agent", "notes", "--text", "hi"]])
def test_directory_as_db_says_so(tmp_path, sub):
    directory = tmp_path / "dir.db"
    directory.mkdir()
    out = run_quick(["block", sub[0], "--db", str(directory), *sub[1:]])
    message = stderr_of(out).replace(str(directory), "PATH")  # the test's path says "directory"
    assert out.returncode > 0, out.returncode
    assert "disk I/O error" not in message and "internal" not in message, message
    assert "directory" in message.lower(), message


def test_zero_length_db_says_so(tmp_path):
    empty = tmp_path / "empty.db"
    empty.write_bytes(b"")
    out = run_quick(["block", "ls", "--db", str(empty)])
    message = stderr_of(out).replace(str(empty), "PATH")  # the test's path says "zero" and "empty"
    assert out.returncode >= 0, f"killed by signal {-out.returncode}"
    if out.returncode != 0:
        assert "schema" not in message.lower(), message
        assert any(w in message.lower() for w in ("empty", "zero", "0 bytes")), message


def test_garbage_db_is_reported_as_bad_data(tmp_path):
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"this is not a database\n" * 100)
    out = run_quick(["block", "ls", "--db", str(junk)])
    assert out.returncode == 5, (out.returncode, stderr_of(out))
