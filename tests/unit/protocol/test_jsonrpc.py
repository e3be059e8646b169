"""magnotia_mcp.protocol.jsonrpc: decoding one line, checking the envelope, encoding one line."""

from __future__ import annotations

import json

import pytest

from magnotia_mcp.errors import PARSE_ERROR, InvalidParams, InvalidRequest, ParseError
from magnotia_mcp.protocol import jsonrpc


@pytest.mark.parametrize(
    ("line", "says"),
    [
        pytest.param(b"\xff\xfe{}", "not valid UTF-8 (byte 0)", id="not-utf8"),
        pytest.param(b'{"a": 1', "parse error", id="truncated"),
        pytest.param(b"{'a': 1}", "parse error", id="single-quotes"),
        pytest.param(b"[" * 100_000, "parse error", id="too-deep"),
        pytest.param(b"NaN-ish", "parse error", id="not-json"),
    ],
)
def test_decode_refuses_what_is_not_one_utf8_json_value(line: bytes, says: str) -> None:
    """Undecodable bytes and bad JSON are a ParseError (-32700) saying what is wrong, never another exception."""
    with pytest.raises(ParseError) as caught:
        jsonrpc.decode(line)
    assert caught.value.code == PARSE_ERROR
    assert says in caught.value.message


def test_decode_gives_any_json_value() -> None:
    """Deciding whether a value is a request is check_envelope's job, not decode's."""
    assert jsonrpc.decode(b'{"jsonrpc":"2.0","id":1,"method":"ping"}') == {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    assert jsonrpc.decode(b"[1, 2]") == [1, 2]
    assert jsonrpc.decode(b"42") == 42
    assert jsonrpc.decode(' "é" '.encode()) == "é"


def test_encode_writes_one_compact_line_of_utf8() -> None:
    """No newline, no padding, non-ASCII text as itself."""
    line = jsonrpc.encode(jsonrpc.result(1, {"title": "café 🎉", "n": [1, 2]}))
    assert line == '{"jsonrpc":"2.0","id":1,"result":{"title":"café 🎉","n":[1,2]}}'.encode()


def test_encode_replaces_a_lone_surrogate_so_strict_parsers_accept_the_line() -> None:
    """A "\\ud800" that came in as an escape goes out as U+FFFD, the rest untouched."""
    line = jsonrpc.encode({"id": "\ud800", "text": "é\U0001f389"})
    assert b"\n" not in line
    assert json.loads(line.decode("utf-8")) == {"id": "\ufffd", "text": "é\U0001f389"}


@pytest.mark.parametrize(
    ("value", "usable"),
    [
        pytest.param("a", True, id="string"),
        pytest.param("", True, id="empty-string"),
        pytest.param(0, True, id="zero"),
        pytest.param(-5, True, id="negative"),
        pytest.param(True, False, id="bool"),
        pytest.param(1.0, False, id="float"),
        pytest.param(None, False, id="null"),
        pytest.param([1], False, id="array"),
        pytest.param({"a": 1}, False, id="object"),
    ],
)
def test_an_id_is_a_string_or_an_integer_never_a_boolean(value: object, usable: bool) -> None:
    """is_id and request_id agree on what can identify a request."""
    assert jsonrpc.is_id(value) is usable
    assert jsonrpc.request_id({"id": value}) == (value if usable else None)


def test_request_id_of_something_that_is_not_a_request_is_none() -> None:
    assert jsonrpc.request_id([{"id": 1}]) is None
    assert jsonrpc.request_id({"method": "ping"}) is None


@pytest.mark.parametrize(
    ("message", "method", "params"),
    [
        pytest.param({"jsonrpc": "2.0", "id": 1, "method": "ping"}, "ping", {}, id="no-params"),
        pytest.param({"jsonrpc": "2.0", "method": "n", "params": None}, "n", {}, id="null-params"),
        pytest.param({"jsonrpc": "2.0", "id": "x", "method": "m", "params": {"a": 1}}, "m", {"a": 1}, id="params"),
    ],
)
def test_check_envelope_gives_the_method_and_params(message: jsonrpc.JSON, method: str, params: jsonrpc.JSON) -> None:
    """A request or notification gives its method and its params, {} when absent or null."""
    assert jsonrpc.check_envelope(message) == (method, params)


@pytest.mark.parametrize(
    ("message", "says"),
    [
        pytest.param({"id": 1, "method": "ping"}, '"jsonrpc"', id="no-jsonrpc"),
        pytest.param({"jsonrpc": 2.0, "id": 1, "method": "ping"}, '"jsonrpc"', id="jsonrpc-number"),
        pytest.param({"jsonrpc": "2.0", "id": None, "method": "ping"}, '"id"', id="id-null"),
        pytest.param({"jsonrpc": "2.0", "id": 1}, '"method"', id="no-method"),
        pytest.param({"jsonrpc": "2.0", "id": 1, "method": "m", "params": []}, '"params"', id="params-array"),
        pytest.param({"jsonrpc": "2.0", "id": 1, "method": "m", "params": "x"}, '"params"', id="params-string"),
    ],
)
def test_check_envelope_names_the_member_that_is_wrong(message: jsonrpc.JSON, says: str) -> None:
    with pytest.raises(InvalidRequest) as caught:
        jsonrpc.check_envelope(message)
    assert says in caught.value.message


def test_error_objects_carry_code_and_message_and_data_only_when_there_is_some() -> None:
    assert jsonrpc.error(None, InvalidParams("bad")) == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32602, "message": "bad"},
    }
    assert jsonrpc.error(3, InvalidParams("bad", {"argument": "x"}))["error"]["data"] == {"argument": "x"}
    assert jsonrpc.result("a", {}) == {"jsonrpc": "2.0", "id": "a", "result": {}}
    assert jsonrpc.notification("n", {"p": 1}) == {"jsonrpc": "2.0", "method": "n", "params": {"p": 1}}
