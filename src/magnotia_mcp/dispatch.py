"""The pure dispatcher: one decoded message in, one response (or none) out.

No stdin, stdout or SQL here. ``Server.handle_message`` checks the JSON-RPC
envelope, works out which protocol revision the request speaks, finds the
handler in ``METHODS`` and shapes the result for that revision. It is also
the only place where exceptions become JSON-RPC errors or ``isError`` results.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from magnotia_mcp import __version__, log, prompts, resources, revisions
from magnotia_mcp.errors import (
    CallTimeout,
    InvalidParams,
    InvalidRequest,
    MethodNotFound,
    ParseError,
    ProtocolError,
    ResourceNotFound,
    ToolError,
    UnsupportedProtocolVersion,
)
from magnotia_mcp.revisions import has
from magnotia_mcp.tools import TOOLS, Tool, ToolContext

if TYPE_CHECKING:
    import asyncio

    from magnotia_mcp.store import Store

JSON = dict[str, Any]
Notify = Callable[[JSON], None]

META_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
META_SERVER_INFO = "io.modelcontextprotocol/serverInfo"

SERVER_NAME = "magnotia-mcp"
SERVER_TITLE = "Magnotia"
INSTRUCTIONS = (
    "Read-only access to the user's Magnotia history: transcripts of their dictations and meetings, "
    "and the tasks extracted from them. Everything stays on the user's machine. "
    'Find transcripts with search_transcripts (words, "phrases", prefix*, OR) or list_transcripts '
    "(newest first, filter by since/until/source); read one with get_transcript. Long text comes in "
    "windows: while next_offset is not null, call get_transcript again with offset=next_offset. "
    "Lists return next_cursor: pass it back as cursor for the next page. list_tasks shows action items, "
    "open first and soonest due first. Times are UTC (RFC 3339)."
)
# Static answers may be cached for an hour; the user's data goes stale at once.
STATIC_TTL_MS = 3_600_000


class Request:
    """One request being handled: its params and the revision it speaks."""

    __slots__ = ("id", "method", "notify", "params", "revision")

    def __init__(self, id: str | int | None, method: str, params: JSON, revision: str, notify: Notify | None) -> None:
        self.id = id
        self.method = method
        self.params = params
        self.revision = revision
        self.notify = notify

    def progress_sink(self) -> Callable[[int, int | None, str], None] | None:
        """A callback sending notifications/progress, if the client asked for progress."""
        meta = self.params.get("_meta")
        token = meta.get("progressToken") if isinstance(meta, dict) else None
        notify = self.notify
        if notify is None or not isinstance(token, (str, int)) or isinstance(token, bool):
            return None
        with_message = has(self.revision, "progress_message")
        sent = 0  # progress MUST increase: a repeated or smaller value is not sent

        def send(progress: int, total: int | None, message: str) -> None:
            nonlocal sent
            if progress <= sent:
                return
            sent = progress
            params: JSON = {"progressToken": token, "progress": progress}
            if total is not None:
                params["total"] = total
            if with_message:
                params["message"] = message
            notify({"jsonrpc": "2.0", "method": "notifications/progress", "params": params})

        return send


Handler = Callable[["Server", Request], Awaitable[JSON]]


class Server:
    """Protocol state of one stdio connection, and the store it reads."""

    def __init__(self, store: Store | Callable[[], Store], *, call_timeout: float = 30.0) -> None:
        # A factory defers opening (and importing) the store until a request needs it,
        # so the first answers go out before asyncio and sqlite3 are even loaded.
        self._store: Store | None = None if callable(store) else store
        self._open_store = store if callable(store) else None
        self.call_timeout = call_timeout
        self.legacy_revision: str | None = None  # set by initialize
        self.client_info: JSON | None = None
        self.inflight: dict[str | int, asyncio.Task[Any]] = {}

    @property
    def store(self) -> Store:
        if self._store is None:
            assert self._open_store is not None
            self._store = self._open_store()
        return self._store

    # -- envelope --------------------------------------------------------------

    async def handle_line(self, line: bytes, notify: Notify | None = None) -> bytes | None:
        """Decode one line, handle it, and encode the response (None for notifications)."""
        try:
            message = decode(line)
        except ParseError as exc:
            return encode(error_response(None, exc))
        response = await self.handle_message(message, notify)
        return None if response is None else encode(response)

    async def handle_message(self, message: object, notify: Notify | None = None) -> JSON | list[JSON] | None:
        if isinstance(message, list):
            return await self._handle_batch(message, notify)
        return await self._handle_one(message, notify)

    async def _handle_batch(self, batch: list[object], notify: Notify | None) -> list[JSON] | JSON | None:
        if not batch or self.legacy_revision is None or not has(self.legacy_revision, "batches"):
            why = "an empty batch" if not batch else "a batch; only protocol revision 2025-03-26 has batches"
            return error_response(None, InvalidRequest(f"invalid request: got {why}"))
        import asyncio

        replies = await asyncio.gather(*(self._handle_one(m, notify) for m in batch))
        answered = [r for r in replies if r is not None]
        return answered or None

    async def _handle_one(self, message: object, notify: Notify | None) -> JSON | None:
        if not isinstance(message, dict):
            return error_response(None, InvalidRequest("invalid request: a JSON-RPC message must be an object"))
        raw_id = message.get("id")
        is_notification = "id" not in message
        usable_id = raw_id if _valid_id(raw_id) else None
        try:
            method, params = _check_envelope(message)
        except InvalidRequest as exc:
            return error_response(usable_id, exc)
        if is_notification:
            self._handle_notification(method, params)
            return None
        assert isinstance(raw_id, (str, int))
        revision = revisions.LATEST_LEGACY
        try:
            revision = self._revision_for(method, params)
            handler = _lookup(method, revision)
            request = Request(raw_id, method, params, revision, notify)
            result = await handler(self, request)
            return {"jsonrpc": "2.0", "id": raw_id, "result": _finish(result, revision)}
        except ResourceNotFound as exc:
            if has(revision, "resource_not_found_is_invalid_params"):
                return error_response(raw_id, InvalidParams(exc.message, exc.data))
            return error_response(raw_id, exc)
        except ProtocolError as exc:
            return error_response(raw_id, exc)
        except Exception as exc:  # a bug must cost one response, never the connection
            log.error(f"internal error in {method}: {exc!r}")
            return error_response(raw_id, ProtocolError(f"internal error: {exc}"))

    def _handle_notification(self, method: str, params: JSON) -> None:
        if method == "notifications/cancelled":
            request_id = params.get("requestId")
            task = self.inflight.get(request_id) if _valid_id(request_id) else None  # type: ignore[arg-type]
            if task is not None:
                task.cancel()
        # notifications/initialized and anything unknown: nothing to do, nothing to say.

    def _revision_for(self, method: str, params: JSON) -> str:
        meta = params.get("_meta")
        if isinstance(meta, dict) and META_VERSION in meta:
            version = meta[META_VERSION]
            if META_CAPABILITIES not in meta:
                raise InvalidParams(f"invalid params: _meta needs {META_CAPABILITIES} (an object, {{}} for none)")
            if not isinstance(version, str):
                raise InvalidParams(f"invalid params: _meta {META_VERSION} must be a string")
            if version not in revisions.MODERN:
                raise UnsupportedProtocolVersion(
                    "Unsupported protocol version", {"supported": list(revisions.MODERN), "requested": version}
                )
            return version
        if method == "server/discover":
            raise InvalidParams(
                f"invalid params: server/discover needs params._meta with {META_VERSION} "
                f"(supported: {', '.join(revisions.MODERN)}); legacy clients start with initialize"
            )
        if method == "initialize":
            return revisions.negotiate(params.get("protocolVersion"))
        # Before initialize, be lenient and speak the newest legacy revision.
        return self.legacy_revision or revisions.LATEST_LEGACY


def _check_envelope(message: JSON) -> tuple[str, JSON]:
    if message.get("jsonrpc") != "2.0":
        raise InvalidRequest('invalid request: "jsonrpc" must be "2.0"')
    if "id" in message and not _valid_id(message["id"]):
        raise InvalidRequest('invalid request: "id" must be a string or an integer')
    method = message.get("method")
    if not isinstance(method, str):
        raise InvalidRequest('invalid request: "method" must be a string')
    params = message.get("params", {})
    if params is None:
        params = {}
    if not isinstance(params, dict):
        raise InvalidRequest('invalid request: "params" must be an object')
    return method, params


def _valid_id(value: object) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def _lookup(method: str, revision: str) -> Handler:
    entry = METHODS.get(method)
    if entry is None or not entry[1](revision):
        raise MethodNotFound(f"Method not found: {method}")
    return entry[0]


def _finish(result: JSON, revision: str) -> JSON:
    """Add what the revision requires on every result."""
    if has(revision, "result_type"):
        result.setdefault("resultType", "complete")
    if has(revision, "server_info_in_meta"):
        result.setdefault("_meta", {})[META_SERVER_INFO] = server_info(revision)
    return result


def error_response(request_id: str | int | None, exc: ProtocolError) -> JSON:
    error: JSON = {"code": exc.code, "message": exc.message}
    if exc.data is not None:
        error["data"] = exc.data
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


def decode(line: bytes) -> object:
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ParseError(f"parse error: the line is not valid UTF-8 (byte {exc.start})") from None
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise ParseError(f"parse error: {exc}") from None


def encode(message: JSON | list[JSON]) -> bytes:
    try:
        return json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    except UnicodeEncodeError:
        # A lone surrogate (from a "\udXXX" escape in the input, echoed in a message) is not
        # Unicode: send U+FFFD in its place, as strict JSON parsers refuse it even escaped.
        text = json.dumps(message, ensure_ascii=False, separators=(",", ":"))
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace").encode("utf-8")


# -- lifecycle -------------------------------------------------------------------


def server_info(revision: str) -> JSON:
    info: JSON = {"name": SERVER_NAME, "version": __version__}
    if has(revision, "titles"):
        info["title"] = SERVER_TITLE
    return info


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


async def _initialize(server: Server, request: Request) -> JSON:
    revision = request.revision
    server.legacy_revision = revision
    client = request.params.get("clientInfo")
    server.client_info = client if isinstance(client, dict) else None
    return {
        "protocolVersion": revision,
        "capabilities": capabilities(revision),
        "serverInfo": server_info(revision),
        "instructions": INSTRUCTIONS,
    }


async def _discover(server: Server, request: Request) -> JSON:
    return {
        "supportedVersions": list(revisions.MODERN),
        "capabilities": capabilities(request.revision),
        "instructions": INSTRUCTIONS,
        "ttlMs": STATIC_TTL_MS,
        "cacheScope": "public",
    }


async def _ping(server: Server, request: Request) -> JSON:
    return {}


# -- tools --------------------------------------------------------------------------


def tool_definition(tool: Tool, revision: str) -> JSON:
    out: JSON = {"name": tool.name}
    if has(revision, "titles"):
        out["title"] = tool.title
    out["description"] = tool.description
    out["inputSchema"] = tool.input_schema
    if has(revision, "structured_content"):
        out["outputSchema"] = tool.output_schema
    if has(revision, "tool_annotations"):
        from magnotia_mcp.tools import ANNOTATIONS

        out["annotations"] = {"title": tool.title, **ANNOTATIONS}
    return out


async def _tools_list(server: Server, request: Request) -> JSON:
    _no_cursor(request)
    result: JSON = {"tools": [tool_definition(t, request.revision) for t in TOOLS.values()]}
    if has(request.revision, "cache_hints"):
        result.update(ttlMs=STATIC_TTL_MS, cacheScope="public")
    return result


def _no_cursor(request: Request) -> None:
    if request.params.get("cursor") is not None:
        raise InvalidParams("invalid params: cursor was not issued by this server (this list has one page)")


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
    import asyncio

    ctx = ToolContext(server.store, request.progress_sink())
    try:
        if sys.version_info >= (3, 11):  # a deadline on this task, no extra task per call
            async with asyncio.timeout(server.call_timeout):
                result = await tool.call(ctx, arguments)
        else:
            result = await asyncio.wait_for(tool.call(ctx, arguments), server.call_timeout)
    except asyncio.TimeoutError:
        exc: ToolError = CallTimeout(
            f"{name} took longer than {server.call_timeout:g} s and was stopped; narrow it down "
            "(more specific words, since/until, a smaller limit) and try again"
        )
        return _tool_error(exc, request.revision)
    except ToolError as exc:
        return _tool_error(exc, request.revision)
    content = [{"type": "text", "text": result_text(result)}]
    out: JSON = {"content": content}
    if has(request.revision, "structured_content"):
        out["structuredContent"] = result
    out["isError"] = False
    return out


def _readable_encoder() -> Callable[[object], str]:
    """Compact-but-spaced JSON for one value, straight from the C encoder where there is one."""
    import json.encoder

    c_make_encoder: Any = getattr(json.encoder, "c_make_encoder", None)  # private: not in typeshed
    if c_make_encoder is None:  # not CPython: the pure-Python encoder does the same
        return json.JSONEncoder(ensure_ascii=False, separators=(", ", ": ")).encode

    def refuse(value: object) -> object:
        raise TypeError(f"not JSON serializable: {type(value).__name__}")

    chunks = c_make_encoder(None, refuse, json.encoder.encode_basestring, None, ": ", ", ", False, False, True)
    return lambda value: "".join(chunks(value, 0))


_READABLE = _readable_encoder()


def result_text(result: JSON) -> str:
    """The result as readable JSON for the model: one field per line, one list item per line.

    Like pretty-printed JSON but without an indented line per leaf value: a page of
    100 transcripts stays 100 lines (fewer tokens for the model), and each piece is
    written by the C encoder, several times faster than ``json.dumps(indent=2)``.
    """
    encode = _READABLE
    lines = ["{"]
    last = len(result) - 1
    for i, (key, value) in enumerate(result.items()):
        comma = "," if i < last else ""
        if isinstance(value, list) and value:
            lines.append(f"  {encode(key)}: [")
            lines.append(",\n".join("    " + encode(item) for item in value))
            lines.append(f"  ]{comma}")
        else:
            lines.append(f"  {encode(key)}: {encode(value)}{comma}")
    lines.append("}")
    return "\n".join(lines)


def _tool_error(exc: ToolError, revision: str) -> JSON:
    """From 2025-11-25 a model-correctable failure is a result the model reads; before, an error."""
    if not has(revision, "tool_errors_as_results"):
        raise exc
    return {"content": [{"type": "text", "text": exc.message}], "isError": True}


# -- resources, prompts, completion ------------------------------------------------


def _cacheable(result: JSON, revision: str, ttl_ms: int, scope: str) -> JSON:
    if has(revision, "cache_hints"):
        result.update(ttlMs=ttl_ms, cacheScope=scope)
    return result


def _titled(item: JSON, revision: str) -> JSON:
    return item if has(revision, "titles") else {k: v for k, v in item.items() if k != "title"}


async def _resources_list(server: Server, request: Request) -> JSON:
    items, next_cursor = await resources.list_page(server.store, request.params.get("cursor"))
    result: JSON = {"resources": [_titled(r, request.revision) for r in items]}
    if next_cursor:
        result["nextCursor"] = next_cursor
    return _cacheable(result, request.revision, 0, "private")


async def _resource_templates_list(server: Server, request: Request) -> JSON:
    _no_cursor(request)
    result: JSON = {"resourceTemplates": [_titled(resources.TEMPLATE, request.revision)]}
    return _cacheable(result, request.revision, STATIC_TTL_MS, "public")


async def _resources_read(server: Server, request: Request) -> JSON:
    contents = await resources.read_markdown(server.store, request.params.get("uri"))
    return _cacheable({"contents": [contents]}, request.revision, 0, "private")


async def _prompts_list(server: Server, request: Request) -> JSON:
    _no_cursor(request)
    titles = has(request.revision, "titles")
    result: JSON = {"prompts": [prompts.definition(p, titles) for p in prompts.PROMPTS.values()]}
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


METHODS: dict[str, tuple[Handler, Callable[[str], bool]]] = {
    "initialize": (_initialize, _feature("handshake")),
    "server/discover": (_discover, _feature("discover")),
    "ping": (_ping, _feature("ping")),
    "tools/list": (_tools_list, _always),
    "tools/call": (_tools_call, _always),
    "resources/list": (_resources_list, _always),
    "resources/templates/list": (_resource_templates_list, _always),
    "resources/read": (_resources_read, _always),
    "prompts/list": (_prompts_list, _always),
    "prompts/get": (_prompts_get, _always),
    "completion/complete": (_complete, _always),
}

__all__ = ["METHODS", "Server", "decode", "encode", "error_response"]
