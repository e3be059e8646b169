"""A tool's structured result, checked against the outputSchema the same server lists for that tool."""

from __future__ import annotations

from typing import Any

import jsonschema

from tests.support.server import ServerProcess


def checked_result(server: ServerProcess, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """server's result of tool(arguments); a result its own outputSchema does not admit fails the test."""
    result = server.result(tool, arguments)
    listed = next(t for t in server.request("tools/list")["result"]["tools"] if t["name"] == tool)
    jsonschema.validate(result, listed["outputSchema"])
    return result
