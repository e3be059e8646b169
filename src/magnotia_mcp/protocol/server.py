"""The dispatcher: one ``Server`` per connection owns every request from bytes to reply.

A transport hands each framed message to ``Server.submit`` with a ``send``
callback and does nothing else: decoding, the JSON-RPC envelope, choosing
the protocol revision, running the handler from the method table, tracking
what is in flight, cancellation, and turning exceptions into wire errors
all happen here, in one place. Methods that never wait (``initialize``,
``ping``, the static lists) are answered before ``submit`` returns, which
is what lets the first answers go out before asyncio is even imported; the
rest run as one task each, so a slow call never holds up the next.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from magnotia_mcp import __version__, log
from magnotia_mcp.errors import (
    InvalidParams,
    InvalidRequest,
    MethodNotFound,
    ParseError,
    ProtocolError,
    ResourceNotFound,
    UnsupportedProtocolVersion,
)
from magnotia_mcp.protocol import jsonrpc, revisions
from magnotia_mcp.protocol.jsonrpc import JSON, RequestId
from magnotia_mcp.protocol.revisions import has

if TYPE_CHECKING:
    import asyncio

    from magnotia_mcp.store.pool import Store



class Reply(NamedTuple):
    """What a transport may need to know of a message the server sends, beside its encoded bytes.

    Given with the bytes, so that no transport looks into them: HTTP picks its status and
    tells the answer from progress notifications by it; stdio writes the bytes and ignores it.
    """

    notification: bool = False  # a notification (progress), not the answer to the request
    error: int | None = None  # the JSON-RPC error code, when the answer is an error
    null_id: bool = False  # an error with a null id: the message was no usable request


# The two common kinds are shared, so the hot path allocates nothing for them.
RESULT = Reply()
NOTIFICATION = Reply(notification=True)

Send = Callable[[bytes, Reply], None]
Progress = Callable[[int, int | None, str], None]

META_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
META_SERVER_INFO = "io.modelcontextprotocol/serverInfo"
SERVER_NAME = "magnotia-mcp"
SERVER_TITLE = "Magnotia"


def server_info(revision: str) -> JSON:
    """serverInfo as revision has it."""
    info: JSON = {"name": SERVER_NAME, "version": __version__}
    if has(revision, "titles"):
        info["title"] = SERVER_TITLE
    return info


class Request(NamedTuple):
    """One request being handled: its params, the revision it speaks, and where its messages go."""

    id: RequestId
    method: str
    params: JSON
    revision: str
    send: Send

    def progress_sink(self) -> Progress | None:
        """A callback sending notifications/progress, if the client asked for progress."""
        meta = self.params.get("_meta")
        token = meta.get("progressToken") if isinstance(meta, dict) else None
        if not jsonrpc.is_id(token):
            return None
        send, with_message = self.send, has(self.revision, "progress_message")
        sent = 0  # progress MUST increase: a repeated or smaller value is not sent

        def report(progress: int, total: int | None, message: str) -> None:
            nonlocal sent
            if progress <= sent:
                return
            sent = progress
            params: JSON = {"progressToken": token, "progress": progress}
            if total is not None:
                params["total"] = total
            if with_message:
                params["message"] = message
            send(jsonrpc.encode(jsonrpc.notification("notifications/progress", params)), NOTIFICATION)

        return report


Handler = Callable[["Server", Request], JSON | Awaitable[JSON]]


class Method(NamedTuple):
    """One row of the method table."""

    handler: Handler
    available: Callable[[str], bool]  # in which revisions the method exists
    inline: bool = False  # the handler returns its result without waiting: answer it in submit


class Deferred:
    """What ``submit(..., inline_only=True)`` returns for a message that needs the event loop."""


DEFERRED = Deferred()


class _Call(NamedTuple):
    request: Request
    method: Method


# The most messages one JSON-RPC batch (revision 2025-03-26) may hold: their replies all wait
# for the slowest, and each can be a large window of text.
MAX_BATCH = 16


class Server:
    """Protocol state of one connection, the store it reads, and its requests in flight."""

    def __init__(
        self,
        methods: Mapping[str, Method],
        store: Store | Callable[[], Store],
        *,
        call_timeout: float = 30.0,
        legacy_revision: str | None = None,
    ) -> None:
        """legacy_revision: the revision already agreed for this client (an HTTP session's), if any."""
        self.methods = methods
        # A factory defers opening (and importing) the store until a request needs it,
        # so the first answers go out before asyncio and sqlite3 are even loaded.
        self._store: Store | None = None if callable(store) else store
        self._open_store = store if callable(store) else None
        self.call_timeout = call_timeout
        self._legacy_revision = legacy_revision  # agreed by initialize (see adopt)
        self._inflight: dict[RequestId, asyncio.Task[Any]] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        self._batched = 0  # messages of running batches beyond the first: each counts as a request

    @property
    def pending(self) -> int:
        """How many requests are being worked on (a batch counts its messages)."""
        return len(self._tasks) + self._batched

    @property
    def legacy_revision(self) -> str | None:
        """The revision initialize agreed on (before it, or without one: None)."""
        return self._legacy_revision

    def adopt(self, revision: str) -> None:
        """initialize agreed on revision: later requests without ``_meta`` speak it."""
        self._legacy_revision = revision

    @property
    def store(self) -> Store:
        if self._store is None:
            assert self._open_store is not None
            self._store = self._open_store()
        return self._store

    # -- the entry point -----------------------------------------------------------

    def submit(self, line: bytes, send: Send, *, inline_only: bool = False) -> asyncio.Task[Any] | Deferred | None:
        """Take one framed message; every reply and notification for it goes to send.

        Returns the task working on it, or None when it was answered (or needed no
        answer) before returning. With inline_only (no event loop yet), a message that
        would need a task is left alone and DEFERRED is returned.
        """
        if not line.strip():
            return None  # blank lines are keep-alives
        try:
            message = jsonrpc.decode(line)
        except ParseError as exc:
            send(jsonrpc.encode(jsonrpc.error(None, exc)), Reply(error=exc.code, null_id=True))
            return None
        if isinstance(message, list):
            if inline_only:
                return DEFERRED
            return self._spawn(self._batch(message, send), None, send)
        step = self._prepare(message, send)
        if step is None:
            return None
        if not isinstance(step, _Call):
            send(jsonrpc.encode(step), _reply_of(step))
            return None
        if inline_only:
            return DEFERRED
        return self._spawn(self._complete(step), step.request.id, send)

    def _spawn(
        self, work: Awaitable[JSON | list[JSON] | None], request_id: RequestId | None, send: Send
    ) -> asyncio.Task[Any]:
        import asyncio

        task: asyncio.Task[JSON | list[JSON] | None] = asyncio.ensure_future(work)
        self._tasks.add(task)
        if request_id is not None:
            self._inflight[request_id] = task

        def done(task: asyncio.Task[JSON | list[JSON] | None]) -> None:
            self._tasks.discard(task)
            if request_id is not None and self._inflight.get(request_id) is task:
                del self._inflight[request_id]
            if task.cancelled():
                return  # cancelled by the client: no response, as the protocol asks
            response = task.result()
            if response is not None:
                send(jsonrpc.encode(response), _reply_of(response))

        task.add_done_callback(done)
        return task

    # -- one message -------------------------------------------------------------

    def _prepare(self, message: object, send: Send) -> JSON | _Call | None:
        """Everything decided without waiting: the reply, None (a notification), or a call to run."""
        if not isinstance(message, dict):
            return jsonrpc.error(None, InvalidRequest("invalid request: a JSON-RPC message must be an object"))
        try:
            method_name, params = jsonrpc.check_envelope(message)
        except InvalidRequest as exc:
            return jsonrpc.error(jsonrpc.request_id(message), exc)
        if "id" not in message:
            self._notification(method_name, params)
            return None
        request_id: RequestId = message["id"]
        revision = revisions.LATEST_LEGACY
        try:
            revision = self._revision_for(method_name, params)
            method = self._lookup(method_name, revision)
            request = Request(request_id, method_name, params, revision, send)
            if not method.inline:
                return _Call(request, method)
            value = method.handler(self, request)
            assert isinstance(value, dict), f"{method_name} is marked inline but waits"
            return jsonrpc.result(request_id, self._finish(value, revision))
        except Exception as exc:
            return self._failure(request_id, method_name, revision, exc)

    async def _complete(self, call: _Call) -> JSON:
        request = call.request
        try:
            value = call.method.handler(self, request)
            if not isinstance(value, dict):
                value = await value
            return jsonrpc.result(request.id, self._finish(value, request.revision))
        except Exception as exc:
            return self._failure(request.id, request.method, request.revision, exc)

    async def _batch(self, batch: list[object], send: Send) -> list[JSON] | JSON | None:
        if not batch or self._legacy_revision is None or not has(self._legacy_revision, "batches"):
            why = "an empty batch" if not batch else "a batch; only protocol revision 2025-03-26 has batches"
            return jsonrpc.error(None, InvalidRequest(f"invalid request: got {why}"))
        if len(batch) > MAX_BATCH:
            # Its replies are held until the last is ready, so its size bounds the memory it takes.
            return jsonrpc.error(
                None,
                InvalidRequest(
                    f"invalid request: a batch holds at most {MAX_BATCH} messages, this one {len(batch)}; "
                    "send them in smaller batches or one by one"
                ),
            )
        import asyncio

        async def one(message: object) -> JSON | None:
            step = self._prepare(message, send)
            return await self._complete(step) if isinstance(step, _Call) else step

        self._batched += len(batch) - 1
        try:
            replies = await asyncio.gather(*(one(m) for m in batch))
        finally:
            self._batched -= len(batch) - 1
        return [r for r in replies if r is not None] or None

    @staticmethod
    def _failure(request_id: RequestId, method: str, revision: str, exc: Exception) -> JSON:
        """The one place where an exception becomes a JSON-RPC error."""
        if isinstance(exc, ResourceNotFound) and has(revision, "resource_not_found_is_invalid_params"):
            return jsonrpc.error(request_id, InvalidParams(exc.message, exc.data))
        if isinstance(exc, ProtocolError):
            return jsonrpc.error(request_id, exc)
        # A bug must cost one response, never the connection.
        log.error(f"internal error in {method}: {exc!r}")
        return jsonrpc.error(request_id, ProtocolError(f"internal error: {exc}"))

    def _notification(self, method: str, params: JSON) -> None:
        if method == "notifications/cancelled":
            request_id = params.get("requestId")
            task = self._inflight.get(request_id) if jsonrpc.is_id(request_id) else None  # type: ignore[arg-type]
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
        return self._legacy_revision or revisions.LATEST_LEGACY

    def _lookup(self, method: str, revision: str) -> Method:
        entry = self.methods.get(method)
        if entry is None or not entry.available(revision):
            raise MethodNotFound(f"Method not found: {method}")
        return entry

    def _finish(self, result: JSON, revision: str) -> JSON:
        """Add what the revision requires on every result."""
        if has(revision, "result_type"):
            result.setdefault("resultType", "complete")
        if has(revision, "server_info_in_meta"):
            result.setdefault("_meta", {})[META_SERVER_INFO] = server_info(revision)
        return result

    # -- the end of the connection ------------------------------------------------

    async def wait_idle(self) -> None:
        """Return once no request is in flight (new ones may arrive meanwhile)."""
        import asyncio

        while self._tasks:
            await asyncio.wait(set(self._tasks))

    async def close(self) -> None:
        """Cancel what is in flight, let it give back its connections, and close the store."""
        import asyncio

        tasks = set(self._tasks)
        for task in tasks:
            task.cancel()
        if tasks:  # let cancelled calls interrupt their queries before the store closes
            await asyncio.wait(tasks, timeout=5.0)
        if self._store is not None:
            await self._store.close()


def _reply_of(response: JSON | list[JSON]) -> Reply:
    """The Reply for an answer the server built (a batch's array counts as a result)."""
    if isinstance(response, dict) and (error := response.get("error")) is not None:
        return Reply(error=error["code"], null_id=response["id"] is None)
    return RESULT


__all__ = ["DEFERRED", "NOTIFICATION", "RESULT", "Method", "Reply", "Request", "Send", "Server", "server_info"]
