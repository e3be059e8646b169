"""One generated line in, everything the server answers to it out, and what JSON-RPC 2.0 says it must be.

``Conversation.exchange`` writes the line, then a ``ping`` with an id of its own:
what the server writes before the ping's answer (and, for a request handled on
a task of its own, until that request's answer) is the line's answer; a second
ping then proves nothing else follows. ``predict`` is the oracle: from the
bytes alone (and the connection's revision, for batches) it says how many
answers, with which ids and, for invalid messages, which error code.
"""

from __future__ import annotations

import json
import re
import threading
from typing import Any, NamedTuple

from hypothesis import event

from tests.support.server import ServerProcess, is_notification

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INTERNAL_ERROR = -32603
MAX_BATCH = 16  # a longer batch is refused whole (src/magnotia_mcp/protocol/server.py)
BATCH_REVISION = "2025-03-26"  # the only revision with JSON-RPC batches (src/magnotia_mcp/protocol/revisions.py)
# JSON nested this deep may hit the server's recursion limit: a parse error is then an acceptable answer.
DEEP = 900
PING_PREFIX = "props-ping-"
READ_TIMEOUT = 10.0


def is_id(value: object) -> bool:
    """A usable JSON-RPC id: a string or an integer (not a boolean)."""
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def on_the_wire(value: Any) -> Any:
    """value as the server can write it: a lone surrogate is not Unicode and goes out as U+FFFD."""
    if isinstance(value, str):
        return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return value


def same_id(a: object, b: object) -> bool:
    return type(a) is type(b) and a == b


class Expect(NamedTuple):
    """The answer to one message: none (a notification), an error with this code, or any reply (a request)."""

    kind: str  # "none" | "error" | "reply"
    id: Any = None
    code: int | None = None


NOTHING = Expect("none")


class Prediction(NamedTuple):
    """What the server must write for one line: nothing, one message, or one batch (an array)."""

    single: Expect  # for a line that is not a batch; NOTHING for a batch
    batch: list[Expect] | None = None  # one entry per batch element, when the line is a batch it answers item by item
    deep: bool = False  # nested so deep that a parse error (id null) is also acceptable

    @property
    def lines(self) -> int:
        if self.batch is not None:
            return int(any(e.kind != "none" for e in self.batch))
        return int(self.single.kind != "none")


def _parse(text: str) -> tuple[bool, Any]:
    """json.loads on a fresh thread (a fresh stack: the server's is not deeper than that)."""
    out: list[tuple[bool, Any]] = []

    def run() -> None:
        try:
            out.append((True, json.loads(text)))
        except (ValueError, RecursionError):
            out.append((False, None))

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    return out[0]


def depth(value: Any) -> int:
    """How deeply arrays and objects nest in value (iteratively: value may be deeper than the stack)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, (list, dict)):
            deepest = max(deepest, level)
            stack.extend((v, level + 1) for v in (item.values() if isinstance(item, dict) else item))
    return deepest


def expect_message(message: Any) -> Expect:
    """The answer JSON-RPC 2.0 (and docs/tools.md, Errors) asks for one decoded message."""
    if not isinstance(message, dict):
        return Expect("error", None, INVALID_REQUEST)
    usable = on_the_wire(message["id"]) if is_id(message.get("id")) else None
    valid = (
        message.get("jsonrpc") == "2.0"
        and ("id" not in message or is_id(message["id"]))
        and isinstance(message.get("method"), str)
        and (message.get("params") is None or isinstance(message["params"], dict))
    )
    if not valid:
        return Expect("error", usable, INVALID_REQUEST)
    if "id" not in message:
        return NOTHING
    return Expect("reply", usable)


def predict(line: bytes, legacy_revision: str) -> Prediction:
    """What the server must answer to line, on a connection initialized at legacy_revision."""
    if not line.strip():
        return Prediction(NOTHING)  # a blank line is a keep-alive
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        return Prediction(Expect("error", None, PARSE_ERROR))
    ok, message = _parse(text)
    if not ok:
        return Prediction(Expect("error", None, PARSE_ERROR))
    deep = depth(message) >= DEEP
    if not isinstance(message, list):
        return Prediction(expect_message(message), deep=deep)
    if not message or legacy_revision != BATCH_REVISION or len(message) > MAX_BATCH:
        return Prediction(Expect("error", None, INVALID_REQUEST), deep=deep)
    return Prediction(NOTHING, [expect_message(m) for m in message], deep=deep)


def check_reply(reply: Any, expect: Expect) -> None:
    assert isinstance(reply, dict), reply
    assert same_id(reply.get("id"), expect.id), f"answered id {reply.get('id')!r}, expected {expect.id!r}: {reply}"
    assert ("result" in reply) != ("error" in reply), reply
    if expect.kind == "error":
        assert "error" in reply, reply
        assert reply["error"]["code"] == expect.code, reply
    elif "error" in reply:
        # A well-formed request gets its method's answer: never a framing error, never an internal one.
        assert reply["error"]["code"] not in (PARSE_ERROR, INVALID_REQUEST, INTERNAL_ERROR), reply


def check_answers(prediction: Prediction, answers: list[Any]) -> None:
    """answers (every non-notification message written for the line) are what prediction says."""
    first = answers[0] if answers else None
    if prediction.deep and isinstance(first, dict) and first.get("error", {}).get("code") == PARSE_ERROR:
        assert len(answers) == 1, answers
        assert answers[0]["id"] is None, answers
        return
    assert len(answers) == prediction.lines, f"expected {prediction.lines} answer(s), got {answers}"
    if not answers:
        return
    (answer,) = answers
    if prediction.batch is None:
        check_reply(answer, prediction.single)
        return
    assert isinstance(answer, list), f"a batch is answered with an array: {answer}"
    replies = [e for e in prediction.batch if e.kind != "none"]
    assert len(answer) == len(replies), f"expected {len(replies)} replies in the batch, got {answer}"
    for reply, expect in zip(answer, replies, strict=True):
        check_reply(reply, expect)


def _describe(prediction: Prediction, answers: list[Any]) -> str:
    """What this example exercised, for --hypothesis-show-statistics."""
    if prediction.batch is not None:
        return f"batch of {len(prediction.batch)}, {prediction.lines} answer line(s)"
    if not answers:
        return "no answer (notification or blank line)"
    answer = answers[0]
    what = f"error {answer['error']['code']}" if "error" in answer else "result"
    return f"{prediction.single.kind}: {what}"


def _reject_constant(name: str) -> Any:
    raise AssertionError(f"the server wrote {name}, which is not JSON")


def _no_surrogates(value: Any) -> None:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            assert not re.search("[\ud800-\udfff]", item), f"a lone surrogate on the wire: {item!r}"
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def check_strict_json(lines: list[bytes]) -> None:
    """Every line is strict JSON: valid UTF-8, no NaN or Infinity, no lone surrogate escapes."""
    for line in lines:
        _no_surrogates(json.loads(line.decode("utf-8"), parse_constant=_reject_constant))


class Conversation:
    """A long-lived server and the state each example starts from."""

    def __init__(self, proc: ServerProcess) -> None:
        self.proc = proc
        self.revision = "2025-11-25"
        self._pings = 0

    def reset(self, revision: str) -> None:
        """Back to a known state: initialized at revision (legacy), nothing pending.

        Whatever an earlier (failed) example left unread is skipped, so that a failure
        does not spill into the examples Hypothesis tries while shrinking it.
        """
        proc = self.proc
        assert proc.proc.poll() is None, f"the server has exited; stderr:\n{proc.stderr}"
        self._drain()
        proc.responses.clear()
        proc.wire.pending.clear()  # requests of earlier examples that were never answered by id
        proc.initialize(revision)
        self.revision = revision
        proc.sync()

    def _drain(self) -> None:
        """Read up to the answer of a fresh ping, unchecked."""
        proc = self.proc
        self._pings += 1
        ping = PING_PREFIX + "drain-" + str(self._pings)
        proc.send_raw(json.dumps({"jsonrpc": "2.0", "id": ping, "method": "ping"}).encode() + b"\n")
        while True:
            line = proc.lines.get(timeout=READ_TIMEOUT)
            assert line is not None, f"the server closed stdout; stderr:\n{proc.stderr}"
            message = json.loads(line)
            if isinstance(message, dict) and message.get("id") == ping:
                return

    def _alias_ids(self) -> None:
        """Let the suite's WireTracker find the request of an id the server writes with U+FFFD for lone surrogates."""
        pending = self.proc.wire.pending
        for key in list(pending):
            if isinstance(key, str) and on_the_wire(key) != key:
                pending[on_the_wire(key)] = pending.pop(key)

    def exchange(self, line: bytes) -> list[Any]:
        """Write line; every message the server writes in answer, in order (notifications left out)."""
        proc = self.proc
        assert b"\n" not in line
        prediction = predict(line, self.revision)
        start = len(proc.raw_stdout)
        proc.send_raw(line + b"\n")
        self._alias_ids()
        self._pings += 1
        ping = PING_PREFIX + str(self._pings)
        proc.send({"jsonrpc": "2.0", "id": ping, "method": "ping"})
        pong = {"jsonrpc": "2.0", "id": ping, "result": {}}
        answers: list[Any] = []
        answered = False
        while not answered or len(answers) < prediction.lines:
            message = proc.read(READ_TIMEOUT)
            if message == pong and not answered:
                answered = True
            elif not is_notification(message):
                answers.append(message)
        proc.sync()  # nothing more for this line: a stray or duplicate answer fails here
        assert proc.proc.poll() is None, f"the server exited; stderr:\n{proc.stderr}"
        check_strict_json(proc.raw_stdout[start:])
        check_answers(prediction, answers)
        event(_describe(prediction, answers))
        return answers
