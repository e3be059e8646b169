"""The MCP methods this server answers, and the table the dispatcher serves them from.

Each handler takes the connection's ``Server`` and one ``Request`` and returns
the result object for the request's revision; tools, resources and prompts
shape their own results, so this module only routes and adds the per-revision
envelope fields (titles, cache hints). Handlers marked inline never wait and
are answered before the event loop exists.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from magnotia_mcp import prompts, resources
from magnotia_mcp.errors import InvalidParams
from magnotia_mcp.protocol import revisions
from magnotia_mcp.protocol.requests import Request, server_info
from magnotia_mcp.protocol.revisions import has
from magnotia_mcp.protocol.server import Method, Server
from magnotia_mcp.tools import hints
from magnotia_mcp.tools.base import ToolContext
from magnotia_mcp.tools.catalog import TOOLS
from magnotia_mcp.tools.schema import TIME_HELP

if TYPE_CHECKING:
    from magnotia_mcp.store.pool import Store

JSON = dict[str, Any]

# Said once here what the definitions, which a host sends with every request, would otherwise repeat: the forms
# of a time (TIME_HELP) and how a model gets the most from a call (the assistant set measured each).
INSTRUCTIONS = (
    "Read-only access to the user's Magnotia history: transcripts of their dictations and meetings, and the tasks "
    "extracted from them. search_transcripts matches words (any ending, case or accent), not meaning. Search "
    "first with the few distinctive words the speakers would have used (transcripts matching more of them rank "
    "first; limit 3 finds one meeting); when that finds little, add synonyms and translations into the store's "
    "languages joined with OR. To find what was said inside one transcript (a long meeting), search with its "
    "transcript_id rather than reading it. Hits and lists say who spoke and for how long; list_transcripts "
    "filters by speaker, list_tasks by words (query). Pass next_cursor back as cursor for more; get_transcript "
    f"reads on with offset=next_offset. Times (since, until, due_before): {TIME_HELP}. Times in answers are UTC."
)


def instructions() -> str:
    """INSTRUCTIONS, and the languages of the store's transcripts once a search has read them (none at start)."""
    return INSTRUCTIONS + hints.languages_sentence()


# Static answers may be cached for an hour; the user's data goes stale at once.
STATIC_TTL_MS = 3_600_000


def capabilities(revision: str) -> JSON:
    """What this server offers, derived from the method table so it cannot over-promise."""
    caps: JSON = {}
    if "tools/list" in METHODS:
        caps["tools"] = {}
    if "resources/list" in METHODS:
        caps["resources"] = {}
    if "prompts/list" in METHODS:
        caps["prompts"] = {}
    if "completion/complete" in METHODS and has(revision, "completions_capability"):
        caps["completions"] = {}
    return caps


def _cacheable(result: JSON, revision: str, ttl_ms: int, scope: str) -> JSON:
    if has(revision, "cache_hints"):
        result.update(ttlMs=ttl_ms, cacheScope=scope)
    return result


def _titled(item: JSON, revision: str) -> JSON:
    return item if has(revision, "titles") else {k: v for k, v in item.items() if k != "title"}


def _no_cursor(request: Request) -> None:
    if request.params.get("cursor") is not None:
        raise InvalidParams("invalid params: cursor was not issued by this server (this list has one page)")


# -- lifecycle ----------------------------------------------------------------------


def _initialize(server: Server, request: Request) -> JSON:
    revision = request.revision
    server.adopt(revision)
    return {
        "protocolVersion": revision,
        "capabilities": capabilities(revision),
        "serverInfo": server_info(revision),
        "instructions": instructions(),
    }


def _discover(server: Server, request: Request) -> JSON:
    return {
        "supportedVersions": list(revisions.MODERN),
        "capabilities": capabilities(request.revision),
        "instructions": instructions(),
        "ttlMs": STATIC_TTL_MS,
        "cacheScope": "public",
    }


def _ping(server: Server, request: Request) -> JSON:
    return {}


# -- tools --------------------------------------------------------------------------


def _tools_list(server: Server, request: Request) -> JSON:
    _no_cursor(request)
    result: JSON = {"tools": [t.definition(request.revision) for t in TOOLS.values()]}
    return _cacheable(result, request.revision, STATIC_TTL_MS, "public")


async def _tools_call(server: Server, request: Request) -> JSON:
    name = request.params.get("name")
    if not isinstance(name, str):
        raise InvalidParams("invalid params: tools/call needs params.name, the tool's name as a string")
    tool = TOOLS.get(name)
    if tool is None:
        raise InvalidParams(f"Unknown tool: {name}; this server has {', '.join(TOOLS)}")
    arguments = request.params.get("arguments")
    if arguments is not None and not isinstance(arguments, dict):
        # Not a CallToolRequest at all: a protocol error in every revision, never an isError result.
        raise InvalidParams("invalid params: tools/call arguments must be an object of argument values")
    ctx = ToolContext(server.store, request.progress_sink())
    return await tool.call(ctx, arguments, request.revision, server.call_timeout)


# -- resources, prompts, completion ------------------------------------------------


async def _resources_list(server: Server, request: Request) -> JSON:
    items, next_cursor = await resources.list_page(server.store, request.params.get("cursor"))
    result: JSON = {"resources": [_titled(r, request.revision) for r in items]}
    if next_cursor:
        result["nextCursor"] = next_cursor
    return _cacheable(result, request.revision, 0, "private")


def _resource_templates_list(server: Server, request: Request) -> JSON:
    _no_cursor(request)
    result: JSON = {"resourceTemplates": [_titled(resources.TEMPLATE, request.revision)]}
    return _cacheable(result, request.revision, STATIC_TTL_MS, "public")


async def _resources_read(server: Server, request: Request) -> JSON:
    contents = await resources.read_markdown(server.store, request.params.get("uri"))
    return _cacheable({"contents": [contents]}, request.revision, 0, "private")


def _prompts_list(server: Server, request: Request) -> JSON:
    _no_cursor(request)
    titles = has(request.revision, "titles")
    result: JSON = {"prompts": [p.definition(titles) for p in prompts.PROMPTS.values()]}
    return _cacheable(result, request.revision, STATIC_TTL_MS, "public")


async def _prompts_get(server: Server, request: Request) -> JSON:
    links = has(request.revision, "resource_links")
    return await prompts.get(server.store, request.params.get("name"), request.params.get("arguments"), links)


async def _complete(server: Server, request: Request) -> JSON:
    return await prompts.complete(server.store, request.params.get("ref"), request.params.get("argument"))


# -- the method table ---------------------------------------------------------------


def _always(revision: str) -> bool:
    return True


def _feature(name: str) -> Callable[[str], bool]:
    return lambda revision: has(revision, name)


METHODS: dict[str, Method] = {
    "initialize": Method(_initialize, _feature("handshake"), inline=True),
    "server/discover": Method(_discover, _feature("discover"), inline=True),
    "ping": Method(_ping, _feature("ping"), inline=True),
    "tools/list": Method(_tools_list, _always, inline=True),
    "tools/call": Method(_tools_call, _always),
    "resources/list": Method(_resources_list, _always),
    "resources/templates/list": Method(_resource_templates_list, _always, inline=True),
    "resources/read": Method(_resources_read, _always),
    "prompts/list": Method(_prompts_list, _always, inline=True),
    "prompts/get": Method(_prompts_get, _always),
    "completion/complete": Method(_complete, _always),
}


def new_server(
    store: Store | Callable[[], Store], *, call_timeout: float = 30.0, legacy_revision: str | None = None
) -> Server:
    """A Server answering every method above; store is a Store or a function that opens one.

    legacy_revision: the revision a client already agreed on (an HTTP session's), if any.
    """
    return Server(METHODS, store, call_timeout=call_timeout, legacy_revision=legacy_revision)
