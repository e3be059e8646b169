"""Floods: a client that sends far faster than it reads gets every answer, and the server's memory stays bounded.

The server hands a line to the dispatcher only while fewer than ``MAX_PENDING``
calls run and under ``OUTPUT_HIGH`` bytes of answers wait to be read, and reads
stdin only once every line read is handed over (``magnotia_mcp.transport.stdio.loop``); the rest
waits in the client's pipe. The client here writes on its own thread as fast as
the pipe takes it; its reader reads only while the writer is stuck on a full pipe
(or done), so the server meets the slowest reader that cannot deadlock. Nothing
here measures time: progress is counted in requests written and answers read.

Peak memory is the server process's VmHWM, read while it is still alive: for the
one-file executable that is the bootloader's child, for the container the process
podman reports for it. Runs in about 10 s (20,000 calls at ~2,500 a second).
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import threading
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import pytest

from devkit.storefactory import StoreBuilder
from magnotia_mcp.transport.limits import MAX_PENDING
from tests.e2e.test_concurrency import ENDLESS, build_big_store
from tests.support.server import Launcher

if sys.platform != "win32":
    import fcntl

pytestmark = pytest.mark.skipif(
    sys.platform == "win32", reason="the client writes a pipe without blocking and waits in select(): not on Windows"
)

CALLS = 20_000
PEAK_LIMIT_KIB = 60 * 1024
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": "init",
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "flood", "version": "0"}},
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
MEETING = "flood-meeting"
# What each tool's structured result must hold.
RESULT_KEY = {
    "list_transcripts": "transcripts",
    "get_transcript": "text",
    "search_transcripts": "hits",
    "list_tasks": "tasks",
}


def line(message: dict[str, Any]) -> bytes:
    return json.dumps(message).encode() + b"\n"


def call(request_id: int | str, tool: str, arguments: dict[str, Any]) -> bytes:
    params = {"name": tool, "arguments": arguments}
    return line({"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params})


def tool_for(i: int) -> str:
    return ("list_transcripts", "get_transcript", "search_transcripts", "list_tasks")[i % 4]


ARGUMENTS: dict[str, dict[str, Any]] = {
    "list_transcripts": {"limit": 5},
    "get_transcript": {"id": MEETING},
    "search_transcripts": {"query": "budget", "limit": 3},
    "list_tasks": {"status": "open"},
}


def flood_call(i: int) -> bytes:
    return call(i, tool_for(i), ARGUMENTS[tool_for(i)])


@pytest.fixture(scope="module")
def flood_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    b = StoreBuilder(tmp_path_factory.mktemp("flood") / "magnotia.db")
    b.transcript(
        id=MEETING,
        title="Budget meeting",
        source="meeting",
        raw_text="we need the budget draft by friday " * 20,
        segments=[("Ana", "We need the budget draft by Friday."), ("Bo", "I will send it.")],
    )
    for day in range(1, 21):
        tid = b.transcript(title=f"Note {day}", raw_text=f"budget note number {day} about the garden")
        b.task(transcript_id=tid, title=f"Task {day}", status="open" if day % 2 else "done")
    return b.close()


# -- the server process and its memory --------------------------------------------------


@dataclass
class Flooded:
    """A server started for a flood, talked to over raw pipes (no per-message schema checks: 20,000 answers)."""

    launcher: Launcher
    proc: subprocess.Popen[bytes]
    name: str | None  # the container's name

    @property
    def stdin(self) -> IO[bytes]:
        assert self.proc.stdin is not None
        return self.proc.stdin

    @property
    def stdout(self) -> IO[bytes]:
        assert self.proc.stdout is not None
        return self.proc.stdout

    def peak_kib(self) -> int | None:
        """VmHWM of the server process, in KiB; None where it cannot be read (the test skips only that check)."""
        if sys.platform != "linux":
            return None  # VmHWM is Linux's /proc
        pid = self.server_pid()
        if pid is None:
            return None
        with open(f"/proc/{pid}/status", encoding="ascii") as status:
            for row in status:
                if row.startswith("VmHWM:"):
                    return int(row.split()[1])
        raise AssertionError(f"no VmHWM in /proc/{pid}/status")

    def server_pid(self) -> int | None:
        if self.launcher.kind in ("package", "script"):
            return self.proc.pid
        if self.launcher.kind == "frozen":
            # A one-file executable's bootloader unpacks, then runs the server as its only child.
            children = Path(f"/proc/{self.proc.pid}/task/{self.proc.pid}/children").read_text().split()
            assert len(children) == 1, children
            return int(children[0])
        engine = os.environ.get("MAGNOTIA_MCP_ENGINE", "podman")
        assert self.name is not None
        pid = subprocess.run(
            [engine, "inspect", "--format", "{{.State.Pid}}", self.name], capture_output=True, text=True, check=False
        ).stdout.strip()
        return int(pid) if pid.isdigit() and int(pid) > 0 and Path(f"/proc/{pid}/status").exists() else None


@contextmanager
def flooded_server(launcher: Launcher, db: Path, *extra: str) -> Iterator[Flooded]:
    argv = launcher.argv(db, list(extra))
    name = None
    if launcher.kind == "container":
        name = f"magnotia-flood-{uuid.uuid4().hex[:8]}"
        argv.insert(argv.index("run") + 1, f"--name={name}")
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    stderr: list[bytes] = []
    drain = threading.Thread(target=lambda: stderr.append(proc.stderr.read() if proc.stderr else b""), daemon=True)
    drain.start()
    try:
        yield Flooded(launcher, proc, name)
        assert proc.stdin is not None
        proc.stdin.close()  # EOF: the server answers what is in flight and exits 0
        assert proc.wait(timeout=60) == 0
        drain.join(timeout=10)
        assert b"Traceback" not in b"".join(stderr), b"".join(stderr).decode(errors="replace")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def start_session(server: Flooded) -> None:
    server.stdin.write(line(INITIALIZE) + line(INITIALIZED))
    server.stdin.flush()
    assert json.loads(server.stdout.readline())["id"] == "init"


# -- a client that writes faster than it reads --------------------------------------


@dataclass
class Writer:
    """Writes lines to a pipe as fast as it takes them, on its own thread; says when it is stuck on a full pipe."""

    fd: int
    lines: Callable[[int], bytes]
    count: int
    written: int = 0  # whole lines written
    bytes_written: int = 0
    stuck: bool = False  # waiting for room in the pipe right now
    times_stuck: int = 0
    bytes_when_first_stuck: int | None = None
    changed: threading.Condition = field(default_factory=threading.Condition)
    thread: threading.Thread | None = None

    def start(self) -> Writer:
        os.set_blocking(self.fd, False)
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()
        return self

    def _run(self) -> None:
        for i in range(1, self.count + 1):
            view = memoryview(self.lines(i))
            while view:
                try:
                    n = os.write(self.fd, view)
                except BlockingIOError:
                    with self.changed:
                        self.stuck = True
                        self.times_stuck += 1
                        if self.bytes_when_first_stuck is None:
                            self.bytes_when_first_stuck = self.bytes_written
                        self.changed.notify_all()
                    select.select([], [self.fd], [])
                    with self.changed:
                        self.stuck = False
                    continue
                view = view[n:]
                with self.changed:
                    self.bytes_written += n
            with self.changed:
                self.written = i
                self.changed.notify_all()

    def wait_until_stuck_or(self, written: int) -> None:
        """Return once the writer is stuck on a full pipe, or has written that many lines."""
        with self.changed:
            self.changed.wait_for(lambda: self.stuck or self.written >= written)

    def join(self) -> None:
        assert self.thread is not None
        self.thread.join(timeout=120)
        assert not self.thread.is_alive()


def check_answer(message: dict[str, Any]) -> None:
    assert message.get("jsonrpc") == "2.0", message
    assert isinstance(message.get("id"), int), message
    assert "error" not in message, message
    result = message["result"]
    assert result["isError"] is False, result
    tool = tool_for(message["id"])
    assert RESULT_KEY[tool] in result["structuredContent"], (tool, result)
    assert json.loads(result["content"][0]["text"]) == result["structuredContent"]


def test_a_flood_of_calls_is_answered_in_full_within_the_memory_bound(launcher: Launcher, flood_store: Path) -> None:
    """20,000 calls sent without waiting, read only while the writer is stuck: each answered once, peak < 60 MiB."""
    with flooded_server(launcher, flood_store) as server:
        start_session(server)
        writer = Writer(server.stdin.fileno(), flood_call, CALLS).start()
        answered: set[int] = set()
        for _ in range(CALLS):
            # Read one answer only while the writer cannot go on (or has finished): the reader lags
            # as far behind as the server lets the pipes fill.
            writer.wait_until_stuck_or(CALLS)
            message = json.loads(server.stdout.readline())
            check_answer(message)
            assert message["id"] not in answered, f"answered twice: {message['id']}"
            answered.add(message["id"])
        writer.join()
        assert answered == set(range(1, CALLS + 1))
        assert writer.times_stuck > 0  # the client did outrun the server: the pipe filled
        peak = server.peak_kib()
        if peak is None:
            pytest.skip(f"no peak RSS of a {launcher.kind} server on {sys.platform} (every call was answered)")
        print(f"peak RSS of the server ({launcher.kind}): {peak} KiB")
        assert peak < PEAK_LIMIT_KIB, f"peak RSS {peak} KiB"


def test_the_server_stops_reading_while_every_call_slot_is_taken_and_resumes(
    launcher: Launcher, tmp_path: Path
) -> None:
    """MAX_PENDING endless scans take every slot: stdin fills (counted in bytes) and no later call is read, let alone
    answered, until the scans are stopped by the call time limit; then every later call is answered.

    The later calls name no tool: each would be answered at once, without the store, if it were read, so the
    first answer being a scan's shows the gate on every channel; the bytes are counted where the client's pipe
    is the server's stdin (not through podman's relay).
    """
    db = build_big_store(tmp_path / "big" / "magnotia.db", 30_000, 1_000)
    filler = 6_000  # each ~100 bytes: well past what the pipe and one read chunk hold
    with flooded_server(launcher, db, "--call-timeout", "3") as server:
        start_session(server)
        pipe_bytes = 1 << 16
        if sys.platform == "linux":
            pipe_bytes = fcntl.fcntl(server.stdin.fileno(), fcntl.F_GETPIPE_SZ)
        scans = [call(f"scan-{i}", "search_transcripts", {"query": ENDLESS}) for i in range(MAX_PENDING)]
        requests = scans + [call(i, "no_such_tool", {}) for i in range(filler)]
        writer = Writer(server.stdin.fileno(), lambda i: requests[i - 1], len(requests)).start()
        writer.wait_until_stuck_or(len(requests))
        if launcher.local:  # podman relays stdin through buffers of its own: there, only the order below tells
            assert writer.bytes_when_first_stuck is not None, "the server read every call while its slots were taken"
            # The server took at most the scans, one read (asyncio reads a pipe 256 KiB at a time) and
            # whatever line it was in; the pipe holds the rest.
            assert writer.bytes_when_first_stuck <= len(b"".join(scans)) + 256 * 1024 + pipe_bytes + 200
        first = json.loads(server.stdout.readline())  # the first answer: a scan's, stopped by the time limit
        assert str(first["id"]).startswith("scan-"), first
        assert "took longer than 3 s" in json.dumps(first)
        ids = {first["id"]}
        for _ in range(len(requests) - 1):
            ids.add(json.loads(server.stdout.readline())["id"])
        writer.join()
        assert ids == {f"scan-{i}" for i in range(MAX_PENDING)} | set(range(filler))


BATCH = 16  # the most one batch may hold (magnotia_mcp.protocol.server.MAX_BATCH)


def test_a_flood_of_batches_counts_each_message_and_stays_within_the_memory_bound(
    launcher: Launcher, flood_store: Path
) -> None:
    """2025-03-26: 20,000 calls in batches of 16, read only while the writer is stuck: each answered once, < 60 MiB.

    A batch is one line but counts as as many calls as it holds, so the gate takes no more work for it.
    """
    lines = CALLS // BATCH
    with flooded_server(launcher, flood_store) as server:
        start = json.loads(line(INITIALIZE))
        start["params"]["protocolVersion"] = "2025-03-26"
        server.stdin.write(line(start) + line(INITIALIZED))
        server.stdin.flush()
        assert json.loads(server.stdout.readline())["result"]["protocolVersion"] == "2025-03-26"

        def batch(n: int) -> bytes:
            first = (n - 1) * BATCH + 1
            messages = [json.loads(flood_call(i)) for i in range(first, first + BATCH)]
            return json.dumps(messages).encode() + b"\n"

        writer = Writer(server.stdin.fileno(), batch, lines).start()
        answered: set[int] = set()
        for _ in range(lines):
            writer.wait_until_stuck_or(lines)
            replies = json.loads(server.stdout.readline())
            assert isinstance(replies, list)
            assert len(replies) == BATCH
            for message in replies:
                # 2025-03-26 has no structuredContent: the text holds the result.
                assert message["result"]["isError"] is False, message
                assert RESULT_KEY[tool_for(message["id"])] in json.loads(message["result"]["content"][0]["text"])
                assert message["id"] not in answered, f"answered twice: {message['id']}"
                answered.add(message["id"])
        writer.join()
        assert answered == set(range(1, lines * BATCH + 1))
        assert writer.times_stuck > 0
        peak = server.peak_kib()
        if peak is None:
            pytest.skip(f"no peak RSS of a {launcher.kind} server on {sys.platform} (every call was answered)")
        print(f"peak RSS of the server ({launcher.kind}), batches: {peak} KiB")
        assert peak < PEAK_LIMIT_KIB, f"peak RSS {peak} KiB"
