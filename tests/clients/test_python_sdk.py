"""The official Python SDK client (PyPI ``mcp``) against the real server, in every mode it has.

``mode="legacy"`` opens with ``initialize`` (2025-11-25); ``mode="auto"`` probes
``server/discover`` first and so talks 2026-07-28 to this dual-era server;
``mode="2026-07-28"`` skips the probe; a 2025-06-18 session is opened by hand
through the SDK's public low-level API (``Client`` always offers 2025-11-25).

The SDK validates every result against the negotiated revision's wire models
and every ``structuredContent`` against the tool's ``outputSchema`` (raising on
a mismatch), so these tests fail if the server ever returns something a real
client would reject. Each session lists and calls every tool, reads a resource,
lists templates, gets every prompt and completes a transcript id; the
conversation goes through tests/clients/tap.py, and every message the server
wrote is validated again for its revision. A second store with odd rows
(untitled, no language, accents, the trash) checks what the SDK makes of them,
and of tool errors.
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
from mcp_types import PromptReference, ResourceTemplateReference

from devkit.storefactory import StoreBuilder, ts
from tests.clients.helpers import tapped, validate_tap_dir
from tests.support.protocol import MODERN, PROMPT_NAMES, TOOL_NAMES, URI_PREFIX, URI_TEMPLATE
from tests.support.sample import Sample, build_sample
from tests.support.server import Launcher

T = TypeVar("T")
TIMEOUT = 60.0


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Sample:
    return build_sample(tmp_path_factory.mktemp("py") / "magnotia.db")


@pytest.fixture
def odd_store(new_store: Callable[..., StoreBuilder]) -> Path:
    """A meeting with accents and speakers, an untitled dictation with no language or duration, one in the trash."""
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


def params_for(launcher: Launcher, db: Path, log_dir: Path, *, minimal_env: bool = False) -> StdioServerParameters:
    """The server command for the SDK, behind the tap.

    The SDK starts its children with a few variables only (HOME, PATH, ...) plus
    those given: minimal_env passes just what a container engine needs, as a host
    would; otherwise the server gets our whole environment.
    """
    argv = tapped(launcher.argv(db), log_dir)
    if minimal_env:
        passed = ("PATH", "XDG_RUNTIME_DIR", "DOCKER_HOST", "DOCKER_CONFIG")  # and CONTAINERS_* for podman's config
        env = {k: v for k, v in os.environ.items() if k in passed or k.startswith("CONTAINERS_")}
    else:
        env = dict(os.environ)
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


def tool_arguments(sample: Sample) -> dict[str, dict[str, Any]]:
    return {
        "list_transcripts": {"limit": 10},
        "get_transcript": {"id": sample.meeting, "include_segments": True},
        "search_transcripts": {"query": "budget"},
        "list_tasks": {"status": "open"},
    }


def prompt_arguments(sample: Sample) -> dict[str, dict[str, str]]:
    return {
        "summarize_transcript": {"transcript_id": sample.meeting},
        "action_items": {"transcript_id": sample.meeting},
        "review_meetings": {"since": "2026-05-01"},
    }


async def exercise(api: Client | ClientSession, sample: Sample) -> dict[str, Any]:
    """The same walk for mcp.Client and mcp.ClientSession (their methods share names)."""
    tools = (await api.list_tools()).tools
    assert tuple(t.name for t in tools) == TOOL_NAMES
    calls: dict[str, Any] = {}
    for name, arguments in tool_arguments(sample).items():
        result = await api.call_tool(name, arguments)
        assert result.is_error is False, (name, result)
        calls[name] = structured(result)
    assert [t["id"] for t in calls["list_transcripts"]["transcripts"]] == sample.live
    assert [t["speakers"] for t in calls["list_transcripts"]["transcripts"]] == [[], ["Ana", "Bo"], []]
    assert calls["get_transcript"]["title"] == "Quarterly budget review"
    assert calls["get_transcript"]["speakers"] == ["Ana", "Bo"]
    assert calls["search_transcripts"]["hits"][0]["transcript_id"] == sample.meeting
    await search_arguments(api, sample)
    assert [t["title"] for t in calls["list_tasks"]["tasks"]] == ["Send the budget draft"]

    # Time words: the result echoes the range it used, and the SDK checks it against the outputSchema.
    windowed = structured(await api.call_tool("list_transcripts", {"since": "2026-05", "until": "tomorrow"}))
    assert [t["id"] for t in windowed["transcripts"]] == sample.live
    assert windowed["range"]["since"] == "2026-05-01T00:00:00.000Z"
    assert isinstance(windowed["range"]["until"], str)
    due = structured(await api.call_tool("list_tasks", {"status": "open", "due_before": "2026"}))
    assert due["range"] == {"since": None, "until": "2027-01-01T00:00:00.000Z"}
    assert [t["title"] for t in due["tasks"]] == ["Send the budget draft"]
    refused = await api.call_tool("list_transcripts", {"since": "the other day"}) if isinstance(api, Client) else None
    if refused is not None:  # a Client session is 2025-11-25 or later: a result the model reads
        assert refused.is_error is True
        block = refused.content[0]
        assert isinstance(block, types.TextContent)
        assert "'since'" in block.text
        assert "this/last/next week" in block.text  # the error lists the accepted forms

    resources = (await api.list_resources()).resources
    assert [str(r.uri) for r in resources] == [URI_PREFIX + i for i in sample.live]
    read = await api.read_resource(URI_PREFIX + sample.meeting)
    contents = read.contents[0]
    assert isinstance(contents, types.TextResourceContents)
    assert contents.text.startswith("# Quarterly budget review")
    assert "Ana: We need the budget draft by Friday." in contents.text
    templates = (await api.list_resource_templates()).resource_templates
    assert [t.uri_template for t in templates] == [URI_TEMPLATE]

    prompts = (await api.list_prompts()).prompts
    assert tuple(p.name for p in prompts) == PROMPT_NAMES
    kinds = {}
    for name, prompt_args in prompt_arguments(sample).items():
        got = await api.get_prompt(name, prompt_args)
        kinds[name] = [m.content.type for m in got.messages]
    assert kinds["summarize_transcript"][0] == "resource"
    assert kinds["review_meetings"] == ["text", "resource_link"]  # the SDK takes resource_link content

    by_title = await api.complete(
        PromptReference(name="summarize_transcript"), {"name": "transcript_id", "value": "budget"}
    )
    assert by_title.completion.values == [sample.meeting]
    by_id = await api.complete(ResourceTemplateReference(uri=URI_TEMPLATE), {"name": "id", "value": sample.file[:6]})
    assert sample.file in by_id.completion.values
    return {"prompt_kinds": kinds}


async def search_arguments(api: Client | ClientSession, sample: Sample) -> None:
    """sort, speaker and a question: every result is checked by the SDK against the tool's outputSchema."""

    async def search(arguments: dict[str, Any]) -> dict[str, Any]:
        return structured(await api.call_tool("search_transcripts", arguments))

    several = "milk OR interview OR budget"
    newest = await search({"query": several, "sort": "newest"})
    assert newest["sort"] == "newest"
    assert [h["transcript_id"] for h in newest["hits"]] == sample.live
    oldest = await search({"query": several, "sort": "oldest"})
    assert [h["transcript_id"] for h in oldest["hits"]] == sample.live[::-1]
    ranked = await search({"query": "what did we say about the budget draft room", "sort": "relevance"})
    assert ranked["sort"] == "relevance"
    assert ranked["ranked_among"] == 1
    (hit,) = ranked["hits"]
    assert hit["transcript_id"] == sample.meeting
    assert hit["matched_terms"] == ["budget", "draft", "room"]
    assert [m["seq"] for m in hit["moments"]] == [0, 1]  # two terms, then one
    by_ana = await search({"query": "budget room", "speaker": "ana"})
    (hit,) = by_ana["hits"]
    assert hit["matched_terms"] == ["budget"]  # Bo asked about the room, not Ana
    assert [(m["seq"], m["speaker"]) for m in hit["moments"]] == [(0, "Ana")]
    assert (await search({"query": "budget", "speaker": "Bo", "sort": "newest"}))["hits"] == []


def check_wire(log_dir: Path, revision: str, first: str) -> None:
    """Every server message of the session passed validation at revision; the session opened with first."""
    (tracker,) = validate_tap_dir(log_dir)
    assert tracker.revisions == {revision}
    methods = tracker.methods_at(revision)
    expected = {first, "tools/list", "tools/call", "resources/list", "resources/read", "resources/templates/list"}
    expected |= {"prompts/list", "prompts/get", "completion/complete"}
    assert expected <= methods, expected - methods
    assert tracker.validated[0][1] == first


async def initialize_at(session: ClientSession, version: str) -> None:
    """Send initialize asking for version, adopt the answer, send initialized (the SDK's low-level path)."""
    init = await session.send_request(
        types.InitializeRequest(
            params=types.InitializeRequestParams(
                protocol_version=version,
                capabilities=types.ClientCapabilities(),
                client_info=types.Implementation(name="magnotia-tests", version="0"),
            )
        ),
        types.InitializeResult,
    )
    session.adopt(init)
    await session.send_notification(types.InitializedNotification())


@pytest.mark.parametrize(
    ("mode", "revision", "first"),
    [("legacy", "2025-11-25", "initialize"), ("auto", MODERN, "server/discover"), (MODERN, MODERN, "tools/list")],
)
def test_python_sdk_client(
    mode: str, revision: str, first: str, launcher: Launcher, sample: Sample, tmp_path: Path
) -> None:
    log_dir = tmp_path / "wire"

    async def session() -> tuple[str | None, types.Implementation | None]:
        async with Client(
            params_for(launcher, sample.path, log_dir), mode=mode, read_timeout_seconds=TIMEOUT
        ) as client:
            await exercise(client, sample)
            return client.protocol_version, client.server_info

    version, info = run(session)
    assert version == revision
    if mode != MODERN:  # mode="2026-07-28" adopts a minimal discover result without asking the server
        assert info is not None
        assert info.name == "magnotia-mcp"
    check_wire(log_dir, revision, first)


def test_python_sdk_session_at_2025_06_18_sees_tool_errors_as_json_rpc_errors(
    launcher: Launcher, sample: Sample, tmp_path: Path
) -> None:
    """A 2025-06-18 session (SDK low-level API): the same walk validates; tool errors raise, with their message."""
    log_dir = tmp_path / "wire"

    async def session() -> tuple[str | None, list[str]]:
        async with (
            stdio_client(params_for(launcher, sample.path, log_dir)) as (read, write),
            ClientSession(read, write) as s,
        ):
            await initialize_at(s, "2025-06-18")
            await exercise(s, sample)
            errors = []
            for name, arguments in (("get_transcript", {"id": "nope"}), ("list_tasks", {"limit": 101})):
                with pytest.raises(MCPError) as raised:
                    await s.call_tool(name, arguments)
                errors.append(raised.value.message)
            return s.protocol_version, errors

    version, errors = run(session)
    assert version == "2025-06-18"
    assert errors[0] == "Transcript nope not found"
    assert "limit" in errors[1]
    check_wire(log_dir, "2025-06-18", "initialize")


def test_the_sdk_client_reads_odd_rows_and_tool_errors(launcher: Launcher, odd_store: Path, tmp_path: Path) -> None:
    """Client(mode="legacy") with a host's minimal environment: untitled rows, nulls, accents, paging and windows
    come through validated; not-found and bad arguments are isError results a model can read, not exceptions."""
    log_dir = tmp_path / "wire"

    async def session() -> tuple[dict[str, Any], list[types.CallToolResult]]:
        out: dict[str, Any] = {}
        params = params_for(launcher, odd_store, log_dir, minimal_env=True)
        async with Client(params, mode="legacy", cache=None) as client:
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
            out["accents"] = structured(await client.call_tool("search_transcripts", {"query": "CAFE"}))
            out["odd"] = structured(await client.call_tool("search_transcripts", {"query": 'NEAR( "cafe'}))
            out["tasks"] = structured(await client.call_tool("list_tasks", {}))
            out["open"] = structured(await client.call_tool("list_tasks", {"status": "open"}))
            out["paged"] = structured(await client.call_tool("list_tasks", {"limit": 1}))
            out["no_args"] = structured(await client.call_tool("list_transcripts"))
            errors = [
                await client.call_tool("get_transcript", {"id": "no-such-id"}),
                await client.call_tool("list_transcripts", {"limit": 0}),
                await client.call_tool("search_transcripts", {"query": ""}),
                await client.call_tool("list_tasks", {"cursor": "forged"}),
            ]
            return out, errors

    out, errors = run(session)
    assert out["version"] == "2025-11-25"
    assert out["server"] == "magnotia-mcp"
    assert out["instructions"]
    assert tuple(out["tools"]) == TOOL_NAMES
    for tool in out["tools"].values():
        assert tool.output_schema is not None
        assert tool.input_schema["additionalProperties"] is False
        assert tool.annotations is not None
        assert tool.annotations.read_only_hint is True
    assert [t["title"] for t in out["list"]["transcripts"]] == ["Pricing meeting", ""]
    assert out["list"]["transcripts"][1]["language"] is None
    assert out["list"]["transcripts"][1]["duration_ms"] is None
    assert [t["speakers"] for t in out["list"]["transcripts"]] == [["Ana", "Ben"], []]
    assert out["get"]["title"] == "Pricing meeting"
    assert out["get"]["format"] == "formatted"
    assert [s["speaker"] for s in out["get"]["segments"]] == ["Ana", "Ben"]
    assert out["get"]["tasks"][0]["title"] == "Send the pricing table"
    assert out["window"]["next_offset"] == 10
    assert out["get"]["speakers"] == out["window"]["speakers"] == ["Ana", "Ben"]
    assert [h["title"] for h in out["search"]["hits"]] == ["Pricing meeting"]
    assert "**pricing**" in out["search"]["hits"][0]["moments"][0]["snippet"]
    assert out["search"]["hits"][0]["moments"][0]["speaker"] == "Ana"
    assert out["accents"]["hits"][0]["title"] == "Pricing meeting"
    # Odd syntax is never an error: 'NEAR( "cafe' is the terms NEAR and cafe; the meeting has one of them.
    assert [(h["title"], h["matched_terms"]) for h in out["odd"]["hits"]] == [("Pricing meeting", ["cafe"])]
    assert [t["title"] for t in out["tasks"]["tasks"]] == ["Send the pricing table", "Done already"]
    assert out["tasks"]["tasks"][1]["transcript"] is None
    assert [t["title"] for t in out["open"]["tasks"]] == ["Send the pricing table"]
    assert isinstance(out["paged"]["next_cursor"], str)
    assert out["no_args"] == out["list"]
    assert "Trashed" not in json.dumps(out, default=str)

    texts = []
    for result in errors:
        assert result.is_error is True
        block = result.content[0]
        assert isinstance(block, types.TextContent)
        texts.append(block.text)
    assert texts[0] == "Transcript no-such-id not found"
    assert "limit" in texts[1]
    assert "query" in texts[2]
    assert "cursor" in texts[3]
    (tracker,) = validate_tap_dir(log_dir)
    assert tracker.revisions == {"2025-11-25"}
