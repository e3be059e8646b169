"""Hypothesis strategies: JSON values, JSON-RPC messages and the lines that carry them, tool arguments, queries.

Generated values lean on what breaks servers: every JSON type where another
is expected, huge and negative numbers, lone surrogates, deep nesting, invalid
UTF-8, near-valid envelopes, and for the tools, values at and just past each
limit of their input schemas next to realistic ones (ids, cursors and words
that exist in the store).
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st

from magnotia_mcp.args import cursors
from tests.properties.exchange import on_the_wire
from tests.support.protocol import MODERN, REVISIONS, TOOL_NAMES, URI_PREFIX, modern_meta

METHODS = (
    "initialize",
    "ping",
    "server/discover",
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "prompts/list",
    "prompts/get",
    "completion/complete",
    "notifications/initialized",
    "notifications/cancelled",
    "notifications/progress",
    "logging/setLevel",
    "sampling/createMessage",
    "Ping",
    "",
)
PROMPT_NAMES = ("summarize_transcript", "action_items", "review_meetings")


def weighted(*options: tuple[int, st.SearchStrategy[Any]]) -> st.SearchStrategy[Any]:
    """One of the strategies, each as often as its weight (one_of gives repeated strategies no extra weight)."""
    choices = [strategy for weight, strategy in options for _ in range(weight)]
    return st.sampled_from(range(len(choices))).flatmap(lambda i: choices[i])


# -- JSON ----------------------------------------------------------------------------------

surrogates = st.text(st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF), min_size=1, max_size=3)
texts = weighted(
    (4, st.text(max_size=20)),
    (2, st.text(st.characters(codec="utf-8"), max_size=12)),
    (1, surrogates),
    (2, st.sampled_from(["", " ", "\x00", "\u2028", "é", "e\u0301", "🎉", "\ufeff", "null", "2.0", "0", "-1"])),
)
integers = st.one_of(
    st.integers(min_value=-3, max_value=200),
    st.integers(),
    st.sampled_from([2**31, -(2**31) - 1, 2**53 + 1, 2**63, -(2**63) - 1, 2**64, 10**30, -(10**30)]),
)
floats = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([0.0, -0.0, 1.0, 1.5, 1e308, -1e-308, 5e-324, float("nan"), float("inf"), float("-inf")]),
)
scalars = st.one_of(st.none(), st.booleans(), integers, floats, texts)
json_values: st.SearchStrategy[Any] = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(texts, inner, max_size=4)),
    max_leaves=12,
)
json_objects = st.dictionaries(texts, json_values, max_size=4)

# -- JSON-RPC messages ----------------------------------------------------------------------

ids = st.one_of(
    integers,
    st.text(max_size=12),
    surrogates,
    st.sampled_from(["", "1", "0"]),
    st.none(),
    st.booleans(),
    floats,
    st.lists(integers, max_size=2),
    st.dictionaries(st.text(max_size=3), integers, max_size=1),
)
good_ids = weighted(
    (3, st.integers(min_value=0, max_value=1000)),
    (1, st.integers(min_value=-(2**63), max_value=2**63)),
    (1, integers),
    (3, st.text(max_size=12)),
    (1, surrogates),
)


def _maybe(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """strategy's values, or sometimes any JSON value instead."""
    return weighted((4, strategy), (1, json_values))


def _obj(required: dict[str, st.SearchStrategy[Any]], optional: dict[str, st.SearchStrategy[Any]]) -> Any:
    return st.fixed_dictionaries(required, optional=optional)


def method_params(transcript_ids: list[str]) -> dict[str, st.SearchStrategy[Any]]:
    """For each method the server has, params shaped like its own (each value sometimes anything)."""
    tids = st.sampled_from(transcript_ids)
    uris = st.one_of(tids.map(lambda t: URI_PREFIX + t), st.text(max_size=30).map(lambda t: URI_PREFIX + t), texts)
    tool_args = st.one_of(
        st.none(),
        json_objects,
        _obj({}, {"query": texts, "id": _maybe(tids), "limit": integers, "cursor": texts, "since": texts}),
        json_values,
    )
    prompt_args = _obj({}, {"transcript_id": _maybe(tids), "since": texts, "until": texts, "extra": texts})
    return {
        "initialize": _obj(
            {},
            {
                "protocolVersion": _maybe(st.sampled_from([*REVISIONS, "2024-10-07", "", "2099-01-01"])),
                "capabilities": _maybe(st.just({})),
                "clientInfo": _maybe(st.just({"name": "props", "version": "0"})),
            },
        ),
        "tools/list": _obj({}, {"cursor": _maybe(st.none())}),
        "tools/call": _obj({}, {"name": _maybe(st.sampled_from([*TOOL_NAMES, "nope", ""])), "arguments": tool_args}),
        "resources/list": _obj({}, {"cursor": _maybe(st.sampled_from(["", "x", "eyJ9.00"]))}),
        "resources/read": _obj({}, {"uri": _maybe(uris)}),
        "prompts/get": _obj({}, {"name": _maybe(st.sampled_from([*PROMPT_NAMES, "nope"])), "arguments": prompt_args}),
        "completion/complete": _obj(
            {},
            {
                "ref": _maybe(
                    _obj(
                        {"type": st.sampled_from(["ref/prompt", "ref/resource", "x"])},
                        {"name": st.sampled_from([*PROMPT_NAMES, "x"]), "uri": uris},
                    )
                ),
                "argument": _maybe(
                    _obj({}, {"name": st.sampled_from(["transcript_id", "since", "x"]), "value": _maybe(texts)})
                ),
                "context": json_values,
            },
        ),
        "notifications/cancelled": _obj({}, {"requestId": ids, "reason": texts}),
    }


def requests(transcript_ids: list[str]) -> st.SearchStrategy[dict[str, Any]]:
    """Objects shaped like JSON-RPC requests and notifications, most valid, many a little off."""
    shaped = method_params(transcript_ids)

    @st.composite
    def build(draw: st.DrawFn) -> dict[str, Any]:
        known = st.sampled_from(METHODS)
        method = draw(weighted((3, known), (3, st.sampled_from(list(shaped))), (1, st.text(max_size=15))))
        shape = shaped.get(method, json_objects)
        params = draw(weighted((8, shape), (1, st.none()), (1, json_values)))
        meta_kind = draw(st.sampled_from(["none", "none", "modern", "modern-bad", "progress"]))
        if isinstance(params, dict) and meta_kind != "none":
            params = dict(params)
            if meta_kind == "modern":
                params["_meta"] = modern_meta()
            elif meta_kind == "modern-bad":
                params["_meta"] = draw(
                    st.sampled_from(
                        [
                            modern_meta("2099-01-01"),
                            modern_meta("2025-11-25"),
                            {"io.modelcontextprotocol/protocolVersion": MODERN},
                            {**modern_meta(), "io.modelcontextprotocol/protocolVersion": 20260728},
                            {"progressToken": None},
                        ]
                    )
                )
            else:
                # Any JSON value would do for the server; the suite's WireTracker keys its table by the token.
                params["_meta"] = {"progressToken": draw(st.one_of(good_ids, st.none(), st.booleans(), floats))}
        message: dict[str, Any] = {}
        envelope = draw(st.sampled_from(["valid"] * 5 + ["off"]))
        if envelope == "valid":
            message["jsonrpc"] = "2.0"
            if not (method.startswith("notifications/") and draw(st.booleans())):
                message["id"] = draw(good_ids)
            message["method"] = method
            if params is not None or draw(st.booleans()):
                message["params"] = params
        else:
            fields = {
                "jsonrpc": st.one_of(st.just("2.0"), json_values),
                "id": ids,
                "method": st.one_of(st.just(method), json_values),
                "params": json_values,
                "result": json_values,
                "error": json_values,
            }
            for key, strategy in fields.items():
                if draw(st.booleans()):
                    message[key] = draw(strategy)
        if draw(st.integers(0, 9)) == 0:
            message[draw(texts)] = draw(json_values)  # a member JSON-RPC does not define
        return message

    return build()


def messages(transcript_ids: list[str]) -> st.SearchStrategy[Any]:
    """Any JSON value as a message: request-shaped objects (most), batches of them, and anything at all."""
    one = requests(transcript_ids)
    batch = st.lists(st.one_of(one, json_values), max_size=5).filter(unique_ids)

    @st.composite
    def build(draw: st.DrawFn) -> Any:
        return draw(weighted((6, one), (1, batch), (1, json_values)))

    return build()


def unique_ids(batch: list[Any]) -> bool:
    """No two requests of a batch share an id (a client must not send that; the tests could not tell answers apart)."""
    # Ids the server writes alike (lone surrogates go out as U+FFFD) count as the same id.
    seen = [json.dumps(on_the_wire(m["id"])) for m in batch if isinstance(m, dict) and "id" in m]
    return len(seen) == len(set(seen))


def encoded(value: Any) -> st.SearchStrategy[bytes]:
    """value as one line: ASCII-escaped, or raw UTF-8 (a lone surrogate then makes it invalid UTF-8)."""
    return st.sampled_from(
        [
            json.dumps(value).encode(),
            json.dumps(value).encode(),
            json.dumps(value).encode(),
            json.dumps(value, ensure_ascii=False).encode("utf-8", "surrogatepass"),
            json.dumps(value, ensure_ascii=False, separators=(",", ":"), indent=None).encode("utf-8", "surrogatepass"),
            b" \t" + json.dumps(value).encode() + b" \r",
        ]
    )


def _splice(data: tuple[bytes, int, bytes]) -> bytes:
    line, at, junk = data
    at = at % (len(line) + 1)
    return line[:at] + junk + line[at:]


@st.composite
def odd_lines(draw: st.DrawFn, transcript_ids: list[str]) -> bytes:
    """Lines that are not JSON, barely JSON, or JSON that stresses a decoder."""
    kind = draw(st.sampled_from(["bytes", "splice", "deep", "deep-params", "long", "fixed", "numbers", "truncated"]))
    if kind == "bytes":
        return draw(st.binary(max_size=40))
    base = json.dumps(draw(requests(transcript_ids))).encode()
    if kind == "splice":
        junk = draw(st.sampled_from([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x00", b"\xef\xbb\xbf", b"}", b",", b'"']))
        return _splice((base, draw(st.integers(0, 10_000)), junk))
    if kind == "truncated":
        return base[: draw(st.integers(0, max(0, len(base) - 1)))]
    if kind == "deep":
        n = draw(st.sampled_from([10, 500, 899, 900, 1000, 5000, 100_000]))
        opener, closer = draw(st.sampled_from([(b"[", b"]"), (b'{"a":', b"}")]))
        return opener * n + b"1" + closer * n
    if kind == "deep-params":
        n = draw(st.sampled_from([50, 990, 3000]))
        return b'{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"x":' + b"[" * n + b"]" * n + b"}}"
    if kind == "long":
        n = draw(st.sampled_from([10_000, 300_000]))
        filler = draw(st.sampled_from(["a", "é", "\\ud800", "🎉"]))
        return ('{"jsonrpc":"2.0","id":"long","method":"ping","params":{"x":"' + filler * n + '"}}').encode()
    if kind == "numbers":
        number = draw(
            st.sampled_from(["1e400", "-1e400", "1" * 5000, "-0", "1.0", "0x10", "01", "1E2", "NaN", "-Infinity"])
        )
        return f'{{"jsonrpc":"2.0","id":{number},"method":"ping"}}'.encode()
    return draw(
        st.sampled_from(
            [
                b"",
                b"   ",
                b"\r",
                b"\x0b\x0c",
                b"null",
                b"[]",
                b"[[]]",
                b"{}",
                b"[1,2]",
                b'"ping"',
                b"\xef\xbb\xbf{}",
                b'{"jsonrpc":"2.0","id":1,"method":"ping"}{"jsonrpc":"2.0","id":2,"method":"ping"}',
                b'{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}',
                b'{"jsonrpc":"2.0","id":1,"method":"ping",}',
                b"{'jsonrpc':'2.0'}",
                b'{"jsonrpc":"2.0","method":"ping","id":NaN}',
                b'{"jsonrpc":"2.0","method":"tools/call","id":1,"params":{"name":"list_tasks","arguments":{"limit":NaN}}}',
            ]
        )
    )


@st.composite
def lines(draw: st.DrawFn, transcript_ids: list[str]) -> bytes:
    """One line for the server: a JSON message, encoded some way, or something odd."""
    if draw(st.integers(0, 3)) == 0:
        return draw(odd_lines(transcript_ids))
    return draw(encoded(draw(messages(transcript_ids))))


# -- cursors ------------------------------------------------------------------------------


def forged_cursors() -> st.SearchStrategy[str]:
    """Cursors with a valid tag around keys this server never issues (the tag is fixed, not secret).

    Keys of any shape, and keys of the shape each list issues holding odd values.
    """
    kinds = st.sampled_from(["transcripts", "tasks", "resources", "x"])
    any_key = st.builds(cursors.encode, kinds, st.lists(json_values, max_size=6).map(tuple))
    small = st.integers(-(2**63), 2**63 - 1)
    odd_text = weighted((2, texts), (1, st.sampled_from(["", "9999-12-31T23:59:59.999Z", "0000", "%", "\x00"])))
    shaped = st.one_of(
        st.builds(lambda a, b: cursors.encode("transcripts", (a, b)), odd_text, odd_text),
        st.builds(lambda a, b: cursors.encode("resources", (a, b)), odd_text, odd_text),
        st.builds(lambda *k: cursors.encode("tasks", k), small, small, odd_text, odd_text, odd_text),
        st.builds(
            lambda *k: cursors.encode("tasks", k), st.integers(0, 1), st.integers(0, 1), odd_text, odd_text, odd_text
        ),
    )
    return weighted((1, any_key), (2, shaped))


# -- search queries -------------------------------------------------------------------------

STOPWORDS = ("what", "did", "we", "about", "the", "o", "que", "der", "le", "and", "or", "not", "de", "la", "s", "don")
OPERATORS = ("OR", "or", "AND", "NOT", "NEAR", "NEAR(", "-", "+", "*", "^", ":", "(", ")", "{", "}", '"', "'", "’")
ODD = ("é", "e\u0301", "İ", "ß", "Σ", "ς", "Æ", "ø", "🎉", "\u200d", "\u00a0", "_", "\\", "\x00", "ﬁ", "Ⅻ", "²", "٣")


def _case(word: str) -> st.SearchStrategy[str]:
    return st.sampled_from([word, word.upper(), word.lower(), word.capitalize(), word[: max(1, len(word) - 2)] + "*"])


@st.composite
def _word(draw: st.DrawFn, words: tuple[str, ...]) -> str:
    kind = draw(st.sampled_from(["store"] * 6 + ["stop", "stop", "op", "op", "odd", "text", "inflect", "title"]))
    if kind == "store":
        return draw(st.sampled_from(words).flatmap(_case))
    if kind == "title":  # a word or phrase sought in titles only, or title with nothing after it
        word = draw(st.sampled_from(words).flatmap(_case))
        other = draw(st.sampled_from(words))
        return draw(st.sampled_from(["title:" + word, f'title:"{word} {other}"', "title:", "Title:" + word]))
    if kind == "stop":
        return draw(st.sampled_from(STOPWORDS))
    if kind == "op":
        return draw(st.sampled_from(OPERATORS))
    if kind == "odd":
        return draw(st.sampled_from(ODD))
    if kind == "inflect":
        word = draw(st.sampled_from(words))
        return word + draw(st.sampled_from(["s", "es", "ed", "ing", "ção", "ões", "en", "'s"]))
    return draw(st.text(max_size=8))


@st.composite
def queries(draw: st.DrawFn, words: tuple[str, ...]) -> str:
    """Search queries: words of the store, stop words, operators, quotes, odd characters, any text."""
    if draw(st.integers(0, 9)) == 0:
        return draw(st.text(min_size=1, max_size=30))
    parts = draw(st.lists(_word(words), min_size=1, max_size=6))
    out = ""
    for part in parts:
        glue = draw(st.sampled_from([" ", " ", " ", "", '"', " OR ", "-", "'", "  "]))
        out = out + glue + part if out else part
    if draw(st.integers(0, 4)) == 0:
        out = '"' + out + draw(st.sampled_from(['"', '"*', ""]))
    return out[:500] if out.strip() else out + "x"


SPEAKER_NAMES = (
    "Ana",
    "ana",
    " ANA ",
    "Ána",
    "Ben",
    "chloe",
    "Chloé",
    "Speaker 1",
    "speaker 10",
    "Zoe Angstrom",
    "Nobody",
)
