"""Checking tool arguments against the tools' own input schemas.

The schemas in ``tools`` are the single source of truth: this validator
understands the small JSON Schema subset they use, so what a model is told
and what the server enforces cannot drift apart. Every message names the
argument and says what would be accepted.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING, Any, NamedTuple

from magnotia_mcp.errors import InvalidArguments, quote

if TYPE_CHECKING:
    from magnotia_mcp.args.timewords import Zone

HANDLED_TYPES = ("integer", "string", "boolean")
# Beyond those: a string or an array of strings (``{"type": ["string", "array"], "items": {"type": "string"}}``).
STRINGS = ["string", "array"]


class UnsupportedSchema(TypeError):
    """A tool's input schema uses a type the validator does not check: a bug in the tool."""


def validate(schema: dict[str, Any], arguments: object) -> dict[str, Any]:
    """The arguments with defaults filled in, or InvalidArguments naming what is wrong."""
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        raise InvalidArguments(None, f"'arguments' must be an object, not {_json_type(arguments)}")
    props: dict[str, Any] = schema["properties"]
    unknown = sorted(set(arguments) - set(props))
    if unknown:
        raise InvalidArguments(unknown[0], f"unknown argument; this tool takes {', '.join(sorted(props)) or 'none'}")
    for name in schema.get("required", ()):
        if arguments.get(name) is None:
            raise InvalidArguments(name, "this argument is required")
    out: dict[str, Any] = {}
    for name, spec in props.items():
        if spec["type"] not in HANDLED_TYPES and (spec["type"] != STRINGS or spec["items"] != {"type": "string"}):
            # A schema this validator cannot enforce would let anything through: refuse it.
            raise UnsupportedSchema(f"argument {name!r} has type {spec['type']!r}; validate handles {HANDLED_TYPES}")
        value = arguments.get(name)
        if value is None:  # null means "not given", like an absent key
            if "default" in spec:
                out[name] = spec["default"]
            continue
        out[name] = _check(name, spec, value)
    return out


def _check(name: str, spec: dict[str, Any], value: object) -> object:
    kind = spec["type"]
    if kind == STRINGS:  # one string, or an array of them
        if isinstance(value, str):
            return value
        if not isinstance(value, list):
            raise InvalidArguments(name, f"must be a string or an array of strings, not {_json_type(value)}")
        if not spec.get("minItems", 0) <= len(value) <= spec.get("maxItems", len(value)):
            raise InvalidArguments(
                name, f"must hold {spec['minItems']} to {spec['maxItems']} strings, not {len(value)}"
            )
        return [_check(name, spec["items"], item) for item in value]
    if kind == "integer":
        # JSON has one number type: 5.0 is the integer 5, True is not a number.
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if not isinstance(value, int) or isinstance(value, bool):
            raise InvalidArguments(name, f"must be {_range(spec)}, not {_json_type(value)}")
        if value < spec.get("minimum", value) or value > spec.get("maximum", value):
            raise InvalidArguments(name, f"must be {_range(spec)}, not {value}")
    elif kind == "string":
        if not isinstance(value, str):
            raise InvalidArguments(name, f"must be a string, not {_json_type(value)}")
        if "enum" in spec and value not in spec["enum"]:
            choices = ", ".join(repr(c) for c in spec["enum"])
            raise InvalidArguments(name, f"must be one of {choices}, not {quote(value)}")
        if len(value) < spec.get("minLength", 0):
            raise InvalidArguments(name, f"must be at least {spec['minLength']} character(s) long")
        if len(value) > spec.get("maxLength", len(value)):
            raise InvalidArguments(name, f"must be at most {spec['maxLength']} characters long, not {len(value)}")
    elif not isinstance(value, bool):  # "boolean": validate admits no other type
        raise InvalidArguments(name, f"must be true or false, not {_json_type(value)}")
    return value


def _range(spec: dict[str, Any]) -> str:
    low, high = spec.get("minimum"), spec.get("maximum")
    if low is not None and high is not None:
        return f"an integer from {low} to {high}"
    if low is not None:
        return f"an integer >= {low}"
    return "an integer"


def _json_type(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return f"the number {value!r}"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


_TIME = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})"
    r"(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?([Zz]|[+-]\d{2}:?\d{2})?)?"
)


class TimeRange(NamedTuple):
    """A tool's time filter: the store's UTC text for each end, and the ``range`` its result echoes."""

    since: str | None
    until: str | None
    echo: dict[str, str | None] | None  # {"since": ..., "until": ...}; None when no time filter was given

    def echoed(self, result: dict[str, Any]) -> dict[str, Any]:
        """result with ``range`` first when a time filter was given (the outputSchema's optional field)."""
        return {"range": self.echo, **result} if self.echo else result


def time_range(
    args: Mapping[str, Any],
    since: str | None = "since",
    until: str | None = "until",
    *,
    now: datetime | None = None,
    zone: Zone | None = None,
) -> TimeRange:
    """Read the arguments named since and until (None: the tool has no such end), one now for both.

    ``list_tasks`` reads its due_before as an until: ``time_range(args, None, "due_before")``.
    """
    now = now if now is not None else datetime.now(timezone.utc)
    low = resolve_time(since, args[since], end=False, now=now, zone=zone) if since and since in args else None
    high = resolve_time(until, args[until], end=True, now=now, zone=zone) if until and until in args else None
    given = (since and since in args) or (until and until in args)
    return TimeRange(low, high, {"since": low, "until": high} if given else None)


def resolve_time(name: str, value: str, *, end: bool, now: datetime | None = None, zone: Zone | None = None) -> str:
    """Any accepted time as the store's UTC text; end: it is an until (a period then means its end).

    RFC 3339 times and plain dates are read here, the same in both roles (a date
    is that day's UTC start, as it always was); anything else goes to
    ``timewords``, imported only then.
    """
    m = _TIME.fullmatch(value.strip())
    if m is not None:
        return _rfc3339(name, value, m)
    from magnotia_mcp.args import timewords  # noqa: PLC0415  (words only: RFC 3339 needs none of it)

    return store_text(name, value, timewords.resolve(name, value, end=end, now=now, zone=zone))


def store_text(name: str, value: str, stamp: datetime) -> str:
    """An aware datetime as the store's UTC text, sub-milliseconds rounded up (see parse_time)."""
    stamp = stamp.astimezone(timezone.utc)
    millis = -(-stamp.microsecond // 1000)
    try:
        stamp = stamp.replace(microsecond=0) + timedelta(milliseconds=millis)
    except OverflowError:
        raise InvalidArguments(name, f"is outside the years 0001 to 9999 once in UTC: {quote(value)}") from None
    return f"{stamp.year:04d}-" + stamp.strftime("%m-%dT%H:%M:%S") + f".{stamp.microsecond // 1000:03d}Z"


def parse_time(name: str, value: str) -> str:
    """An RFC 3339 time or a plain date, as the store's UTC text form (ms, 'Z').

    Sub-millisecond input is rounded up: the store has milliseconds, and both
    ``>= since`` and ``< until`` stay exact that way. Words are ``resolve_time``'s.
    """
    m = _TIME.fullmatch(value.strip())
    if m is None:
        raise InvalidArguments(
            name, f"must be an RFC 3339 time like 2026-05-09T14:03:12Z or a date like 2026-05-09, not {quote(value)}"
        )
    return _rfc3339(name, value, m)


def _rfc3339(name: str, value: str, m: re.Match[str]) -> str:
    year, month, day, hour, minute, second, frac, zone = m.groups()
    if hour is not None and zone is None:
        raise InvalidArguments(name, f"needs a time zone: add 'Z' for UTC, e.g. {m[0]}Z")
    try:
        stamp = datetime(
            int(year), int(month), int(day), int(hour or 0), int(minute or 0), int(second or 0), tzinfo=timezone.utc
        )
    except ValueError as exc:
        raise InvalidArguments(name, f"is not a real date or time ({exc}): {quote(value)}") from None
    nanos = int((frac or "0").ljust(9, "0"))
    millis = -(-nanos // 1_000_000)  # round up
    try:
        if zone and zone not in ("Z", "z"):
            sign = 1 if zone[0] == "+" else -1
            digits = zone[1:].replace(":", "")
            stamp -= sign * timedelta(hours=int(digits[:2]), minutes=int(digits[2:]))
        if millis == 1000:
            stamp += timedelta(seconds=1)
            millis = 0
    except OverflowError:
        raise InvalidArguments(name, f"is outside the years 0001 to 9999 once in UTC: {quote(value)}") from None
    # Not strftime("%Y"): some C libraries write years before 1000 without leading zeros.
    return f"{stamp.year:04d}-" + stamp.strftime("%m-%dT%H:%M:%S") + f".{millis:03d}Z"
