"""The wire protocol, end to end: the real server process, real pipes, a real store.

Every test speaks raw JSON lines to the server chosen with ``--server`` and
asserts on exactly what comes back on stdout (the start_server fixture also
checks that stdout carried only JSON lines and that the server exited 0).
What differs between protocol revisions (members, error codes, isError
results) is asserted once, for every revision, in test_revisions.py.
"""

from __future__ import annotations

import json
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from devkit.storefactory import StoreBuilder, ts
from magnotia_mcp.transport.limits import MAX_LINE_BYTES
from tests.support.protocol import LEGACY
from tests.support.server import Launcher, ServerProcess, SharedServers
from tests.support.wire_schema import validate_server_message

Start = Callable[..., ServerProcess]
NewStore = Callable[..., StoreBuilder]
Session = Callable[[str], ServerProcess]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small store, shared by the module (nothing here writes to it): two transcripts and a task."""
    b = StoreBuilder(tmp_path_factory.mktemp("protocol") / "magnotia.db")
    first = b.transcript(title="Budget review", raw_text="We agreed the budget for May.", created_at=ts(9))
    b.transcript(title="Stand-up", raw_text="Nothing blocked today.", created_at=ts(10), source="meeting")
    b.task(transcript_id=first, title="Send the budget", due_at=ts(12))
    return b.close()


@pytest.fixture
def server(start_server: Start, store: Path) -> ServerProcess:
    """A fresh server, not yet initialized."""
    return start_server(store)


@pytest.fixture
def session(shared_servers: SharedServers, store: Path) -> Session:
    """An initialized server of the given revision, shared with the module's other read-only tests."""
    return lambda revision: shared_servers.get(store, revision)


# -- lifecycle -------------------------------------------------------------------


@pytest.mark.parametrize(
    "requested",
    [
        pytest.param("1999-01-01", id="unknown-date"),
        pytest.param("2024-10-07", id="older-than-supported"),
        pytest.param("2026-07-28", id="modern-revision-in-initialize"),
        pytest.param("latest", id="not-a-date"),
    ],
)
def test_initialize_with_an_unknown_revision_gets_the_latest_legacy_one(server: ServerProcess, requested: str) -> None:
    """A revision the server does not speak in initialize is answered with 2025-11-25, not an error."""
    response = server.initialize(requested)
    assert response["result"]["protocolVersion"] == "2025-11-25"


def test_ping_answers_an_empty_result_before_and_after_initialize(server: ServerProcess) -> None:
    """ping gets {} whether or not the session was initialized."""
    assert server.request("ping")["result"] == {}
    server.initialize("2025-06-18")
    assert server.request("ping")["result"] == {}


def test_notifications_get_no_response(session: Session) -> None:
    """Known, unknown and cancel notifications produce nothing; the next request is answered next."""
    server = session("2025-06-18")
    server.notify("notifications/initialized")
    server.notify("notifications/cancelled", {"requestId": 12345, "reason": "test"})
    server.notify("notifications/no-such-thing", {"x": 1})
    server.notify("notifications/roots/list_changed")
    server.send({"jsonrpc": "2.0", "id": "after", "method": "ping"})
    assert server.read() == {"jsonrpc": "2.0", "id": "after", "result": {}}
    server.no_message(0.3)


@pytest.mark.parametrize(
    "request_id", [pytest.param("abc", id="string"), pytest.param(0, id="zero"), pytest.param(-7, id="negative")]
)
def test_responses_echo_string_and_integer_ids(session: Session, request_id: str | int) -> None:
    """Any string or integer id comes back unchanged."""
    server = session("2025-06-18")
    server.send({"jsonrpc": "2.0", "id": request_id, "method": "ping"})
    assert server.read() == {"jsonrpc": "2.0", "id": request_id, "result": {}}


# -- errors ------------------------------------------------------------------------


def _error(message: dict[str, Any], code: int, request_id: Any) -> str:
    assert "result" not in message, message
    assert message["jsonrpc"] == "2.0"
    assert message["id"] == request_id, message
    assert message["error"]["code"] == code, message
    assert isinstance(message["error"]["message"], str)
    assert message["error"]["message"]
    return str(message["error"]["message"])


@pytest.mark.parametrize(
    "line",
    [
        pytest.param(b'{"jsonrpc": "2.0", "id": 1, "method": "ping"', id="truncated"),
        pytest.param(b"{'jsonrpc': '2.0'}", id="single-quotes"),
        pytest.param(b"hello", id="words"),
        pytest.param(b'{"jsonrpc":"2.0","id":1,"method":"ping"} trailing', id="trailing-garbage"),
        pytest.param(b'\xff\xfe{"jsonrpc":"2.0","id":1,"method":"ping"}', id="invalid-utf8"),
        pytest.param(b'{"jsonrpc":"2.0","id":1,"method":"p\xc3"}', id="cut-utf8-sequence"),
        pytest.param(b"\xef\xbb\xbf", id="lone-bom"),
        pytest.param(b"[" * 200_000, id="nested-too-deep"),
    ],
)
def test_a_line_that_is_not_json_gets_a_parse_error_and_the_loop_goes_on(session: Session, line: bytes) -> None:
    """Not JSON or not UTF-8: -32700 with a null id, and the next request is served."""
    server = session("2025-06-18")
    server.send_raw(line + b"\n")
    _error(server.read(), -32700, None)
    assert server.request("ping")["result"] == {}


@pytest.mark.parametrize(
    ("message", "request_id"),
    [
        pytest.param(["not", "a", "request"], None, id="array"),
        pytest.param("ping", None, id="string"),
        pytest.param(42, None, id="number"),
        pytest.param(None, None, id="null"),
        pytest.param({"id": 5, "method": "ping"}, 5, id="jsonrpc-missing"),
        pytest.param({"jsonrpc": "1.0", "id": 6, "method": "ping"}, 6, id="jsonrpc-1.0"),
        pytest.param({"jsonrpc": 2.0, "id": 7, "method": "ping"}, 7, id="jsonrpc-number"),
        pytest.param({"jsonrpc": "2.0", "id": 8, "method": 5}, 8, id="method-number"),
        pytest.param({"jsonrpc": "2.0", "id": 9}, 9, id="method-missing"),
        pytest.param({"jsonrpc": "2.0", "id": True, "method": "ping"}, None, id="id-bool"),
        pytest.param({"jsonrpc": "2.0", "id": 1.5, "method": "ping"}, None, id="id-float"),
        pytest.param({"jsonrpc": "2.0", "id": {"n": 1}, "method": "ping"}, None, id="id-object"),
        pytest.param({"jsonrpc": "2.0", "id": [1], "method": "ping"}, None, id="id-array"),
        pytest.param({"jsonrpc": "2.0", "id": None, "method": "ping"}, None, id="id-null"),
        pytest.param({"jsonrpc": "2.0", "id": "p", "method": "ping", "params": [1, 2]}, "p", id="params-array"),
        pytest.param({"jsonrpc": "2.0", "method": 1, "params": "bar"}, None, id="json-rpc-spec-example"),
        pytest.param({"jsonrpc": "1.0", "method": "tools/list"}, None, id="bad-notification"),
        pytest.param({}, None, id="empty-object"),
    ],
)
def test_valid_json_that_is_not_a_request_gets_invalid_request(session: Session, message: Any, request_id: Any) -> None:
    """-32600, echoing the id when it is a string or integer and null otherwise; the loop goes on."""
    server = session("2025-06-18")
    server.send(message)
    response = server.read()
    validate_server_message(response, "2025-06-18")
    _error(response, -32600, request_id)
    assert server.request("ping")["result"] == {}


@pytest.mark.parametrize("version", [pytest.param(v, id=v) for v in LEGACY if v != "2025-03-26"])
def test_a_batch_is_invalid_outside_2025_03_26(session: Session, version: str) -> None:
    """A JSON array of requests is -32600 in every revision but 2025-03-26."""
    server = session(version)
    server.send([{"jsonrpc": "2.0", "id": 1, "method": "ping"}])
    _error(server.read(), -32600, None)
    server.no_message(0.2)


def test_a_batch_in_2025_03_26_is_answered_with_one_array(session: Session) -> None:
    """2025-03-26 answers a batch with an array of the requests' responses, notifications left out."""
    server = session("2025-03-26")
    server.send(
        [
            {"jsonrpc": "2.0", "id": "a", "method": "ping"},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": "b", "method": "tools/call", "params": {"name": "list_tasks"}},
            {"jsonrpc": "2.0", "id": "c", "method": "no/such"},
        ]
    )
    replies = server.read()  # one line: an array, each response validated for 2025-03-26
    assert isinstance(replies, list)
    by_id = {r["id"]: r for r in replies}
    assert sorted(by_id) == ["a", "b", "c"]
    assert by_id["a"]["result"] == {}
    assert json.loads(by_id["b"]["result"]["content"][0]["text"])["tasks"][0]["title"] == "Send the budget"
    assert by_id["c"]["error"]["code"] == -32601


def test_a_batch_of_more_than_16_messages_is_refused_whole_and_one_of_16_is_answered(session: Session) -> None:
    """Replies of a batch wait for its slowest call: its size bounds the memory it holds. Over 16: one -32600."""
    server = session("2025-03-26")
    server.send([{"jsonrpc": "2.0", "id": k, "method": "ping"} for k in range(17)])
    refused = server.read()
    assert isinstance(refused, dict)
    assert refused["id"] is None
    assert refused["error"]["code"] == -32600
    assert "at most 16 messages, this one 17" in refused["error"]["message"]
    server.send([{"jsonrpc": "2.0", "id": k, "method": "ping"} for k in range(16)])
    answered = server.read()
    assert isinstance(answered, list)
    assert sorted(r["id"] for r in answered) == list(range(16))


@pytest.mark.parametrize(
    "method", ["no/such/method", "tools/get", "logging/setLevel", "sampling/createMessage", "", "TOOLS/LIST"]
)
def test_an_unknown_method_gets_method_not_found(session: Session, method: str) -> None:
    """-32601 with the request's id."""
    server = session("2025-06-18")
    _error(server.request(method), -32601, server.last_id)


# -- framing ------------------------------------------------------------------------


def test_blank_lines_are_ignored(session: Session) -> None:
    """Empty and whitespace-only lines produce no output; the request after them is answered."""
    server = session("2025-06-18")
    server.send_raw(b"\n\n   \n\t\r\n")
    server.send({"jsonrpc": "2.0", "id": 1, "method": "ping"})
    assert server.read() == {"jsonrpc": "2.0", "id": 1, "result": {}}
    server.send_raw(b'{"jsonrpc":"2.0","id":2,"method":"ping"}\r\n\r\n')  # CRLF line endings
    assert server.read() == {"jsonrpc": "2.0", "id": 2, "result": {}}
    server.no_message(0.3)


def test_a_request_split_across_writes_is_one_request(session: Session) -> None:
    """Bytes arriving in pieces (even inside a UTF-8 character) make one message."""
    server = session("2025-06-18")
    line = json.dumps({"jsonrpc": "2.0", "id": "é🎉", "method": "ping"}, ensure_ascii=False).encode() + b"\n"
    for i in range(len(line)):
        server.send_raw(line[i : i + 1])
    assert server.read() == {"jsonrpc": "2.0", "id": "é🎉", "result": {}}


def test_an_over_long_line_gets_an_error_and_the_loop_goes_on(session: Session) -> None:
    """A line over the 8 MiB limit is answered with one error (id null); the next request is served."""
    server = session("2025-06-18")
    padding = "x" * (MAX_LINE_BYTES + 1024)
    big = json.dumps({"jsonrpc": "2.0", "id": "big", "method": "ping", "params": {"pad": padding}})
    server.send_raw(big.encode() + b"\n")
    server.send({"jsonrpc": "2.0", "id": "after", "method": "ping"})
    error = server.read(timeout=30)
    assert error["id"] is None
    assert error["error"]["code"] in (-32600, -32700)
    assert str(MAX_LINE_BYTES) in error["error"]["message"] or "large" in error["error"]["message"]
    assert server.read(timeout=30) == {"jsonrpc": "2.0", "id": "after", "result": {}}
    server.no_message(0.3)


@pytest.mark.parametrize(
    "first",
    [
        pytest.param(b"\xff\xfe not utf-8", id="invalid-utf8"),
        pytest.param(b"{oops", id="not-json"),
        pytest.param(b'{"jsonrpc":"2.0","method":1}', id="invalid-request"),
        pytest.param(b"x" * (MAX_LINE_BYTES + 10), id="over-long"),
    ],
)
def test_a_bad_first_line_is_answered_and_the_session_goes_on(start_server: Start, store: Path, first: bytes) -> None:
    """Garbage as the very first input (before initialize) gets its one error; initialize and calls then work."""
    server = start_server(store)
    server.send_raw(first + b"\n")
    error = server.read(timeout=30)
    assert error["id"] is None
    assert error["error"]["code"] in (-32700, -32600)
    assert server.initialize("2025-06-18")["result"]["protocolVersion"] == "2025-06-18"
    assert server.result("list_tasks")["tasks"][0]["title"] == "Send the budget"
    server.sync()


def test_a_line_just_under_the_limit_is_served(session: Session) -> None:
    """A valid request close to the limit is still answered normally."""
    server = session("2025-06-18")
    padding = "y" * (MAX_LINE_BYTES - 200)
    server.send({"jsonrpc": "2.0", "id": "near", "method": "ping", "params": {"_meta": {"pad": padding}}})
    assert server.read(timeout=30) == {"jsonrpc": "2.0", "id": "near", "result": {}}


def test_many_pipelined_requests_are_each_answered_exactly_once(session: Session) -> None:
    """300 requests in one write (pings, tool calls, errors) get 300 responses, one per id."""
    server = session("2025-06-18")
    requests = []
    for i in range(300):
        kind = i % 4
        if kind == 0:
            requests.append({"jsonrpc": "2.0", "id": i, "method": "ping"})
        elif kind == 1:
            params = {"name": "search_transcripts", "arguments": {"query": "budget"}}
            requests.append({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": params})
        elif kind == 2:
            params = {"name": "get_transcript", "arguments": {"id": "missing"}}
            requests.append({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": params})
        else:
            requests.append({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": "list_tasks"}})
        if i % 50 == 0:
            requests.append({"jsonrpc": "2.0", "method": "notifications/whatever"})
    server.send_raw(b"".join(json.dumps(r).encode() + b"\n" for r in requests))
    seen: dict[int, dict[str, Any]] = {}
    for _ in range(300):
        message = server.read()
        assert message["id"] not in seen, f"answered twice: {message['id']}"
        seen[message["id"]] = message
    assert sorted(seen) == list(range(300))
    for i, message in seen.items():
        if i % 4 == 2:
            assert message["error"]["code"] == -32000
        else:
            assert "result" in message, message
    server.no_message(0.3)


# -- ending ---------------------------------------------------------------------------


def test_eof_exits_0(start_server: Start, store: Path) -> None:
    """Closing stdin of an idle, initialized server makes it exit 0 (close() fails the test if it hangs)."""
    server = start_server(store)
    server.initialize("2025-06-18")
    assert server.request("ping")["result"] == {}
    assert server.close() == 0


def test_eof_before_any_input_exits_0(start_server: Start, store: Path) -> None:
    """A host that closes stdin at once gets a clean exit and no output."""
    server = start_server(store)
    assert server.close() == 0
    assert server.raw_stdout == []


def test_eof_answers_the_requests_already_sent_first(start_server: Start, store: Path) -> None:
    """Requests written just before EOF are all answered before the server exits 0."""
    server = start_server(store)
    lines = [
        json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {"protocolVersion": "2025-06-18", "capabilities": {}},
            }
        )
    ]
    for i in range(1, 41):
        arguments = {"query": "budget"} if i % 2 else {"limit": 5}
        name = "search_transcripts" if i % 2 else "list_transcripts"
        lines.append(
            json.dumps(
                {"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": name, "arguments": arguments}}
            )
        )
    lines.append('{"jsonrpc":"2.0","id":41,"method":"ping"}')  # the last line has no newline before EOF
    server.send_raw(("\n".join(lines)).encode())
    assert server.proc.stdin is not None
    server.proc.stdin.close()
    messages = server.messages_until_eof()
    assert sorted(m["id"] for m in messages) == list(range(42))
    assert all("result" in m for m in messages)
    assert server.wait() == 0


def test_sigterm_exits_0(start_server: Start, store: Path) -> None:
    """SIGTERM to a serving server ends it with exit code 0 (wait() fails the test if it hangs)."""
    server = start_server(store)
    server.initialize("2025-06-18")
    assert server.result("list_transcripts")["transcripts"]
    server.proc.send_signal(signal.SIGTERM)
    assert server.wait(5) == 0


def test_sigterm_before_any_input_exits_0(start_server: Start, store: Path, launcher: Launcher) -> None:
    """SIGTERM to a server that has not been sent anything yet also ends it with exit code 0."""
    server = start_server(store)
    deadline = time.monotonic() + 20
    while "serving" not in server.stderr and time.monotonic() < deadline:  # started and waiting on stdin
        time.sleep(0.02)
    time.sleep(0.2)
    server.expected_exit.add(-signal.SIGTERM)  # reported once, by the assert below, not again at teardown
    server.proc.send_signal(signal.SIGTERM)
    assert server.wait(5) == 0


def _server_owns_its_pipes(launcher: Launcher) -> None:
    if not launcher.local:
        pytest.skip("the container engine, not the server, holds the host's stdout: it reports the broken pipe itself")


def test_a_closed_stdout_makes_the_server_exit_quietly(launcher: Launcher, store: Path) -> None:
    """When the host stops reading (stdout closed), the server exits 0 with no traceback."""
    _server_owns_its_pipes(launcher)
    proc = subprocess.Popen(launcher.argv(store), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdin is not None
    assert proc.stdout is not None
    assert proc.stderr is not None
    try:
        init = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {}},
        }
        proc.stdin.write(json.dumps(init).encode() + b"\n")
        proc.stdin.flush()
        assert json.loads(proc.stdout.readline())["id"] == 1
        proc.stdout.close()
        call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "list_transcripts"}}
        try:
            for _ in range(50):
                proc.stdin.write(json.dumps(call).encode() + b"\n")
                proc.stdin.flush()
                time.sleep(0.02)
        except BrokenPipeError:
            pass
        code = proc.wait(10)
        stderr = proc.stderr.read().decode("utf-8", "replace")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert code == 0, stderr
    assert "Traceback" not in stderr
    assert "Error" not in stderr.replace("error:", "")


def test_a_stdout_closed_before_the_first_answer_also_exits_quietly(launcher: Launcher, store: Path) -> None:
    """Even the very first response failing to write ends the server cleanly."""
    _server_owns_its_pipes(launcher)
    proc = subprocess.Popen(launcher.argv(store), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdin is not None
    assert proc.stdout is not None
    proc.stdout.close()
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}},
    }
    try:
        proc.stdin.write(json.dumps(init).encode() + b"\n")
        proc.stdin.flush()
    except BrokenPipeError:
        pass
    try:
        _, err = proc.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise AssertionError("the server kept running with its stdout closed") from None
    stderr = err.decode("utf-8", "replace")
    assert proc.returncode == 0, stderr
    assert "Traceback" not in stderr


def test_stdout_carries_nothing_but_json_lines_even_with_chatty_logging(start_server: Start, store: Path) -> None:
    """With debug logging on, every stdout line is still one JSON message; the logs go to stderr."""
    server = start_server(store, "--log-level", "debug")
    server.initialize("2025-06-18")
    server.result("search_transcripts", {"query": "budget"})
    server.send_raw(b"not json\n")
    server.read()
    server.close()
    assert server.stderr
    for line in server.raw_stdout:
        assert line.endswith(b"\n")
        assert isinstance(json.loads(line), dict)


def test_the_server_answers_in_utf8_whatever_the_locale(start_server: Start, new_store: NewStore) -> None:
    """Under LANG=C / PYTHONIOENCODING=ascii, non-ASCII text still arrives as UTF-8 JSON."""
    b = new_store()
    b.transcript(title="Réunion à São Paulo 🎉", raw_text="Olá, coração")
    db = b.close()
    server = start_server(db, env={"LANG": "C", "LC_ALL": "C", "PYTHONIOENCODING": "ascii", "PYTHONUTF8": "0"})
    server.initialize("2025-06-18")
    assert server.result("list_transcripts")["transcripts"][0]["title"] == "Réunion à São Paulo 🎉"
    assert "São Paulo 🎉".encode() in b"".join(server.raw_stdout)
