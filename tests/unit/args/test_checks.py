"""magnotia_mcp.args.checks: tool arguments checked against the tools' own input schemas, and times."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

import pytest

from magnotia_mcp.args.checks import (
    HANDLED_TYPES,
    UnsupportedSchema,
    parse_time,
    resolve_time,
    store_text,
    time_range,
    validate,
)
from magnotia_mcp.errors import InvalidArguments, ProtocolError
from magnotia_mcp.tools.catalog import TOOLS

LIST_SCHEMA = TOOLS["list_transcripts"].input_schema
GET_SCHEMA = TOOLS["get_transcript"].input_schema
SEARCH_SCHEMA = TOOLS["search_transcripts"].input_schema
TASKS_SCHEMA = TOOLS["list_tasks"].input_schema


@pytest.mark.parametrize("arguments", [pytest.param(None, id="null"), pytest.param({}, id="empty")])
def test_arguments_null_and_empty_both_mean_all_defaults(arguments: object) -> None:
    """null and {} give the same defaults."""
    assert validate(LIST_SCHEMA, arguments) == {"limit": 20, "max_tokens": 8_000}
    assert validate(TASKS_SCHEMA, arguments) == {"status": "all", "max_tokens": 8_000}  # limit: 50, 10 with a query


def test_arguments_null_values_count_as_absent() -> None:
    """An argument given as null is the same as one left out."""
    assert validate(LIST_SCHEMA, {"limit": None, "cursor": None}) == {"limit": 20, "max_tokens": 8_000}


def test_arguments_accept_an_integral_float_as_an_integer() -> None:
    """JSON has one number type: 5.0 is the integer 5."""
    assert validate(LIST_SCHEMA, {"limit": 5.0})["limit"] == 5


@pytest.mark.parametrize(
    ("schema", "arguments", "named"),
    [
        pytest.param(LIST_SCHEMA, {"limit": True}, "limit", id="bool-as-integer"),
        pytest.param(LIST_SCHEMA, {"limit": False}, "limit", id="false-as-integer"),
        pytest.param(LIST_SCHEMA, {"limit": 2.5}, "limit", id="fraction"),
        pytest.param(LIST_SCHEMA, {"limit": "5"}, "limit", id="string-number"),
        pytest.param(LIST_SCHEMA, {"limit": 0}, "limit", id="below-range"),
        pytest.param(LIST_SCHEMA, {"limit": 101}, "limit", id="above-range"),
        pytest.param(LIST_SCHEMA, {"limit": 10**30}, "limit", id="huge"),
        pytest.param(LIST_SCHEMA, {"limit": float("inf")}, "limit", id="infinity"),
        pytest.param(LIST_SCHEMA, {"source": "voice"}, "source", id="not-in-enum"),
        pytest.param(LIST_SCHEMA, {"source": 1}, "source", id="enum-wrong-type"),
        pytest.param(LIST_SCHEMA, {"cursor": ["x"]}, "cursor", id="array-as-string"),
        pytest.param(LIST_SCHEMA, {"bogus": 1}, "bogus", id="unknown"),
        pytest.param(LIST_SCHEMA, {"bogus": None}, "bogus", id="unknown-null"),
        pytest.param(GET_SCHEMA, {}, "id", id="required-missing"),
        pytest.param(GET_SCHEMA, {"id": None}, "id", id="required-null"),
        pytest.param(GET_SCHEMA, {"id": 5}, "id", id="id-number"),
        pytest.param(GET_SCHEMA, {"id": "x", "include_segments": 1}, "include_segments", id="int-as-bool"),
        pytest.param(GET_SCHEMA, {"id": "x", "include_segments": "true"}, "include_segments", id="string-as-bool"),
        pytest.param(GET_SCHEMA, {"id": "x", "offset": -1}, "offset", id="negative-offset"),
        pytest.param(GET_SCHEMA, {"id": "x", "max_chars": 100_001}, "max_chars", id="window-too-big"),
        pytest.param(SEARCH_SCHEMA, {"query": ""}, "query", id="empty-query"),
        pytest.param(SEARCH_SCHEMA, {"query": "x" * 501}, "query", id="query-too-long"),
    ],
)
def test_arguments_reject_bad_values_naming_the_argument(schema: dict[str, Any], arguments: object, named: str) -> None:
    """Wrong types, out-of-range values and unknown names are refused with a message naming the argument."""
    with pytest.raises(InvalidArguments) as caught:
        validate(schema, arguments)
    assert caught.value.argument == named
    assert f"'{named}'" in caught.value.message


@pytest.mark.parametrize(
    "arguments",
    [pytest.param([], id="array"), pytest.param("limit=5", id="string"), pytest.param(5, id="number")],
)
def test_arguments_that_are_not_an_object_are_refused(arguments: object) -> None:
    """'arguments' must be an object (or null/absent)."""
    with pytest.raises(InvalidArguments, match="'arguments' must be an object"):
        validate(LIST_SCHEMA, arguments)


def test_arguments_query_length_counts_characters_not_bytes() -> None:
    """500 emoji is a 500-character query, within the limit."""
    assert validate(SEARCH_SCHEMA, {"query": "🎉" * 500})["query"] == "🎉" * 500


@pytest.mark.parametrize(
    ("spec", "value"),
    [
        pytest.param({"type": "number"}, 1.5, id="number"),
        pytest.param({"type": "array", "items": {"type": "string"}}, ["a"], id="array"),
        pytest.param({"type": ["string", "array"], "items": {"type": "integer"}}, [1], id="array-of-integers"),
        pytest.param({"type": "object"}, {}, id="object"),
        pytest.param({"type": "null"}, 0, id="null"),
        pytest.param({"type": ["string", "null"]}, "a", id="union"),
    ],
)
def test_a_schema_type_the_validator_does_not_handle_is_refused_not_let_through(
    spec: dict[str, Any], value: object
) -> None:
    """A property of a type outside HANDLED_TYPES is a bug in the tool: UnsupportedSchema, never a silent pass."""
    schema = {"type": "object", "properties": {"x": spec}, "additionalProperties": False}
    with pytest.raises(UnsupportedSchema, match="'x'"):
        validate(schema, {"x": value})
    assert spec["type"] not in HANDLED_TYPES


STRINGS_SPEC = {"type": ["string", "array"], "items": {"type": "string"}, "minItems": 1, "maxItems": 2}


@pytest.mark.parametrize(
    ("value", "accepted"),
    [
        pytest.param("Ana", True, id="one"),
        pytest.param(["Ana", "Bo"], True, id="two"),
        pytest.param([], False, id="none"),
        pytest.param(["a", "b", "c"], False, id="too-many"),
        pytest.param(["Ana", 1], False, id="not-a-string-inside"),
        pytest.param(5, False, id="a-number"),
        pytest.param({"a": 1}, False, id="an-object"),
    ],
)
def test_a_string_or_array_of_strings_is_checked(value: object, accepted: bool) -> None:
    """One string, or 1..maxItems strings; anything else names the argument."""
    schema = {"type": "object", "properties": {"x": STRINGS_SPEC}, "additionalProperties": False}
    if accepted:
        assert validate(schema, {"x": value}) == {"x": value}
    else:
        with pytest.raises(InvalidArguments, match="'x'"):
            validate(schema, {"x": value})


def test_an_unsupported_schema_is_not_an_error_the_model_could_correct() -> None:
    """UnsupportedSchema is not a ProtocolError: it can never be mistaken for a bad argument."""
    assert not issubclass(UnsupportedSchema, ProtocolError)
    assert set(HANDLED_TYPES) == {"integer", "string", "boolean"}


# -- times -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("given", "stored"),
    [
        pytest.param("2026-05-09", "2026-05-09T00:00:00.000Z", id="date"),
        pytest.param("2026-05-09T14:03:12Z", "2026-05-09T14:03:12.000Z", id="utc"),
        pytest.param("2026-05-09t14:03:12z", "2026-05-09T14:03:12.000Z", id="lower-case"),
        pytest.param("2026-05-09T14:03:12.042Z", "2026-05-09T14:03:12.042Z", id="millis"),
        pytest.param("2026-05-09T14:03:12.0421Z", "2026-05-09T14:03:12.043Z", id="sub-millis-rounds-up"),
        pytest.param("2026-05-09T23:59:59.9999Z", "2026-05-10T00:00:00.000Z", id="round-up-carries"),
        pytest.param("2026-05-09T16:03:12+02:00", "2026-05-09T14:03:12.000Z", id="plus-offset"),
        pytest.param("2026-05-09T10:33:12-03:30", "2026-05-09T14:03:12.000Z", id="minus-offset"),
        pytest.param("2026-05-10T01:00:00+0200", "2026-05-09T23:00:00.000Z", id="offset-across-midnight"),
        pytest.param("2026-05-09 14:03Z", "2026-05-09T14:03:00.000Z", id="space-no-seconds"),
        pytest.param("0999-12-31", "0999-12-31T00:00:00.000Z", id="year-below-1000"),
    ],
)
def test_times_become_the_stores_utc_text(given: str, stored: str) -> None:
    """Dates and RFC 3339 times with any offset become sortable UTC text with milliseconds."""
    assert parse_time("since", given) == stored


@pytest.mark.parametrize(
    "given",
    [
        pytest.param("yesterday", id="words"),
        pytest.param("2026-02-30", id="no-such-day"),
        pytest.param("2026-05-09T14:03:12", id="no-zone"),
        pytest.param("2026-05-09T25:00:00Z", id="hour-25"),
        pytest.param("2026-13-01", id="month-13"),
        pytest.param("0000-01-01", id="year-zero"),
        pytest.param("0001-01-01T00:00:00+01:00", id="before-year-one-after-offset"),
        pytest.param("9999-12-31T23:59:59-01:00", id="after-9999-after-offset"),
        pytest.param("9999-12-31T23:59:59.9999Z", id="after-9999-after-rounding"),
        pytest.param("", id="empty"),
    ],
)
def test_bad_times_are_invalid_arguments_naming_the_argument(given: str) -> None:
    """A time that is not a real RFC 3339 time or date is refused, naming the argument."""
    with pytest.raises(InvalidArguments) as caught:
        parse_time("until", given)
    assert caught.value.argument == "until"


# -- time filters: both ends, and the range a result echoes ------------------------------------

NOW = datetime(2026, 5, 13, 10, 30, 15, 250_400, tzinfo=timezone.utc)


def test_time_range_reads_both_ends_with_one_now_and_echoes_them() -> None:
    """since takes a period's start, until its end; the echo is what the store was asked, in UTC."""
    window = time_range({"since": "7d", "until": "now", "limit": 5}, now=NOW)
    assert window.since == "2026-05-06T10:30:15.251Z"
    assert window.until == "2026-05-13T10:30:15.251Z"
    assert window.echo == {"since": window.since, "until": window.until}
    assert window.echoed({"transcripts": []}) == {"range": window.echo, "transcripts": []}
    assert list(window.echoed({"a": 1, "b": 2})) == ["range", "a", "b"]  # the range comes first in the text


def test_time_range_without_a_time_filter_echoes_nothing() -> None:
    window = time_range({"limit": 5, "source": "meeting"}, now=NOW)
    assert (window.since, window.until, window.echo) == (None, None, None)
    assert window.echoed({"transcripts": []}) == {"transcripts": []}


def test_an_open_end_is_null_in_the_echo_and_due_before_is_an_until() -> None:
    assert time_range({"since": "2026"}, now=NOW).echo == {"since": "2026-01-01T00:00:00.000Z", "until": None}
    tasks = time_range({"due_before": "2026-11", "status": "open"}, None, "due_before", now=NOW)
    assert tasks.since is None
    assert tasks.until == "2026-12-01T00:00:00.000Z"
    assert tasks.echo == {"since": None, "until": "2026-12-01T00:00:00.000Z"}
    assert time_range({"since": "2026"}, None, "due_before", now=NOW) == (None, None, None)  # not this tool's


@pytest.mark.parametrize("end", [False, True])
def test_rfc_3339_and_plain_dates_mean_the_same_as_since_and_as_until(end: bool) -> None:
    """Backward compatible: until 2026-05-09 is still before that day's UTC start, not through its end."""
    assert resolve_time("until", "2026-05-09", end=end, now=NOW) == "2026-05-09T00:00:00.000Z"
    assert resolve_time("until", "2026-05-09T16:03:12+02:00", end=end, now=NOW) == "2026-05-09T14:03:12.000Z"


def test_errors_of_the_fast_path_stay_specific() -> None:
    """A value shaped like RFC 3339 gets the RFC 3339 message, not the list of words."""
    with pytest.raises(InvalidArguments, match="needs a time zone"):
        resolve_time("since", "2026-05-09T14:03:12", end=False, now=NOW)
    with pytest.raises(InvalidArguments, match="not a real date"):
        resolve_time("since", "2026-02-30", end=False, now=NOW)


@pytest.mark.parametrize(
    ("stamp", "text"),
    [
        pytest.param(datetime(2026, 5, 9, 14, 3, 12, tzinfo=timezone.utc), "2026-05-09T14:03:12.000Z", id="whole"),
        pytest.param(datetime(2026, 5, 9, 14, 3, 12, 1, tzinfo=timezone.utc), "2026-05-09T14:03:12.001Z", id="up"),
        pytest.param(
            datetime(2026, 5, 9, 23, 59, 59, 999_001, tzinfo=timezone.utc), "2026-05-10T00:00:00.000Z", id="carry"
        ),
        pytest.param(datetime(999, 1, 1, tzinfo=timezone.utc), "0999-01-01T00:00:00.000Z", id="year-below-1000"),
    ],
)
def test_store_text_rounds_up_to_milliseconds_like_parse_time(stamp: datetime, text: str) -> None:
    assert store_text("since", "x", stamp) == text


def test_store_text_past_year_9999_is_refused() -> None:
    with pytest.raises(InvalidArguments, match="0001 to 9999"):
        store_text("until", "x", datetime(9999, 12, 31, 23, 59, 59, 999_999, tzinfo=timezone.utc))
