"""Fixtures of the adversarial suite (what it covers: README.md here).

`server` is one `weft serve` shared by the light tests (restarted if a test
killed it, which that test reports); `fresh_server` is a private one for tests
that flood sessions or load the server hard; `stdio` starts `weft mcp`
processes. Every server process is watched by monitor.py; the last test
(test_zz_rss.py) checks the peak of each against the 256 MB bound, and the
summary prints the suite's peak.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import client
import monitor

if not os.access(client.WEFT, os.X_OK):  # a setup problem, not a test
    raise RuntimeError(f"no weft binary at {client.WEFT}: build it with "
                       "`scripts/build.sh release weft` or set WEFT_BIN")


@pytest.fixture(scope="session")
def suite_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("adversarial")


class SharedServer:
    """The session's shared `weft serve`; a new one replaces it if it died."""

    def __init__(self, base: Path):
        self.base = base
        self.root = base / "root"
        self.current: client.HttpServer | None = None
        self.deaths: list[str] = []

    def get(self) -> client.HttpServer:
        if self.current is not None and not self.current.alive():
            self.deaths.append(self.current.death())
            self.current.stop()
            self.current = None
        if self.current is None:
            n = len(self.deaths)
            self.current = client.HttpServer(self.root, self.base / "state",
                                              name=f"shared-serve-{n}")
        return self.current


@pytest.fixture(scope="session")
def shared(suite_dir):
    holder = SharedServer(suite_dir / "shared")
    yield holder
    if holder.current is not None:
        holder.current.stop()


@pytest.fixture
def server(shared) -> client.HttpServer:
    """The shared `weft serve` (its root is server.root)."""
    return shared.get()


@pytest.fixture
def fresh_server(tmp_path):
    """A private `weft serve` on an empty root, stopped after the test."""
    started: list[client.HttpServer] = []

    def start(name: str = "fresh-serve", extra: list[str] | None = None) -> client.HttpServer:
        s = client.HttpServer(tmp_path / f"root-{len(started)}", tmp_path / "state", name, extra)
        started.append(s)
        return s

    yield start
    for s in started:
        s.stop()


@pytest.fixture
def stdio(tmp_path):
    """Starts `weft mcp --root ROOT` processes (ROOT defaults to tmp_path/root)."""
    started: list[client.StdioServer] = []

    def start(root: Path | None = None, name: str = "weft-mcp",
              state: Path | None = None) -> client.StdioServer:
        root = root or tmp_path / "root"
        root.mkdir(parents=True, exist_ok=True)
        s = client.StdioServer(root, state or tmp_path / "state", name)
        started.append(s)
        return s

    yield start
    for s in started:
        s.stop()


def pytest_terminal_summary(terminalreporter):
    records = monitor.records()
    if not records:
        return
    peak = max(records, key=lambda r: r.peak_rss_mb)
    terminalreporter.write_line(
        f"adversarial: peak server RSS {peak.peak_rss_mb:.0f} MB ({peak.name}) over "
        f"{len(records)} server processes; bound {monitor.RSS_BOUND_MB} MB")
    out = os.environ.get("WEFT_ADVERSARIAL_FIGURES")
    if out:
        Path(out).write_text(json.dumps({
            "peak_server_rss_mb": round(peak.peak_rss_mb, 1),
            "rss_bound_mb": monitor.RSS_BOUND_MB,
            "server_processes": len(records),
            "per_process": {f"{r.name}#{r.pid}": round(r.peak_rss_mb, 1) for r in records},
        }) + "\n")
