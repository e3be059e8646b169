"""The official MCP Python SDK client (``mcp``) against the real server over stdio.

The SDK validates every result against the negotiated revision's wire models
and every ``structuredContent`` against the tool's ``outputSchema`` (raising
on a mismatch), so these tests fail if the server ever returns something a
real client would reject. Two sessions: ``Client(mode="legacy")`` (which
offers 2025-11-25) and a session pinned to 2025-06-18 through the SDK's
public low-level API, where tool errors are JSON-RPC errors.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import mcp_types as types
import pytest
from mcp import Client, ClientSession, StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError

from tests.sdk_session import initialize_at
from tests.server import Launcher
from tests.storefactory import StoreBuilder, ts

pytestmark = pytest.mark.e2e

T = TypeVar("T")
TIMEOUT = 60.0
TOOL_NAMES = ["list_transcripts", "get_transcript", "search_transcripts", "list_tasks"]


@pytest.fixture
def store(new_store: Callable[..., StoreBuilder]) -> Path:
    b = new_store()
    meeting = b.transcript(
        title="Pricing meeting",
        source="meeting",
        raw_text="Ana: what did we decide about pricing? Ben: we keep the café plan.",
        formatted_text="**Ana:** What did we decide about pricing?\n**Ben:** We keep the café plan.",
        created_at=ts(9, 600),
        segments=[("Ana", "Ana: what did we decide about pricing?"), ("Ben", "Ben: we keep the café plan.")],
    )
    b.transcript(title="", raw_text="A quick untitled dictation 🎉", language=None, duration_ms=None, created_at=ts(8))
    b.transcript(title="Trashed", raw_text="pricing secrets", created_at=ts(10), deleted_at=ts(11))
    b.task(transcript_id=meeting, title="Send the pricing table", due_at=ts(12), priority=1, notes="by Friday")
    b.task(title="Done already", status="done", completed_at=ts(9), created_at=ts(7))
    return b.close()


def params_for(launcher: Launcher, db: Path) -> StdioServerParameters:
    """The server command for the SDK; its stdio client starts children with a minimal env, so pass what is needed."""
    argv = launcher.argv(db)
    passed = ("PATH", "XDG_RUNTIME_DIR", "DOCKER_HOST", "DOCKER_CONFIG")  # and CONTAINERS_* for podman's own config
    env = {k: v for k, v in os.environ.items() if k in passed or k.startswith("CONTAINERS_")}
    return StdioServerParameters(command=argv[0], args=argv[1:], env=env)


def run(coro: Callable[[], Awaitable[T]]) -> T:
    async def bounded() -> T:
        return await asyncio.wait_for(coro(), TIMEOUT)

    return asyncio.run(bounded())


def structured(result: types.CallToolResult) -> dict[str, Any]:
    """The result object, checked to be the same in structuredContent and in the text block."""
    assert result.is_error is not True, result
    assert len(result.content) == 1
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    parsed = json.loads(block.text)
    assert result.structured_content == parsed
    assert isinstance(parsed, dict)
    return parsed


def test_the_sdk_client_lists_and_calls_every_tool_with_no_validation_error(launcher: Launcher, store: Path) -> None:
    """Client(mode="legacy"): 2025-11-25, four tools with output schemas, each call validated and carrying real data."""

    async def session() -> dict[str, Any]:
        out: dict[str, Any] = {}
        async with Client(params_for(launcher, store), mode="legacy", cache=None) as client:
            out["version"] = client.protocol_version
            out["server"] = client.server_info.name if client.server_info else None
            out["instructions"] = client.instructions
            listing = await client.list_tools()
            out["tools"] = {t.name: t for t in listing.tools}
            out["list"] = structured(await client.call_tool("list_transcripts", {"limit": 5}))
            first = out["list"]["transcripts"][0]["id"]
            out["get"] = structured(await client.call_tool("get_transcript", {"id": first, "include_segments": True}))
            out["window"] = structured(await client.call_tool("get_transcript", {"id": first, "max_chars": 10}))
            out["search"] = structured(await client.call_tool("search_transcripts", {"query": "pricing"}))
            out["odd"] = structured(await client.call_tool("search_transcripts", {"query": 'NEAR( "cafe'}))
            out["tasks"] = structured(await client.call_tool("list_tasks", {}))
            out["paged"] = structured(await client.call_tool("list_tasks", {"limit": 1}))
            out["no_args"] = structured(await client.call_tool("list_transcripts"))
            return out

    out = run(session)
    assert out["version"] == "2025-11-25"
    assert out["server"] == "magnotia-mcp"
    assert out["instructions"]
    assert list(out["tools"]) == TOOL_NAMES
    for tool in out["tools"].values():
        assert tool.output_schema is not None
        assert tool.input_schema["additionalProperties"] is False
        assert tool.annotations is not None
        assert tool.annotations.read_only_hint is True
    assert [t["title"] for t in out["list"]["transcripts"]] == ["Pricing meeting", ""]
    assert out["list"]["transcripts"][1]["language"] is None
    assert out["list"]["transcripts"][1]["duration_ms"] is None
    assert out["get"]["format"] == "formatted"
    assert [s["speaker"] for s in out["get"]["segments"]] == ["Ana", "Ben"]
    assert out["get"]["tasks"][0]["title"] == "Send the pricing table"
    assert out["window"]["next_offset"] == 10
    assert [h["title"] for h in out["search"]["hits"]] == ["Pricing meeting"]
    assert "**pricing**" in out["search"]["hits"][0]["snippet"]
    assert out["search"]["hits"][0]["segment"]["speaker"] == "Ana"
    assert out["odd"]["hits"] == []
    assert [t["title"] for t in out["tasks"]["tasks"]] == ["Send the pricing table", "Done already"]
    assert out["tasks"]["tasks"][1]["transcript"] is None
    assert isinstance(out["paged"]["next_cursor"], str)
    assert out["no_args"] == out["list"]
    assert "Trashed" not in json.dumps(out, default=str)


def test_the_sdk_client_gets_tool_errors_as_readable_results_at_2025_11_25(launcher: Launcher, store: Path) -> None:
    """At 2025-11-25 not-found and bad arguments come back as isError results the model can read, not exceptions."""

    async def session() -> list[types.CallToolResult]:
        async with Client(params_for(launcher, store), mode="legacy", cache=None) as client:
            await client.list_tools()
            return [
                await client.call_tool("get_transcript", {"id": "no-such-id"}),
                await client.call_tool("list_transcripts", {"limit": 0}),
                await client.call_tool("search_transcripts", {"query": ""}),
                await client.call_tool("list_tasks", {"cursor": "forged"}),
            ]

    results = run(session)
    texts = []
    for result in results:
        assert result.is_error is True
        block = result.content[0]
        assert isinstance(block, types.TextContent)
        texts.append(block.text)
    assert texts[0] == "Transcript no-such-id not found"
    assert "limit" in texts[1]
    assert "query" in texts[2]
    assert "cursor" in texts[3]


def test_the_sdk_client_pinned_to_2025_06_18_validates_and_sees_json_rpc_errors(
    launcher: Launcher, store: Path
) -> None:
    """A 2025-06-18 session (SDK low-level API): structured results validate; errors raise with the contract codes."""

    async def session() -> dict[str, Any]:
        out: dict[str, Any] = {}
        async with stdio_client(params_for(launcher, store)) as (read, write), ClientSession(read, write) as s:
            await initialize_at(s, "2025-06-18")
            out["version"] = s.protocol_version
            out["tools"] = [t.name for t in (await s.list_tools()).tools]
            listed = structured(await s.call_tool("list_transcripts", {}))
            out["get"] = structured(await s.call_tool("get_transcript", {"id": listed["transcripts"][0]["id"]}))
            out["search"] = structured(await s.call_tool("search_transcripts", {"query": "CAFE"}))
            out["tasks"] = structured(await s.call_tool("list_tasks", {"status": "open"}))
            out["errors"] = []
            for name, arguments in (("get_transcript", {"id": "nope"}), ("list_tasks", {"limit": 101})):
                try:
                    await s.call_tool(name, arguments)
                except MCPError as exc:
                    out["errors"].append((exc.code, exc.message))
            return out

    out = run(session)
    assert out["version"] == "2025-06-18"
    assert out["tools"] == TOOL_NAMES
    assert out["get"]["title"] == "Pricing meeting"
    assert out["search"]["hits"][0]["title"] == "Pricing meeting"
    assert [t["title"] for t in out["tasks"]["tasks"]] == ["Send the pricing table"]
    assert out["errors"][0] == (-32000, "Transcript nope not found")
    assert out["errors"][1][0] == -32602
    assert "limit" in out["errors"][1][1]
