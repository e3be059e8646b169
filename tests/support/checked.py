"""A tool's structured result, checked against the outputSchema the same server lists for that tool."""

from __future__ import annotations

import json
from typing import Any

import jsonschema

from tests.support.server import ServerProcess


def checked_result(server: ServerProcess, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """server's result of tool(arguments); a result its own outputSchema does not admit fails the test."""
    result = server.result(tool, arguments)
    listed = next(t for t in server.request("tools/list")["result"]["tools"] if t["name"] == tool)
    jsonschema.validate(result, listed["outputSchema"])
    return result


def searched(server: ServerProcess, mode: str, arguments: dict[str, Any], secrets: tuple[str, ...]) -> dict[str, Any]:
    """search_transcripts(arguments) as a host shows it: no error, its text the same JSON as its structuredContent,
    searched in mode ("fts" or "scan"), and none of secrets (what only the trash holds) anywhere in it."""
    response = server.call("search_transcripts", arguments)
    result = response["result"]
    assert result["isError"] is False, response
    assert json.loads(result["content"][0]["text"]) == result["structuredContent"]
    found: dict[str, Any] = result["structuredContent"]
    assert found["mode"] == mode
    shown = json.dumps(found)
    for secret in secrets:
        assert secret not in shown, arguments
    return found
