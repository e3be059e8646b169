"""What a tool is, and how a call to one becomes a ``tools/call`` result on the wire."""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, NamedTuple

from magnotia_mcp.args.checks import validate
from magnotia_mcp.errors import CallTimeout, ToolError
from magnotia_mcp.protocol.revisions import has
from magnotia_mcp.text import result_text

if TYPE_CHECKING:
    from magnotia_mcp.store.pool import Store

JSON = dict[str, Any]
Progress = Callable[[int, int | None, str], None]

# Read-only, same answer for the same store, nothing outside the user's machine.
ANNOTATIONS = {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True, "openWorldHint": False}


class ToolContext(NamedTuple):
    """What a handler may use: the store, and a progress sink (None unless the client asked)."""

    store: Store
    progress: Progress | None = None
    # How many copies of the answer the host gets: the text, and structuredContent where the revision has it
    # (the model is shown one of them: the budget counts the larger).
    copies: int = 2


Handler = Callable[[ToolContext, JSON], Awaitable[JSON]]


class Tool(NamedTuple):
    name: str
    title: str
    description: str
    input_schema: JSON
    output_schema: JSON
    handler: Handler

    def definition(self, revision: str) -> JSON:
        """The tool as ``tools/list`` shows it in revision."""
        out: JSON = {"name": self.name}
        if has(revision, "titles"):
            out["title"] = self.title
        out["description"] = self.description
        out["inputSchema"] = self.input_schema
        if has(revision, "structured_content"):
            out["outputSchema"] = self.output_schema
        if has(revision, "tool_annotations"):
            out["annotations"] = {"title": self.title, **ANNOTATIONS}
        return out

    async def call(self, ctx: ToolContext, arguments: object, revision: str, timeout: float) -> JSON:
        """The ``tools/call`` result: the handler's answer as text (and structured), or isError.

        A call that runs past timeout is stopped and reported, not left running.
        """
        import asyncio

        ctx = ctx._replace(copies=2 if has(revision, "structured_content") else 1)
        try:
            work = self.handler(ctx, validate(self.input_schema, arguments))
            if sys.version_info >= (3, 11):  # a deadline on this task, no extra task per call
                async with asyncio.timeout(timeout):
                    result = await work
            else:
                result = await asyncio.wait_for(work, timeout)
        except asyncio.TimeoutError:
            exc: ToolError = CallTimeout(
                f"{self.name} took longer than {timeout:g} s and was stopped; narrow it down "
                "(more specific words, since/until, a smaller limit) and try again"
            )
            return _tool_error(exc, revision)
        except ToolError as exc:
            return _tool_error(exc, revision)
        out: JSON = {"content": [{"type": "text", "text": result_text(result)}]}
        if has(revision, "structured_content"):
            out["structuredContent"] = result
        out["isError"] = False
        return out


def _tool_error(exc: ToolError, revision: str) -> JSON:
    """From 2025-11-25 a model-correctable failure is a result the model reads; before, an error."""
    if not has(revision, "tool_errors_as_results"):
        raise exc
    return {"content": [{"type": "text", "text": exc.message}], "isError": True}
