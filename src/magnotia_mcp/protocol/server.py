"""The dispatcher: one ``Server`` per connection owns every request from bytes to reply.

A transport hands each framed message to ``Server.submit`` with a ``send``
callback and does nothing else: decoding, the JSON-RPC envelope, choosing
the protocol revision, running the handler from the method table, tracking
what is in flight (``InFlight``), cancellation, and turning exceptions into
wire errors all happen here (with ``requests``: the revision, the result's
additions, the error), and ``send`` is told what each message is (``Reply``). Methods that never wait (``initialize``,
``ping``, the static lists) are answered before ``submit`` returns, which
is what lets the first answers go out before asyncio is even imported; the
rest run as one task each, so a slow call never holds up the next.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from magnotia_mcp import log
from magnotia_mcp.errors import InvalidRequest, MethodNotFound, ParseError, named
from magnotia_mcp.protocol import jsonrpc, revisions
from magnotia_mcp.protocol.jsonrpc import JSON, RequestId, reply_of
from magnotia_mcp.protocol.requests import Request, Send, failure, finish, revision_for
from magnotia_mcp.protocol.revisions import has

if TYPE_CHECKING:
    import asyncio

    from magnotia_mcp.store.pool import Store


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


class InFlight:
    """A connection's requests being worked on: a task each, found by id for notifications/cancelled."""

    def __init__(self) -> None:
        self.by_id: dict[RequestId, asyncio.Task[Any]] = {}
        self.tasks: set[asyncio.Task[Any]] = set()
        self.batched = 0  # messages of running batches beyond the first: each counts as a request

    @property
    def count(self) -> int:
        return len(self.tasks) + self.batched

    def spawn(
        self, work: Awaitable[JSON | list[JSON] | None], request_id: RequestId | None, send: Send
    ) -> asyncio.Task[Any]:
        """Run work as a task; its response goes to send, unless it is cancelled."""
        import asyncio

        task: asyncio.Task[JSON | list[JSON] | None] = asyncio.ensure_future(work)
        self.tasks.add(task)
        if request_id is not None:
            self.by_id[request_id] = task

        def done(task: asyncio.Task[JSON | list[JSON] | None]) -> None:
            self.tasks.discard(task)
            if request_id is not None and self.by_id.get(request_id) is task:
                del self.by_id[request_id]
            if task.cancelled():
                log.debug(f"request {request_id!r} ended cancelled: no response")
                return  # cancelled by the client: no response, as the protocol asks
            response = task.result()
            if response is not None:
                send(jsonrpc.encode(response), reply_of(response))

        task.add_done_callback(done)
        return task

    def cancel(self, request_id: object) -> None:
        """notifications/cancelled: the task of that request, if one is in flight, is cancelled."""
        task = self.by_id.get(request_id) if isinstance(request_id, (str, int)) and jsonrpc.is_id(request_id) else None
        if task is not None:
            log.debug(f"notifications/cancelled: cancelling request {request_id!r}")
            task.cancel()

    async def wait_idle(self) -> None:
        import asyncio

        while self.tasks:
            await asyncio.wait(set(self.tasks))

    async def cancel_all(self) -> None:
        """Cancel every task, and give them a moment to interrupt their queries (before the store closes)."""
        import asyncio

        tasks = set(self.tasks)
        if tasks:
            log.debug(f"closing: cancelling {len(tasks)} request(s) in flight")
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks, timeout=5.0)


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
        self._work = InFlight()

    @property
    def pending(self) -> int:
        """How many requests are being worked on (a batch counts its messages)."""
        return self._work.count

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
            send(jsonrpc.encode(jsonrpc.error(None, exc)), jsonrpc.error_reply(exc.code, True))
            return None
        if isinstance(message, list):
            if inline_only:
                return DEFERRED
            return self._work.spawn(self._batch(message, send), None, send)
        step = self._prepare(message, send)
        if step is None:
            return None
        if not isinstance(step, _Call):
            send(jsonrpc.encode(step), reply_of(step))
            return None
        if inline_only:
            return DEFERRED
        return self._work.spawn(self._complete(step), step.request.id, send)

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
            revision = revision_for(method_name, params, self._legacy_revision)
            method = self._lookup(method_name, revision)
            request = Request(request_id, method_name, params, revision, send)
            if not method.inline:
                return _Call(request, method)
            value = method.handler(self, request)
            assert isinstance(value, dict), f"{method_name} is marked inline but waits"
            return jsonrpc.result(request_id, finish(value, revision))
        except Exception as exc:
            return failure(request_id, method_name, revision, exc)

    async def _complete(self, call: _Call) -> JSON:
        request = call.request
        try:
            value = call.method.handler(self, request)
            if not isinstance(value, dict):
                value = await value
            return jsonrpc.result(request.id, finish(value, request.revision))
        except Exception as exc:
            return failure(request.id, request.method, request.revision, exc)

    async def _batch(self, batch: list[object], send: Send) -> list[JSON] | JSON | None:
        refused = _refuse_batch(batch, self._legacy_revision)
        if refused is not None:
            return refused
        import asyncio

        async def one(message: object) -> JSON | None:
            step = self._prepare(message, send)
            return await self._complete(step) if isinstance(step, _Call) else step

        self._work.batched += len(batch) - 1
        try:
            replies = await asyncio.gather(*(one(m) for m in batch))
        finally:
            self._work.batched -= len(batch) - 1
        return [r for r in replies if r is not None] or None

    def _notification(self, method: str, params: JSON) -> None:
        if method == "notifications/cancelled":
            self._work.cancel(params.get("requestId"))
        # notifications/initialized and anything unknown: nothing to do, nothing to say.

    def _lookup(self, method: str, revision: str) -> Method:
        entry = self.methods.get(method)
        if entry is None or not entry.available(revision):
            raise MethodNotFound(f"Method not found: {named(method)}")
        return entry

    # -- the end of the connection ------------------------------------------------

    async def wait_idle(self) -> None:
        """Return once no request is in flight (new ones may arrive meanwhile)."""
        await self._work.wait_idle()

    async def close(self) -> None:
        """Cancel what is in flight, let it give back its connections, and close the store."""
        await self._work.cancel_all()
        if self._store is not None:
            await self._store.close()


def _refuse_batch(batch: list[object], legacy_revision: str | None) -> JSON | None:
    """The error for a batch this connection does not take (None: it takes it)."""
    if not batch or legacy_revision is None or not has(legacy_revision, "batches"):
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
    return None


__all__ = ["DEFERRED", "InFlight", "Method", "Server"]
