"""Issue 29 item 4: a batch must not amplify into gigabytes or minutes of work.

In a 2025-03-26 session (the last version with JSON-RPC batches) a 689 KB
batch of 5,000 fs_read calls drove RSS to 3.4 GB and kept the server busy
70 s after the client left.
"""

from __future__ import annotations

import json
import time

import client
import monitor

CALLS = 5000


def batch_body() -> bytes:
    calls = [client.tool_call("fs_read", {"path": "batch.txt"}, n) for n in range(1, CALLS + 1)]
    return json.dumps(calls).encode()


def prepare(srv: client.HttpServer) -> client.McpHttpSession:
    line = "the quick brown fox jumps over the lazy dog, again and again and again\n"
    (srv.root / "batch.txt").write_text(line * (100_000 // len(line)))  # ~100 KB
    return srv.session(client.BATCH_VERSION, timeout=60)


def assert_rss_bounded(srv: client.HttpServer) -> None:
    monitor.sample(srv.record)
    assert srv.record.peak_rss_mb <= monitor.RSS_BOUND_MB, (
        f"server peak RSS {srv.record.peak_rss_mb:.0f} MB > {monitor.RSS_BOUND_MB} MB "
        f"({srv.record.killed_reason or 'alive'})")


def test_batch_of_5000_reads_is_refused_or_bounded(fresh_server):
    srv = fresh_server("batch-serve")
    session = prepare(srv)
    body = batch_body()
    assert len(body) > 500_000
    start = time.monotonic()
    try:
        res = session.post(body, max_body=64 << 20)
    except (client.ConnectionClosed, OSError) as error:
        raise AssertionError(f"no answer to the batch ({error}); {srv.death()}") from None
    finally:
        session.close()
    elapsed = time.monotonic() - start
    srv.assert_alive("after the batch")
    assert_rss_bounded(srv)
    assert res.status in (200, 400, 413), res.status
    assert len(res.body) <= 32 << 20, f"a {len(res.body) >> 20} MB answer to one batch"
    assert elapsed < 30, f"the batch took {elapsed:.1f} s"


def test_server_goes_idle_when_the_batch_client_leaves(fresh_server):
    srv = fresh_server("batch-leave-serve")
    session = prepare(srv)
    session.conn.send_raw(
        (f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{srv.port}\r\nContent-Type: application/json\r\n"
         f"Accept: {client.ACCEPT_BOTH}\r\nMcp-Session-Id: {session.session_id}\r\n"
         f"MCP-Protocol-Version: {client.BATCH_VERSION}\r\n"
         f"Content-Length: {len(batch_body())}\r\n\r\n").encode() + batch_body())
    time.sleep(0.5)
    session.close()  # the client leaves without reading the answer
    left = time.monotonic()
    idle = False
    while time.monotonic() - left < 10 and srv.alive():
        before = srv.cpu_seconds()
        time.sleep(1.0)
        if not srv.alive():
            break
        if srv.cpu_seconds() - before < 0.2:
            idle = True
            break
    srv.assert_alive("after the batch client left")
    assert_rss_bounded(srv)
    assert idle, "the server was still busy 10 s after the batch's client left"
    assert srv.responsive(timeout=5)
