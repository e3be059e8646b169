"""The official Python SDK's Streamable HTTP client, with the bearer token, against ``serve --http``.

The same walk as tests/clients/test_python_sdk.py (every tool, a resource, templates, every
prompt, completions), here over HTTP: with ``initialize`` (2025-11-25), probing
``server/discover`` (2026-07-28, stateless) and pinned to 2026-07-28. The SDK validates every
result against the revision's models and every structuredContent against the tool's outputSchema.
Then progress (a scanning search with a progress callback) and cancellation (scans cancelled on
their first progress notification, shown by the server's slots coming back, not by timing).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import MCP_DEFAULT_SSE_READ_TIMEOUT, MCP_DEFAULT_TIMEOUT

from magnotia_mcp.transport.limits import MAX_PENDING
from tests.clients.test_python_sdk import TIMEOUT, exercise, structured
from tests.e2e.test_concurrency import ENDLESS, NEWEST_ID, ROWS, TEXT_CHARS, build_big_store
from tests.http.conftest import TOKEN, HttpServer, start
from tests.support.protocol import MODERN
from tests.support.sample import Sample, build_sample
from tests.support.server import Launcher


class Posted:
    """Every JSON-RPC message the SDK POSTs, recorded as it goes out (an httpx event hook)."""

    def __init__(self) -> None:
        self.messages: list[Any] = []

    async def __call__(self, request: httpx2.Request) -> None:
        if request.method == "POST":
            self.messages.append(json.loads(request.content))


def client(server: HttpServer, mode: str, token: str = TOKEN, posted: Posted | None = None) -> Client:
    http = httpx2.AsyncClient(  # what create_mcp_http_client makes, with the hook
        headers={"Authorization": f"Bearer {token}"},
        timeout=httpx2.Timeout(MCP_DEFAULT_TIMEOUT, read=MCP_DEFAULT_SSE_READ_TIMEOUT),
        event_hooks={"request": [posted]} if posted else None,
    )
    return Client(streamable_http_client(server.url, http_client=http), mode=mode, read_timeout_seconds=TIMEOUT)


@pytest.mark.parametrize(("mode", "revision"), [("legacy", "2025-11-25"), ("auto", MODERN), (MODERN, MODERN)])
def test_python_sdk_over_http(mode: str, revision: str, served: HttpServer, sample: Sample) -> None:
    async def session() -> str | None:
        async with client(served, mode) as api:
            await exercise(api, sample)
            return api.protocol_version

    assert asyncio.run(asyncio.wait_for(session(), TIMEOUT)) == revision


def test_python_sdk_without_the_token_is_refused(served: HttpServer) -> None:
    async def session() -> None:
        async with client(served, "legacy", token="wrong") as api:
            await api.list_tools()

    with pytest.raises(BaseException):  # noqa: B017, PT011  the SDK surfaces the 401 in its own way
        asyncio.run(asyncio.wait_for(session(), TIMEOUT))
    assert not any(TOKEN in line or "wrong" in line for line in served.stderr), "a token reached the log"


@pytest.fixture
def scan_served(launcher: Launcher, tmp_path: Path) -> Iterator[HttpServer]:
    """The sample rows without the full-text index, so every search scans and reports progress."""
    server = start(launcher, build_sample(tmp_path / "magnotia.db", fts=False).path, [], {"MAGNOTIA_MCP_TOKEN": TOKEN})
    yield server
    server.stop()


@pytest.mark.parametrize("mode", ["legacy", "auto", MODERN])
def test_python_sdk_progress_over_http(mode: str, scan_served: HttpServer) -> None:
    """A scanning search with a progress callback: progress before the result, never going back, with a message."""
    notified: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        notified.append((progress, total, message))

    async def session() -> dict[str, Any]:
        async with client(scan_served, mode) as api:
            return structured(
                await api.call_tool("search_transcripts", {"query": "budget"}, progress_callback=on_progress)
            )

    result = asyncio.run(asyncio.wait_for(session(), TIMEOUT))
    assert len(result["hits"]) == 1
    assert result["hits"][0]["title"] == "Quarterly budget review"
    assert notified, "no progress notification reached the callback"
    values = [p for p, _, _ in notified]
    assert values == sorted(set(values)), values  # strictly increasing
    assert all(m == f"scanned {int(p)} transcripts" for p, _, m in notified), notified


@pytest.fixture(scope="module")
def big_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Tens of thousands of transcripts and no full-text index: an ENDLESS search scans for tens of seconds."""
    return build_big_store(tmp_path_factory.mktemp("py-http-big") / "magnotia.db", ROWS, TEXT_CHARS)


async def cancelled_scan(api: Client, limit: int) -> None:
    """An ENDLESS search, its task cancelled as soon as its first progress notification arrives."""
    progressed = asyncio.Event()

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        progressed.set()

    arguments = {"query": ENDLESS, "limit": limit}
    call = asyncio.create_task(api.call_tool("search_transcripts", arguments, progress_callback=on_progress))
    waiting = asyncio.create_task(progressed.wait())
    await asyncio.wait({call, waiting}, return_when=asyncio.FIRST_COMPLETED)
    waiting.cancel()
    assert not call.done(), f"the scan ended before it was cancelled: {call.result()}"
    call.cancel()  # the SDK's cancellation: the awaiting task is cancelled
    with pytest.raises(asyncio.CancelledError):
        await call


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["legacy", "auto", MODERN])
def test_python_sdk_cancellation_over_http(mode: str, launcher: Launcher, big_store: Path) -> None:
    """MAX_PENDING scans (as many as run at once) are cancelled on their first progress; then as many again each get
    as far as their first progress, which they can only if every cancelled call stopped and gave its slot back."""
    posted = Posted()

    async def session() -> str:
        async with client(server, mode, posted=posted) as api:
            for first in (1, 1 + MAX_PENDING):
                await asyncio.gather(*(cancelled_scan(api, limit) for limit in range(first, first + MAX_PENDING)))
            return str(structured(await api.call_tool("get_transcript", {"id": NEWEST_ID}))["title"])

    # Its own server (no scan left from another), where no call times out: a scan waiting for a store reader
    # on a loaded machine must still be there to be cancelled.
    server = start(launcher, big_store, ["--call-timeout", "3600"], {"MAGNOTIA_MCP_TOKEN": TOKEN})
    try:
        # A safety limit only (16 scans, two running at a time, on a machine that may be busy).
        assert asyncio.run(asyncio.wait_for(session(), 4 * TIMEOUT)) == "Fresh memo"
    finally:
        server.stop()
    scans = {
        m["id"] for m in posted.messages if m.get("method") == "tools/call" and "query" in m["params"]["arguments"]
    }
    cancelled = {m["params"]["requestId"] for m in posted.messages if m.get("method") == "notifications/cancelled"}
    assert len(scans) == 2 * MAX_PENDING
    if mode == "legacy":
        assert cancelled == scans  # notifications/cancelled in its own POST, for each
    else:
        assert not cancelled  # 2026-07-28: the client closes the request's stream instead
