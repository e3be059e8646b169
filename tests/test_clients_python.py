"""The official Python SDK client (PyPI ``mcp``) against the real server, in every mode it has.

``mode="legacy"`` opens with ``initialize`` (2025-11-25); ``mode="auto"`` probes
``server/discover`` first and so talks 2026-07-28 to this dual-era server;
``mode="2026-07-28"`` skips the probe; a 2025-06-18 session is opened by hand
(``Client`` always offers 2025-11-25). Each lists and calls every tool (the SDK
checks structuredContent against the outputSchema and every result against the
revision's models), reads a resource, lists templates, gets every prompt and
completes a transcript id. The conversation goes through tests/clients/tap.py,
and every message the server wrote is validated again for its revision.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, ClientSession, StdioServerParameters, stdio_client
from mcp_types import PromptReference, ResourceTemplateReference

from tests.clients_support import (
    MODERN,
    PROMPT_NAMES,
    TOOL_NAMES,
    URI_PREFIX,
    URI_TEMPLATE,
    Sample,
    build_sample,
    tapped,
    validate_tap_dir,
)
from tests.sdk_session import initialize_at
from tests.server import Launcher

pytestmark = pytest.mark.e2e

TIMEOUT = 60.0


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Sample:
    return build_sample(tmp_path_factory.mktemp("py") / "magnotia.db")


def params_for(launcher: Launcher, sample: Sample, log_dir: Path) -> StdioServerParameters:
    argv = tapped(launcher.argv(sample.path), log_dir)
    # The SDK passes only a few variables (HOME, PATH, ...) unless told; give the server ours.
    return StdioServerParameters(command=argv[0], args=argv[1:], env=dict(os.environ))


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


async def exercise(api: Any, sample: Sample) -> dict[str, Any]:
    """The same walk for mcp.Client and mcp.ClientSession (their methods share names)."""
    tools = (await api.list_tools()).tools
    assert tuple(t.name for t in tools) == TOOL_NAMES
    calls: dict[str, Any] = {}
    for name, arguments in tool_arguments(sample).items():
        result = await api.call_tool(name, arguments)
        assert result.is_error is False, (name, result)
        calls[name] = result.structured_content
        assert json.loads(result.content[0].text) == result.structured_content
    assert [t["id"] for t in calls["list_transcripts"]["transcripts"]] == sample.live
    assert calls["get_transcript"]["title"] == "Quarterly budget review"
    assert calls["search_transcripts"]["hits"][0]["transcript_id"] == sample.meeting
    assert [t["title"] for t in calls["list_tasks"]["tasks"]] == ["Send the budget draft"]

    resources = (await api.list_resources()).resources
    assert [str(r.uri) for r in resources] == [URI_PREFIX + i for i in sample.live]
    read = await api.read_resource(URI_PREFIX + sample.meeting)
    text = read.contents[0].text
    assert text.startswith("# Quarterly budget review")
    assert "Ana: We need the budget draft by Friday." in text
    templates = (await api.list_resource_templates()).resource_templates
    assert [t.uri_template for t in templates] == [URI_TEMPLATE]

    prompts = (await api.list_prompts()).prompts
    assert tuple(p.name for p in prompts) == PROMPT_NAMES
    kinds = {}
    for name, arguments in prompt_arguments(sample).items():
        got = await api.get_prompt(name, arguments)
        kinds[name] = [m.content.type for m in got.messages]
    assert kinds["summarize_transcript"][0] == "resource"

    by_title = await api.complete(
        PromptReference(name="summarize_transcript"), {"name": "transcript_id", "value": "budget"}
    )
    assert by_title.completion.values == [sample.meeting]
    by_id = await api.complete(ResourceTemplateReference(uri=URI_TEMPLATE), {"name": "id", "value": sample.file[:6]})
    assert sample.file in by_id.completion.values
    return {"prompt_kinds": kinds}


def check_wire(log_dir: Path, revision: str, first: str) -> None:
    """Every server message of the session passed validation at revision; the session opened with first."""
    (tracker,) = validate_tap_dir(log_dir)
    assert tracker.revisions == {revision}
    methods = tracker.methods_at(revision)
    expected = {first, "tools/list", "tools/call", "resources/list", "resources/read", "resources/templates/list"}
    expected |= {"prompts/list", "prompts/get", "completion/complete"}
    assert expected <= methods, expected - methods
    assert tracker.validated[0][1] == first


@pytest.mark.parametrize(
    ("mode", "revision", "first"),
    [("legacy", "2025-11-25", "initialize"), ("auto", MODERN, "server/discover"), (MODERN, MODERN, "tools/list")],
)
def test_python_sdk_client(
    mode: str, revision: str, first: str, launcher: Launcher, sample: Sample, tmp_path: Path
) -> None:
    log_dir = tmp_path / "wire"

    async def run() -> tuple[str | None, Any, dict[str, Any]]:
        async with Client(params_for(launcher, sample, log_dir), mode=mode, read_timeout_seconds=TIMEOUT) as client:
            summary = await exercise(client, sample)
            return client.protocol_version, client.server_info, summary

    version, info, summary = asyncio.run(asyncio.wait_for(run(), TIMEOUT))
    assert version == revision
    if mode != MODERN:  # mode="2026-07-28" adopts a minimal discover result without asking the server
        assert info is not None
        assert info.name == "magnotia-mcp"
    assert summary["prompt_kinds"]["review_meetings"] == ["text", "resource_link"]
    check_wire(log_dir, revision, first)


def test_python_sdk_session_at_2025_06_18(launcher: Launcher, sample: Sample, tmp_path: Path) -> None:
    log_dir = tmp_path / "wire"

    async def run() -> tuple[str | None, dict[str, Any]]:
        async with (
            stdio_client(params_for(launcher, sample, log_dir)) as (read, write),
            ClientSession(read, write) as session,
        ):
            await initialize_at(session, "2025-06-18")
            summary = await exercise(session, sample)
            return session.protocol_version, summary

    version, summary = asyncio.run(asyncio.wait_for(run(), TIMEOUT))
    assert version == "2025-06-18"
    assert summary["prompt_kinds"]["review_meetings"] == ["text", "resource_link"]
    check_wire(log_dir, "2025-06-18", "initialize")
