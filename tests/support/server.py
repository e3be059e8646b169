"""Start the real server (package, console script, frozen binary or container) and talk raw JSON-RPC to it.

Which server runs is chosen once per test session with ``--server``:
``package`` (default: ``python -m magnotia_mcp``), ``script`` (the console
script next to the interpreter), ``frozen`` (``--server-bin PATH`` or
``$MAGNOTIA_MCP_BIN``), ``container`` (``$MAGNOTIA_MCP_IMAGE`` run with
``$MAGNOTIA_MCP_ENGINE``, the store's directory mounted read-only at /data).
Every test that starts a server goes through ``Launcher.argv``.

``ServerProcess`` is the one raw client of the suite: it writes JSON lines to
the server's stdin and reads its stdout, and validates every message the server
writes against the official models of the revision in use (tests/support/wire_schema.py).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import queue
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

from tests.support.protocol import MODERN, modern_meta
from tests.support.wire_schema import WireTracker

KINDS = ("package", "script", "frozen", "container")
DEFAULT_TIMEOUT = 20.0


class Launcher:
    """The command line of the server under test.

    python: the interpreter whose environment holds the package (``package`` and
    ``script`` kinds); this test run's own interpreter unless given.
    """

    def __init__(self, kind: str, binary: str | None = None, python: str | None = None) -> None:
        if kind not in KINDS:
            raise ValueError(f"--server must be one of {KINDS}")
        self.kind = kind
        self.binary = binary
        self.python = python or sys.executable

    @property
    def needs_store_name(self) -> bool:
        """The container finds its store at /data/magnotia.db: tests must name files so."""
        return self.kind == "container"

    @property
    def local(self) -> bool:
        """The server runs as a process of this machine (not in a container): namespaces and uids apply."""
        return self.kind != "container"

    def served_path(self, db: Path) -> str:
        """The store's path as the server sees it (and names it in messages)."""
        return f"/data/{db.name}" if self.kind == "container" else str(db)

    def frozen_binary(self) -> str:
        binary = self.binary or os.environ.get("MAGNOTIA_MCP_BIN")
        if not binary:
            raise RuntimeError("--server frozen needs --server-bin PATH or MAGNOTIA_MCP_BIN")
        return binary

    def argv(self, db: Path | None, extra: list[str] | None = None, *, writable_dir: bool = False) -> list[str]:
        """The command that serves db (None: let the server resolve its default).

        writable_dir: the container mounts the store's directory read-write (not ``:ro``);
        the server's user can write there only if the directory lets it (mode 0777).
        """
        extra = list(extra or [])
        if self.kind == "container":
            engine = os.environ.get("MAGNOTIA_MCP_ENGINE", "podman")
            image = os.environ.get("MAGNOTIA_MCP_IMAGE", "magnotia-mcp:test")
            argv = [engine, "run", "-i", "--rm", "--network", "none", "--read-only"]
            if db is not None:
                argv += ["-v", f"{db.parent}:/data" + ("" if writable_dir else ":ro")]
                if db.name != "magnotia.db":
                    argv += ["-e", f"MAGNOTIA_DB=/data/{db.name}"]
            return [*argv, image, *extra]
        if self.kind == "package":
            base = [self.python, "-m", "magnotia_mcp"]
        elif self.kind == "script":
            script = console_script(self.python)
            base = [str(script if script.exists() else shutil.which("magnotia-mcp") or "magnotia-mcp")]
        else:
            base = [self.frozen_binary()]
        return [*base, *(["--db", str(db)] if db is not None else []), *extra]


def console_script(python: str | Path, platform: str | None = None) -> Path:
    """The console script installed beside a venv's interpreter: ``magnotia-mcp``, ``magnotia-mcp.exe`` on Windows.

    pip and uv write a launcher ``Scripts\\magnotia-mcp.exe`` there, next to ``Scripts\\python.exe``.
    """
    windows = (platform or sys.platform) == "win32"
    return Path(python).parent / ("magnotia-mcp.exe" if windows else "magnotia-mcp")


def is_notification(message: Any) -> bool:
    return isinstance(message, dict) and "method" in message and "id" not in message


class ServerProcess:
    """One running server over real pipes, and a raw JSON-RPC session with it.

    stdout lines are collected by a thread. Every message read is validated for
    its revision (``self.wire`` follows the conversation); notifications read are
    kept, in order, in ``self.notifications``.

    Three ways to wait for an answer:

    * ``read()``: the next message (or batch), whatever it is;
    * ``read_response(id)`` (and ``request``, ``call``, ``result``): the response to id,
      which must be the next response the server writes: a response to any other
      request first fails the test (this is how the tests check the order of answers);
    * ``response(id)``: the response to id whenever it comes; responses to other
      requests read meanwhile are kept in ``self.responses`` for later.

    revision: requests of the 2026-07-28 revision carry its per-request ``_meta``
    (added by ``send_request`` unless ``meta=False``); ``open()`` and
    ``initialize()`` set it.
    """

    def __init__(
        self, argv: list[str], env: dict[str, str] | None = None, cwd: Path | None = None, revision: str | None = None
    ) -> None:
        self.argv = argv
        full_env = {**os.environ, **(env or {})}
        self.proc = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=full_env, cwd=cwd
        )
        self.revision = revision
        self.lines: queue.Queue[bytes | None] = queue.Queue()
        self.wire = WireTracker()
        self.responses: dict[Any, dict[str, Any]] = {}
        self.notifications: list[dict[str, Any]] = []
        self._sent_partial = b""
        self.raw_stdout: list[bytes] = []
        self.stderr_chunks: list[bytes] = []
        self._next_id = 0
        self.expected_exit = {0}  # exit codes the start_server fixture accepts at teardown
        threading.Thread(target=self._pump_stdout, daemon=True).start()
        threading.Thread(target=self._pump_stderr, daemon=True).start()

    def _pump_stdout(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.raw_stdout.append(line)
            self.lines.put(line)
        self.lines.put(None)

    def _pump_stderr(self) -> None:
        stream = cast(io.BufferedReader, self.proc.stderr)
        for chunk in iter(lambda: stream.read1(65536), b""):
            self.stderr_chunks.append(chunk)

    @property
    def stderr(self) -> str:
        return b"".join(self.stderr_chunks).decode("utf-8", "replace")

    # -- sending ----------------------------------------------------------------

    def send_raw(self, data: bytes) -> None:
        self._sent_partial += data
        *lines, self._sent_partial = self._sent_partial.split(b"\n")
        for line in lines:
            # Not JSON: the server answers with a parse error, validated without a method.
            with contextlib.suppress(ValueError, RecursionError):
                self.wire.client_sent(json.loads(line))
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, message: Any) -> None:
        """Write one JSON value (a message, a batch, or anything else) as one line."""
        self.send_raw(json.dumps(message).encode() + b"\n")

    def new_id(self) -> int:
        self._next_id += 1
        return self._next_id

    @property
    def last_id(self) -> int:
        """The id of the last request sent with a generated id."""
        return self._next_id

    def send_request(
        self, method: str, params: dict[str, Any] | None = None, *, id: Any = None, meta: bool = True
    ) -> Any:
        """Send a request without waiting; returns its id (a new integer unless given)."""
        if id is None:
            id = self.new_id()
        if meta and self.revision == MODERN:
            params = dict(params or {})
            params["_meta"] = {**modern_meta(), **params.get("_meta", {})}
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        return id

    def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)

    # -- receiving --------------------------------------------------------------

    def read(self, timeout: float = DEFAULT_TIMEOUT) -> Any:
        """The next message (or batch) from stdout, validated; fails the test on EOF, timeout or a non-JSON line."""
        try:
            line = self.lines.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"no message from the server within {timeout}s; stderr:\n{self.stderr}") from None
        if line is None:
            raise AssertionError(f"the server closed stdout; exit={self.proc.poll()} stderr:\n{self.stderr}")
        assert line.endswith(b"\n"), line
        message = json.loads(line.decode("utf-8"))
        assert isinstance(message, (dict, list)), message
        self.wire.server_sent(message)  # every message checked against its revision's official schema
        for m in message if isinstance(message, list) else [message]:
            if is_notification(m):
                self.notifications.append(m)
        return message

    def _take(self, timeout: float) -> None:
        """Read one message; keep the responses in it for ``response()``."""
        message = self.read(timeout)
        for m in message if isinstance(message, list) else [message]:
            if not is_notification(m):
                self.responses[m.get("id")] = m

    def read_response(self, request_id: Any, timeout: float = DEFAULT_TIMEOUT) -> dict[str, Any]:
        """The response to request_id, which must be the next response (notifications before it are skipped)."""
        deadline = time.monotonic() + timeout
        while not self.responses:
            self._take(max(0.01, deadline - time.monotonic()))
        first = next(iter(self.responses))
        assert first == request_id, f"expected the response to {request_id!r} next, got {self.responses[first]}"
        return self.responses.pop(first)

    def response(self, request_id: Any, timeout: float = DEFAULT_TIMEOUT) -> dict[str, Any]:
        """The response to request_id, whenever it comes; other responses read meanwhile are kept."""
        deadline = time.monotonic() + timeout
        while request_id not in self.responses:
            self._take(max(0.01, deadline - time.monotonic()))
        return self.responses.pop(request_id)

    def wait_for_progress(self, token: Any, timeout: float = DEFAULT_TIMEOUT) -> None:
        """Read until the first progress notification for token (responses read meanwhile are kept)."""
        deadline = time.monotonic() + timeout
        while not self.progress(token):
            self._take(max(0.01, deadline - time.monotonic()))

    def progress(self, token: Any) -> list[float]:
        """The progress values notified so far for token, in order."""
        return [
            n["params"]["progress"]
            for n in self.notifications
            if n["method"] == "notifications/progress" and n["params"].get("progressToken") == token
        ]

    def no_message(self, within: float) -> None:
        """Assert that nothing arrives on stdout for a while."""
        try:
            line = self.lines.get(timeout=within)
        except queue.Empty:
            return
        raise AssertionError(f"unexpected output: {line!r}")

    def request(
        self, method: str, params: dict[str, Any] | None = None, *, meta: bool = True, timeout: float = DEFAULT_TIMEOUT
    ) -> dict[str, Any]:
        """Send a request and return its response, which must be the next one."""
        return self.read_response(self.send_request(method, params, meta=meta), timeout)

    def open(self, revision: str) -> dict[str, Any]:
        """Start a session: initialize + initialized (legacy) or server/discover (2026-07-28); the result."""
        self.revision = revision
        response = self.request("server/discover") if revision == MODERN else self.initialize(revision)
        assert "result" in response, response
        return response["result"]  # type: ignore[no-any-return]

    def initialize(self, version: str = "2025-06-18") -> dict[str, Any]:
        """initialize asking for version, then notifications/initialized; the whole response."""
        response = self.request(
            "initialize",
            {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "tests", "version": "0"}},
            meta=False,
        )
        self.revision = response.get("result", {}).get("protocolVersion", self.revision)
        self.notify("notifications/initialized")
        return response

    def call(self, tool: str, arguments: Any = None, timeout: float = DEFAULT_TIMEOUT) -> dict[str, Any]:
        """tools/call; returns the whole response."""
        params: dict[str, Any] = {"name": tool}
        if arguments is not None:
            params["arguments"] = arguments
        return self.request("tools/call", params, timeout=timeout)

    def result(self, tool: str, arguments: Any = None) -> dict[str, Any]:
        """tools/call that must succeed; returns the tool's result object (from the text block)."""
        response = self.call(tool, arguments)
        assert "result" in response, response
        result = response["result"]
        assert result.get("isError") is not True, result
        parsed = json.loads(result["content"][0]["text"])
        if "structuredContent" in result:
            assert result["structuredContent"] == parsed
        return parsed  # type: ignore[no-any-return]

    # -- ending -------------------------------------------------------------------

    def close(self, timeout: float = 10.0) -> int:
        """Close stdin and wait for a clean exit; returns the exit code."""
        if self.proc.stdin and not self.proc.stdin.closed:
            with contextlib.suppress(BrokenPipeError):
                self.proc.stdin.close()
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            raise AssertionError(f"the server did not exit within {timeout}s of EOF; stderr:\n{self.stderr}") from None

    def sync(self, timeout: float = DEFAULT_TIMEOUT) -> None:
        """Ping and wait for the answer: fails if anything else (a stray or duplicate response) comes first."""
        assert not self.responses, f"responses nobody claimed: {self.responses}"
        token = f"sync-{self.new_id()}"
        self.send({"jsonrpc": "2.0", "id": token, "method": "ping"})
        message = self.read(timeout)
        assert message == {"jsonrpc": "2.0", "id": token, "result": {}}, f"unexpected output before sync: {message}"

    def messages_until_eof(self, timeout: float = DEFAULT_TIMEOUT) -> list[Any]:
        """Every message still to come, up to the server closing stdout (each validated)."""
        if self._sent_partial.strip():  # at EOF the server takes an unterminated last line as a message
            with contextlib.suppress(ValueError, RecursionError):
                self.wire.client_sent(json.loads(self._sent_partial))
            self._sent_partial = b""
        deadline = time.monotonic() + timeout
        out: list[Any] = []
        while True:
            try:
                line = self.lines.get(timeout=max(0.01, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError(f"stdout still open after {timeout}s; stderr:\n{self.stderr}") from None
            if line is None:
                self.lines.put(None)  # EOF stays EOF for any later read
                return out
            message = json.loads(line.decode("utf-8"))
            assert isinstance(message, (dict, list)), message
            self.wire.server_sent(message)
            for m in message if isinstance(message, list) else [message]:
                if is_notification(m):
                    self.notifications.append(m)
            out.append(message)

    def answered_ids(self) -> set[Any]:
        """The id of every response the server has written to stdout so far (read or not)."""
        ids = set()
        for line in list(self.raw_stdout):
            message = json.loads(line)
            for m in message if isinstance(message, list) else [message]:
                if isinstance(m, dict) and not is_notification(m):
                    ids.add(m.get("id"))
        return ids

    def wait(self, timeout: float = 10.0) -> int:
        """Wait for the process to exit on its own; returns the exit code."""
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            raise AssertionError(f"the server did not exit within {timeout}s; stderr:\n{self.stderr}") from None

    def kill(self) -> None:
        self.expected_exit.add(-9)
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(5)


def check_clean_exit(proc: ServerProcess) -> None:
    """Close stdin if still open; the server must exit as expected, with no traceback and JSON-only stdout."""
    code = proc.close() if proc.proc.poll() is None else proc.proc.returncode
    assert code in proc.expected_exit, f"server exited {code}; stderr:\n{proc.stderr}"
    assert "Traceback" not in proc.stderr, proc.stderr  # never an unhandled exception
    for line in proc.raw_stdout:
        json.loads(line)  # stdout carries protocol messages only


class SharedServers:
    """Initialized servers kept for a whole test module, one per (store, revision).

    For tests that only read: each use starts with ``sync()``, so a stray or
    duplicate response left by an earlier test fails the test that meets it.

    spawn: how a server is started on a store (default: over pipes, by the launcher);
    the e2e conftest passes one that starts ``serve --http`` for the HTTP transport.
    """

    def __init__(self, launcher: Launcher, spawn: Callable[[Path], ServerProcess] | None = None) -> None:
        self.launcher = launcher
        self.spawn = spawn or (lambda db: ServerProcess(launcher.argv(db)))
        self.servers: dict[tuple[Path, str], ServerProcess] = {}

    def get(self, db: Path, revision: str) -> ServerProcess:
        proc = self.servers.get((db, revision))
        if proc is None or proc.proc.poll() is not None:
            proc = self.spawn(db)
            proc.initialize(revision)
            self.servers[(db, revision)] = proc
        proc.sync()
        return proc

    def close_all(self) -> None:
        for proc in self.servers.values():
            check_clean_exit(proc)
