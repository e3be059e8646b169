"""magnotia_mcp.args.timewords: everyday time words, resolved in a time zone at a fixed now.

No test reads the wall clock: every call passes ``now``. Zones are IANA zones
from the system's database (a test skips where a zone is missing) or the
system's own local time with TZ set for the test (POSIX only: ``time.tzset``).
Expected instants are written out by hand, from the zones' published rules.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import zoneinfo
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone

import pytest

from magnotia_mcp.args import timewords
from magnotia_mcp.args.checks import resolve_time, time_range
from magnotia_mcp.args.timewords import ACCEPTED, UnknownZone, Zone, load_zone, system_zone, use_zone
from magnotia_mcp.errors import InvalidArguments
from magnotia_mcp.tools.schema import TIME_HELP

UTC = timezone.utc
NOW = datetime(2026, 5, 13, 10, 30, 15, 250_400, tzinfo=UTC)  # a Wednesday
ISSUE_WORDS = [
    "today",
    "yesterday",
    "this week",
    "last week",
    "this month",
    "last month",
    "7d",
    "24h",
    "2 weeks ago",
    "2026-11",
    "2026",
]


def zone(name: str) -> Zone:
    try:
        return load_zone(name)
    except UnknownZone:
        pytest.skip(f"this system has no data for {name}")


def span(value: str, where: str | Zone, now: datetime = NOW) -> tuple[str, str]:
    """What value means as since and as until."""
    z = zone(where) if isinstance(where, str) else where
    window = time_range({"since": value, "until": value}, now=now, zone=z)
    assert window.since is not None
    assert window.until is not None
    return window.since, window.until


def hours(window: tuple[str, str]) -> float:
    start, end = (datetime.fromisoformat(t.replace("Z", "+00:00")) for t in window)
    return (end - start) / timedelta(hours=1)


@pytest.fixture
def system_tz(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Lets a test set TZ for the C library (time.tzset); restores it afterwards."""
    if not hasattr(time, "tzset"):
        pytest.skip("time.tzset is POSIX only")
    yield
    monkeypatch.undo()
    time.tzset()


def set_tz(monkeypatch: pytest.MonkeyPatch, value: str | None) -> None:
    if value is None:
        monkeypatch.delenv("TZ", raising=False)
    else:
        monkeypatch.setenv("TZ", value)
    time.tzset()


@pytest.fixture(autouse=True)
def _no_chosen_zone() -> Iterator[None]:
    """use_zone is process-wide: every test starts and ends with the system's zone."""
    use_zone(None)
    yield
    use_zone(None)
    timewords._system = None


# -- the words, in several zones ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "since", "until"),
    [
        ("now", "2026-05-13T10:30:15.251Z", "2026-05-13T10:30:15.251Z"),
        ("today", "2026-05-13T00:00:00.000Z", "2026-05-14T00:00:00.000Z"),
        ("yesterday", "2026-05-12T00:00:00.000Z", "2026-05-13T00:00:00.000Z"),
        ("tomorrow", "2026-05-14T00:00:00.000Z", "2026-05-15T00:00:00.000Z"),
        ("this week", "2026-05-11T00:00:00.000Z", "2026-05-18T00:00:00.000Z"),
        ("last week", "2026-05-04T00:00:00.000Z", "2026-05-11T00:00:00.000Z"),
        ("next week", "2026-05-18T00:00:00.000Z", "2026-05-25T00:00:00.000Z"),
        ("this month", "2026-05-01T00:00:00.000Z", "2026-06-01T00:00:00.000Z"),
        ("last month", "2026-04-01T00:00:00.000Z", "2026-05-01T00:00:00.000Z"),
        ("next month", "2026-06-01T00:00:00.000Z", "2026-07-01T00:00:00.000Z"),
        ("this year", "2026-01-01T00:00:00.000Z", "2027-01-01T00:00:00.000Z"),
        ("last year", "2025-01-01T00:00:00.000Z", "2026-01-01T00:00:00.000Z"),
        ("next year", "2027-01-01T00:00:00.000Z", "2028-01-01T00:00:00.000Z"),
        ("7d", "2026-05-06T10:30:15.251Z", "2026-05-06T10:30:15.251Z"),
        ("24h", "2026-05-12T10:30:15.251Z", "2026-05-12T10:30:15.251Z"),
        ("2w", "2026-04-29T10:30:15.251Z", "2026-04-29T10:30:15.251Z"),
        ("90 minutes ago", "2026-05-13T09:00:15.251Z", "2026-05-13T09:00:15.251Z"),
        ("2 weeks ago", "2026-04-29T10:30:15.251Z", "2026-04-29T10:30:15.251Z"),
        ("an hour ago", "2026-05-13T09:30:15.251Z", "2026-05-13T09:30:15.251Z"),
        ("a day ago", "2026-05-12T10:30:15.251Z", "2026-05-12T10:30:15.251Z"),
        ("last 7 days", "2026-05-06T10:30:15.251Z", "2026-05-06T10:30:15.251Z"),
        ("3 months ago", "2026-02-13T10:30:15.251Z", "2026-02-13T10:30:15.251Z"),
        ("1 year ago", "2025-05-13T10:30:15.251Z", "2025-05-13T10:30:15.251Z"),
        ("2026-11", "2026-11-01T00:00:00.000Z", "2026-12-01T00:00:00.000Z"),
        ("2026-12", "2026-12-01T00:00:00.000Z", "2027-01-01T00:00:00.000Z"),
        ("2026", "2026-01-01T00:00:00.000Z", "2027-01-01T00:00:00.000Z"),
        ("0001", "0001-01-01T00:00:00.000Z", "0002-01-01T00:00:00.000Z"),
        ("2026-05-09", "2026-05-09T00:00:00.000Z", "2026-05-09T00:00:00.000Z"),
        ("2026-05-09T14:03:12+02:00", "2026-05-09T12:03:12.000Z", "2026-05-09T12:03:12.000Z"),
    ],
)
def test_in_utc_each_value_means_a_span_since_takes_its_start_and_until_its_end(
    value: str, since: str, until: str
) -> None:
    """Periods start at 00:00 (weeks on Monday) and end where the next begins; ages and instants are one point.

    A plain date and an RFC 3339 time mean the same in both roles, as they always did.
    """
    assert span(value, "UTC") == (since, until)


@pytest.mark.parametrize(
    ("where", "today", "this_week", "this_month"),
    [
        pytest.param(
            "Europe/Berlin",
            ("2026-05-12T22:00:00.000Z", "2026-05-13T22:00:00.000Z"),
            ("2026-05-10T22:00:00.000Z", "2026-05-17T22:00:00.000Z"),
            ("2026-04-30T22:00:00.000Z", "2026-05-31T22:00:00.000Z"),
            id="berlin-summer",
        ),
        pytest.param(
            "America/Sao_Paulo",
            ("2026-05-13T03:00:00.000Z", "2026-05-14T03:00:00.000Z"),
            ("2026-05-11T03:00:00.000Z", "2026-05-18T03:00:00.000Z"),
            ("2026-05-01T03:00:00.000Z", "2026-06-01T03:00:00.000Z"),
            id="sao-paulo",
        ),
        pytest.param(
            "Asia/Kolkata",
            ("2026-05-12T18:30:00.000Z", "2026-05-13T18:30:00.000Z"),
            ("2026-05-10T18:30:00.000Z", "2026-05-17T18:30:00.000Z"),
            ("2026-04-30T18:30:00.000Z", "2026-05-31T18:30:00.000Z"),
            id="kolkata-half-hour",
        ),
    ],
)
def test_words_follow_the_users_calendar_in_their_zone(
    where: str, today: tuple[str, str], this_week: tuple[str, str], this_month: tuple[str, str]
) -> None:
    """today, this week and this month start at local midnights, given as UTC."""
    assert span("today", where) == today
    assert span("this week", where) == this_week
    assert span("this month", where) == this_month


def test_the_local_date_decides_which_day_today_is() -> None:
    """At 01:00 UTC it is already tomorrow in Kolkata and still yesterday in São Paulo."""
    early = datetime(2026, 5, 13, 1, 0, tzinfo=UTC)
    assert span("today", "Asia/Kolkata", early)[0] == "2026-05-12T18:30:00.000Z"
    assert span("today", "America/Sao_Paulo", early)[0] == "2026-05-12T03:00:00.000Z"
    sunday_night = datetime(2026, 5, 17, 23, 0, tzinfo=UTC)  # Monday 01:00 in Berlin
    assert span("this week", "Europe/Berlin", sunday_night)[0] == "2026-05-17T22:00:00.000Z"
    assert span("this week", "UTC", sunday_night)[0] == "2026-05-11T00:00:00.000Z"


def test_numbers_are_utc_periods_in_every_zone() -> None:
    """2026-11 and 2026 are UTC, like a plain date: the same in Berlin as in UTC."""
    for value in ("2026-11", "2026", "2026-05-09"):
        assert span(value, "Europe/Berlin") == span(value, "Asia/Kolkata") == span(value, "UTC")


def test_words_are_read_whatever_their_case_and_spacing() -> None:
    assert span("  Last   WEEK ", "UTC") == span("last week", "UTC")
    assert span("7 D", "UTC") == span("7d", "UTC")
    assert span("2 Weeks Ago", "UTC") == span("2 weeks ago", "UTC")


# -- daylight saving time ----------------------------------------------------------------------


def test_berlin_days_of_23_and_25_hours_and_the_week_around_them() -> None:
    """Europe/Berlin springs forward on 2026-03-29 and falls back on 2026-10-25: midnights come from the zone."""
    spring = datetime(2026, 3, 29, 12, 0, tzinfo=UTC)
    assert span("today", "Europe/Berlin", spring) == ("2026-03-28T23:00:00.000Z", "2026-03-29T22:00:00.000Z")
    assert hours(span("today", "Europe/Berlin", spring)) == 23
    assert hours(span("this week", "Europe/Berlin", spring)) == 7 * 24 - 1
    autumn = datetime(2026, 10, 25, 12, 0, tzinfo=UTC)
    assert span("today", "Europe/Berlin", autumn) == ("2026-10-24T22:00:00.000Z", "2026-10-25T23:00:00.000Z")
    assert hours(span("today", "Europe/Berlin", autumn)) == 25
    assert hours(span("this month", "Europe/Berlin", autumn)) == 31 * 24 + 1


def test_ages_in_hours_and_days_are_exact_durations_across_a_switch() -> None:
    """24h is 24 hours and 7d 168 hours even over the spring-forward night."""
    spring = datetime(2026, 3, 29, 12, 0, tzinfo=UTC)
    assert span("24h", "Europe/Berlin", spring)[0] == "2026-03-28T12:00:00.000Z"
    assert span("1d", "Europe/Berlin", spring)[0] == "2026-03-28T12:00:00.000Z"
    assert span("7d", "Europe/Berlin", spring)[0] == "2026-03-22T12:00:00.000Z"


def test_months_ago_keep_the_wall_clock_time_across_a_switch() -> None:
    """3 months before 14:00 CEST is 14:00 CET: one hour more in UTC."""
    summer = datetime(2026, 6, 15, 12, 0, tzinfo=UTC)  # 14:00 in Berlin
    assert span("3 months ago", "Europe/Berlin", summer)[0] == "2026-03-15T13:00:00.000Z"


def test_sao_paulo_days_whose_midnight_a_switch_skipped_or_repeated() -> None:
    """São Paulo's DST began at 00:00 (clocks to 01:00) on 2018-11-04 and ended at 00:00 on 2019-02-17.

    The first day starts at 01:00 local, the first instant it has; the second
    day's 23:00 came twice, so 2019-02-16 lasted 25 hours.
    """
    assert span("today", "America/Sao_Paulo", datetime(2018, 11, 4, 15, tzinfo=UTC)) == (
        "2018-11-04T03:00:00.000Z",
        "2018-11-05T02:00:00.000Z",
    )
    assert span("today", "America/Sao_Paulo", datetime(2019, 2, 16, 15, tzinfo=UTC)) == (
        "2019-02-16T02:00:00.000Z",
        "2019-02-17T03:00:00.000Z",
    )


def test_a_wall_time_in_a_gap_is_the_switch_and_a_repeated_one_its_first_occurrence() -> None:
    berlin = zone("Europe/Berlin")
    assert berlin.instant(datetime(2026, 3, 29, 2, 30)) == datetime(2026, 3, 29, 1, 0, tzinfo=UTC)
    assert berlin.instant(datetime(2026, 10, 25, 2, 30)) == datetime(2026, 10, 25, 0, 30, tzinfo=UTC)
    assert berlin.instant(datetime(2026, 5, 13, 12, 0, 0, 1500)) == datetime(2026, 5, 13, 10, 0, 0, 1500, tzinfo=UTC)


# -- month arithmetic ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("now", "value", "since"),
    [
        (datetime(2026, 3, 31, 12, tzinfo=UTC), "1 month ago", "2026-02-28T12:00:00.000Z"),
        (datetime(2028, 3, 31, 12, tzinfo=UTC), "1 month ago", "2028-02-29T12:00:00.000Z"),
        (datetime(2028, 2, 29, 12, tzinfo=UTC), "a year ago", "2027-02-28T12:00:00.000Z"),
        (datetime(2026, 1, 15, 12, tzinfo=UTC), "last month", "2025-12-01T00:00:00.000Z"),
        (datetime(2026, 1, 15, 12, tzinfo=UTC), "14 months ago", "2024-11-15T12:00:00.000Z"),
        (datetime(2026, 12, 15, 12, tzinfo=UTC), "next month", "2027-01-01T00:00:00.000Z"),
    ],
)
def test_calendar_months_clamp_the_day_and_cross_years(now: datetime, value: str, since: str) -> None:
    assert span(value, "UTC", now)[0] == since


# -- refusals --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value",
    ["someday", "last friday", "May 9", "7", "7x", "a d", "ad", "7 fortnights ago", "this decade", "next", "", "  "],
)
def test_a_value_it_cannot_read_is_refused_listing_the_accepted_forms(value: str) -> None:
    with pytest.raises(InvalidArguments) as caught:
        time_range({"since": value}, now=NOW, zone=zone("UTC"))
    assert caught.value.argument == "since"
    assert caught.value.message == f"invalid argument 'since': cannot read {value!r}; use {ACCEPTED}"
    for form in ("RFC 3339", "2026-05-09", "2026-05", "2026", "today", "yesterday", "week", "month", "24h", "7d"):
        assert form in caught.value.message


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("2026-13", "is not a real month"),
        ("2026-00", "is not a real month"),
        ("0000-05", "is not a real month"),
        ("0000", "is not a real year"),
        ("9999", "outside the years 0001 to 9999"),  # its end, 10000-01-01, is not a time the store can hold
        ("9999-12", "outside the years 0001 to 9999"),
        ("100000 years ago", "outside the years 0001 to 9999"),
        ("99999 years ago", "outside the years 0001 to 9999"),
        ("999999999 days ago", "outside the years 0001 to 9999"),
    ],
)
def test_values_out_of_range_are_refused_saying_why(value: str, problem: str) -> None:
    with pytest.raises(InvalidArguments) as caught:
        resolve_time("until", value, end=True, now=NOW, zone=zone("UTC"))
    assert caught.value.argument == "until"
    assert problem in caught.value.message


def test_the_schema_help_and_the_error_name_the_forms_the_issue_asks_for() -> None:
    """Every form the input schemas promise resolves, as since and as until, in a zone with DST."""
    for value in [*ISSUE_WORDS, "now", "tomorrow", "next week", "this year", "2w", "3 months ago"]:
        span(value, "Europe/Berlin")
    for example in ("2026-05-09T14:03:12Z", "2026-05-09", "2026-05", "2026", "24h", "7d", "2w", "2 weeks ago"):
        assert example in TIME_HELP
        assert example in ACCEPTED
    for word in ("today", "yesterday", "tomorrow", "this/last/next week", "month", "year", "Monday", "time zone"):
        assert word in TIME_HELP


# -- time zones ------------------------------------------------------------------------------


def test_load_zone_names_iana_zones_and_refuses_others_saying_what_would_do() -> None:
    assert zone("Europe/Berlin").tz == zoneinfo.ZoneInfo("Europe/Berlin")
    for name in ("UTC", "utc", "Etc/UTC", "Z"):
        assert load_zone(name) == Zone("UTC", UTC)
    for bad in ("Mars/Olympus_Mons", "Europe/Berln", "../../etc/passwd", "Europe", ""):
        with pytest.raises(UnknownZone) as caught:
            load_zone(bad)
        assert repr(bad) in str(caught.value)
        assert "IANA name" in str(caught.value)


def test_without_a_time_zone_database_only_utc_loads_and_the_error_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    """As in the FROM scratch image: no /usr/share/zoneinfo, no tzdata package."""
    monkeypatch.setattr(timewords, "_has_tzdata", lambda: False)
    zoneinfo.reset_tzpath(to=["/nonexistent/zoneinfo"])
    try:
        zoneinfo.ZoneInfo.clear_cache()
        assert load_zone("UTC") == Zone("UTC", UTC)
        with pytest.raises(UnknownZone) as caught:
            load_zone("Europe/Berlin")
    finally:
        zoneinfo.reset_tzpath()
        zoneinfo.ZoneInfo.clear_cache()
    assert "no time zone database" in str(caught.value)
    assert "/usr/share/zoneinfo:/usr/share/zoneinfo:ro" in str(caught.value)


def test_use_zone_sets_the_zone_words_use_until_reset() -> None:
    berlin = zone("Europe/Berlin")
    assert use_zone("Europe/Berlin") == berlin
    assert timewords.current_zone() == berlin
    assert resolve_time("since", "today", end=False, now=NOW) == "2026-05-12T22:00:00.000Z"
    assert use_zone(None) is None
    assert timewords.current_zone() != berlin
    with pytest.raises(UnknownZone):
        use_zone("Nowhere/Land")


def test_the_system_zone_follows_tz_as_the_c_library_reads_it(
    system_tz: None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """TZ unset: the C library's local time; a zone name: that zone; a POSIX rule: the C library; unknown: UTC."""
    zone("Europe/Berlin")
    set_tz(monkeypatch, None)
    assert system_zone(None) == Zone("local", None)
    set_tz(monkeypatch, "Europe/Berlin")
    assert system_zone("Europe/Berlin") == zone("Europe/Berlin")
    assert system_zone(":Europe/Berlin") == zone("Europe/Berlin")
    set_tz(monkeypatch, "CET-1CEST,M3.5.0,M10.5.0/3")
    assert system_zone("CET-1CEST,M3.5.0,M10.5.0/3") == Zone("TZ=CET-1CEST,M3.5.0,M10.5.0/3", None)
    set_tz(monkeypatch, "UTC0")
    assert system_zone("UTC0") == Zone("UTC", UTC)
    assert capsys.readouterr().err == ""
    set_tz(monkeypatch, "Nowhere/Land")  # what TZ=Europe/Berlin is in an image without a time zone database
    assert system_zone("Nowhere/Land") == Zone("UTC", UTC)
    err = capsys.readouterr().err
    assert "TZ=Nowhere/Land names no time zone" in err
    assert "UTC" in err


@pytest.mark.parametrize("rule", ["Europe/Berlin", "CET-1CEST,M3.5.0,M10.5.0/3"])
def test_the_c_librarys_local_time_gives_the_same_midnights_as_the_zone(
    system_tz: None, monkeypatch: pytest.MonkeyPatch, rule: str
) -> None:
    """The default zone (the system's, via the C library) is DST-correct: the same answers as zoneinfo."""
    berlin = zone("Europe/Berlin")
    set_tz(monkeypatch, rule)
    local = Zone("local", None)
    for now in (NOW, datetime(2026, 3, 29, 12, tzinfo=UTC), datetime(2026, 10, 25, 12, tzinfo=UTC)):
        for value in ("today", "yesterday", "this week", "last month", "3 months ago", "7d"):
            assert span(value, local, now) == span(value, berlin, now), (now, value)


def test_the_system_zone_is_worked_out_once_from_tz(system_tz: None, monkeypatch: pytest.MonkeyPatch) -> None:
    set_tz(monkeypatch, "Asia/Kolkata")
    timewords._system = None
    assert timewords.current_zone() == zone("Asia/Kolkata")
    assert resolve_time("since", "today", end=False, now=NOW) == "2026-05-12T18:30:00.000Z"


# -- start-up cost -----------------------------------------------------------------------------


def test_rfc_3339_never_imports_the_grammar_and_words_import_no_zone_database() -> None:
    """The fast path stays in arguments; a word in the system's zone needs timewords but not zoneinfo."""
    script = (
        "import sys\n"
        "from magnotia_mcp.args.checks import time_range\n"
        "time_range({'since': '2026-05-09', 'until': '2026-05-09T10:00:00+02:00'})\n"
        "print('magnotia_mcp.args.timewords' in sys.modules, 'zoneinfo' in sys.modules)\n"
        "time_range({'since': 'last week', 'until': '2026-11'})\n"
        "print('magnotia_mcp.args.timewords' in sys.modules, 'zoneinfo' in sys.modules)\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("TZ", "MAGNOTIA_TZ")}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True)
    assert done.stdout.split("\n")[:2] == ["False False", "True False"]
