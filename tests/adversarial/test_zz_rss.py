"""The issue's figure: no server's RSS went above 256 MB during the whole suite.

Runs last (files run in name order). Every `weft serve` and `weft mcp` the
suite started was watched by monitor.py; VmHWM, the kernel's high-water mark,
makes each peak exact.
"""

from __future__ import annotations

import monitor


def test_no_server_rss_went_above_the_bound(shared):
    if shared.current is not None:
        monitor.sample(shared.current.record)
    records = monitor.records()
    assert records, "no server process was watched"
    over = [f"{r.name} (pid {r.pid}): {r.peak_rss_mb:.0f} MB"
            + (f", {r.killed_reason}" if r.killed_reason else "")
            for r in records if r.peak_rss_mb > monitor.RSS_BOUND_MB]
    assert not over, f"RSS above {monitor.RSS_BOUND_MB} MB: " + "; ".join(over)


def test_the_shared_server_never_died(shared):
    assert not shared.deaths, "the shared server died: " + " | ".join(shared.deaths)
