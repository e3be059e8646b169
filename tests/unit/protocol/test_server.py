"""magnotia_mcp.protocol.server: the dispatcher, from one framed line to the lines it sends back.

Every test goes through ``Server.submit``, the one entry point a transport uses.
Most use the real method table (``methods.new_server``) on a store factory that
fails the test if called, which proves a request never opened the store; the
mechanics of tasks, cancellation and internal errors use a small table of their own.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from magnotia_mcp.errors import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    RESOURCE_NOT_FOUND,
    UNSUPPORTED_PROTOCOL_VERSION,
)
from magnotia_mcp.protocol import revisions
from magnotia_mcp.protocol.methods import new_server
from magnotia_mcp.protocol.requests import META_CAPABILITIES, META_SERVER_INFO, META_VERSION, Request, server_info
from magnotia_mcp.protocol.revisions import KNOWN, has
from magnotia_mcp.protocol.server import DEFERRED, Method, Server
from magnotia_mcp.store.pool import Store
from tests.unit.wire import (
    Message,
    Outbox,
    Session,
    answer,
    answer_now,
    error_code,
    frame,
    never_opened,
    notification,
    only,
    request,
    result_of,
)

# -- the initialize handshake -------------------------------------------------------


@pytest.mark.parametrize("version", [pytest.param(v, id=v) for v in revisions.LEGACY])
def test_dispatcher_echoes_each_legacy_revision_without_opening_the_store(version: str) -> None:
    """initialize answers with the revision the client asked for, and never touches the store."""
    server = new_server(never_opened)
    response = only(answer_now(server, request("initialize", {"protocolVersion": version, "capabilities": {}})))
    assert response["result"]["protocolVersion"] == version
    assert server.legacy_revision == version


@pytest.mark.parametrize(
    "requested",
    [
        pytest.param("1999-01-01", id="unknown-date"),
        pytest.param("2026-07-28", id="modern-in-initialize"),
        pytest.param(20241105, id="a-number"),
        pytest.param(None, id="missing"),
    ],
)
def test_dispatcher_answers_an_unknown_revision_with_the_latest_legacy_one(requested: object) -> None:
    """A protocolVersion the server does not speak gets a counter-offer of 2025-11-25, not an error."""
    params: dict[str, Any] = {"capabilities": {}}
    if requested is not None:
        params["protocolVersion"] = requested
    response = only(answer_now(new_server(never_opened), request("initialize", params)))
    assert response["result"]["protocolVersion"] == "2025-11-25"


# -- notifications and malformed messages ---------------------------------------------


def test_dispatcher_stays_silent_for_notifications_even_unknown_ones() -> None:
    """Notifications, known or not, get no response at all."""
    server = new_server(never_opened)
    for method in ("notifications/initialized", "notifications/cancelled", "notifications/whatever"):
        assert answer_now(server, notification(method)) == []


def test_blank_lines_are_keep_alives_that_get_no_answer() -> None:
    """An empty or all-blank line is not a message: nothing is sent."""
    server = new_server(never_opened)
    for line in (b"", b"   ", b"\r", b"\t \r"):
        assert answer_now(server, line) == []


@pytest.mark.parametrize(
    ("message", "code", "echoed_id"),
    [
        pytest.param({"jsonrpc": "2.0", "method": 1, "params": "bar"}, -32600, None, id="spec-example-no-id"),
        pytest.param({"id": 7, "method": "ping"}, -32600, 7, id="jsonrpc-missing"),
        pytest.param({"jsonrpc": "1.0", "id": "a", "method": "ping"}, -32600, "a", id="jsonrpc-wrong"),
        pytest.param({"jsonrpc": "2.0", "id": 3, "method": 5}, -32600, 3, id="method-not-string"),
        pytest.param({"jsonrpc": "2.0", "id": True, "method": "ping"}, -32600, None, id="id-bool"),
        pytest.param({"jsonrpc": "2.0", "id": 1.5, "method": "ping"}, -32600, None, id="id-float"),
        pytest.param({"jsonrpc": "2.0", "id": {"a": 1}, "method": "ping"}, -32600, None, id="id-object"),
        pytest.param({"jsonrpc": "2.0", "id": None, "method": "ping"}, -32600, None, id="id-null"),
        pytest.param({"jsonrpc": "2.0", "id": 4, "method": "ping", "params": [1]}, -32600, 4, id="params-array"),
        pytest.param("just a string", -32600, None, id="not-an-object"),
        pytest.param(42, -32600, None, id="a-number"),
        pytest.param([], -32600, None, id="empty-array"),
        pytest.param([request("ping")], -32600, None, id="array-before-initialize"),
        pytest.param(request("no/such/method"), -32601, 1, id="unknown-method"),
    ],
)
def test_dispatcher_answers_invalid_messages_with_the_contract_code(
    message: object, code: int, echoed_id: object
) -> None:
    """Each malformed message gets one error object with the contract's code and the id when usable."""
    response = only(answer(new_server(never_opened), message))
    assert response["jsonrpc"] == "2.0"
    assert response["id"] == echoed_id
    assert response["error"]["code"] == code
    assert response["error"]["message"]


def test_dispatcher_decodes_invalid_utf8_and_bad_json_as_parse_errors() -> None:
    """A line that is not UTF-8 JSON gets -32700 with a null id, sent before submit returns."""
    server = new_server(never_opened)
    for line in (
        b"\xff\xfe{}",
        b'{"jsonrpc": "2.0", "id": 1, "method": "ping"',
        b"{'single': 'quotes'}",
        b"[" * 100_000,
    ):
        response = only(answer_now(server, line))
        assert response["error"]["code"] == PARSE_ERROR, line[:40]
        assert response["id"] is None


def test_dispatcher_encodes_a_lone_surrogate_as_valid_json_on_one_line() -> None:
    """A "\\ud800" escape echoed back still becomes one line of valid UTF-8 JSON."""
    server = new_server(never_opened)
    out = Outbox()
    assert server.submit(b'{"jsonrpc":"2.0","id":"\\ud800","method":"no/such"}', out) is None
    [line] = out.lines
    assert b"\n" not in line
    response = json.loads(line.decode("utf-8"))
    assert response["id"] == "\ufffd"  # not Unicode: replaced, so strict JSON parsers accept the line
    assert response["error"]["code"] == METHOD_NOT_FOUND


# -- batches ----------------------------------------------------------------------------


@pytest.mark.parametrize("revision", revisions.LEGACY)
def test_dispatcher_answers_a_batch_only_where_the_revision_has_batches(revision: str) -> None:
    """With batches, an array gets an array (notifications left out); without, one -32600 with a null id."""
    batch = [request("ping", id=1), notification("notifications/initialized"), request("ping", id=2)]
    session = Session.open(revision)
    replies = answer(session.server, batch)
    assert len(replies) == 1
    if has(revision, "batches"):
        assert isinstance(replies[0], list)
        assert sorted(r["id"] for r in replies[0]) == [1, 2]
        assert all(r["result"] == {} for r in replies[0])
        assert error_code(only(answer(session.server, []))) == INVALID_REQUEST  # an empty batch is not one
        assert answer(session.server, [notification("notifications/initialized")]) == []
    else:
        refused = only(replies)
        assert refused["error"]["code"] == INVALID_REQUEST
        assert refused["id"] is None


# -- what every result carries ----------------------------------------------------------


@pytest.mark.parametrize("revision", KNOWN)
def test_every_result_carries_the_revisions_result_type_and_server_info(revision: str) -> None:
    """resultType and _meta serverInfo are added to each result exactly where the revision has them."""
    session = Session.open(revision)
    result = result_of(only(answer_now(session.server, session.request("tools/list"))))
    assert result.get("resultType") == ("complete" if has(revision, "result_type") else None)
    meta = result.get("_meta", {})
    if has(revision, "server_info_in_meta"):
        assert meta[META_SERVER_INFO] == server_info(revision)
    else:
        assert META_SERVER_INFO not in meta


@pytest.mark.parametrize("revision", KNOWN)
def test_a_resource_that_does_not_exist_has_the_revisions_error_code(revision: str, tmp_path: Path) -> None:
    """resources/read of a URI naming nothing: -32602 where the revision says so, else -32002; same data."""
    session = Session.open(revision, Store(tmp_path / "never-read.db"))
    uri = "magnotia://elsewhere/x"
    reply = only(answer(session.server, session.request("resources/read", {"uri": uri})))
    expected = INVALID_PARAMS if has(revision, "resource_not_found_is_invalid_params") else RESOURCE_NOT_FOUND
    assert error_code(reply) == expected
    assert reply["error"]["data"] == {"uri": uri}
    assert not (tmp_path / "never-read.db").exists()


# -- choosing the revision of a request -------------------------------------------------


def _modern(method: str, meta: Message) -> Message:
    return request(method, {"_meta": meta})


@pytest.mark.parametrize(
    ("message", "code"),
    [
        pytest.param(_modern("tools/list", {META_VERSION: "2026-07-28"}), INVALID_PARAMS, id="no-capabilities"),
        pytest.param(
            _modern("tools/list", {META_VERSION: 20260728, META_CAPABILITIES: {}}), INVALID_PARAMS, id="not-a-string"
        ),
        pytest.param(request("server/discover"), INVALID_PARAMS, id="discover-without-meta"),
        pytest.param(request("server/discover", {"_meta": {}}), INVALID_PARAMS, id="discover-empty-meta"),
    ],
)
def test_a_request_with_a_bad_modern_revision_is_invalid_params(message: Message, code: int) -> None:
    """_meta must carry the revision as a string and the client's capabilities; discover needs it."""
    assert error_code(only(answer_now(new_server(never_opened), message))) == code


@pytest.mark.parametrize("version", ["2099-01-01", "2025-06-18", "2025-11-25"])
def test_a_revision_in_meta_that_is_not_modern_is_unsupported(version: str) -> None:
    """Only modern revisions may be named in _meta; the error lists them and echoes the request."""
    message = _modern("tools/list", {META_VERSION: version, META_CAPABILITIES: {}})
    reply = only(answer_now(new_server(never_opened), message))
    assert error_code(reply) == UNSUPPORTED_PROTOCOL_VERSION
    assert reply["error"]["data"] == {"supported": list(revisions.MODERN), "requested": version}


def test_a_request_before_initialize_speaks_the_latest_legacy_revision() -> None:
    """Before initialize the server is lenient: requests are answered as in 2025-11-25."""
    server = new_server(never_opened)
    assert result_of(only(answer_now(server, request("ping")))) == {}
    assert server.legacy_revision is None


# -- progress ---------------------------------------------------------------------------


@pytest.mark.parametrize("revision", KNOWN)
def test_progress_notifications_only_increase_and_carry_a_message_where_the_revision_has_one(revision: str) -> None:
    """A request with a progressToken gets a sink sending notifications/progress, never going backwards."""
    out = Outbox()
    sink = Request(1, "tools/call", {"_meta": {"progressToken": "tok"}}, revision, out).progress_sink()
    assert sink is not None
    sink(1, 10, "one")
    sink(1, 10, "again")
    sink(0, 10, "back")
    sink(5, None, "five")
    notes = out.messages()
    assert [n["method"] for n in notes] == ["notifications/progress"] * 2
    assert [n["params"]["progress"] for n in notes] == [1, 5]
    assert all(n["params"]["progressToken"] == "tok" for n in notes)
    assert notes[0]["params"]["total"] == 10
    assert "total" not in notes[1]["params"]
    messages = [n["params"].get("message") for n in notes]
    assert messages == (["one", "five"] if has(revision, "progress_message") else [None, None])


@pytest.mark.parametrize(
    "params",
    [
        pytest.param({}, id="no-meta"),
        pytest.param({"_meta": {}}, id="no-token"),
        pytest.param({"_meta": {"progressToken": True}}, id="bool-token"),
        pytest.param({"_meta": {"progressToken": 1.5}}, id="float-token"),
        pytest.param({"_meta": "tok"}, id="meta-not-object"),
    ],
)
def test_no_progress_is_sent_without_a_usable_token(params: Message) -> None:
    """Only a string or integer progressToken asks for progress."""
    assert Request(1, "tools/call", params, revisions.LATEST_LEGACY, Outbox()).progress_sink() is None
    assert Request(1, "tools/call", {"_meta": {"progressToken": 7}}, revisions.LATEST_LEGACY, Outbox()).progress_sink()


# -- tasks, cancellation and failures (a method table of the test's own) ---------------------


def _always(revision: str) -> bool:
    return True


async def _wait_forever(server: Server, request: Request) -> Message:
    await asyncio.Event().wait()
    raise AssertionError("never reached")


async def _later(server: Server, request: Request) -> Message:
    await asyncio.sleep(0)
    return {"later": request.params.get("n")}


def _now(server: Server, request: Request) -> Message:
    return {"now": True}


def _broken(server: Server, request: Request) -> Message:
    raise RuntimeError("boom")


TABLE = {
    "wait": Method(_wait_forever, _always),
    "later": Method(_later, _always),
    "now": Method(_now, _always, inline=True),
    "broken": Method(_broken, _always, inline=True),
}


def test_inline_methods_are_answered_before_submit_returns_and_others_wait_for_the_loop() -> None:
    """With inline_only (no loop yet) an inline method is answered; one that waits is left alone as DEFERRED."""
    server = Server(TABLE, never_opened)
    assert only(answer_now(server, request("now")))["result"] == {"now": True}
    out = Outbox()
    assert server.submit(frame(request("later")), out, inline_only=True) is DEFERRED
    assert server.submit(frame([request("now")]), out, inline_only=True) is DEFERRED
    assert out.lines == []
    assert server.pending == 0


def test_a_method_that_waits_runs_as_a_task_whose_reply_is_sent_when_it_ends() -> None:
    """submit returns the task; the reply goes to send when it is done, and replies may come out of order."""

    async def scenario() -> list[Any]:
        server = Server(TABLE, never_opened)
        out = Outbox()
        first = server.submit(frame(request("later", {"n": 1}, id=1)), out)
        assert isinstance(first, asyncio.Task)
        assert server.pending == 1
        assert server.submit(frame(request("now", id=2)), out) is None
        assert out.messages() == [{"jsonrpc": "2.0", "id": 2, "result": {"now": True}}]
        await first
        await server.wait_idle()
        assert server.pending == 0
        return out.messages()

    replies = asyncio.run(scenario())
    assert [r["id"] for r in replies] == [2, 1]
    assert replies[1]["result"] == {"later": 1}


def test_a_cancelled_request_is_stopped_and_never_answered() -> None:
    """notifications/cancelled for a request in flight cancels its task; no response is sent for it."""

    async def scenario() -> None:
        server = Server(TABLE, never_opened)
        out = Outbox()
        task = server.submit(frame(request("wait", id="w")), out)
        assert isinstance(task, asyncio.Task)
        await asyncio.sleep(0)
        cancel = notification("notifications/cancelled", {"requestId": "w", "reason": "user"})
        assert server.submit(frame(cancel), out) is None
        await server.wait_idle()
        assert task.cancelled()
        assert out.lines == []
        assert server.pending == 0

    asyncio.run(scenario())


def test_an_exception_in_a_handler_costs_one_response_not_the_connection() -> None:
    """A bug in a method becomes one internal error for that request; the next request is served."""
    server = Server(TABLE, never_opened)
    reply = only(answer_now(server, request("broken", id=9)))
    assert reply["id"] == 9
    assert error_code(reply) == INTERNAL_ERROR
    assert "boom" in reply["error"]["message"]
    assert result_of(only(answer_now(server, request("now", id=10)))) == {"now": True}
