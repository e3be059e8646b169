"""A bare JSON-RPC client for the benchmarks: one server process driven over pipes.

No SDK in between, so a figure is the server's round trip and nothing else:
requests go out as raw JSON lines on the child's stdin and answers are read
from its stdout with select(). POSIX only (select() on pipes, /proc for RSS).
"""

from __future__ import annotations

import json
import os
import re
import select
import subprocess
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

Json = dict[str, Any]

PROTOCOL_VERSION = "2025-06-18"
TOOLS = ("list_transcripts", "get_transcript", "search_transcripts", "list_tasks")
INITIALIZE_PARAMS: Json = {
    "protocolVersion": PROTOCOL_VERSION,
    "capabilities": {},
    "clientInfo": {"name": "magnotia-bench", "version": "1"},
}


class ServerError(Exception):
    """The server died, closed its output, sent garbage or did not answer in time."""


class Server:
    """One server process driven over pipes with raw JSON lines."""

    def __init__(self, cmd: Sequence[str], env: dict[str, str], timeout: float) -> None:
        self.timeout = timeout
        self.stderr = tempfile.TemporaryFile()  # noqa: SIM115 - lives as long as the process
        self.proc = subprocess.Popen(
            list(cmd), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.stderr, env=env, bufsize=0
        )
        assert self.proc.stdin is not None
        assert self.proc.stdout is not None
        self.wfd = self.proc.stdin.fileno()
        self.rfd = self.proc.stdout.fileno()
        self.buf = bytearray()
        self.next_id = 1

    def write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            try:
                n = os.write(self.wfd, view)
            except BrokenPipeError as e:
                raise ServerError(f"server closed its stdin ({self.exit_text()})") from e
            view = view[n:]

    def read_line(self, deadline: float) -> bytes:
        while True:
            i = self.buf.find(b"\n")
            if i >= 0:
                line = bytes(self.buf[:i])
                del self.buf[: i + 1]
                return line
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.rfd], [], [], left)[0]:
                raise ServerError(f"no answer within {self.timeout:g}s")
            chunk = os.read(self.rfd, 1 << 20)
            if not chunk:
                raise ServerError(f"server closed its stdout ({self.exit_text()})")
            self.buf += chunk

    def request(self, method: str, params: Json | None = None) -> tuple[int, Json]:
        """Send one request; return (round trip in ns, response)."""
        rid = self.next_id
        self.next_id += 1
        msg: Json = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            msg["params"] = params
        data = json.dumps(msg, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"
        deadline = time.monotonic() + self.timeout
        t0 = time.perf_counter_ns()
        self.write(data)
        while True:
            line = self.read_line(deadline)
            t1 = time.perf_counter_ns()
            try:
                resp = json.loads(line)
            except ValueError as e:
                raise ServerError(f"not JSON on stdout: {line[:200]!r}") from e
            if isinstance(resp, dict) and resp.get("id") == rid:
                return t1 - t0, resp
            if not (isinstance(resp, dict) and "method" in resp and "id" not in resp):
                raise ServerError(f"unexpected message: {line[:200]!r}")
            # A notification from the server (e.g. logging): keep waiting.

    def notify(self, method: str) -> None:
        self.write(json.dumps({"jsonrpc": "2.0", "method": method}).encode() + b"\n")

    def initialize(self) -> Json:
        _, resp = self.request("initialize", INITIALIZE_PARAMS)
        if "result" not in resp:
            raise ServerError(f"initialize failed: {json.dumps(resp)[:300]}")
        self.notify("notifications/initialized")
        result: Json = resp["result"]
        return result

    def peak_rss_kib(self) -> int | None:
        """VmHWM of the server and its descendants (a one-file binary runs in a child)."""
        total = 0
        found = False
        for pid in [self.proc.pid, *_descendants(self.proc.pid)]:
            try:
                text = Path(f"/proc/{pid}/status").read_text()
            except OSError:
                continue
            m = re.search(r"^VmHWM:\s+(\d+) kB", text, re.M)
            if m:
                total += int(m.group(1))
                found = True
        return total if found else None

    def close(self) -> int | None:
        """Close stdin and wait for a clean exit; returns the exit code (None if it had to be killed)."""
        try:
            assert self.proc.stdin is not None
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            code: int | None = self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            code = None
        assert self.proc.stdout is not None
        self.proc.stdout.close()
        return code

    def exit_text(self) -> str:
        code = self.proc.poll()
        return f"exit code {code}; stderr: {self.stderr_tail()!r}" if code is not None else "still running"

    def stderr_tail(self, n: int = 600) -> str:
        self.stderr.seek(0, os.SEEK_END)
        size = self.stderr.tell()
        self.stderr.seek(max(0, size - n))
        return self.stderr.read().decode(errors="replace")


def _descendants(pid: int) -> list[int]:
    """Every process below pid, from the parent links in /proc."""
    parents: dict[int, list[int]] = {}
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            stat = (d / "stat").read_text()
        except OSError:
            continue
        # The command name in parentheses may hold spaces: fields are counted after the last ")".
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        parents.setdefault(ppid, []).append(int(d.name))
    out: list[int] = []
    todo = [pid]
    while todo:
        kids = parents.get(todo.pop(), [])
        out.extend(kids)
        todo.extend(kids)
    return out


def tool_result(resp: Json) -> tuple[Json | None, str | None]:
    """(result object, None) for a successful tools/call, else (None, error text)."""
    if "error" in resp:
        err = resp["error"]
        return None, f"JSON-RPC error {err.get('code')}: {str(err.get('message'))[:200]}"
    res = resp.get("result")
    if not isinstance(res, dict):
        return None, "no result object"
    if res.get("isError"):
        content = res.get("content") or [{}]
        return None, f"isError: {str(content[0].get('text', ''))[:200]}"
    sc = res.get("structuredContent")
    if isinstance(sc, dict):
        return sc, None
    try:
        obj = json.loads(res["content"][0]["text"])
    except (KeyError, IndexError, TypeError, ValueError):
        return None, "result has neither structuredContent nor JSON text content"
    if not isinstance(obj, dict):
        return None, "text content is not a JSON object"
    return obj, None
