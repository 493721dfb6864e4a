"""Issue 29 item 8 (stdio): every line gets an answer, including a bad last one.

An oversize final line at end of input used to be dropped without an error.
"""

from __future__ import annotations

import queue

import client

LIMIT = 16 << 20  # the default message limit


def replies_until_exit(mcp: client.StdioServer, timeout: float = 30) -> list:
    out = []
    while True:
        try:
            message = mcp.receive(timeout)
        except queue.Empty:
            raise AssertionError(f"output did not end within {timeout}s") from None
        if message is None:
            return out
        out.append(message)


def test_oversize_final_line_at_eof_gets_an_error(stdio):
    mcp = stdio(name="oversize-eof-mcp")
    mcp.initialize()
    mcp.send(b"a" * (LIMIT + 1024))  # no newline: the input ends inside the line
    mcp.close_input()
    replies = replies_until_exit(mcp)
    errors = [r for r in replies if "error" in r]
    assert errors, f"no error for the oversize last line; got {replies}"
    assert errors[-1]["error"]["code"] in (-32600, -32700), errors[-1]
    assert mcp.proc.wait(timeout=10) >= 0


def test_oversize_line_gets_an_error_and_the_server_goes_on(stdio):
    mcp = stdio(name="oversize-mcp")
    mcp.initialize()
    mcp.send(b"[" * (LIMIT + 1024) + b"\n")
    reply = mcp.receive(timeout=30)
    assert reply is not None and reply.get("error", {}).get("code") == -32600, reply
    assert "result" in mcp.request("ping")


def test_final_line_without_newline_is_answered(stdio):
    mcp = stdio(name="eof-mcp")
    mcp.initialize()
    mcp.send(b'{"jsonrpc":"2.0","id":"last","method":"ping"}')
    mcp.close_input()
    replies = replies_until_exit(mcp)
    assert any(r.get("id") == "last" and "result" in r for r in replies), replies


def test_garbage_lines_are_answered_and_survived(stdio):
    mcp = stdio(name="garbage-mcp")
    mcp.initialize()
    garbage = [b"\x00\x01\x02", b"\xff\xfe{not utf-8}", b'{"jsonrpc":"2.0","id":', b"null",
               b'{"jsonrpc":"2.0","id":{"obj":1},"method":"ping"}', b"[]",
               b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"fs_read",'
               b'"arguments":{"path":"../../etc/passwd"}}}']
    for line in garbage:
        mcp.send(line + b"\n")
    replies = [mcp.receive(timeout=30) for _ in garbage]
    assert all(r is not None for r in replies), replies
    # Every bad message is a JSON-RPC error except the traversal, refused by the tool.
    for line, reply in zip(garbage[:-1], replies[:-1]):
        assert "error" in reply, (line, reply)
    traversal = replies[-1]
    assert "error" in traversal or traversal["result"].get("isError"), traversal
    assert "root:x:0:0" not in str(traversal)
    assert "result" in mcp.request("ping")
    mcp.assert_alive("after garbage")
