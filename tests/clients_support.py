"""Helpers for the protocol and real-client tests: a sample store, a raw JSON-RPC session
that validates every server message for its revision, a tap that records what real
clients and the server say to each other, and where the Node clients live.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.server import DEFAULT_TIMEOUT, ServerProcess
from tests.storefactory import StoreBuilder
from tests.wire_schema import WireTracker

LEGACY = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
MODERN = "2026-07-28"
REVISIONS = (*LEGACY, MODERN)
LATEST_LEGACY = LEGACY[-1]

META_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
META_CLIENT_INFO = "io.modelcontextprotocol/clientInfo"
META_SERVER_INFO = "io.modelcontextprotocol/serverInfo"

TOOL_NAMES = ("list_transcripts", "get_transcript", "search_transcripts", "list_tasks")
PROMPT_NAMES = ("summarize_transcript", "action_items", "review_meetings")
URI_PREFIX = "magnotia://transcripts/"
URI_TEMPLATE = URI_PREFIX + "{id}"

TESTS = Path(__file__).resolve().parent
CLIENTS = TESTS / "clients"
TAP = CLIENTS / "tap.py"


def at_least(revision: str, first: str) -> bool:
    """Whether revision is first or newer (by position, never by string order)."""
    return REVISIONS.index(revision) >= REVISIONS.index(first)


def modern_meta(version: str = MODERN, **extra: Any) -> dict[str, Any]:
    """The per-request _meta of the 2026-07-28 revision."""
    return {
        META_VERSION: version,
        META_CAPABILITIES: {},
        META_CLIENT_INFO: {"name": "magnotia-tests", "version": "0"},
        **extra,
    }


# -- the sample store --------------------------------------------------------------------


@dataclass
class Sample:
    path: Path
    meeting: str
    dictation: str
    file: str
    trashed: str
    titles: dict[str, str] = field(default_factory=dict)

    @property
    def live(self) -> list[str]:
        """Live transcript ids, newest first."""
        return [self.dictation, self.meeting, self.file]


def build_sample(path: Path) -> Sample:
    """A small store: a meeting with speakers and tasks, a dictation, an imported file, one in the trash."""
    b = StoreBuilder(path)
    meeting = b.transcript(
        title="Quarterly budget review",
        source="meeting",
        duration_ms=125_000,
        raw_text="we need the budget draft by friday who books the room i will",
        formatted_text="We need the budget draft by Friday. Who books the room? I will.",
        created_at="2026-05-09T14:03:12.042Z",
        segments=[
            ("Ana", "We need the budget draft by Friday."),
            ("Bo", "Who books the room?"),
            ("Ana", "I will."),
        ],
    )
    dictation = b.transcript(
        title="Shopping list",
        source="dictation",
        raw_text="buy oat milk eggs and coffee",
        formatted_text="Buy oat milk, eggs and coffee.",
        created_at="2026-05-10T08:15:00.000Z",
    )
    imported = b.transcript(
        title="Imported interview",
        source="file",
        raw_text="an interview about gardening and tomatoes",
        created_at="2026-05-08T10:00:00.000Z",
    )
    trashed = b.transcript(
        title="Secret trashed plans",
        raw_text="nobody may read this budget",
        created_at="2026-05-11T09:00:00.000Z",
        deleted_at="2026-05-11T10:00:00.000Z",
    )
    b.task(transcript_id=meeting, title="Send the budget draft", due_at="2026-05-15T17:00:00.000Z", priority=1)
    b.task(transcript_id=meeting, title="Book the room", status="done", completed_at="2026-05-09T15:00:00.000Z")
    b.close()
    titles = {
        meeting: "Quarterly budget review",
        dictation: "Shopping list",
        imported: "Imported interview",
        trashed: "Secret trashed plans",
    }
    return Sample(path, meeting, dictation, imported, trashed, titles)


# -- following a conversation and validating every server message ---------------------------


def follow_lines(lines: Iterable[tuple[str, str]]) -> WireTracker:
    """A tracker fed one process's lines as (direction, text), direction "c2s" or "s2c"."""
    tracker = WireTracker()
    for direction, text in lines:
        message = json.loads(text)
        if direction == "c2s":
            tracker.client_sent(message)
        else:
            tracker.server_sent(message)
    return tracker


def tapped(argv: list[str], log_dir: Path) -> list[str]:
    """argv wrapped in the tap proxy, which records the conversation under log_dir."""
    return [sys.executable, str(TAP), str(log_dir), *argv]


def validate_tap_dir(log_dir: Path) -> list[WireTracker]:
    """Validate every server message recorded under log_dir; one tracker per server process."""
    trackers = []
    for path in sorted(log_dir.glob("*.jsonl")):
        entries = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        trackers.append(follow_lines((e["dir"], e["line"]) for e in entries))
    assert trackers, f"no conversation was recorded under {log_dir}"
    return trackers


# -- a raw session --------------------------------------------------------------------------


class Raw:
    """Raw JSON-RPC over a ServerProcess; every message read is validated for its revision.

    revision: the 2026-07-28 revision adds modern _meta to every request (unless meta=False);
    a legacy one only records what ``open()`` negotiates.
    """

    def __init__(self, proc: ServerProcess, revision: str = LATEST_LEGACY) -> None:
        self.proc = proc
        self.revision = revision
        self.tracker = WireTracker()
        self.responses: dict[Any, dict[str, Any]] = {}
        self.notifications: list[dict[str, Any]] = []
        self._next = 0

    def open(self) -> dict[str, Any]:
        """initialize + notifications/initialized (legacy), or server/discover (modern); the result."""
        if self.revision == MODERN:
            response = self.request("server/discover")
        else:
            response = self.request(
                "initialize",
                {"protocolVersion": self.revision, "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}},
            )
            self.notify("notifications/initialized")
        assert "result" in response, response
        return response["result"]  # type: ignore[no-any-return]

    def send(self, method: str, params: dict[str, Any] | None = None, *, id: Any = None, meta: bool = True) -> Any:
        """Send a request without waiting; returns its id."""
        if id is None:
            self._next += 1
            id = f"r{self._next}"
        params = dict(params or {})
        if meta and self.revision == MODERN:
            params["_meta"] = {**modern_meta(), **params.get("_meta", {})}
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": id, "method": method}
        if params or method not in ("ping",):
            message["params"] = params
        self.send_message(message)
        return id

    def send_message(self, message: Any) -> None:
        self.tracker.client_sent(message)
        self.proc.send(message)

    def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self.send_message(message)

    def read(self, timeout: float = DEFAULT_TIMEOUT) -> Any:
        """The next message (or batch) from the server, validated."""
        try:
            line = self.proc.lines.get(timeout=timeout)
        except Exception:
            raise AssertionError(f"no message within {timeout}s; stderr:\n{self.proc.stderr}") from None
        assert line is not None, f"the server closed stdout; stderr:\n{self.proc.stderr}"
        message = json.loads(line)
        self.tracker.server_sent(message)
        for m in message if isinstance(message, list) else [message]:
            if "method" in m and "id" not in m:
                self.notifications.append(m)
            else:
                self.responses[m.get("id")] = m
        return message

    def response(self, id: Any, timeout: float = DEFAULT_TIMEOUT) -> dict[str, Any]:
        import time

        deadline = time.monotonic() + timeout
        while id not in self.responses:
            self.read(max(0.01, deadline - time.monotonic()))
        return self.responses.pop(id)

    def request(
        self, method: str, params: dict[str, Any] | None = None, *, meta: bool = True, timeout: float = DEFAULT_TIMEOUT
    ) -> dict[str, Any]:
        return self.response(self.send(method, params, meta=meta), timeout)

    def call(self, tool: str, arguments: Any = None, timeout: float = DEFAULT_TIMEOUT) -> dict[str, Any]:
        params: dict[str, Any] = {"name": tool}
        if arguments is not None:
            params["arguments"] = arguments
        return self.request("tools/call", params, timeout=timeout)


# -- Node ----------------------------------------------------------------------------------


NODE = shutil.which("node")
NODE_MODULES = CLIENTS / "node_modules"
NPM_CI = "npm ci --ignore-scripts --no-audit --no-fund --prefix tests/clients"


def node_skip_reason() -> str | None:
    """Why the Node clients cannot run here, or None."""
    if NODE is None:
        return "node is not on PATH (the TypeScript SDK and Inspector tests need Node.js >= 20)"
    if not (NODE_MODULES / "@modelcontextprotocol").is_dir():
        return f"tests/clients/node_modules is missing; install the pinned clients with: {NPM_CI}"
    return None


def require_node() -> None:
    """Skip when the Node clients cannot run here; under CI=true (.ci/run) fail instead, so they never skip silently."""
    reason = node_skip_reason()
    if reason is None:
        return
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason} (CI=true: the real-client tests must run in CI)", pytrace=False)
    pytest.skip(reason)


def node_env() -> dict[str, str]:
    """The environment for node: ours, without anything that would make npm or node chatty."""
    env = dict(os.environ)
    env.setdefault("NO_COLOR", "1")
    env["NODE_NO_WARNINGS"] = "1"
    return env
