"""Everyday time words (``today``, ``last week``, ``7d``, ``2026-11``) and the user's time zone.

``arguments.resolve_time`` reads RFC 3339 times and plain dates itself and
imports this module only for anything else, so a session that never uses a
word never loads it. The grammar is small on purpose (docs/tools.md has the
table): no library reads ranges ("this week" is a start *and* an end) and
stays within the start-up budget, and a closed list is one a model can be told
in full.

Each value means a span of time ``[start, end)``; an instant (``now``, ``7d``)
is a span of no length. ``resolve`` returns the start for ``since`` and the end
for ``until``/``due_before``. Numbers (``2026``, ``2026-11``) are UTC calendar
periods, like plain dates always were; words are the user's calendar, in the
zone chosen at start-up (``--timezone``/``MAGNOTIA_TZ``) or else the system's
local time. Local midnights are found through the zone, instant by instant, so
days of 23 or 25 hours and midnights that a DST switch skips come out right.
"""

from __future__ import annotations

import os
import re
import time
from datetime import date, datetime, timedelta, timezone, tzinfo
from typing import NamedTuple, TypeVar

from magnotia_mcp import log
from magnotia_mcp.errors import InvalidArguments, quote

UTC = timezone.utc
ACCEPTED = (
    "an RFC 3339 time (2026-05-09T14:03:12Z), a date (2026-05-09), a month (2026-05), a year (2026), "
    "now, today, yesterday, tomorrow, this/last/next week, month or year, "
    "or an age: 24h, 7d, 2w, 2 weeks ago, 3 months ago"
)
# Names that mean UTC and need no time zone database (ZoneInfo("UTC") does).
UTC_NAMES = frozenset({"utc", "etc/utc", "gmt", "etc/gmt", "z", "zulu", "etc/zulu", "universal", "etc/universal"})
MAX_AGE = 100_000  # units: "100000 years ago" is already out of range; this only bounds the arithmetic
SECONDS = {"minute": 60, "hour": 3600, "day": 86400, "week": 604800}
UNITS = {
    "h": "hour",
    "hr": "hour",
    "hrs": "hour",
    "hour": "hour",
    "hours": "hour",
    "min": "minute",
    "mins": "minute",
    "minute": "minute",
    "minutes": "minute",
    "d": "day",
    "day": "day",
    "days": "day",
    "w": "week",
    "wk": "week",
    "wks": "week",
    "week": "week",
    "weeks": "week",
    "month": "month",
    "months": "month",
    "y": "year",
    "yr": "year",
    "yrs": "year",
    "year": "year",
    "years": "year",
}
_AGE = re.compile(r"(?:(?:last|past)\s+)?(?:(\d{1,9})\s*|(an?)\s+)([a-z]+)(?:\s+ago)?")
_PERIOD = re.compile(r"(this|last|next)\s+(week|month|year)")
_MONTH = re.compile(r"(\d{4})-(\d{2})")
_YEAR = re.compile(r"\d{4}")


class Zone(NamedTuple):  # not a dataclass: importing dataclasses costs ~10 ms
    """A time zone: tz, or None for the system's local time (the C library's, as the user's clock shows it)."""

    name: str
    tz: tzinfo | None

    def wall(self, instant: datetime) -> datetime:
        """The wall-clock time (naive) at an aware instant."""
        local = instant.astimezone(self.tz) if self.tz is not None else instant.astimezone()
        return local.replace(tzinfo=None)

    def instant(self, wall: datetime) -> datetime:
        """The first UTC instant whose wall-clock time is wall or later.

        Only the instant-to-wall direction is asked of the zone, which every zone
        (the C library's included) answers exactly; a wall time a DST switch skips
        gives the switch itself, a repeated one its first occurrence.
        """
        whole = wall.replace(microsecond=0)
        guess = whole.replace(tzinfo=UTC)
        low, high = -27 * 3600, 27 * 3600  # seconds around guess; every UTC offset is within +-26 h
        while high - low > 1:
            mid = (low + high) // 2
            if self.wall(guess + timedelta(seconds=mid)) >= whole:
                high = mid
            else:
                low = mid
        return guess + timedelta(seconds=high, microseconds=wall.microsecond)

    def midnight(self, day: date) -> datetime:
        return self.instant(datetime(day.year, day.month, day.day))


class UnknownZone(ValueError):
    """A --timezone or MAGNOTIA_TZ name that names no zone here."""


_chosen: Zone | None = None  # from --timezone / MAGNOTIA_TZ; None: the system's zone
_system: Zone | None = None  # worked out at its first use


def load_zone(name: str) -> Zone:
    """The IANA zone called name (UTC needs no database); UnknownZone saying why not."""
    if name.strip().lower() in UTC_NAMES:
        return Zone("UTC", UTC)
    import zoneinfo  # noqa: PLC0415  (only for a zone named by the user or by TZ)

    try:
        return Zone(name, zoneinfo.ZoneInfo(name))
    except (ValueError, LookupError, OSError):
        pass
    if not any(os.path.isdir(path) for path in zoneinfo.TZPATH) and not _has_tzdata():
        raise UnknownZone(
            f"cannot use the time zone {name!r}: this system has no time zone database "
            f"(none of {', '.join(zoneinfo.TZPATH) or 'no TZPATH'}, no tzdata package); only UTC works here. "
            "In a container, mount the host's: -v /usr/share/zoneinfo:/usr/share/zoneinfo:ro"
        )
    raise UnknownZone(f"unknown time zone {name!r}: give an IANA name such as Europe/Berlin, America/Sao_Paulo or UTC")


def _has_tzdata() -> bool:
    import importlib.util  # noqa: PLC0415  (only to explain a zone that did not load)

    return importlib.util.find_spec("tzdata") is not None


def use_zone(name: str | None) -> Zone | None:
    """Resolve words in this zone from now on (None: the system's local zone again)."""
    global _chosen
    _chosen = load_zone(name) if name is not None else None
    return _chosen


def current_zone() -> Zone:
    """The chosen zone, or else the system's."""
    global _system
    if _chosen is not None:
        return _chosen
    if _system is None:
        _system = system_zone(os.environ.get("TZ"))
    return _system


def system_zone(tz_variable: str | None) -> Zone:
    """The system's local zone, given the TZ variable the C library read at start-up.

    TZ unset: the C library's local time (/etc/localtime; UTC where there is
    none, as in the container image). TZ naming a zone the C library could not
    load (a container without a time zone database) would silently be UTC
    there: say so once on stderr, and use UTC.
    """
    if not tz_variable:
        return Zone("local", None)
    name = tz_variable.removeprefix(":")
    if name.lower() in UTC_NAMES:
        return Zone("UTC", UTC)
    try:
        return load_zone(name)
    except UnknownZone:
        pass
    if time.timezone != 0 or time.daylight:  # a POSIX rule (CET-1CEST,...) or a file Python cannot see
        return Zone(f"TZ={tz_variable}", None)
    if not any(c.isdigit() for c in name):  # not a rule such as UTC0 or GMT+0: a zone name we cannot load
        log.warning(f"TZ={tz_variable} names no time zone this system has data for; time words resolve in UTC")
    return Zone("UTC", UTC)


# -- the grammar ------------------------------------------------------------------------


def resolve(name: str, value: str, *, end: bool, now: datetime | None = None, zone: Zone | None = None) -> datetime:
    """The UTC instant value means as since (end=False) or as until/due_before (end=True)."""
    text = " ".join(value.lower().split())
    now = now if now is not None else datetime.now(UTC)
    try:
        span = _span(name, text, now, zone)
    except (OverflowError, OSError):  # past year 9999 or before year 1, or the system clock's range
        raise InvalidArguments(name, f"reaches outside the years 0001 to 9999: {quote(value)}") from None
    if span is None:
        raise InvalidArguments(name, f"cannot read {quote(value)}; use {ACCEPTED}")
    return span[1] if end else span[0]


def _span(name: str, text: str, now: datetime, zone: Zone | None) -> tuple[datetime, datetime] | None:
    if text == "now":
        return now, now
    if m := _MONTH.fullmatch(text):
        year, month = int(m[1]), int(m[2])
        if year < 1 or not 1 <= month <= 12:
            raise InvalidArguments(name, f"is not a real month: {quote(text)} (use YYYY-MM, e.g. 2026-05)")
        start = datetime(year, month, 1, tzinfo=UTC)
        return start, _add_months(start, 1)
    if _YEAR.fullmatch(text):
        if int(text) < 1:
            raise InvalidArguments(name, f"is not a real year: {quote(text)}")
        start = datetime(int(text), 1, 1, tzinfo=UTC)
        return start, _add_months(start, 12)
    zone = zone or current_zone()
    today = zone.wall(now).date()
    day = {"today": 0, "yesterday": -1, "tomorrow": 1}.get(text)
    if day is not None:
        first = today + timedelta(days=day)
        return zone.midnight(first), zone.midnight(first + timedelta(days=1))
    if m := _PERIOD.fullmatch(text):
        step = {"this": 0, "last": -1, "next": 1}[m[1]]
        first, after = _period(m[2], today, step)
        return zone.midnight(first), zone.midnight(after)
    if m := _AGE.fullmatch(text):
        unit = UNITS.get(m[3])
        if unit is None or (m[2] and len(m[3]) < 3):  # "a week", not "a w"
            return None
        count = int(m[1]) if m[1] else 1
        if count > MAX_AGE:
            raise OverflowError
        if unit in SECONDS:  # exact durations: 24h is 24 hours even across a DST switch
            then = now - timedelta(seconds=count * SECONDS[unit])
        else:  # calendar months and years, on the user's wall clock
            months = count * (12 if unit == "year" else 1)
            then = zone.instant(_add_months(zone.wall(now), -months))
        return then, then
    return None


def _period(kind: str, today: date, step: int) -> tuple[date, date]:
    """The first day of the week, month or year step periods from today's, and the first day after it."""
    if kind == "week":  # ISO weeks start on Monday
        first = today - timedelta(days=today.weekday()) + timedelta(weeks=step)
        return first, first + timedelta(weeks=1)
    if kind == "month":
        first = _add_months(date(today.year, today.month, 1), step)
        return first, _add_months(first, 1)
    first = _add_months(date(today.year, 1, 1), 12 * step)
    return first, _add_months(first, 12)


D = TypeVar("D", date, datetime)


def _add_months(when: D, months: int) -> D:
    """when moved by whole months, the day clamped to the month's length (31 March - 1 month = 28/29 Feb)."""
    year, month = divmod(when.year * 12 + when.month - 1 + months, 12)
    month += 1
    if not 1 <= year <= 9999:
        raise OverflowError
    last = 31 if month == 12 else (date(year, month + 1, 1) - timedelta(days=1)).day
    return when.replace(year=year, month=month, day=min(when.day, last))
