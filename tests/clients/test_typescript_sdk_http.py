"""The official TypeScript SDK clients over Streamable HTTP, with the bearer token, against ``serve --http``.

The scripts of test_typescript_sdk.py (``sdk-v1.mjs``: ``@modelcontextprotocol/sdk``, its
``StreamableHTTPClientTransport`` with the token in ``requestInit`` headers; ``client-v2.mjs``:
``@modelcontextprotocol/client``, its transport with an ``authProvider`` giving the token) run with
``--http URL``. Their fetch records every exchange (tests/clients/http.mjs): every server message is
validated here for its revision, and the summary says what went over the wire.

- walk: every tool, resources, templates, every prompt, completions (the stdio walk, same checks);
- progress: a search on a store without the full-text index (so it scans) with ``onprogress``;
- cancellation: scans cancelled through an AbortSignal on their first progress notification, shown
  by the server's slots coming back (see cancelWalk in http.mjs), not by timing. Up to 2025-11-25 the
  SDKs POST notifications/cancelled; at 2026-07-28 they close the request's stream instead;
- refused: without the token, or with a wrong one, the SDK fails with the server's 401.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from magnotia_mcp.transport.limits import MAX_PENDING
from tests.clients.helpers import CLIENTS, NODE, follow_lines, node_env, require_node
from tests.clients.test_typescript_sdk import check_summary, summary_of
from tests.e2e.test_concurrency import ENDLESS, NEWEST_ID, ROWS, TEXT_CHARS, build_big_store
from tests.http.conftest import TOKEN, HttpServer, digest, start
from tests.support.protocol import MODERN
from tests.support.sample import Sample, build_sample
from tests.support.server import Launcher

TIMEOUT = 90  # the scripts give up after 60 s of their own
LEGACY = "2025-11-25"

# (script argv, the revision it speaks, the first method it POSTs)
CLIENT_MODES = {
    "sdk-v1": (["sdk-v1.mjs"], LEGACY, "initialize"),
    "client-v2-legacy": (["client-v2.mjs", "legacy"], LEGACY, "initialize"),
    "client-v2-auto": (["client-v2.mjs", "auto"], MODERN, "server/discover"),
    "client-v2-pin": (["client-v2.mjs", "pin"], MODERN, "server/discover"),
}
ALL_MODES = pytest.mark.parametrize("mode", list(CLIENT_MODES))


@pytest.fixture(scope="module", autouse=True)
def _node_clients() -> None:
    require_node()


def serve(launcher: Launcher, db: Path) -> Iterator[HttpServer]:
    """db over HTTP with TOKEN required, for a module's tests; the store must be unchanged afterwards."""
    before = digest(db)
    server = start(launcher, db, [], {"MAGNOTIA_MCP_TOKEN": TOKEN})
    yield server
    server.stop()
    assert digest(db) == before, "the store changed"


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Sample:
    return build_sample(tmp_path_factory.mktemp("node-http") / "magnotia.db")


@pytest.fixture(scope="module")
def served(launcher: Launcher, sample: Sample) -> Iterator[HttpServer]:
    yield from serve(launcher, sample.path)


@pytest.fixture(scope="module")
def scan_sample(tmp_path_factory: pytest.TempPathFactory) -> Sample:
    """The sample rows without the full-text index: every search scans and reports progress."""
    return build_sample(tmp_path_factory.mktemp("node-http-scan") / "magnotia.db", fts=False)


@pytest.fixture(scope="module")
def scan_served(launcher: Launcher, scan_sample: Sample) -> Iterator[HttpServer]:
    yield from serve(launcher, scan_sample.path)


@pytest.fixture(scope="module")
def big_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Tens of thousands of transcripts and no full-text index: an ENDLESS search scans for tens of seconds."""
    return build_big_store(tmp_path_factory.mktemp("node-http-big") / "magnotia.db", ROWS, TEXT_CHARS)


def run_http(
    mode: str, server: HttpServer, task: str, args: dict[str, Any] | None = None, token: str | None = TOKEN
) -> subprocess.CompletedProcess[str]:
    """One script run: ``--http URL TASK [ARGS]``, the token in $MAGNOTIA_MCP_TOKEN (None: not set)."""
    assert NODE is not None
    env = node_env()
    env.pop("MAGNOTIA_MCP_TOKEN", None)
    if token is not None:
        env["MAGNOTIA_MCP_TOKEN"] = token  # in the environment, not argv: no token on a command line
    script = CLIENT_MODES[mode][0]
    extra = [] if args is None else [json.dumps(args)]
    return subprocess.run(
        [NODE, *script, "--http", server.url, task, *extra],
        cwd=CLIENTS,
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )


def check_wire(summary: dict[str, Any], revision: str) -> set[str]:
    """Validate every message the server sent for its revision; the methods it answered or notified."""
    tracker = follow_lines((entry["dir"], entry["line"]) for entry in summary["wire"])
    assert tracker.validated, "nothing was recorded"
    assert tracker.revisions == {revision}
    return tracker.methods_at(revision)


@ALL_MODES
def test_typescript_client_over_http(mode: str, served: HttpServer, sample: Sample) -> None:
    revision = CLIENT_MODES[mode][1]
    summary = summary_of(run_http(mode, served, "walk"))
    check_summary(summary, sample, revision)
    methods = check_wire(summary, revision)
    assert {"tools/list", "tools/call", "resources/read", "prompts/get", "completion/complete"} <= methods
    assert not any(TOKEN in line for line in served.stderr), "the token reached the log"


@ALL_MODES
def test_typescript_client_progress_over_http(mode: str, scan_served: HttpServer, scan_sample: Sample) -> None:
    """onprogress on a scanning search: progress arrives on an SSE stream before the result, never going back."""
    revision = CLIENT_MODES[mode][1]
    summary = summary_of(run_http(mode, scan_served, "progress", {"query": "budget"}))
    assert summary["protocolVersion"] == revision
    assert summary["progressToken"] is not None  # the SDK asked for progress because onprogress was given
    assert summary["contentType"] == "text/event-stream"
    notified = summary["notified"]
    assert notified, "no progress notification reached onprogress"
    values = [n["progress"] for n in notified]
    assert values == sorted(set(values)), values  # strictly increasing
    assert all(n["message"] == f"scanned {n['progress']} transcripts" for n in notified), notified
    assert summary["isError"] is False
    assert summary["hits"] == [scan_sample.meeting]
    assert "notifications/progress" in check_wire(summary, revision)


@pytest.mark.slow
@ALL_MODES
def test_typescript_client_cancellation_over_http(mode: str, launcher: Launcher, big_store: Path) -> None:
    """Scans aborted on their first progress stop on the server: as many again then run at once, and it answers."""
    revision = CLIENT_MODES[mode][1]
    # Its own server (no scan left from another), where no call times out: a scan waiting for a store reader
    # on a loaded machine must still be there to be cancelled.
    server = start(launcher, big_store, ["--call-timeout", "3600"], {"MAGNOTIA_MCP_TOKEN": TOKEN})
    try:
        args = {"endless": ENDLESS, "quick": NEWEST_ID, "slots": MAX_PENDING}
        summary = summary_of(run_http(mode, server, "cancel", args))
    finally:
        server.stop()
    assert summary["protocolVersion"] == revision
    first, second = summary["rounds"]
    assert len(first) == len(second) == MAX_PENDING  # the second round could start: every slot came back
    for call in first + second:
        assert call["progressBeforeAbort"] >= 1, call  # cancelled while running, not before it started
        assert call["result"] is None, call
        assert call["error"] is not None, call  # the SDK rejected the call
        assert call["contentType"] == "text/event-stream", call
        assert "response" not in call["onTheStream"], call  # never answered
        assert set(call["onTheStream"]) <= {"notifications/progress"}, call
        if revision == LEGACY:
            # notifications/cancelled in its own POST (202); the server then ended the call's stream.
            assert call["cancelledPosts"] == [202], call
            assert call["ended"] == "server", call
        else:
            assert call["cancelledPosts"] == [], call  # no notification at 2026-07-28 over HTTP
            assert call["ended"].startswith("cut short"), call  # the client closed the stream
    assert summary["after"] == "Fresh memo"
    check_wire(summary, revision)


@ALL_MODES
@pytest.mark.parametrize("token", [None, "wrong-" + TOKEN], ids=["no-token", "wrong-token"])
def test_typescript_client_without_the_token_gets_401(mode: str, token: str | None, served: HttpServer) -> None:
    first_method = CLIENT_MODES[mode][2]
    summary = summary_of(run_http(mode, served, "refused", token=token))
    assert summary["statuses"] == [["POST", first_method, 401]]  # its first request, and nothing after it
    refused = summary["refused"]
    # What the SDK throws: an error carrying the 401, or v2's UnauthorizedError (its authProvider had a token).
    assert refused["status"] == 401 or refused["name"] == "UnauthorizedError", refused
    assert not any(TOKEN in line for line in served.stderr), "a token reached the log"


def test_the_refused_task_fails_when_the_server_accepts(served: HttpServer) -> None:
    """The refused check can fail: with the right token the connection succeeds and the script exits non-zero."""
    done = run_http("sdk-v1", served, "refused")
    assert done.returncode != 0, done.stdout
    assert not done.stdout.strip(), done.stdout
    assert "the server accepted the connection" in done.stderr
