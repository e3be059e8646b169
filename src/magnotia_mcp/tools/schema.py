"""Building blocks for the tools' JSON Schemas, so the four tools describe things one way.

Input schemas are what ``tools/list`` shows a model *and* what
``arguments.validate`` enforces; output schemas describe exactly what the
handlers return (checked by the official SDK clients in the tests).
"""

from __future__ import annotations

from typing import Any

from magnotia_mcp.budget import DEFAULT_TOKENS, MAX_TOKENS, MIN_TOKENS

Schema = dict[str, Any]

SOURCES = ["dictation", "meeting", "file"]
TIME_HELP = (
    "RFC 3339 (2026-05-09T14:03:12Z); a date (2026-05-09), month (2026-05) or year (2026), in UTC; "
    "now, today, yesterday, tomorrow, this/last/next week|month|year, in the user's time zone (weeks start Monday); "
    "or an age: 24h, 7d, 2w, 2 weeks ago, 3 months ago. A period counts from its start as since and up to "
    "its end as until or due_before, except a plain date, which always means that day's start"
)

STRING: Schema = {"type": "string"}
INTEGER: Schema = {"type": "integer"}
SOURCE: Schema = {"type": "string", "enum": SOURCES}
CURSOR: Schema = {"type": "string", "description": "next_cursor of the previous page."}
NEXT_CURSOR: Schema = {"type": ["string", "null"], "description": "Pass as cursor for the next page; null on the last."}


def arguments(properties: Schema, required: tuple[str, ...] = ()) -> Schema:
    """An input schema: an object of exactly these properties."""
    schema: Schema = {"type": "object", "properties": properties, "additionalProperties": False}
    if required:
        schema["required"] = list(required)
    return schema


def nullable(kind: str) -> Schema:
    return {"type": [kind, "null"]}


def record(properties: Schema, *, optional: tuple[str, ...] = (), nullable: bool = False) -> Schema:
    """An output object: every property is always present (maybe null) unless named optional."""
    return {
        "type": ["object", "null"] if nullable else "object",
        "properties": properties,
        "required": [name for name in properties if name not in optional],
    }


def list_of(item: Schema) -> Schema:
    return {"type": "array", "items": item}


def source() -> Schema:
    return {"type": "string", "enum": SOURCES, "description": "Only this kind."}


def limit(high: int, default: int, what: str) -> Schema:
    return {"type": "integer", "minimum": 1, "maximum": high, "default": default, "description": what}


def time(what: str) -> Schema:
    """A time argument: its description names the common forms; the server's instructions give them all (TIME_HELP),
    once, where the definitions would repeat them in every time argument of every request."""
    return {"type": "string", "description": f"{what}: 2026-05-09, 2026-05, yesterday, last week, 7d or RFC 3339."}


UNTIL: Schema = {"type": "string", "description": "Created before (same forms as since)."}


# What a result that used a time filter echoes: the UTC span the filter meant, null for an open end.
RANGE: Schema = {
    **record({"since": nullable("string"), "until": nullable("string")}),
    "description": "The time filter as resolved: UTC, since inclusive, until exclusive; null where open.",
}


# Where a task came from: its transcript's title, date and source, so saying so takes no second call.
TRANSCRIPT_REF = record({"id": STRING, "title": STRING, "created_at": STRING, "source": SOURCE}, nullable=True)
SPEAKERS: Schema = {
    **list_of(STRING),
    "description": "The transcript's speaker labels, each once, in order of first appearance; empty when none.",
}


def max_tokens() -> Schema:
    """The budget argument every tool takes (see magnotia_mcp.budget)."""
    return {
        "type": "integer",
        "minimum": MIN_TOKENS,
        "maximum": MAX_TOKENS,
        "default": DEFAULT_TOKENS,
        "description": "Token budget of the answer.",
    }


# What every result says about its size: the budget it was held to, and what was left out for it.
BUDGET_FIELDS: Schema = {
    "max_tokens": {"type": "integer", "description": "The token budget this answer was held to."},
    "note": {
        "type": "string",
        "description": "Present when something was left out to stay within max_tokens: what, and how to get it.",
    },
}
