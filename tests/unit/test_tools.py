"""magnotia_mcp.tools: the four tools' schemas, their definitions per revision, and a call's result.

The definitions and results are checked against ``has()`` in every known
revision; which revisions have each feature is asserted in test_revisions.
Calls use a real store (devkit/storefactory.py); a call whose
arguments are refused never reads it.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from devkit.storefactory import StoreBuilder
from magnotia_mcp.args.checks import HANDLED_TYPES, STRINGS, validate
from magnotia_mcp.errors import InvalidArguments
from magnotia_mcp.protocol.revisions import KNOWN, LATEST_LEGACY, has
from magnotia_mcp.store.pool import Store
from magnotia_mcp.text import result_text
from magnotia_mcp.tools.base import ANNOTATIONS, Tool, ToolContext
from magnotia_mcp.tools.catalog import TOOLS

NAMES = ["list_transcripts", "get_transcript", "search_transcripts", "list_tasks"]


# -- input schemas -------------------------------------------------------------------


def test_tool_input_schemas_describe_every_property_and_forbid_unknown_ones() -> None:
    """Each tool's inputSchema is an object schema, closed, with a description on every property."""
    assert list(TOOLS) == NAMES
    for tool in TOOLS.values():
        schema = tool.input_schema
        assert schema["type"] == "object"
        assert schema["additionalProperties"] is False
        for name, spec in schema["properties"].items():
            assert spec.get("description"), (tool.name, name)


@pytest.mark.parametrize("name", NAMES)
def test_every_input_schema_uses_only_types_the_validator_enforces(name: str) -> None:
    """arguments.validate checks integer, string, boolean and a string or array of strings; anything else would go
    unchecked."""
    schema = TOOLS[name].input_schema
    for argument, spec in schema["properties"].items():
        if spec["type"] == STRINGS:
            assert spec["items"] == {"type": "string"}, (name, argument)
            assert set(spec) <= {"type", "items", "minItems", "maxItems", "description"}
            continue
        assert spec["type"] in HANDLED_TYPES, (name, argument, spec["type"])
        assert set(spec) <= {"type", "description", "default", "minimum", "maximum", "enum", "minLength", "maxLength"}
    assert set(schema.get("required", ())) <= set(schema["properties"])


@pytest.mark.parametrize("name", NAMES)
def test_every_default_is_a_value_its_own_schema_accepts(name: str) -> None:
    """A default given back as an argument passes validation unchanged."""
    schema = TOOLS[name].input_schema
    required = dict.fromkeys(schema.get("required", ()), "x")
    for argument, spec in schema["properties"].items():
        if "default" in spec:
            assert validate(schema, {**required, argument: spec["default"]})[argument] == spec["default"]


# -- definitions, per revision --------------------------------------------------------------


@pytest.mark.parametrize("revision", KNOWN)
def test_definitions_carry_output_schemas_and_annotations_where_the_revision_has_them(revision: str) -> None:
    """outputSchema with structured content; read-only, idempotent, closed-world annotations with annotations."""
    for tool in TOOLS.values():
        definition = tool.definition(revision)
        assert definition["name"] == tool.name
        assert definition["description"] == tool.description
        assert definition["inputSchema"] == tool.input_schema
        assert ("outputSchema" in definition) is has(revision, "structured_content")
        if has(revision, "structured_content"):
            assert definition["outputSchema"] == tool.output_schema
            assert definition["outputSchema"]["type"] == "object"
        if has(revision, "tool_annotations"):
            assert definition["annotations"] == {"title": tool.title, **ANNOTATIONS}
            assert definition["annotations"]["readOnlyHint"] is True
            assert definition["annotations"]["destructiveHint"] is False
            assert definition["annotations"]["idempotentHint"] is True
            assert definition["annotations"]["openWorldHint"] is False
        else:
            assert "annotations" not in definition


# -- calls -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def store_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    builder = StoreBuilder(tmp_path_factory.mktemp("tools") / "magnotia.db")
    builder.transcript(
        id="t1", title="Budget review", raw_text="the budget is agreed", created_at="2026-05-09T10:00:00.000Z"
    )
    return builder.close()


async def _call(tool: Tool, store: Store, arguments: object, revision: str, timeout: float = 30.0) -> dict[str, Any]:
    try:
        return await tool.call(ToolContext(store), arguments, revision, timeout)
    finally:
        await store.close()


@pytest.mark.parametrize("revision", KNOWN)
def test_a_result_is_readable_text_and_structured_content_where_the_revision_has_it(
    revision: str, store_path: Path
) -> None:
    """The text block is the result as readable JSON; structuredContent is the same object, where it exists."""
    result = asyncio.run(_call(TOOLS["list_transcripts"], Store(store_path), {"limit": 5}, revision))
    assert result["isError"] is False
    [block] = result["content"]
    assert block["type"] == "text"
    data = json.loads(block["text"])
    assert [t["id"] for t in data["transcripts"]] == ["t1"]
    assert block["text"] == result_text(data)
    assert ("structuredContent" in result) is has(revision, "structured_content")
    if has(revision, "structured_content"):
        assert result["structuredContent"] == data


@pytest.mark.parametrize("revision", KNOWN)
def test_a_refused_argument_is_a_result_the_model_reads_where_the_revision_has_tool_errors_as_results(
    revision: str, tmp_path: Path
) -> None:
    """From that revision on, a bad argument is an isError result naming it; before, the InvalidArguments error."""
    store = Store(tmp_path / "never-read.db")
    call = _call(TOOLS["list_transcripts"], store, {"limit": 0}, revision)
    if has(revision, "tool_errors_as_results"):
        result = asyncio.run(call)
        assert result == {"content": [{"type": "text", "text": result["content"][0]["text"]}], "isError": True}
        assert "'limit'" in result["content"][0]["text"]
    else:
        with pytest.raises(InvalidArguments) as caught:
            asyncio.run(call)
        assert caught.value.argument == "limit"
    assert not (tmp_path / "never-read.db").exists()


def test_a_call_past_its_time_limit_is_stopped_and_said_to_be_too_slow(tmp_path: Path) -> None:
    """A handler still running at the timeout is cancelled; the model is told to narrow the call down."""
    stopped = asyncio.Event()

    async def slow(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
        try:
            await asyncio.sleep(30)
        finally:
            stopped.set()
        return {}

    base = TOOLS["list_tasks"]
    tool = base._replace(name="slow_tool", handler=slow)
    result = asyncio.run(_call(tool, Store(tmp_path / "never-read.db"), {}, LATEST_LEGACY, timeout=0.05))
    assert result["isError"] is True
    assert "slow_tool took longer than 0.05 s" in result["content"][0]["text"]
    assert stopped.is_set()
