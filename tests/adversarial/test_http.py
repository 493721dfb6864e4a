"""Issue 29 item 7: HTTP details a hostile page or client can exploit.

DNS rebinding (a foreign Host on loopback), broken framing that used to close
the socket without a 400, and Content-Type / Accept that were never checked.
"""

from __future__ import annotations

import json

import pytest

import client

INIT = json.dumps(client.jsonrpc("initialize", client.initialize_params(), 1)).encode()


def raw_exchange(server, data: bytes, timeout: float = 10) -> client.Response:
    """Sends raw bytes, half-closes nothing, and reads one response."""
    with server.connect(timeout=timeout) as conn:
        conn.send_raw(data)
        return conn.read_response()


def post_head(port: int, extra: str, host: str | None = None) -> bytes:
    host = host or f"127.0.0.1:{port}"
    return (f"POST /mcp HTTP/1.1\r\nHost: {host}\r\nAccept: {client.ACCEPT_BOTH}\r\n"
            f"Content-Type: application/json\r\n{extra}").encode()


# --- Host (DNS rebinding) ---


@pytest.mark.parametrize("host", ["evil.example", "evil.example:{port}", "attacker.test:80",
                                  "127.0.0.1.evil.example:{port}", "localhost.evil.example"])
def test_foreign_host_is_refused(server, host):
    host = host.format(port=server.port)
    with server.connect() as conn:
        res = conn.post(INIT, headers={"Host": host})
    assert res.status in (400, 403, 421), (host, res.status, res.body[:200])
    assert res.header("mcp-session-id") is None, "a session was created for a foreign Host"


def test_foreign_host_with_matching_origin_is_refused(server):
    """A rebinding page's own requests carry its (attacker) origin and host."""
    host = f"rebind.example:{server.port}"
    with server.connect() as conn:
        res = conn.post(INIT, headers={"Host": host, "Origin": f"http://{host}"})
    assert res.status in (400, 403, 421), res.status


def test_missing_host_is_refused(server):
    data = (f"POST /mcp HTTP/1.1\r\nAccept: {client.ACCEPT_BOTH}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(INIT)}\r\n\r\n").encode()
    res = raw_exchange(server, data + INIT)
    assert res.status in (400, 403, 421), res.status
    assert res.header("mcp-session-id") is None


@pytest.mark.parametrize("host", ["127.0.0.1:{port}", "localhost:{port}", "[::1]:{port}",
                                  "localhost", "127.0.0.1"])
def test_loopback_host_names_are_accepted(server, host):
    with server.connect() as conn:
        res = conn.post(INIT, headers={"Host": host.format(port=server.port)})
    assert res.status == 200, (host, res.status, res.body[:200])


# --- framing ---

BROKEN = {
    "garbage_request_line": b"THIS IS NOT HTTP\r\n\r\n",
    "bad_content_length": "Content-Length: abc\r\n\r\n{}",
    "negative_content_length": "Content-Length: -5\r\n\r\n{}",
    "conflicting_content_lengths": "Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}x",
    "bad_chunk_size": "Transfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n",
    "chunked_and_length": "Transfer-Encoding: chunked\r\nContent-Length: 2\r\n\r\nzz\r\n",
    "bad_header_line": "No colon here\r\nContent-Length: 2\r\n\r\n{}",
}


@pytest.mark.parametrize("name", list(BROKEN))
def test_broken_framing_gets_400(server, name):
    data = BROKEN[name]
    if isinstance(data, str):
        data = post_head(server.port, data)
    try:
        res = raw_exchange(server, data)
    except client.ConnectionClosed as closed:
        pytest.fail(f"{name}: the connection was closed without a response ({closed})")
    assert res.status == 400, (name, res.status, res.body[:200])
    server.assert_alive(name)


def test_oversize_header_block_is_answered(server):
    data = post_head(server.port, "X-Junk: " + "a" * (200 * 1024) + "\r\nContent-Length: 2\r\n"
                     "\r\n{}")
    try:
        res = raw_exchange(server, data)
    except client.ConnectionClosed as closed:
        pytest.fail(f"closed without a response ({closed})")
    assert res.status in (400, 431), res.status


def test_oversize_body_gets_413_without_reading_it(server):
    head = post_head(server.port, f"Content-Length: {64 << 20}\r\n\r\n")
    with server.connect(timeout=10) as conn:
        conn.send_raw(head + b"[" * 1024)
        res = conn.read_response()
    assert res.status == 413, res.status


def test_slow_client_does_not_block_others(server):
    """A connection that sends half a request must not hold up another client."""
    with server.connect() as slow:
        slow.send_raw(post_head(server.port, "Content-Length: 100\r\n\r\n{"))
        assert server.responsive(timeout=5)


# --- Content-Type and Accept ---


@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded",
                                          "multipart/form-data; boundary=x"])
def test_wrong_content_type_gets_415(server, content_type):
    with server.connect() as conn:
        res = conn.post(INIT, content_type=content_type)
    assert res.status == 415, (content_type, res.status, res.body[:200])
    assert res.header("mcp-session-id") is None


def test_missing_content_type_is_refused(server):
    with server.connect() as conn:
        res = conn.post(INIT, content_type=None)
    assert res.status in (400, 415), (res.status, res.body[:200])
    assert res.header("mcp-session-id") is None


def test_json_content_type_with_charset_is_accepted(server):
    with server.connect() as conn:
        res = conn.post(INIT, content_type="application/json; charset=utf-8")
    assert res.status == 200, (res.status, res.body[:200])


@pytest.mark.parametrize("accept", ["text/html", "image/png", "text/plain"])
def test_accept_without_json_or_event_stream_gets_406(server, accept):
    with server.connect() as conn:
        res = conn.post(INIT, accept=accept)
    assert res.status == 406, (accept, res.status, res.body[:200])
    assert res.header("mcp-session-id") is None


def test_get_stream_accept_must_allow_event_stream(server):
    session = server.session()
    try:
        res = session.conn.request("GET", accept="application/json", content_type=None,
                                   headers=session.headers())
    finally:
        session.close()
    assert res.status in (405, 406), res.status
