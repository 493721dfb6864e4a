"""kill -9 of the workspace kernel in the middle of a mixed load.

Two `weft mcp` on one root: the first runs the kernel, the second forwards to
it. Agents edit through both while the test rewrites other files directly on
disk; the kernel process is killed with SIGKILL mid-load. The front end's next
call may fail once (it may or may not have been applied), then it works: it
took the kernel over. Then everything is killed and a fresh `weft mcp` starts
over the stale socket and lock: every acknowledged agent edit is in its file
and in the file's history, every disk edit stayed as the test last wrote it,
and for every file the disk and fs_read agree.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

import client

AGENT_FILES = [f"agent-{i}.txt" for i in range(3)]
DISK_FILES = [f"disk-{i}.txt" for i in range(3)]
ANCHOR = "@@END@@"
LOAD_BEFORE_KILL = 0.8  # seconds
LOAD_AFTER_KILL = 0.8


class AgentLoad(threading.Thread):
    """One agent editing AGENT_FILES in turn through `server`, one call at a time."""

    def __init__(self, server: client.StdioServer, tag: str, stop: threading.Event):
        super().__init__(daemon=True)
        self.server, self.tag, self.stop_event = server, tag, stop
        self.acknowledged: dict[str, list[str]] = {f: [] for f in AGENT_FILES}
        self.failures: list[tuple[float, str]] = []  # (time.monotonic(), why)
        self.gone = False  # its process died

    def run(self) -> None:
        n = 0
        while not self.stop_event.is_set():
            n += 1
            path = AGENT_FILES[n % len(AGENT_FILES)]
            marker = f"{self.tag}-{n}"
            try:
                reply = self.server.request("tools/call", {"name": "fs_edit", "arguments": {
                    "path": path,
                    "edits": [{"old_string": ANCHOR, "new_string": f"{marker}\n{ANCHOR}"}]}},
                    timeout=20)
            except AssertionError as e:  # output ended: the process is gone
                self.failures.append((time.monotonic(), str(e)[:200]))
                self.gone = True
                return
            result = reply.get("result")
            if result is not None and not result.get("isError"):
                self.acknowledged[path].append(marker)
            else:
                self.failures.append((time.monotonic(), str(reply)[:300]))

    def total(self) -> int:
        return sum(len(v) for v in self.acknowledged.values())


class DiskLoad(threading.Thread):
    """Rewrites DISK_FILES directly: in place (truncate + write) and by rename, in turn."""

    def __init__(self, root: Path, stop: threading.Event):
        super().__init__(daemon=True)
        self.root, self.stop_event = root, stop
        self.last: dict[str, str] = {}
        self.writes = 0

    def run(self) -> None:
        n = 0
        while not self.stop_event.is_set():
            n += 1
            name = DISK_FILES[n % len(DISK_FILES)]
            text = "".join(f"disk line {k} of write {n}\n" for k in range(n % 7 + 1))
            target = self.root / name
            if n % 2:
                target.write_text(text)
            else:
                tmp = self.root / f".{name}.tmp{n}"
                tmp.write_text(text)
                os.replace(tmp, target)
            self.last[name] = text
            self.writes += 1
            time.sleep(0.005)


def state_subdir(state: Path) -> Path:
    found = list((state / "weft").glob("*/kernel.lock"))
    assert len(found) == 1, f"expected one kernel state directory, found {found}"
    return found[0].parent


def test_kill_kernel_mid_load(stdio, tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    state = tmp_path / "state"
    for name in AGENT_FILES:
        (root / name).write_text(f"{name}\n{ANCHOR}\n")
    for name in DISK_FILES:
        (root / name).write_text(f"{name} as it started\n")

    kernel = stdio(root=root, name="crash-kernel", state=state)
    kernel.initialize(name="agent-k")
    front = stdio(root=root, name="crash-front", state=state)
    front.initialize(name="agent-f")
    assert "became the kernel" in kernel.stderr_tail(4000), kernel.stderr_tail()
    assert "became the kernel" not in front.stderr_tail(4000), front.stderr_tail()

    stop_agents, stop_disk = threading.Event(), threading.Event()
    k_load = AgentLoad(kernel, "k", stop_agents)
    f_load = AgentLoad(front, "f", stop_agents)
    disk = DiskLoad(root, stop_disk)
    for t in (k_load, f_load, disk):
        t.start()
    time.sleep(LOAD_BEFORE_KILL)
    f_before = f_load.total()
    killed_at = time.monotonic()
    os.kill(kernel.pid, signal.SIGKILL)
    kernel.proc.wait(timeout=10)
    time.sleep(LOAD_AFTER_KILL)
    stop_agents.set()
    stop_disk.set()
    for t in (k_load, f_load, disk):
        t.join(timeout=30)
        assert not t.is_alive(), "a load thread hung"

    print(f"kernel edits {k_load.total()}, front end {f_before} before the kill and "
          f"{f_load.total() - f_before} after, {len(f_load.failures)} failed; "
          f"{disk.writes} disk writes")
    # The front end: at most one failed call (the one in flight), then it works as the kernel.
    assert k_load.gone, "the killed kernel's client did not see it go"
    assert k_load.total() > 10 and f_before > 10, (k_load.total(), f_before)
    early = [f for f in f_load.failures if f[0] < killed_at]
    late = [f for f in f_load.failures if f[0] >= killed_at]
    assert not early, early[:3]
    assert len(late) <= 1, f"{len(late)} front-end calls failed after the kill: " \
        f"{[(round(t - killed_at, 4), why) for t, why in late[:3]]}; front end's log: " \
        f"{front.stderr_tail(1500)}"
    f_after = f_load.total() - f_before
    assert f_after > 10, f"only {f_after} front-end edits after the kill"
    front.assert_alive("after the kernel was killed")
    assert "took over as the kernel" in front.stderr_tail(4000), front.stderr_tail()
    assert disk.writes > 20

    # Kill everything; the socket and lock stay behind. A fresh weft mcp replaces them.
    os.kill(front.pid, signal.SIGKILL)
    front.proc.wait(timeout=10)
    sub = state_subdir(state)
    assert (sub / "kernel.sock").exists(), "kill -9 should leave the kernel socket behind"
    fresh = stdio(root=root, name="crash-fresh", state=state)
    fresh.initialize(name="agent-check")
    assert "became the kernel" in fresh.stderr_tail(4000), fresh.stderr_tail()

    disk_now = {p.name: p.read_text() for p in root.glob("*.txt")}
    for name in AGENT_FILES:
        lines = set(disk_now[name].splitlines())
        for load in (k_load, f_load):
            lost = [m for m in load.acknowledged[name] if m not in lines]
            assert not lost, f"{name}: {len(lost)} of {len(load.acknowledged[name])} " \
                             f"acknowledged edits lost, e.g. {lost[:5]}"
        assert ANCHOR in lines
        result = client.stdio_call(fresh, "fs_history", {"path": name, "limit": 10000})
        assert not result.get("isError"), client.tool_text(result)
        changes = result["structuredContent"]["changes"]
        for load, who in ((k_load, "agent:agent-k"), (f_load, "agent:agent-f")):
            mine = sum(1 for c in changes if c["author"] == who)
            # Unacknowledged calls in flight at the kill may be there too.
            assert len(load.acknowledged[name]) <= mine <= len(load.acknowledged[name]) + 1, \
                f"{name}: {len(load.acknowledged[name])} acknowledged edits by {who}, " \
                f"{mine} in its history"
    for name in DISK_FILES:
        assert disk_now[name] == disk.last.get(name, f"{name} as it started\n"), \
            f"{name}: the disk edit was not kept"
        result = client.stdio_call(fresh, "fs_history", {"path": name, "limit": 10000})
        assert not result.get("isError"), client.tool_text(result)
        authors = {c["author"] for c in result["structuredContent"]["changes"]}
        assert not any(a.startswith("agent:") for a in authors), authors
    for name in AGENT_FILES + DISK_FILES:
        result = client.stdio_call(fresh, "fs_read", {"path": name})
        assert not result.get("isError"), client.tool_text(result)
        assert client.read_lines(result) == disk_now[name].splitlines(), name
    # The fresh kernel writes nothing of its own over what is on disk.
    assert {p.name: p.read_text() for p in root.glob("*.txt")} == disk_now


def test_stale_socket_after_kill_is_replaced(stdio, tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    (root / "a.txt").write_text("a\n")
    state = tmp_path / "state"
    first = stdio(root=root, name="stale-first", state=state)
    first.initialize()
    os.kill(first.pid, signal.SIGKILL)
    first.proc.wait(timeout=10)
    sub = state_subdir(state)
    assert (sub / "kernel.sock").exists()
    second = stdio(root=root, name="stale-second", state=state)
    second.initialize()
    result = client.stdio_call(second, "fs_edit", {"path": "a.txt", "edits": [
        {"old_string": "a", "new_string": "b"}]})
    assert not result.get("isError"), client.tool_text(result)
    assert (root / "a.txt").read_text() == "b\n"
    tail = second.stderr_tail(4000)
    assert "became the kernel" in tail, tail
    assert "stale" in tail, tail
    # A front end started now forwards to it.
    third = stdio(root=root, name="stale-third", state=state)
    third.initialize()
    result = client.stdio_call(third, "fs_history", {"path": "a.txt"})
    assert [c["author"] for c in result["structuredContent"]["changes"]] == \
        ["agent:weft-adversarial", "source:disk"]
    assert "became the kernel" not in third.stderr_tail(4000)
