"""Start the real server (package, console script, frozen binary or container) and talk to it.

Which server runs is chosen once per test session with ``--server``:
``package`` (default: ``python -m magnotia_mcp``), ``script`` (the console
script next to the interpreter), ``frozen`` (``--server-bin PATH`` or
``$MAGNOTIA_MCP_BIN``), ``container`` (``$MAGNOTIA_MCP_IMAGE`` run with
``$MAGNOTIA_MCP_ENGINE``, the store's directory mounted read-only at /data).
Every test that starts a server goes through ``Launcher.argv``.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from tests.wire_schema import WireTracker

KINDS = ("package", "script", "frozen", "container")
DEFAULT_TIMEOUT = 20.0


class Launcher:
    def __init__(self, kind: str, binary: str | None = None) -> None:
        if kind not in KINDS:
            raise ValueError(f"--server must be one of {KINDS}")
        self.kind = kind
        self.binary = binary

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

    def argv(self, db: Path | None, extra: list[str] | None = None) -> list[str]:
        """The command that serves db (None: let the server resolve its default)."""
        extra = list(extra or [])
        if self.kind == "container":
            engine = os.environ.get("MAGNOTIA_MCP_ENGINE", "podman")
            image = os.environ.get("MAGNOTIA_MCP_IMAGE", "magnotia-mcp:test")
            argv = [engine, "run", "-i", "--rm", "--network", "none", "--read-only"]
            if db is not None:
                argv += ["-v", f"{db.parent}:/data:ro"]
                if db.name != "magnotia.db":
                    argv += ["-e", f"MAGNOTIA_DB=/data/{db.name}"]
            return [*argv, image, *extra]
        if self.kind == "package":
            base = [sys.executable, "-m", "magnotia_mcp"]
        elif self.kind == "script":
            script = Path(sys.executable).parent / "magnotia-mcp"
            base = [str(script if script.exists() else shutil.which("magnotia-mcp") or "magnotia-mcp")]
        else:
            binary = self.binary or os.environ.get("MAGNOTIA_MCP_BIN")
            if not binary:
                raise RuntimeError("--server frozen needs --server-bin PATH or MAGNOTIA_MCP_BIN")
            base = [binary]
        return [*base, *(["--db", str(db)] if db is not None else []), *extra]


class ServerProcess:
    """One running server over real pipes; stdout lines are collected by a thread."""

    def __init__(self, argv: list[str], env: dict[str, str] | None = None, cwd: Path | None = None) -> None:
        self.argv = argv
        full_env = {**os.environ, **(env or {})}
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=full_env, cwd=cwd
        )
        self.lines: queue.Queue[bytes | None] = queue.Queue()
        self.wire = WireTracker()
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
        assert self.proc.stderr is not None
        for chunk in iter(lambda: self.proc.stderr.read1(65536), b""):  # type: ignore[union-attr]
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
        self.send_raw(json.dumps(message).encode() + b"\n")

    def new_id(self) -> int:
        self._next_id += 1
        return self._next_id

    def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)

    # -- receiving --------------------------------------------------------------

    def read(self, timeout: float = DEFAULT_TIMEOUT) -> dict[str, Any]:
        """The next message from stdout; fails the test on EOF, timeout or a non-JSON line."""
        try:
            line = self.lines.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"no message from the server within {timeout}s; stderr:\n{self.stderr}") from None
        if line is None:
            raise AssertionError(f"the server closed stdout; exit={self.proc.poll()} stderr:\n{self.stderr}")
        assert line.endswith(b"\n"), line
        message = json.loads(line.decode("utf-8"))
        assert isinstance(message, dict), message
        self.wire.server_sent(message)  # every message checked against its revision's official schema
        return message

    def read_response(self, request_id: Any, timeout: float = DEFAULT_TIMEOUT) -> dict[str, Any]:
        """The response to request_id, skipping notifications (e.g. progress) before it."""
        deadline = time.monotonic() + timeout
        while True:
            message = self.read(max(0.01, deadline - time.monotonic()))
            if "method" in message and "id" not in message:
                continue
            assert message.get("id") == request_id, f"expected the response to {request_id!r}, got {message}"
            return message

    def no_message(self, within: float) -> None:
        """Assert that nothing arrives on stdout for a while."""
        try:
            line = self.lines.get(timeout=within)
        except queue.Empty:
            return
        raise AssertionError(f"unexpected output: {line!r}")

    def request(
        self, method: str, params: dict[str, Any] | None = None, timeout: float = DEFAULT_TIMEOUT
    ) -> dict[str, Any]:
        request_id = self.new_id()
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        return self.read_response(request_id, timeout)

    def initialize(self, version: str = "2025-06-18") -> dict[str, Any]:
        response = self.request(
            "initialize",
            {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "tests", "version": "0"}},
        )
        self.notify("notifications/initialized")
        return response

    def call(self, tool: str, arguments: Any = None, timeout: float = DEFAULT_TIMEOUT) -> dict[str, Any]:
        """tools/call; returns the whole response."""
        params: dict[str, Any] = {"name": tool}
        if arguments is not None:
            params["arguments"] = arguments
        return self.request("tools/call", params, timeout)

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
        token = f"sync-{self.new_id()}"
        self.send({"jsonrpc": "2.0", "id": token, "method": "ping"})
        message = self.read(timeout)
        assert message == {"jsonrpc": "2.0", "id": token, "result": {}}, f"unexpected output before sync: {message}"

    def messages_until_eof(self, timeout: float = DEFAULT_TIMEOUT) -> list[dict[str, Any]]:
        """Every message still to come, up to the server closing stdout."""
        if self._sent_partial.strip():  # at EOF the server takes an unterminated last line as a message
            with contextlib.suppress(ValueError, RecursionError):
                self.wire.client_sent(json.loads(self._sent_partial))
            self._sent_partial = b""
        deadline = time.monotonic() + timeout
        out: list[dict[str, Any]] = []
        while True:
            try:
                line = self.lines.get(timeout=max(0.01, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError(f"stdout still open after {timeout}s; stderr:\n{self.stderr}") from None
            if line is None:
                return out
            message = json.loads(line.decode("utf-8"))
            assert isinstance(message, dict), message
            self.wire.server_sent(message)
            out.append(message)

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
