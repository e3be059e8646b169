"""Raw JSON-RPC, one test per protocol revision: the exact shape of every answer.

Each message the server writes is validated against the official models of the
revision in use (tests/wire_schema.py, from mcp-types). On top of that, these
tests assert what the models cannot: members a revision must NOT have (the
models cover 2025-11-25 and 2026-07-28 only), the error codes of each revision,
and that results carry the store's real data. Expectations come from the
specification (per revision), not from the server's own revision table.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from magnotia_mcp import __version__
from tests.clients_support import (
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
    Raw,
    Sample,
    at_least,
    build_sample,
    modern_meta,
)
from tests.server import ServerProcess
from tests.wire_schema import WireSchemaError, check_server_message, validate_server_message

pytestmark = pytest.mark.e2e

Start = Callable[..., ServerProcess]


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Sample:
    return build_sample(tmp_path_factory.mktemp("raw") / "magnotia.db")


def session(start_server: Start, sample: Sample, revision: str) -> tuple[Raw, dict[str, Any]]:
    raw = Raw(start_server(sample.path), revision)
    return raw, raw.open()


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


def check_tools(raw: Raw, revision: str, sample: Sample) -> None:
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
        assert tool["inputSchema"]["type"] == "object"
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

    # Unknown tool, and a request that is not a CallToolRequest: protocol errors in every revision.
    error_of(raw.call("no_such_tool", {}), -32602)
    error_of(raw.request("tools/call", {"arguments": {}}), -32602)
    error_of(raw.call("list_tasks", [1, 2]), -32602)

    # Invalid arguments and "not found": results with isError from 2025-11-25, errors before.
    bad_args = raw.call("list_transcripts", {"limit": 0})
    unknown_arg = raw.call("get_transcript", {"id": sample.meeting, "no_such_argument": 1})
    missing = raw.call("get_transcript", {"id": "no-such-id"})
    trashed = raw.call("get_transcript", {"id": sample.trashed})
    if at_least(revision, "2025-11-25"):
        for response, words in ((bad_args, "limit"), (unknown_arg, "no_such_argument"), (missing, "not found")):
            result = result_of(response)
            assert set(result) == {"content", "isError"} | envelope(revision), result
            check_envelope(result, revision)
            assert result["isError"] is True
            assert result["content"][0]["type"] == "text"
            assert words in result["content"][0]["text"]
        assert result_of(trashed)["isError"] is True
    else:
        error_of(bad_args, -32602)
        error_of(unknown_arg, -32602)
        error_of(missing, -32000)
        error_of(trashed, -32000)


def check_resources(raw: Raw, revision: str, sample: Sample) -> None:
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


def check_prompts(raw: Raw, revision: str, sample: Sample) -> None:
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


def check_completion(raw: Raw, revision: str, sample: Sample) -> None:
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
        error_of(raw.request("server/discover"), -32602)  # no _meta: not a modern request
    error_of(raw.request("logging/setLevel", {"level": "info"}), -32601)  # logging is not declared
    error_of(raw.request("no/such/method"), -32601)
    assert raw.tracker.revisions == {revision}
    assert len(raw.tracker.validated) >= 30


# -- 2026-07-28 specifics -------------------------------------------------------------------


def test_modern_version_errors(start_server: Start, sample: Sample) -> None:
    raw = Raw(start_server(sample.path), MODERN)
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
    """initialize counter-offers instead of failing; eras coexist in one process, each with its own shapes."""
    raw = Raw(start_server(sample.path), MODERN)
    assert result_of(raw.request("server/discover"))["supportedVersions"] == [MODERN]
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

    raw2 = Raw(start_server(sample.path), "2024-11-05")
    unknown = result_of(
        raw2.request(
            "initialize",
            {"protocolVersion": "1999-01-01", "capabilities": {}, "clientInfo": {"name": "x", "version": "0"}},
        )
    )
    assert unknown["protocolVersion"] == "2025-11-25"

    # Legacy 2024-11-05 and modern requests interleaved on one process: each gets its revision's shapes.
    raw3 = Raw(start_server(sample.path), "2024-11-05")
    raw3.open()
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
    assert raw3.tracker.revisions == {"2024-11-05", MODERN}


def test_progress_message_absent_in_2024(start_server: Start, sample: Sample) -> None:
    """No progress here (an FTS search is quick); every notification the server wrote passed validation."""
    raw = Raw(start_server(sample.path), "2024-11-05")
    raw.open()
    response = raw.request(
        "tools/call", {"name": "search_transcripts", "arguments": {"query": "budget"}, "_meta": {"progressToken": 7}}
    )
    assert result_of(response)["isError"] is False
    for note in raw.notifications:
        assert note["method"] == "notifications/progress"
        assert "message" not in note["params"]


def test_batches_only_in_2025_03_26(start_server: Start, sample: Sample) -> None:
    raw = Raw(start_server(sample.path), "2025-03-26")
    raw.open()
    raw.send_message(
        [
            {"jsonrpc": "2.0", "id": "b1", "method": "ping"},
            {"jsonrpc": "2.0", "id": "b2", "method": "tools/call", "params": {"name": "list_tasks", "arguments": {}}},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
        ]
    )
    batch = raw.read()
    assert isinstance(batch, list)
    assert {m["id"] for m in batch} == {"b1", "b2"}
    raw.responses.clear()

    raw2 = Raw(start_server(sample.path), "2025-06-18")
    raw2.open()
    raw2.send_message([{"jsonrpc": "2.0", "id": "b1", "method": "ping"}])
    reply = raw2.read()
    assert isinstance(reply, dict)
    assert reply["id"] is None
    assert reply["error"]["code"] == -32600


# -- the validator itself ---------------------------------------------------------------------


def test_wire_schema_rejects_what_it_should() -> None:
    ok = {"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": "x"}], "isError": False}}
    validate_server_message(ok, "2025-11-25", "tools/call")
    cases: list[tuple[dict[str, Any], str, str | None, str]] = [
        ({**ok, "extra": 1}, "2025-11-25", "tools/call", "envelope"),
        (
            {"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "txt": "x"}]}},
            "2025-11-25",
            "tools/call",
            "text",
        ),
        (
            {"jsonrpc": "2.0", "id": 1, "result": {"content": [], "isError": "false"}},
            "2025-11-25",
            "tools/call",
            "isError",
        ),
        (
            {"jsonrpc": "2.0", "id": 1, "result": {"content": [], "structuredContent": [1]}},
            "2025-11-25",
            "tools/call",
            "structuredContent",
        ),
        (
            {
                "jsonrpc": "2.0",
                "id": 1,
                "result": {"tools": [{"name": "t", "inputSchema": {"type": "object"}, "titel": "x"}]},
            },
            "2025-06-18",
            "tools/list",
            "titel",
        ),
        (ok, "2026-07-28", "tools/call", "resultType"),
        (
            {"jsonrpc": "2.0", "id": 1, "result": {"tools": [], "resultType": "complete"}},
            "2026-07-28",
            "tools/list",
            "ttlMs",
        ),
        ({"jsonrpc": "2.0", "id": 1, "result": {}}, "2026-07-28", "initialize", "does not have"),
        ({"jsonrpc": "2.0", "id": 1, "result": {}}, "2025-11-25", None, "request_method"),
        ({"jsonrpc": "2.0", "id": 1, "error": {"code": -32022, "message": "m"}}, "2026-07-28", "tools/list", "data"),
        ({"jsonrpc": "2.0", "id": 1, "error": {"code": "x", "message": "m"}}, "2025-11-25", "tools/list", "code"),
        (
            {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progress": 1}},
            "2025-06-18",
            None,
            "progressToken",
        ),
        ({"jsonrpc": "2.0", "id": 5, "method": "ping"}, "2026-07-28", None, "does not exist"),
        ({"jsonrpc": "1.0", "id": 1, "result": {}}, "2025-11-25", "ping", "envelope"),
    ]
    for message, revision, method, words in cases:
        problems = check_server_message(message, revision, method)
        assert problems, (message, revision)
        assert words in " ".join(problems), (words, problems)
    with pytest.raises(WireSchemaError, match="2026-07-28"):
        validate_server_message(ok, "2026-07-28", "tools/call")
    # Lax mode takes what the models take: unknown members are ignored there.
    assert check_server_message({**ok, "extra": 1}, "2025-11-25", "tools/call", strict=False) == []


def test_sample_store_is_what_the_tests_expect(sample: Sample) -> None:
    assert Path(sample.path).name == "magnotia.db"
    assert len(sample.live) == 3
