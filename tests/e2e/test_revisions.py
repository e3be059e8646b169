"""Raw JSON-RPC, one test per protocol revision: the exact shape of every answer.

This is the end-to-end home of the per-revision rules (which members, which
error codes, errors or isError results, progress messages): each is asserted
here once, for every revision; test_protocol.py covers what every revision
shares, and the real-client tests (tests/clients) what real clients accept.

Each message the server writes is validated against the official models of the
revision in use (tests/support/wire_schema.py, from mcp-types). On top of that, these
tests assert what the models cannot: members a revision must NOT have (the
models cover 2025-11-25 and 2026-07-28 only), the error codes of each revision,
and that results carry the store's real data. Expectations come from the
specification (per revision), not from the server's own revision table.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import jsonschema
import pytest

from magnotia_mcp import __version__
from tests.support.protocol import (
    LEGACY,
    META_CAPABILITIES,
    META_SERVER_INFO,
    META_VERSION,
    MODERN,
    PROMPT_NAMES,
    REVISIONS,
    TOOL_NAMES,
    URI_PREFIX,
    URI_TEMPLATE,
    at_least,
    modern_meta,
)
from tests.support.sample import Sample, build_sample
from tests.support.server import ServerProcess

Start = Callable[..., ServerProcess]
pytestmark = pytest.mark.transports("stdio", "http")


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Sample:
    return build_sample(tmp_path_factory.mktemp("raw") / "magnotia.db")


@pytest.fixture(scope="module")
def scan_sample(tmp_path_factory: pytest.TempPathFactory) -> Sample:
    """The sample without the full-text index: every search scans, and reports progress when asked."""
    return build_sample(tmp_path_factory.mktemp("raw-scan") / "magnotia.db", fts=False)


def session(start_server: Start, sample: Sample, revision: str) -> tuple[ServerProcess, dict[str, Any]]:
    raw = start_server(sample.path)
    return raw, raw.open(revision)


def result_of(response: dict[str, Any]) -> dict[str, Any]:
    assert "error" not in response, response
    assert "result" in response, response
    return response["result"]  # type: ignore[no-any-return]


def error_of(response: dict[str, Any], code: int) -> dict[str, Any]:
    assert "result" not in response, response
    assert "error" in response, response
    assert response["error"]["code"] == code, response
    assert isinstance(response["error"]["message"], str)
    assert response["error"]["message"]
    return response["error"]  # type: ignore[no-any-return]


def envelope(revision: str, *, cacheable: bool = False) -> set[str]:
    """The members every result of this revision carries besides its own."""
    if revision != MODERN:
        return set()
    return {"resultType", "_meta", *(("ttlMs", "cacheScope") if cacheable else ())}


def check_envelope(result: dict[str, Any], revision: str, *, cacheable: bool = False) -> None:
    if revision == MODERN:
        assert result["resultType"] == "complete"
        assert set(result["_meta"]) == {META_SERVER_INFO}
        assert result["_meta"][META_SERVER_INFO] == {
            "name": "magnotia-mcp",
            "title": "Magnotia",
            "version": __version__,
        }
        if cacheable:
            assert isinstance(result["ttlMs"], int)
            assert result["ttlMs"] >= 0
            assert result["cacheScope"] in ("public", "private")
        else:
            assert "ttlMs" not in result
            assert "cacheScope" not in result
    else:
        for absent in ("resultType", "_meta", "ttlMs", "cacheScope"):
            assert absent not in result, f"{absent} in a {revision} result: {result}"


def server_info(revision: str) -> dict[str, Any]:
    info: dict[str, Any] = {"name": "magnotia-mcp", "version": __version__}
    if at_least(revision, "2025-06-18"):
        info["title"] = "Magnotia"
    return info


def capabilities(revision: str) -> dict[str, Any]:
    caps: dict[str, Any] = {"tools": {}, "resources": {}, "prompts": {}}
    if at_least(revision, "2025-03-26"):
        caps["completions"] = {}
    return caps


# -- the per-revision walk ----------------------------------------------------------------

# tools/call params that name no tool of ours, and a word the error message must contain.
MALFORMED_CALLS: list[tuple[dict[str, Any], str]] = [
    ({"name": "delete_everything"}, "delete_everything"),
    ({"arguments": {}}, "name"),
    ({"name": 5}, "name"),
    ({"name": None}, "name"),
]
# Arguments a tool refuses, and the argument its message must name (each tool's own rules: tests/e2e/test_tools.py).
BAD_ARGUMENTS: list[tuple[str, dict[str, Any], str]] = [
    ("list_transcripts", {"limit": 0}, "limit"),
    ("list_transcripts", {"limit": 101}, "limit"),
    ("list_transcripts", {"limit": True}, "limit"),
    ("list_transcripts", {"since": "last fortnight"}, "since"),
    ("get_transcript", {}, "id"),
    ("get_transcript", {"id": "x", "format": "html"}, "format"),
    ("search_transcripts", {}, "query"),
    ("search_transcripts", {"query": 7}, "query"),
    ("list_tasks", {"colour": "red"}, "colour"),
    ("list_tasks", {"status": "closed"}, "status"),
    ("list_tasks", {"cursor": "forged"}, "cursor"),
]


def check_open(revision: str, opened: dict[str, Any]) -> None:
    if revision == MODERN:
        assert set(opened) == {
            "resultType",
            "supportedVersions",
            "capabilities",
            "instructions",
            "ttlMs",
            "cacheScope",
            "_meta",
        }
        assert opened["supportedVersions"] == [MODERN]
        assert opened["capabilities"] == capabilities(revision)
        assert "serverInfo" not in opened
        check_envelope(opened, revision, cacheable=True)
    else:
        assert set(opened) == {"protocolVersion", "capabilities", "serverInfo", "instructions"}
        assert opened["protocolVersion"] == revision
        assert opened["capabilities"] == capabilities(revision)
        assert opened["serverInfo"] == server_info(revision)
    assert "search_transcripts" in opened["instructions"]
    assert "get_transcript" in opened["instructions"]


def check_tools(raw: ServerProcess, revision: str, sample: Sample) -> None:
    listed = result_of(raw.request("tools/list"))
    assert set(listed) == {"tools"} | envelope(revision, cacheable=True)
    check_envelope(listed, revision, cacheable=True)
    tools = {t["name"]: t for t in listed["tools"]}
    error_of(raw.request("tools/list", {"cursor": "not-a-cursor-we-issued"}), -32602)
    assert tuple(tools) == TOOL_NAMES
    keys = {"name", "description", "inputSchema"}
    if at_least(revision, "2025-03-26"):
        keys.add("annotations")
    if at_least(revision, "2025-06-18"):
        keys |= {"title", "outputSchema"}
    for tool in tools.values():
        assert set(tool) == keys, (revision, tool["name"], set(tool) ^ keys)
        assert tool["description"]
        assert tool["inputSchema"]["type"] == "object"
        assert tool["inputSchema"]["additionalProperties"] is False
        jsonschema.Draft202012Validator.check_schema(tool["inputSchema"])
        if "outputSchema" in tool:
            assert tool["outputSchema"]["type"] == "object"  # 2025-06-18 and 2025-11-25 allow objects only
            jsonschema.Draft202012Validator.check_schema(tool["outputSchema"])
        if "annotations" in tool:
            assert tool["annotations"]["readOnlyHint"] is True
            assert tool["annotations"]["destructiveHint"] is False
            assert tool["annotations"]["openWorldHint"] is False
        assert "execution" not in tool
        assert "icons" not in tool

    # Success: every tool, with real data; the text block mirrors structuredContent.
    arguments = {
        "list_transcripts": {},
        "get_transcript": {"id": sample.meeting, "include_segments": True},
        "search_transcripts": {"query": "budget"},
        "list_tasks": {"status": "all"},
    }
    payloads = {}
    for name, args in arguments.items():
        result = result_of(raw.call(name, args))
        has_structured = at_least(revision, "2025-06-18")
        assert set(result) == {"content", "isError"} | ({"structuredContent"} if has_structured else set()) | envelope(
            revision
        )
        check_envelope(result, revision)
        assert result["isError"] is False
        assert len(result["content"]) == 1
        assert set(result["content"][0]) == {"type", "text"}
        assert result["content"][0]["type"] == "text"
        payload = json.loads(result["content"][0]["text"])
        if has_structured:
            assert result["structuredContent"] == payload
            jsonschema.validate(payload, tools[name]["outputSchema"])
        payloads[name] = payload
    assert [t["id"] for t in payloads["list_transcripts"]["transcripts"]] == sample.live
    assert payloads["get_transcript"]["id"] == sample.meeting
    assert [s["speaker"] for s in payloads["get_transcript"]["segments"]] == ["Ana", "Bo", "Ana"]
    assert [h["transcript_id"] for h in payloads["search_transcripts"]["hits"]] == [sample.meeting]
    assert {t["title"] for t in payloads["list_tasks"]["tasks"]} == {"Send the budget draft", "Book the room"}

    # A call naming no tool we have, or that is not a CallToolRequest: -32602 in every revision.
    for params, mentions in MALFORMED_CALLS:
        error = error_of(raw.request("tools/call", params), -32602)
        assert mentions in error["message"], (params, error)
    error_of(raw.call("list_tasks", [1, 2]), -32602)

    # Invalid arguments and "not found": results with isError from 2025-11-25, errors before.
    bad_arguments = [
        *BAD_ARGUMENTS,
        ("get_transcript", {"id": sample.meeting, "no_such_argument": 1}, "no_such_argument"),
    ]
    for tool, arguments, named in bad_arguments:
        response = raw.call(tool, arguments)
        if at_least(revision, "2025-11-25"):
            result = result_of(response)
            assert set(result) == {"content", "isError"} | envelope(revision), result  # no structuredContent
            check_envelope(result, revision)
            assert result["isError"] is True
            assert result["content"][0]["type"] == "text"
            assert named in result["content"][0]["text"], (tool, arguments, result)
        else:
            assert named in error_of(response, -32602)["message"], (tool, arguments, response)
    missing = raw.call("get_transcript", {"id": "no-such-id"})
    trashed = raw.call("get_transcript", {"id": sample.trashed})
    if at_least(revision, "2025-11-25"):
        for response, transcript_id in ((missing, "no-such-id"), (trashed, sample.trashed)):
            result = result_of(response)
            assert set(result) == {"content", "isError"} | envelope(revision), result
            check_envelope(result, revision)
            assert result["isError"] is True
            assert result["content"] == [{"type": "text", "text": f"Transcript {transcript_id} not found"}]
    else:
        assert error_of(missing, -32000)["message"] == "Transcript no-such-id not found"
        assert error_of(trashed, -32000)["message"] == f"Transcript {sample.trashed} not found"


def check_resources(raw: ServerProcess, revision: str, sample: Sample) -> None:
    titled = at_least(revision, "2025-06-18")
    listed = result_of(raw.request("resources/list"))
    assert set(listed) == {"resources"} | envelope(revision, cacheable=True)
    check_envelope(listed, revision, cacheable=True)
    assert [r["uri"] for r in listed["resources"]] == [URI_PREFIX + i for i in sample.live]  # newest first, no trash
    for r in listed["resources"]:
        assert set(r) == {"uri", "name", "description", "mimeType"} | ({"title"} if titled else set())
        assert r["mimeType"] == "text/markdown"
    assert listed["resources"][1]["name"] == "Quarterly budget review"
    error_of(raw.request("resources/list", {"cursor": "not-a-cursor-we-issued"}), -32602)

    templates = result_of(raw.request("resources/templates/list"))
    assert set(templates) == {"resourceTemplates"} | envelope(revision, cacheable=True)
    check_envelope(templates, revision, cacheable=True)
    (template,) = templates["resourceTemplates"]
    assert set(template) == {"uriTemplate", "name", "description", "mimeType"} | ({"title"} if titled else set())
    assert template["uriTemplate"] == URI_TEMPLATE

    uri = URI_PREFIX + sample.meeting
    read = result_of(raw.request("resources/read", {"uri": uri}))
    assert set(read) == {"contents"} | envelope(revision, cacheable=True)
    check_envelope(read, revision, cacheable=True)
    (contents,) = read["contents"]
    assert set(contents) == {"uri", "mimeType", "text"}
    assert contents["uri"] == uri
    assert contents["mimeType"] == "text/markdown"
    text = contents["text"]
    assert text.startswith("# Quarterly budget review\n")
    assert "- Source: meeting" in text
    assert "- Duration: 2:05" in text
    assert "[00:00] Ana: We need the budget draft by Friday." in text
    assert "Bo: Who books the room?" in text

    # Not found (unknown id, trash, foreign URI): -32002 up to 2025-11-25, -32602 in 2026-07-28.
    code = -32602 if revision == MODERN else -32002
    for missing in (URI_PREFIX + "no-such-id", URI_PREFIX + sample.trashed, "file:///etc/passwd"):
        error = error_of(raw.request("resources/read", {"uri": missing}), code)
        assert error["data"] == {"uri": missing}


def check_prompts(raw: ServerProcess, revision: str, sample: Sample) -> None:
    titled = at_least(revision, "2025-06-18")
    listed = result_of(raw.request("prompts/list"))
    assert set(listed) == {"prompts"} | envelope(revision, cacheable=True)
    check_envelope(listed, revision, cacheable=True)
    assert tuple(p["name"] for p in listed["prompts"]) == PROMPT_NAMES
    for prompt in listed["prompts"]:
        assert set(prompt) == {"name", "description", "arguments"} | ({"title"} if titled else set())
        for argument in prompt["arguments"]:
            assert set(argument) == {"name", "description", "required"} | ({"title"} if titled else set())

    for name in ("summarize_transcript", "action_items"):
        got = result_of(raw.request("prompts/get", {"name": name, "arguments": {"transcript_id": sample.meeting}}))
        assert set(got) == {"description", "messages"} | envelope(revision)
        check_envelope(got, revision)
        embedded, instruction = got["messages"]
        assert embedded["role"] == "user"
        assert embedded["content"]["type"] == "resource"
        assert set(embedded["content"]) == {"type", "resource"}
        assert embedded["content"]["resource"]["uri"] == URI_PREFIX + sample.meeting
        assert embedded["content"]["resource"]["text"].startswith("# Quarterly budget review")
        assert instruction["content"]["type"] == "text"

    review = result_of(raw.request("prompts/get", {"name": "review_meetings", "arguments": {"since": "2026-05-01"}}))
    kinds = [m["content"]["type"] for m in review["messages"]]
    # resource_link content exists from 2025-06-18 on.
    assert kinds == (["text", "resource_link"] if at_least(revision, "2025-06-18") else ["text"])
    assert "Quarterly budget review" in review["messages"][0]["content"]["text"]
    assert ("linked resources" in review["messages"][0]["content"]["text"]) == at_least(revision, "2025-06-18")

    error_of(raw.request("prompts/get", {"name": "no_such_prompt"}), -32602)
    error_of(raw.request("prompts/get", {"name": "summarize_transcript", "arguments": {}}), -32602)
    error_of(raw.request("prompts/get", {"name": "summarize_transcript", "arguments": {"transcript_id": "x"}}), -32602)


def check_completion(raw: ServerProcess, revision: str, sample: Sample) -> None:
    by_title = result_of(
        raw.request(
            "completion/complete",
            {
                "ref": {"type": "ref/prompt", "name": "summarize_transcript"},
                "argument": {"name": "transcript_id", "value": "budget"},
            },
        )
    )
    assert set(by_title) == {"completion"} | envelope(revision)
    check_envelope(by_title, revision)
    assert by_title["completion"]["values"] == [sample.meeting]
    assert set(by_title["completion"]) <= {"values", "total", "hasMore"}
    by_prefix = result_of(
        raw.request(
            "completion/complete",
            {
                "ref": {"type": "ref/resource", "uri": URI_TEMPLATE},
                "argument": {"name": "id", "value": sample.file[:8]},
            },
        )
    )
    assert sample.file in by_prefix["completion"]["values"]
    assert sample.trashed not in by_prefix["completion"]["values"]


@pytest.mark.parametrize("revision", REVISIONS)
def test_exact_shapes_per_revision(revision: str, start_server: Start, sample: Sample) -> None:
    raw, opened = session(start_server, sample, revision)
    check_open(revision, opened)
    check_tools(raw, revision, sample)
    check_resources(raw, revision, sample)
    check_prompts(raw, revision, sample)
    check_completion(raw, revision, sample)
    if revision == MODERN:
        error_of(raw.request("ping"), -32601)  # removed in 2026-07-28
    else:
        assert raw.request("ping")["result"] == {}
        error_of(raw.request("server/discover", {}), -32602)  # no _meta: not a modern request
    error_of(raw.request("logging/setLevel", {"level": "info"}), -32601)  # logging is not declared
    error_of(raw.request("no/such/method"), -32601)
    assert raw.wire.revisions == {revision}
    assert len(raw.wire.validated) >= 30


# -- 2026-07-28 specifics -------------------------------------------------------------------


def test_modern_version_errors(start_server: Start, sample: Sample) -> None:
    raw = start_server(sample.path)
    raw.revision = MODERN
    for method in ("server/discover", "tools/list", "tools/call"):
        for version in ("1999-01-01", "2025-11-25", "DRAFT-2026-v1"):
            params: dict[str, Any] = {"_meta": modern_meta(version)}
            if method == "tools/call":
                params.update(name="list_tasks", arguments={})
            error = error_of(raw.request(method, params, meta=False), -32022)
            assert error["message"] == "Unsupported protocol version"
            assert error["data"] == {"supported": [MODERN], "requested": version}

    # A _meta naming the version but not the client capabilities is malformed: -32602.
    for method in ("server/discover", "tools/list"):
        error_of(raw.request(method, {"_meta": {META_VERSION: MODERN}}, meta=False), -32602)
    error_of(raw.request("tools/list", {"_meta": {META_VERSION: 20260728, META_CAPABILITIES: {}}}, meta=False), -32602)
    # server/discover without any _meta: an error, which is what tells a dual-era client to fall back.
    error_of(raw.request("server/discover", {}, meta=False), -32602)
    # Removed methods: ping, logging/setLevel, resources/subscribe; and initialize inside the modern envelope.
    error_of(raw.request("ping"), -32601)
    error_of(raw.request("resources/subscribe", {"uri": URI_PREFIX + sample.meeting}), -32601)
    error_of(
        raw.request(
            "initialize",
            {"protocolVersion": LEGACY[-1], "capabilities": {}, "clientInfo": {"name": "x", "version": "0"}},
        ),
        -32601,
    )
    # The process still serves modern requests, statelessly.
    assert result_of(raw.request("tools/list"))["resultType"] == "complete"


def test_initialize_era_rules(start_server: Start, sample: Sample) -> None:
    """initialize counter-offers instead of failing; eras coexist in one process, each with its own shapes.

    (Which revision an unknown initialize version gets: tests/e2e/test_protocol.py.)
    """
    raw = start_server(sample.path)
    assert raw.open(MODERN)["supportedVersions"] == [MODERN]
    # A legacy client on the same process: 2026-07-28 is not a handshake version, so it gets the newest legacy one.
    offered = result_of(
        raw.request(
            "initialize",
            {"protocolVersion": MODERN, "capabilities": {}, "clientInfo": {"name": "x", "version": "0"}},
            meta=False,
        )
    )
    assert offered["protocolVersion"] == "2025-11-25"
    raw.notify("notifications/initialized")

    # Legacy 2024-11-05 and modern requests interleaved on one process: each gets its revision's shapes.
    raw3 = start_server(sample.path)
    raw3.open("2024-11-05")
    legacy_tools = result_of(raw3.request("tools/list"))
    modern_tools = result_of(raw3.request("tools/list", {"_meta": modern_meta()}))
    assert "title" not in legacy_tools["tools"][0]
    assert "resultType" not in legacy_tools
    assert "title" in modern_tools["tools"][0]
    assert modern_tools["resultType"] == "complete"
    legacy_missing = raw3.request("resources/read", {"uri": URI_PREFIX + "nope"})
    modern_missing = raw3.request("resources/read", {"uri": URI_PREFIX + "nope", "_meta": modern_meta()})
    error_of(legacy_missing, -32002)
    error_of(modern_missing, -32602)
    assert raw3.wire.revisions == {"2024-11-05", MODERN}


@pytest.mark.parametrize("revision", REVISIONS)
def test_progress_carries_a_message_from_2025_03_26(revision: str, start_server: Start, scan_sample: Sample) -> None:
    """A search that scans reports progress when asked; "message" exists from 2025-03-26 on, never in 2024-11-05."""
    raw = start_server(scan_sample.path)
    raw.open(revision)
    response = raw.request(
        "tools/call", {"name": "search_transcripts", "arguments": {"query": "budget"}, "_meta": {"progressToken": 7}}
    )
    result = result_of(response)
    assert result["isError"] is False
    assert json.loads(result["content"][0]["text"])["mode"] == "scan"
    assert raw.notifications, "a scan reports progress when asked"
    for note in raw.notifications:  # all read before the response
        assert note["method"] == "notifications/progress"
        assert note["params"]["progressToken"] == 7
        assert ("message" in note["params"]) is at_least(revision, "2025-03-26"), (revision, note)
