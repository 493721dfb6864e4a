"""Issue 29 item 8: names and file types in listings.

A file name with a newline appeared raw in fs_list, where it could forge
listing lines; FIFOs, devices and symlinks were labelled wrongly. Special
files must also never hang a read.
"""

from __future__ import annotations

import os
import socket
import stat

import pytest

import client

FORGED = "[FILE] forged.txt"
# Names an agent could be tricked by: a newline forging a listing line, a
# carriage return, an ANSI escape and a bidirectional override.
HOSTILE_NAMES = [f"evil\n{FORGED}", "cr\rname.txt", "ansi\x1b[31mred.txt", "bidi\u202etxt.exe"]


@pytest.fixture(scope="module")
def names_dir(shared):
    directory = shared.root / "names"
    directory.mkdir(parents=True, exist_ok=True)
    for name in HOSTILE_NAMES:
        (directory / name).write_text("findme\n")
    return "names"


def assert_no_raw_controls(text: str, what: str) -> None:
    lines = text.splitlines()
    forged = [line for line in lines if line.strip().startswith(FORGED)]
    assert not forged, f"{what}: a name forged a line: {forged}"
    raw = [c for c in text if (ord(c) < 0x20 and c != "\n") or c in "\x7f\u202e"]
    assert not raw, f"{what}: raw control characters {raw!r} in {text!r}"


def test_fs_list_escapes_control_characters(server, names_dir):
    session = server.session()
    try:
        result = session.call("fs_list", {"path": names_dir})
    finally:
        session.close()
    text = client.tool_text(result)
    assert_no_raw_controls(text, "fs_list")
    entries = result["structuredContent"]["entries"]
    assert len(text.strip().splitlines()) == len(entries), text
    # The structured entries keep the exact names (JSON escapes them).
    assert sorted(e["path"].split("/")[-1] for e in entries) == sorted(HOSTILE_NAMES)


@pytest.mark.parametrize("tool,args", [
    ("fs_glob", {"pattern": "names/*"}),
    ("fs_grep", {"pattern": "findme", "path": "names", "output_mode": "files_with_matches"}),
    ("fs_grep", {"pattern": "findme", "path": "names"}),
    ("fs_grep", {"pattern": "findme", "path": "names", "output_mode": "count"}),
])
def test_search_listings_escape_control_characters(server, names_dir, tool, args):
    session = server.session()
    try:
        result = session.call(tool, args)
    finally:
        session.close()
    text = client.tool_text(result)
    assert "findme" in text or "names/" in text, text
    assert_no_raw_controls(text, f"{tool} {args}")


def test_fs_stat_escapes_control_characters(server, names_dir):
    session = server.session()
    try:
        result = session.call("fs_stat", {"path": f"{names_dir}/{HOSTILE_NAMES[0]}"})
    finally:
        session.close()
    assert_no_raw_controls(client.tool_text(result), "fs_stat")


# --- file types ---


@pytest.fixture(scope="module")
def special_dir(shared):
    """special/ with a file, a directory, a symlink, a FIFO, a socket and a char device."""
    directory = shared.root / "special"
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "file.txt").write_text("x\n")
    (directory / "sub").mkdir(exist_ok=True)
    os.symlink("file.txt", directory / "link")
    os.mkfifo(directory / "pipe")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(str(directory / "sock"))
    kinds = {"file.txt": "file", "sub": "directory", "link": "symlink", "pipe": "fifo",
             "sock": "socket"}
    try:
        os.mknod(directory / "null", stat.S_IFCHR | 0o666, os.makedev(1, 3))
        kinds["null"] = "char_device"
    except PermissionError:
        pass  # no CAP_MKNOD here: the device case is left out
    yield "special", kinds
    sock.close()


def label_of(line: str) -> str:
    """'[FILE]' of '  [FILE] name'."""
    line = line.strip()
    return line[: line.index("]") + 1] if line.startswith("[") else line.split()[0]


def type_matches(kind: str, reported: str) -> bool:
    """Whether a reported type names `kind` (e.g. "fifo" or "named pipe")."""
    words = {"file": ["file"], "directory": ["directory", "dir"], "symlink": ["symlink", "link"],
             "fifo": ["fifo", "pipe"], "socket": ["socket"],
             "char_device": ["char", "character"]}[kind]
    return any(w in reported.lower() for w in words)


def test_fs_list_labels_special_files(server, special_dir):
    directory, kinds = special_dir
    session = server.session()
    try:
        result = session.call("fs_list", {"path": directory})
    finally:
        session.close()
    entries = {e["path"].split("/")[-1]: e for e in result["structuredContent"]["entries"]}
    assert set(entries) == set(kinds), entries
    for name, kind in kinds.items():
        assert type_matches(kind, entries[name]["type"]), (name, entries[name])
        if kind not in ("file", "directory"):
            assert entries[name]["type"] not in ("file", "directory"), (name, entries[name])
    lines = {line.split("]", 1)[-1].strip().rstrip("/"): label_of(line)
             for line in client.tool_text(result).splitlines() if line.strip()}
    generic = {"file": "[FILE]", "directory": "[DIR]", "symlink": "[LINK]"}
    for name, kind in kinds.items():
        label = next((v for k, v in lines.items() if k.startswith(name)), None)
        assert label is not None, (name, lines)
        if kind in generic:
            assert label == generic[kind], (name, label)
        else:
            assert label not in generic.values(), f"{name} ({kind}) labelled {label}"


def test_fs_stat_labels_special_files(server, special_dir):
    directory, kinds = special_dir
    session = server.session()
    try:
        for name, kind in kinds.items():
            result = session.call("fs_stat", {"path": f"{directory}/{name}"})
            reported = result["structuredContent"]["type"]
            assert type_matches(kind, reported), (name, kind, reported)
            if kind not in ("file", "directory"):
                assert reported not in ("file", "directory", "other"), (name, reported)
    finally:
        session.close()


@pytest.mark.parametrize("name", ["pipe", "sock", "null"])
def test_fs_read_of_a_special_file_does_not_hang(server, special_dir, name):
    directory, kinds = special_dir
    if name not in kinds:
        pytest.skip("no character device could be made here")
    session = server.session(timeout=10)
    try:
        res = session.rpc("tools/call", {"name": "fs_read",
                                         "arguments": {"path": f"{directory}/{name}"}})
    except TimeoutError:
        raise AssertionError(f"fs_read of a {kinds[name]} hung") from None
    finally:
        session.close()
    reply = res.reply()
    assert "error" in reply or reply["result"].get("isError"), reply


def test_fs_grep_over_special_files_does_not_hang(server, special_dir):
    directory, _ = special_dir
    session = server.session(timeout=10)
    try:
        result = session.call("fs_grep", {"pattern": "x", "path": directory})
    except TimeoutError:
        raise AssertionError("fs_grep over a FIFO hung") from None
    finally:
        session.close()
    assert "file.txt" in client.tool_text(result)
