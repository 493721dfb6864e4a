"""Resident memory of every weft server process the suite starts.

A background thread reads /proc/<pid>/status (VmRSS, VmHWM) of each watched
process every 50 ms. The kernel's high-water mark (VmHWM) makes the peak
exact even between samples. A process whose RSS passes KILL_MB is killed at
once, so a runaway server fails its test instead of exhausting the machine;
the record says why it died.
"""

from __future__ import annotations

import os
import signal
import threading
from dataclasses import dataclass

# The bound the issue sets for a server under the whole suite.
RSS_BOUND_MB = 256
# Far past the bound: the process is killed (a test has already failed).
KILL_MB = int(os.environ.get("WEFT_ADVERSARIAL_KILL_MB", "1024"))
INTERVAL_S = 0.05


@dataclass
class Record:
    pid: int
    name: str
    peak_rss_mb: float = 0.0  # highest VmHWM seen
    last_rss_mb: float = 0.0
    killed_reason: str | None = None
    done: bool = False


_lock = threading.Lock()
_watched: dict[int, Record] = {}
_all: list[Record] = []
_thread: threading.Thread | None = None
_stop = threading.Event()


def _read_status(pid: int) -> tuple[float, float] | None:
    """(VmRSS, VmHWM) in MB, or None when the process is gone."""
    try:
        with open(f"/proc/{pid}/status") as f:
            text = f.read()
    except OSError:
        return None
    values = {}
    for line in text.splitlines():
        if line.startswith(("VmRSS:", "VmHWM:")):
            name, _, rest = line.partition(":")
            values[name] = int(rest.split()[0]) / 1024
    if "VmRSS" not in values:  # a zombie
        return None
    return values["VmRSS"], values.get("VmHWM", values["VmRSS"])


def sample(record: Record) -> None:
    status = _read_status(record.pid)
    if status is None:
        return
    rss, hwm = status
    with _lock:
        record.last_rss_mb = rss
        record.peak_rss_mb = max(record.peak_rss_mb, hwm, rss)
        runaway = rss > KILL_MB and record.killed_reason is None
        if runaway:
            record.killed_reason = (f"killed by the suite: RSS {rss:.0f} MB passed "
                                    f"{KILL_MB} MB (the bound is {RSS_BOUND_MB} MB)")
    if runaway:
        try:
            os.kill(record.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def _run() -> None:
    while not _stop.wait(INTERVAL_S):
        with _lock:
            records = list(_watched.values())
        for record in records:
            sample(record)


def start() -> None:
    global _thread
    if _thread is None:
        _stop.clear()
        _thread = threading.Thread(target=_run, name="rss-monitor", daemon=True)
        _thread.start()


def stop() -> None:
    global _thread
    _stop.set()
    if _thread is not None:
        _thread.join()
        _thread = None


def watch(pid: int, name: str) -> Record:
    record = Record(pid, name)
    with _lock:
        _watched[pid] = record
        _all.append(record)
    start()
    return record


def unwatch(record: Record) -> None:
    with _lock:
        _watched.pop(record.pid, None)
        record.done = True


def records() -> list[Record]:
    """Every process watched so far (running or not)."""
    with _lock:
        return list(_all)


def peak_mb() -> float:
    with _lock:
        return max((r.peak_rss_mb for r in _all), default=0.0)


class Window:
    """Highest VmRSS of one process while the `with` block runs (sampled every 10 ms)."""

    def __init__(self, pid: int):
        self.pid = pid
        self.max_rss_mb = 0.0
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while True:
            status = _read_status(self.pid)
            if status is not None:
                self.max_rss_mb = max(self.max_rss_mb, status[0])
            if self._done.wait(0.01):
                return

    def __enter__(self) -> "Window":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._done.set()
        self._thread.join()
