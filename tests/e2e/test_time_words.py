"""Everyday time words end to end: every protocol revision, pinned time zones, the echoed range, start-up errors.

No assertion depends on timing. The store's rows are placed relative to when
the test built it; what a word meant is read from the ``range`` the answer
echoes, checked against this test's own reckoning in the same zone (zoneinfo,
not the server's code) for the instants just before and just after the call,
so that a call straddling midnight still passes. The rows returned are then
checked against that range.

The zone is pinned with MAGNOTIA_TZ (or --timezone, or TZ) in the server's
environment: a container gets no environment from the test, so those tests run
on local kinds only; the container's own default (UTC) has its own test.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone
from functools import partial
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import jsonschema
import pytest

from devkit.storefactory import StoreBuilder
from tests.support.protocol import LEGACY, MODERN, REVISIONS, at_least
from tests.support.server import Launcher, ServerProcess

Start = Callable[..., ServerProcess]
NewStore = Callable[..., StoreBuilder]

pytestmark = pytest.mark.transports("stdio", "http")
UTC = timezone.utc
DST_ZONE = "Europe/Berlin"
ZONES = ("UTC", "Europe/Berlin", "America/Sao_Paulo", "Asia/Kolkata")
AGES = {  # a row this long before the store was built, for each
    "1h": timedelta(hours=1),
    "20h": timedelta(hours=20),
    "30h": timedelta(hours=30),
    "3d": timedelta(days=3),
    "8d": timedelta(days=8),
    "20d": timedelta(days=20),
    "45d": timedelta(days=45),
    "400d": timedelta(days=400),
}
DUE = {"in 2h": timedelta(hours=2), "in 3d": timedelta(days=3), "in 40d": timedelta(days=40), "2d ago": -timedelta(2)}


def text(instant: datetime) -> str:
    """The store's form of an instant."""
    return instant.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{instant.microsecond // 1000:03d}Z"


def parse(stamp: str) -> datetime:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00"))


@dataclass
class Store:
    path: Path
    rows: dict[str, str]  # id -> created_at
    due: dict[str, str | None]  # task title -> due_at


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Store:
    built = datetime.now(UTC)
    b = StoreBuilder(tmp_path_factory.mktemp("timewords") / "magnotia.db")
    rows = {}
    for name, age in AGES.items():
        created = text(built - age)
        rows[b.transcript(title=f"made {name} ago", source="meeting", raw_text=name, created_at=created)] = created
    due: dict[str, str | None] = {}
    for name, offset in DUE.items():
        due[name] = text(built + offset)
        b.task(title=name, due_at=due[name])
    b.task(title="undated")
    due["undated"] = None
    b.close()
    return Store(b.path, rows, due)


def zone(name: str) -> ZoneInfo:
    try:
        return ZoneInfo(name)
    except ZoneInfoNotFoundError:
        pytest.skip(f"this machine has no data for {name}")


def needs_env(launcher: Launcher) -> None:
    if not launcher.local:
        pytest.skip("the container gets no environment from the test")


# -- this test's own reckoning, with zoneinfo ---------------------------------------------------


def midnight(day: date, tz: ZoneInfo) -> str:
    return text(datetime(day.year, day.month, day.day, tzinfo=tz))


def day_span(tz: ZoneInfo, at: datetime, shift: int = 0) -> tuple[str, str]:
    day = at.astimezone(tz).date() + timedelta(days=shift)
    return midnight(day, tz), midnight(day + timedelta(days=1), tz)


def week_span(tz: ZoneInfo, at: datetime, shift: int = 0) -> tuple[str, str]:
    today = at.astimezone(tz).date()
    monday = today - timedelta(days=today.weekday()) + timedelta(weeks=shift)
    return midnight(monday, tz), midnight(monday + timedelta(weeks=1), tz)


def month_span(tz: ZoneInfo, at: datetime, shift: int = 0) -> tuple[str, str]:
    today = at.astimezone(tz).date()
    index = today.year * 12 + today.month - 1 + shift
    first = date(index // 12, index % 12 + 1, 1)
    after = date((index + 1) // 12, (index + 1) % 12 + 1, 1)
    return midnight(first, tz), midnight(after, tz)


PERIODS: dict[str, Callable[[ZoneInfo, datetime], tuple[str, str]]] = {
    "today": day_span,
    "yesterday": partial(day_span, shift=-1),
    "tomorrow": partial(day_span, shift=1),
    "this week": week_span,
    "last week": partial(week_span, shift=-1),
    "this month": month_span,
    "last month": partial(month_span, shift=-1),
}
AGO = {"7d": timedelta(days=7), "24h": timedelta(hours=24), "2 weeks ago": timedelta(weeks=2)}
FIXED = {
    "2026-11": ("2026-11-01T00:00:00.000Z", "2026-12-01T00:00:00.000Z"),
    "2026": ("2026-01-01T00:00:00.000Z", "2027-01-01T00:00:00.000Z"),
}


class Caller:
    """tools/call with a time filter: the result (validated against outputSchema where the revision has one)."""

    def __init__(self, server: ServerProcess, revision: str) -> None:
        self.server = server
        self.revision = revision
        listed = server.request("tools/list")["result"]["tools"]
        self.schemas = {t["name"]: t.get("outputSchema") for t in listed}
        if at_least(revision, "2025-06-18"):
            for schema in (self.schemas["list_transcripts"], self.schemas["list_tasks"]):
                assert schema is not None
                assert "range" in schema["properties"]
                assert "range" not in schema["required"]  # present only when a time filter was given

    def call(self, tool: str, arguments: dict[str, Any]) -> tuple[dict[str, Any], datetime, datetime]:
        before = datetime.now(UTC)
        response = self.server.call(tool, arguments)
        after = datetime.now(UTC)
        result = response["result"]
        assert result["isError"] is False, result
        payload: dict[str, Any] = json.loads(result["content"][0]["text"])
        if at_least(self.revision, "2025-06-18"):
            assert result["structuredContent"] == payload
            jsonschema.validate(payload, self.schemas[tool])
        else:
            assert "structuredContent" not in result
        return payload, before, after

    def refused(self, tool: str, arguments: dict[str, Any]) -> str:
        response = self.server.call(tool, arguments)
        if at_least(self.revision, "2025-11-25"):
            assert response["result"]["isError"] is True, response
            return str(response["result"]["content"][0]["text"])
        assert response["error"]["code"] == -32602, response
        return str(response["error"]["message"])


def check_period(caller: Caller, store: Store, tz: ZoneInfo, word: str) -> None:
    """word as since and as until: the echoed range is this test's span for the day the call ran, rows match."""
    got, before, after = caller.call("list_transcripts", {"since": word, "until": word, "limit": 100})
    span = PERIODS[word]
    assert (got["range"]["since"], got["range"]["until"]) in {span(tz, before), span(tz, after)}, (word, got["range"])
    check_rows(store, got)


def check_rows(store: Store, got: dict[str, Any]) -> None:
    low, high = got["range"]["since"], got["range"]["until"]
    expected = sorted(
        (i for i, c in store.rows.items() if (low is None or c >= low) and (high is None or c < high)),
        key=lambda i: store.rows[i],
        reverse=True,
    )
    assert [t["id"] for t in got["transcripts"]] == expected, got["range"]


def open_server(start_server: Start, store: Store, revision: str, *extra: str, **env: str) -> ServerProcess:
    server = start_server(store.path, *extra, env=env)
    server.open(revision)
    return server


# -- every revision ----------------------------------------------------------------------------


@pytest.mark.parametrize("revision", REVISIONS)
def test_time_words_in_every_revision(revision: str, launcher: Launcher, start_server: Start, store: Store) -> None:
    """The issue's words, in a zone with DST: the range echoed, the rows it selects, schema-valid, errors readable."""
    needs_env(launcher)
    tz = zone(DST_ZONE)
    caller = Caller(open_server(start_server, store, revision, MAGNOTIA_TZ=DST_ZONE), revision)

    for word in PERIODS:
        check_period(caller, store, tz, word)
    for word, age in AGO.items():
        got, before, after = caller.call("list_transcripts", {"since": word})
        assert got["range"]["until"] is None
        since = parse(got["range"]["since"])
        assert (
            before.replace(microsecond=before.microsecond // 1000 * 1000) - age
            <= since
            <= after - age + timedelta(milliseconds=1)
        )
        check_rows(store, got)
    for word, (low, high) in FIXED.items():
        got, _, _ = caller.call("list_transcripts", {"since": word, "until": word})
        assert got["range"] == {"since": low, "until": high}
        check_rows(store, got)

    # A plain date or RFC 3339 time is echoed too, in the store's UTC form; no filter, no range.
    got, _, _ = caller.call("list_transcripts", {"until": "2026-05-09T16:00:00+02:00"})
    assert got["range"] == {"since": None, "until": "2026-05-09T14:00:00.000Z"}
    assert "range" not in caller.call("list_transcripts", {"limit": 3})[0]

    # due_before is an until: "tomorrow" is before the day after tomorrow; undated tasks never match.
    got, before, after = caller.call("list_tasks", {"due_before": "tomorrow"})
    assert got["range"]["since"] is None
    assert got["range"]["until"] in {day_span(tz, before, 1)[1], day_span(tz, after, 1)[1]}
    titles = {t["title"] for t in got["tasks"]}
    assert titles == {name for name, due in store.due.items() if due is not None and due < got["range"]["until"]}
    assert {"in 2h", "2d ago"} <= titles

    message = caller.refused("list_transcripts", {"since": "the other day"})
    assert "'since'" in message
    for form in ("RFC 3339", "2026-05-09", "2026-05", "today", "this/last/next week", "7d", "24h", "2 weeks ago"):
        assert form in message, (form, message)
    assert "'due_before'" in caller.refused("list_tasks", {"due_before": "someday"})


@pytest.mark.parametrize("revision", [LEGACY[0], MODERN])
def test_the_review_prompt_takes_time_words_and_says_what_they_meant(
    revision: str, launcher: Launcher, start_server: Start, store: Store
) -> None:
    needs_env(launcher)
    tz = zone(DST_ZONE)
    server = open_server(start_server, store, revision, MAGNOTIA_TZ=DST_ZONE)
    before = datetime.now(UTC)
    response = server.request("prompts/get", {"name": "review_meetings", "arguments": {"since": "this week"}})
    after = datetime.now(UTC)
    instruction = response["result"]["messages"][0]["content"]["text"]
    assert "from this week (" in instruction
    assert any(f"({week_span(tz, at)[0]} to now, UTC)" in instruction for at in (before, after)), instruction
    bad = server.request("prompts/get", {"name": "review_meetings", "arguments": {"since": "soonish"}})
    assert bad["error"]["code"] == -32602
    assert "'since'" in bad["error"]["message"]


# -- zones ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ZONES)
def test_words_resolve_in_the_zone_magnotia_tz_names(
    name: str, launcher: Launcher, start_server: Start, store: Store
) -> None:
    needs_env(launcher)
    tz = zone(name)
    caller = Caller(open_server(start_server, store, MODERN, MAGNOTIA_TZ=name), MODERN)
    for word in ("today", "this week", "last month"):
        check_period(caller, store, tz, word)


def test_the_timezone_flag_wins_over_magnotia_tz(launcher: Launcher, start_server: Start, store: Store) -> None:
    """--timezone Asia/Kolkata beats MAGNOTIA_TZ, even one that names no zone (it is never read)."""
    needs_env(launcher)
    tz = zone("Asia/Kolkata")
    server = open_server(start_server, store, LEGACY[-1], "--timezone", "Asia/Kolkata", MAGNOTIA_TZ="Nowhere/Land")
    check_period(Caller(server, LEGACY[-1]), store, tz, "today")


def test_without_a_chosen_zone_words_follow_tz(launcher: Launcher, start_server: Start, store: Store) -> None:
    """The system's zone: here TZ, as the C library reads it (the user's clock)."""
    needs_env(launcher)
    tz = zone("America/Sao_Paulo")
    server = open_server(start_server, store, MODERN, TZ="America/Sao_Paulo", MAGNOTIA_TZ="")
    check_period(Caller(server, MODERN), store, tz, "yesterday")


def test_a_tz_that_names_no_known_zone_means_utc_and_a_warning(
    launcher: Launcher, start_server: Start, store: Store
) -> None:
    """As TZ=Europe/Berlin would in an image without a time zone database: UTC, said once on stderr."""
    needs_env(launcher)
    server = open_server(start_server, store, MODERN, TZ="Nowhere/Land", MAGNOTIA_TZ="")
    caller = Caller(server, MODERN)
    check_period(caller, store, zone("UTC"), "today")
    check_period(caller, store, zone("UTC"), "this week")
    assert server.stderr.count("TZ=Nowhere/Land names no time zone") == 1, server.stderr


def test_the_container_resolves_words_in_utc(launcher: Launcher, start_server: Start, store: Store) -> None:
    """The image sets no zone and has no /etc/localtime: UTC (run with --server container)."""
    if launcher.local:
        pytest.skip("the container's default; local kinds follow the machine's zone")
    caller = Caller(open_server(start_server, store, MODERN), MODERN)
    check_period(caller, store, zone("UTC"), "today")


# Start-up, before any transport: tests.http.conftest.start fails a server that never listens.
@pytest.mark.transports("stdio")
@pytest.mark.parametrize(
    ("extra", "env", "origin"),
    [
        pytest.param(("--timezone", "Mars/Olympus_Mons"), {}, "--timezone", id="flag"),
        pytest.param((), {"MAGNOTIA_TZ": "Europe/Berln"}, "MAGNOTIA_TZ", id="env"),
    ],
)
def test_an_unknown_zone_stops_the_server_at_start_up(
    launcher: Launcher, start_server: Start, store: Store, extra: tuple[str, ...], env: dict[str, str], origin: str
) -> None:
    """One line on stderr naming the zone and where it came from; exit 2 before any answer."""
    if env:
        needs_env(launcher)
    server = start_server(store.path, *extra, env=env)
    server.expected_exit = {2}
    assert server.wait() == 2
    assert server.raw_stdout == []
    name = extra[1] if extra else env["MAGNOTIA_TZ"]
    assert f"time zone {name!r}" in server.stderr
    assert f"(from {origin})" in server.stderr
