"""Issue 29 item 5: reading costs memory in proportion to the answer, not the file.

Reading 2 KB of a 200 MB one-line file cost about 380 MB RSS and 3 s, and 8
reads at once reached 3 GB. The same holds for fs_grep on long lines and for
resources.
"""

from __future__ import annotations

import os
import threading
import time

import pytest

import client
import monitor

LINE_BYTES = 200 << 20
NEEDLE = "NEEDLE"
ANSWER_BOUND = 64 << 10  # bytes of text an answer about one capped line may carry


@pytest.fixture(scope="module")
def big_line(shared):
    """big/line.txt in the shared root: one line of 200 MB of 'x' then NEEDLE."""
    directory = shared.root / "big"
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "line.txt"
    chunk = b"x" * (1 << 20)
    with open(path, "wb") as f:
        for _ in range(LINE_BYTES >> 20):
            f.write(chunk)
        f.write(NEEDLE.encode() + b"\n")
    yield "big/line.txt"
    path.unlink()


def line_length_shown(text: str, length: int) -> bool:
    return any(form in text for form in (str(length), f"{length:,}", f"{length:_}"))


def check_rss(window: monitor.Window, what: str) -> None:
    assert window.max_rss_mb <= monitor.RSS_BOUND_MB, (
        f"{what}: server RSS reached {window.max_rss_mb:.0f} MB (bound {monitor.RSS_BOUND_MB})")


def test_fs_read_of_a_huge_line_is_bounded(server, big_line):
    session = server.session(timeout=60)
    try:
        with monitor.Window(server.pid) as window:
            start = time.monotonic()
            result = session.call("fs_read", {"path": big_line, "limit": 1}, max_body=1 << 20)
            elapsed = time.monotonic() - start
    finally:
        session.close()
    server.assert_alive("after reading the huge line")
    text = client.tool_text(result)
    check_rss(window, "fs_read of one line of a 200 MB file")
    assert len(text) <= ANSWER_BOUND, f"{len(text)} characters for one capped line"
    assert line_length_shown(text, LINE_BYTES + len(NEEDLE)), (
        "the cut line does not say its length: " + text[-300:])
    assert elapsed < 5, f"{elapsed:.1f} s to read one line"


def test_eight_concurrent_huge_reads_stay_bounded(server, big_line):
    errors: list[str] = []

    def read() -> None:
        try:
            session = server.session(timeout=120)
            try:
                session.call("fs_read", {"path": big_line, "limit": 1}, max_body=1 << 20)
            finally:
                session.close()
        except Exception as error:  # noqa: BLE001
            errors.append(str(error))

    with monitor.Window(server.pid) as window:
        threads = [threading.Thread(target=read) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    server.assert_alive("after 8 concurrent huge reads")
    check_rss(window, "8 concurrent fs_read of a 200 MB line")
    assert not errors, errors[:2]


@pytest.mark.parametrize("pattern", [NEEDLE, "x+N"])
def test_fs_grep_on_a_huge_line_is_bounded(server, big_line, pattern):
    session = server.session(timeout=60)
    try:
        with monitor.Window(server.pid) as window:
            result = session.call("fs_grep", {"pattern": pattern, "path": "big"},
                                      max_body=1 << 20)
    finally:
        session.close()
    server.assert_alive("after grep of the huge line")
    check_rss(window, f"fs_grep {pattern!r} over a 200 MB line")
    text = client.tool_text(result)
    assert len(text) <= ANSWER_BOUND, f"{len(text)} characters for one match"
    assert "line.txt" in text, text[:300]


def test_resource_read_of_a_huge_file_is_bounded(server, big_line):
    session = server.session(timeout=60)
    try:
        with monitor.Window(server.pid) as window:
            uri = f"file://{os.path.realpath(server.root)}/{big_line}"
            res = session.rpc("resources/read", {"uri": uri}, max_body=32 << 20)
    finally:
        session.close()
    server.assert_alive("after resources/read of a 200 MB file")
    check_rss(window, "resources/read of a 200 MB file")
    assert not res.cut, "an answer over 32 MB"
    reply = res.reply()
    assert "error" in reply or reply["result"]["contents"], reply


def test_stdio_fs_read_of_a_huge_line_is_bounded(stdio, shared, big_line):
    mcp = stdio(root=shared.root, name="huge-read-mcp")
    mcp.initialize()
    with monitor.Window(mcp.pid) as window:
        result = client.stdio_call(mcp, "fs_read", {"path": big_line, "limit": 1}, timeout=60)
    check_rss(window, "fs_read over stdio")
    assert len(client.tool_text(result)) <= ANSWER_BOUND
