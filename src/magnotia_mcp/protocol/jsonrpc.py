"""JSON-RPC 2.0 on the wire: decoding a message, checking its envelope, encoding replies, and saying what an
encoded one is (``Reply``).

Nothing here knows MCP: methods, revisions and results belong to ``server``.
Encoding is compact (one message per line) and never fails on text that
came in with unpaired surrogate escapes.
"""

from __future__ import annotations

import json
from typing import Any, NamedTuple

from magnotia_mcp.errors import InvalidRequest, ParseError, ProtocolError

JSON = dict[str, Any]
RequestId = str | int


class Reply(NamedTuple):
    """What a transport may need to know of a message the server sends, beside its encoded bytes.

    Given with the bytes, so that no transport looks into them: HTTP picks its status and
    tells the answer from progress notifications by it; stdio writes the bytes and ignores it.
    """

    notification: bool = False  # a notification (progress), not the answer to the request
    error: int | None = None  # the JSON-RPC error code, when the answer is an error
    null_id: bool = False  # an error with a null id: the message was no usable request


# Shared, so that no message costs an allocation for its Reply (errors: one per code, made once).
RESULT = Reply()
NOTIFICATION = Reply(notification=True)
_ERRORS: tuple[dict[int, Reply], dict[int, Reply]] = ({}, {})  # by code: with an id, with a null id


def reply_of(response: JSON | list[JSON]) -> Reply:
    """The Reply for a response (a batch's array counts as a result)."""
    if isinstance(response, dict) and (error := response.get("error")) is not None:
        return error_reply(error["code"], response["id"] is None)
    return RESULT


def error_reply(code: int, null_id: bool) -> Reply:
    """The Reply for an error with code (the server's codes are a handful, so these stay few)."""
    known = _ERRORS[null_id]
    reply = known.get(code)
    if reply is None:
        reply = known[code] = Reply(error=code, null_id=null_id)
    return reply


def decode(line: bytes) -> object:
    """One message from one line of UTF-8 JSON; ParseError saying what is wrong otherwise."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ParseError(f"parse error: the line is not valid UTF-8 (byte {exc.start})") from None
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise ParseError(f"parse error: {exc}") from None


def encode(message: JSON | list[JSON]) -> bytes:
    """The message as one line of compact UTF-8 JSON (no newline)."""
    try:
        return json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    except UnicodeEncodeError:
        # A lone surrogate (from a "\udXXX" escape in the input, echoed in a message) is not
        # Unicode: send U+FFFD in its place, as strict JSON parsers refuse it even escaped.
        text = json.dumps(message, ensure_ascii=False, separators=(",", ":"))
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace").encode("utf-8")


def is_id(value: object) -> bool:
    """Whether value can be a request id: a string or an integer (not a boolean)."""
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def request_id(message: object) -> RequestId | None:
    """The usable id of a request object, or None (notification, batch, or a bad id)."""
    if not isinstance(message, dict):
        return None
    value = message.get("id")
    return value if is_id(value) else None


def check_envelope(message: JSON) -> tuple[str, JSON]:
    """The method and params of a request or notification; InvalidRequest if it is neither."""
    if message.get("jsonrpc") != "2.0":
        raise InvalidRequest('invalid request: "jsonrpc" must be "2.0"')
    if "id" in message and not is_id(message["id"]):
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


def result(request_id: RequestId, value: JSON) -> JSON:
    return {"jsonrpc": "2.0", "id": request_id, "result": value}


def error(request_id: RequestId | None, exc: ProtocolError) -> JSON:
    body: JSON = {"code": exc.code, "message": exc.message}
    if exc.data is not None:
        body["data"] = exc.data
    return {"jsonrpc": "2.0", "id": request_id, "error": body}


def notification(method: str, params: JSON) -> JSON:
    return {"jsonrpc": "2.0", "method": method, "params": params}
