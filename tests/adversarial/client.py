"""A small hostile client for the adversarial suite.

Drives the real `weft` binary: `weft serve` over raw HTTP/1.1 sockets (so a
test can send broken framing, odd headers or huge bodies) and `weft mcp` over
stdio. Every process started here is registered with the RSS monitor
(monitor.py), which records its peak resident memory and kills it if it runs
away, so one test cannot take the machine down.

Only the standard library is used.
"""

from __future__ import annotations

import json
import os
import queue
import re
import socket
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import monitor

REPO = Path(__file__).resolve().parents[2]
WEFT = os.environ.get("WEFT_BIN") or str(REPO / "build" / "release" / "weft")

# The versions the suite speaks: the newest legacy one, and the last one with batches.
LATEST = "2025-11-25"
BATCH_VERSION = "2025-03-26"
ACCEPT_BOTH = "application/json, text/event-stream"


def weft_env(state_dir: Path) -> dict[str, str]:
    """The environment for a weft process: its own state directory (snapshots, locks)."""
    env = dict(os.environ)
    env["XDG_STATE_HOME"] = str(state_dir)
    return env


def run_cli(args: list[str], timeout: float = 30, **kwargs) -> subprocess.CompletedProcess:
    """Runs `weft ARGS` to completion (raises subprocess.TimeoutExpired on a hang)."""
    return subprocess.run([WEFT, *args], capture_output=True, timeout=timeout, check=False,
                          **kwargs)


def jsonrpc(method: str, params: dict | None = None, id_: int | str | None = 1) -> dict:
    message: dict = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        message["params"] = params
    if id_ is not None:
        message["id"] = id_
    return message


def initialize_params(version: str = LATEST, name: str = "weft-adversarial") -> dict:
    """initialize's params; clientInfo.name is the author of the client's changes (agent:NAME)."""
    return {"protocolVersion": version, "capabilities": {},
            "clientInfo": {"name": name, "version": "1"}}


def tool_call(name: str, arguments: dict, id_: int | str = 1) -> dict:
    return jsonrpc("tools/call", {"name": name, "arguments": arguments}, id_)


def deep_objects(depth: int) -> str:
    """`{"a":{"a":...1...}}` nested `depth` times."""
    return '{"a":' * depth + "1" + "}" * depth


def deep_arrays(depth: int) -> str:
    return "[" * depth + "]" * depth


def tool_text(result: dict) -> str:
    """The text content of a tools/call result."""
    return "".join(c.get("text", "") for c in result.get("content", []) if c.get("type") == "text")


def read_lines(result: dict) -> list[str]:
    """An fs_read result's numbered text back to the file's lines."""
    return [re.sub(r"^\s*\d+\t", "", line) for line in tool_text(result).splitlines()]


# ---------------------------------------------------------------------------
# HTTP


class ConnectionClosed(Exception):
    """The server closed the connection before sending a (complete) response."""


@dataclass
class Response:
    status: int
    headers: dict[str, str]
    body: bytes = b""
    elapsed: float = 0.0
    cut: bool = False  # the body passed max_body and was not read to its end

    def header(self, name: str) -> str | None:
        return self.headers.get(name.lower())

    def messages(self) -> list:
        """The JSON-RPC messages the body carries (a JSON body or SSE `data:` events)."""
        if not self.body:
            return []
        if (self.header("content-type") or "").startswith("text/event-stream"):
            out = []
            for line in self.body.decode("utf-8", "replace").splitlines():
                if line.startswith("data:"):
                    out.append(json.loads(line[5:].strip()))
            return out
        return [json.loads(self.body)]

    def reply(self):
        """The last message: the response to the request (progress/logs come first)."""
        messages = self.messages()
        if not messages:
            raise AssertionError(f"HTTP {self.status} carried no JSON-RPC message")
        return messages[-1]


class HttpConnection:
    """One keep-alive HTTP/1.1 connection to a weft server."""

    def __init__(self, port: int, host: str = "127.0.0.1", timeout: float = 30):
        self.port = port
        self.host = host
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.buf = bytearray()

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def settimeout(self, seconds: float) -> None:
        self.sock.settimeout(seconds)

    def send_raw(self, data: bytes) -> None:
        self.sock.sendall(data)

    def _fill(self) -> bool:
        try:
            chunk = self.sock.recv(1 << 16)
        except ConnectionResetError:
            chunk = b""
        if not chunk:
            return False
        self.buf += chunk
        return True

    def _read_until(self, marker: bytes, limit: int = 1 << 20) -> bytes:
        start = 0
        while (at := self.buf.find(marker, start)) < 0:
            start = max(0, len(self.buf) - len(marker))
            if len(self.buf) > limit or not self._fill():
                raise ConnectionClosed(f"closed before {marker!r}; got {bytes(self.buf[:200])!r}")
        head = bytes(self.buf[:at])
        del self.buf[:at + len(marker)]
        return head

    def _read_exact(self, n: int) -> bytes:
        while len(self.buf) < n:
            if not self._fill():
                raise ConnectionClosed(f"closed after {len(self.buf)} of {n} body bytes")
        out = bytes(self.buf[:n])
        del self.buf[:n]
        return out

    def read_response(self, max_body: int | None = None) -> Response:
        """Reads one response. With max_body, stops (and closes) once the body exceeds it."""
        start = time.monotonic()
        head = self._read_until(b"\r\n\r\n").decode("latin-1")
        lines = head.split("\r\n")
        match = re.match(r"HTTP/1\.[01] (\d{3})", lines[0])
        if not match:
            raise AssertionError(f"not an HTTP status line: {lines[0]!r}")
        status = int(match.group(1))
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        body = b""
        cut = False
        if headers.get("transfer-encoding", "").lower() == "chunked":
            parts = []
            total = 0
            while True:
                size = int(self._read_until(b"\r\n").split(b";")[0], 16)
                if size == 0:
                    self._read_until(b"\r\n")
                    break
                parts.append(self._read_exact(size))
                total += size
                self._read_exact(2)
                if max_body is not None and total > max_body:
                    self.close()
                    cut = True
                    break
            body = b"".join(parts)
        elif "content-length" in headers:
            length = int(headers["content-length"])
            if max_body is not None and length > max_body:
                self.close()
                return Response(status, headers, b"", time.monotonic() - start, cut=True)
            body = self._read_exact(length)
        elif status >= 200 and status not in (204, 304):
            while self._fill():
                if max_body is not None and len(self.buf) > max_body:
                    cut = True
                    break
            body = bytes(self.buf)
            self.buf.clear()
        return Response(status, headers, body, time.monotonic() - start, cut)

    def request(self, method: str, body: bytes | str | dict | list = b"", *,
                path: str = "/mcp", headers: dict[str, str] | None = None,
                content_type: str | None = "application/json",
                accept: str | None = ACCEPT_BOTH, max_body: int | None = None) -> Response:
        """Sends one request (a dict/list body is JSON-encoded) and reads its response."""
        if isinstance(body, (dict, list)):
            body = json.dumps(body)
        if isinstance(body, str):
            body = body.encode()
        all_headers = {"Host": f"{self.host}:{self.port}"}
        if content_type is not None and method == "POST":
            all_headers["Content-Type"] = content_type
        if accept is not None:
            all_headers["Accept"] = accept
        all_headers.update(headers or {})
        if method == "POST" or body:
            all_headers["Content-Length"] = str(len(body))
        head = f"{method} {path} HTTP/1.1\r\n" + "".join(
            f"{k}: {v}\r\n" for k, v in all_headers.items() if v is not None) + "\r\n"
        self.send_raw(head.encode("latin-1") + body)
        return self.read_response(max_body=max_body)

    def post(self, body, **kwargs) -> Response:
        return self.request("POST", body, **kwargs)


class McpHttpSession:
    """A legacy-era MCP session over one HTTP connection (initialize, then calls)."""

    def __init__(self, port: int, version: str = LATEST, timeout: float = 30):
        self.conn = HttpConnection(port, timeout=timeout)
        self.version = version
        self.next_id = 1
        res = self.conn.post(jsonrpc("initialize", initialize_params(version), 0))
        self.init_response = res
        self.session_id = res.header("mcp-session-id")
        if res.status != 200 or not self.session_id:
            self.conn.close()
            raise SessionRefused(res)
        self.notify("notifications/initialized")

    def headers(self) -> dict[str, str]:
        return {"Mcp-Session-Id": self.session_id, "MCP-Protocol-Version": self.version}

    def post(self, body, **kwargs) -> Response:
        headers = self.headers()
        headers.update(kwargs.pop("headers", None) or {})
        return self.conn.post(body, headers=headers, **kwargs)

    def notify(self, method: str, params: dict | None = None) -> Response:
        return self.post(jsonrpc(method, params, None))

    def rpc(self, method: str, params: dict | None = None, max_body: int | None = None
            ) -> Response:
        self.next_id += 1
        return self.post(jsonrpc(method, params, self.next_id), max_body=max_body)

    def call(self, name: str, arguments: dict, max_body: int = 64 << 20) -> dict:
        """tools/call; returns the result object, raising on a protocol error, an HTTP error
        or an answer over max_body bytes (not read further)."""
        res = self.rpc("tools/call", {"name": name, "arguments": arguments}, max_body)
        if res.cut:
            raise AssertionError(f"{name}: the answer is over {max_body} bytes")
        if res.status != 200:
            raise AssertionError(f"{name}: HTTP {res.status}: {res.body[:300]!r}")
        reply = res.reply()
        if "error" in reply:
            raise AssertionError(f"{name}: JSON-RPC error {reply['error']}")
        return reply["result"]

    def close(self) -> None:
        self.conn.close()


class SessionRefused(Exception):
    def __init__(self, response: Response):
        super().__init__(f"initialize answered HTTP {response.status}: {response.body[:200]!r}")
        self.response = response


# ---------------------------------------------------------------------------
# Processes


class WeftProcess:
    """A long-running weft process registered with the RSS monitor."""

    def __init__(self, args: list[str], name: str, state_dir: Path, stdin=subprocess.DEVNULL,
                 stdout=subprocess.PIPE):
        state_dir.mkdir(parents=True, exist_ok=True)
        self.name = name
        self.stderr_path = state_dir / f"{name}.stderr"
        self._stderr = open(self.stderr_path, "wb")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen([WEFT, *args], stdin=stdin, stdout=stdout,
                                     stderr=self._stderr, env=weft_env(state_dir))
        self.pid = self.proc.pid
        self.record = monitor.watch(self.pid, name)

    def alive(self) -> bool:
        return self.proc.poll() is None

    def death(self) -> str:
        """Why the process is gone, for assertion messages."""
        try:
            rc = self.proc.wait(timeout=2)  # a crash may still be under way
        except subprocess.TimeoutExpired:
            return f"{self.name} is still running"
        why = f"exit status {rc}" if rc >= 0 else f"killed by signal {-rc}"
        if self.record.killed_reason:
            why += f" ({self.record.killed_reason})"
        return f"{self.name} {why}; stderr tail: {self.stderr_tail()!r}"

    def stderr_tail(self, n: int = 600) -> str:
        try:
            return self.stderr_path.read_bytes()[-n:].decode("utf-8", "replace")
        except OSError:
            return ""

    def assert_alive(self, context: str = "") -> None:
        assert self.alive(), f"{context}: {self.death()}"

    def cpu_seconds(self) -> float:
        """User + system CPU time the process has used so far."""
        with open(f"/proc/{self.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        ticks = os.sysconf("SC_CLK_TCK")
        return (int(fields[11]) + int(fields[12])) / ticks

    def stop(self) -> None:
        monitor.sample(self.record)
        if self.alive():
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        monitor.unwatch(self.record)
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream:
                try:
                    stream.close()
                except OSError:
                    pass
        self._stderr.close()


class HttpServer(WeftProcess):
    """`weft serve --root ROOT --port 0`, with the port it printed."""

    def __init__(self, root: Path, state_dir: Path, name: str = "weft-serve",
                 extra: list[str] | None = None):
        root.mkdir(parents=True, exist_ok=True)
        super().__init__(["serve", "--root", str(root), "--port", "0", *(extra or [])], name,
                         state_dir)
        self.root = root
        self.port = self._read_port()

    def _read_port(self) -> int:
        found: queue.Queue = queue.Queue()

        def scan():
            for raw in self.proc.stdout:
                m = re.search(rb"http://[^\s/]+:(\d+)/mcp", raw)
                if m:
                    found.put(int(m.group(1)))
                    break
            found.put(None)
            for _ in self.proc.stdout:  # keep draining so the banner never blocks
                pass

        threading.Thread(target=scan, daemon=True).start()
        try:
            port = found.get(timeout=20)
        except queue.Empty:
            port = None
        if port is None:
            self.stop()
            raise RuntimeError(f"weft serve printed no endpoint: {self.death()}")
        return port

    def connect(self, timeout: float = 30) -> HttpConnection:
        return HttpConnection(self.port, timeout=timeout)

    def session(self, version: str = LATEST, timeout: float = 30) -> McpHttpSession:
        return McpHttpSession(self.port, version, timeout)

    def responsive(self, timeout: float = 5) -> bool:
        """Whether a fresh connection gets a ping answered within `timeout`."""
        try:
            session = McpHttpSession(self.port, timeout=timeout)
            try:
                return session.rpc("ping").status == 200
            finally:
                session.close()
        except (OSError, ConnectionClosed, SessionRefused):
            return False


class StdioServer(WeftProcess):
    """`weft mcp --root ROOT` with a reader thread collecting its output lines."""

    def __init__(self, root: Path, state_dir: Path, name: str = "weft-mcp",
                 extra: list[str] | None = None):
        super().__init__(["mcp", "--root", str(root), *(extra or [])], name, state_dir,
                         stdin=subprocess.PIPE)
        self.lines: queue.Queue = queue.Queue()
        self.pending: dict = {}
        self.next_id = 1000
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for raw in self.proc.stdout:
            try:
                self.lines.put(json.loads(raw))
            except ValueError:
                self.lines.put({"unparsable": raw[:200].decode("utf-8", "replace")})
        self.lines.put(None)  # end of output

    def send(self, message) -> None:
        """Writes one line (a dict is JSON-encoded; bytes are sent as they are)."""
        data = message if isinstance(message, bytes) else json.dumps(message).encode()
        if not data.endswith(b"\n") and not isinstance(message, bytes):
            data += b"\n"
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def close_input(self) -> None:
        self.proc.stdin.close()

    def receive(self, timeout: float = 30):
        """The next output message; None at end of output; raises queue.Empty on timeout."""
        return self.lines.get(timeout=timeout)

    def wait_for(self, id_, timeout: float = 30) -> dict:
        """The response with this id (other messages seen meanwhile are kept)."""
        key = json.dumps(id_)
        deadline = time.monotonic() + timeout
        while key not in self.pending:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no response to id {id_} within {timeout}s")
            try:
                message = self.receive(left)
            except queue.Empty:
                continue
            if message is None:
                raise AssertionError(f"output ended before the response to id {id_}: "
                                     f"{self.death()}")
            self.pending[json.dumps(message.get("id"))] = message
        return self.pending.pop(key)

    def request(self, method: str, params: dict | None = None, timeout: float = 30) -> dict:
        self.next_id += 1
        self.send(jsonrpc(method, params, self.next_id))
        return self.wait_for(self.next_id, timeout)

    def initialize(self, version: str = LATEST, name: str = "weft-adversarial") -> dict:
        reply = self.request("initialize", initialize_params(version, name))
        assert "result" in reply, reply
        self.send(jsonrpc("notifications/initialized", None, None))
        return reply


def stdio_call(server: StdioServer, name: str, arguments: dict, timeout: float = 30) -> dict:
    reply = server.request("tools/call", {"name": name, "arguments": arguments}, timeout)
    assert "result" in reply, f"{name}: {reply}"
    return reply["result"]

