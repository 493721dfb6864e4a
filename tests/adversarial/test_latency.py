"""The issue's latency figure needs a tool call to cost no fixed wait.

A tools/call answered as an SSE stream is written in several small pieces
(header, event, last chunk). Without TCP_NODELAY, Nagle's algorithm holds the
later pieces until the client acknowledges the first, and the client delays
that acknowledgement by about 40 ms: every streamed call then takes ~45 ms on
an idle server, which alone decides the p99 of `scripts/bench.sh mcp_load`.
"""

from __future__ import annotations

import time

import pytest

import client

CALLS = 20


@pytest.mark.parametrize("accept", [client.ACCEPT_BOTH, "application/json"])
def test_a_tool_call_on_an_idle_server_is_fast(server, accept):
    (server.root / "latency.txt").write_text("a line of text\n" * 100)
    session = server.session()
    times = []
    try:
        for n in range(CALLS):
            start = time.monotonic()
            res = session.post(client.tool_call("fs_read", {"path": "latency.txt"}, 100 + n),
                               accept=accept)
            times.append((time.monotonic() - start) * 1000)
            assert res.status == 200 and "result" in res.reply(), res.body[:200]
    finally:
        session.close()
    times.sort()
    median = times[len(times) // 2]
    assert median < 20, f"median {median:.1f} ms per fs_read of a 1.5 KB file (Accept: {accept})"
