"""Whole stores, drawn: every shape docs/store-schema-v1.sql allows, written row by row with sqlite3.

The app writes tidy rows; the schema allows far less tidy ones, and a store is
the app's to write. So every nullable column is sometimes NULL; every text is
sometimes empty, whitespace, one character (CJK, emoji, a lone combining mark,
a NUL) or bytes that are not UTF-8; transcripts have zero, one or many
segments whose times may be equal, reversed, negative or huge, whose ``seq``
has gaps or runs against their times (the schema's UNIQUE (transcript_id, seq)
rules out duplicates within a transcript, so the same ``seq`` is drawn across
transcripts instead), whose labels are blank or very long, and whose text may be
absent from the raw text; tasks point at live, trashed or missing transcripts
(foreign keys are not enforced, as in the app's connection); languages and
models are any text; ``source`` takes each of the three values its CHECK allows.
Among them, sometimes, a workshop-size transcript (raw text over 64 KiB, which
the server reads by window: src/magnotia_mcp/store/layouts.py), built once.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from hypothesis import strategies as st

from devkit.storefactory import no_fts_schema_sql, schema_sql
from tests.properties.strategies import weighted

# A text column's value: a str, or bytes written with CAST(? AS TEXT) (not valid UTF-8).
Text = str | bytes

# One character each, chosen for what breaks text handling.
SINGLES = (
    "a",
    "中",
    "語",
    "🎉",
    "👍🏽",
    "\u0301",  # a combining mark with no base
    "e\u0301",
    "👨\u200d👩\u200d👧",
    "\u200d",
    "\ufeff",
    "\x00",
    "\u2028",
    "ß",
    "İ",
    "ﬁ",
    "\U0001d400",
    "א",
    "*",
    '"',
    "%",
    "_",
)
BLANKS = ("", " ", "  ", "\n", "\t", "\u3000", "\u00a0", " \n\t ")
# Words the searches look for: they occur in the texts drawn here.
WORDS = ("budget", "café", "cafe", "naïve", "東京", "会議", "Ana", "launch", "x", "budgets", "🎉", "e\u0301t\u00e9")
NOT_UTF8 = (b"\xff", b"caf\xe9 budget", b"\xc3", b"budget \xed\xa0\x80")


class Blob(bytes):
    """Bytes written as a BLOB where the schema says TEXT (other bytes are written as TEXT that is not UTF-8)."""


UUID_LIKE = "00000000-0000-4000-8000-{:012x}"


def weird_text() -> st.SearchStrategy[Text]:
    """A text that is empty, blank, one odd character, a few words, unicode soup, long, or not UTF-8."""
    words = st.lists(st.sampled_from(WORDS + SINGLES), min_size=1, max_size=8)
    seps = st.sampled_from([" ", " ", "", "\n", "  ", ", "])
    sentence = st.tuples(words, seps).map(lambda p: p[1].join(p[0]))
    return weighted(
        (3, st.sampled_from(BLANKS)),
        (3, st.sampled_from(SINGLES)),
        (6, sentence),
        (2, st.text(max_size=12)),
        (1, st.tuples(st.sampled_from(WORDS), st.integers(300, 3000)).map(lambda p: (p[0] + " ") * p[1])),
        (1, st.sampled_from(NOT_UTF8)),
    )


def nullable(strategy: st.SearchStrategy[object]) -> st.SearchStrategy[object]:
    return weighted((1, st.none()), (3, strategy))


# RFC 3339 UTC with milliseconds, as the schema's convention says: ties, extremes, and the usual.
TIMES = weighted(
    (4, st.integers(0, 60).map(lambda d: f"2026-{4 + d // 30:02d}-{1 + d % 28:02d}T10:00:00.000Z")),
    (1, st.sampled_from(["0001-01-01T00:00:00.000Z", "9999-12-31T23:59:59.999Z", "1970-01-01T00:00:00.000Z"])),
    (1, st.datetimes().map(lambda d: d.strftime("%Y-%m-%dT%H:%M:%S.") + f"{d.microsecond // 1000:03d}Z")),
)
# A transcript's or a task's created_at (or due_at, updated_at) as the schema allows it (TEXT, no CHECK), beside
# the usual: SQLite's own datetime form, a date alone, an offset, words, empty, long, and bytes (a BLOB, which
# sorts after every text).
ODD_CREATED = (
    "",
    " ",
    "2026-05-20 10:00:00",
    "2026-05-20",
    "2026-05-20T12:00:00+02:00",
    "yesterday",
    "2026-05-20T10:00:00.000Z" + " and then some words after it" * 2,
    Blob(b"\x00\x01"),
    Blob(b"2026-05-20T10:00:00.000Z"),
)
CREATED = weighted((8, TIMES), (1, st.sampled_from(ODD_CREATED)))
MS = weighted(
    (4, st.integers(0, 10**7)),
    (1, st.sampled_from([0, -1, -(10**6), 2**53, 2**62, 2**63 - 1, -(2**63)])),
)
LABELS = weighted(
    (4, st.sampled_from(["Ana", "ana", " ANA ", "Ána", "Speaker 1", "中文", "🎉"])),
    (2, st.sampled_from(BLANKS)),
    (1, st.sampled_from(["x" * 201, "Ana " * 300, "é" * 199 + "\u0301"])),
    (1, st.sampled_from(SINGLES)),
)


def short(value: object) -> str:
    """repr of value, a long text cut to its start and length (Hypothesis prints the whole store)."""
    if isinstance(value, (str, bytes)) and len(value) > 60:
        return f"{value[:40]!r}+...({len(value)} long)"
    return repr(value)


@dataclass
class Segment:
    seq: int
    start_ms: int
    end_ms: int
    speaker: Text | None
    text: Text


@dataclass
class Transcript:
    id: str
    title: Text
    source: str
    language: Text | None
    model: Text | None
    duration_ms: int | None
    raw_text: Text
    formatted_text: Text | None
    created_at: str | bytes
    updated_at: str | bytes
    deleted_at: str | None
    segments: list[Segment] = field(default_factory=list)
    workshop: bool = False

    def __repr__(self) -> str:  # a failing example prints its store: long texts are shown by their start
        if self.workshop:
            texts = f"raw_text={short(self.raw_text)}, formatted_text={short(self.formatted_text)}"
            return f"Transcript(workshop, {texts}, {len(self.segments)} segments)"
        fields = ", ".join(f"{k}={short(v)}" for k, v in vars(self).items() if k not in ("segments", "workshop"))
        return f"Transcript({fields}, segments={self.segments!r})"


@dataclass
class Task:
    id: str
    transcript_id: str | None
    title: Text
    notes: Text | None
    status: str
    priority: int | None
    due_at: str | bytes | None
    created_at: str | bytes
    completed_at: str | None


@dataclass
class Shape:
    """One store: its rows, and whether it has the full-text tables."""

    fts: bool
    transcripts: list[Transcript]
    tasks: list[Task]

    @property
    def live(self) -> list[Transcript]:
        return [t for t in self.transcripts if t.deleted_at is None]

    @property
    def trashed(self) -> list[Transcript]:
        return [t for t in self.transcripts if t.deleted_at is not None]


@st.composite
def segments(draw: st.DrawFn, raw: Text | None) -> list[Segment]:
    """Zero, one or many segments; their texts pieces of raw, or not in it at all (all drawn: raw None)."""
    n = draw(weighted((2, st.just(0)), (3, st.just(1)), (3, st.integers(2, 12))))
    pieces: list[Text] = [] if raw is None else list(raw.split(" ")) if isinstance(raw, str) else [raw]
    seqs = draw(weighted((4, st.just("app")), (1, st.just("gaps")), (1, st.just("reversed"))))
    times = draw(weighted((4, st.just("app")), (1, st.just("equal")), (1, st.just("reversed")), (1, st.just("any"))))
    out, at = [], 0
    for k in range(n):
        text = pieces[k] if k < len(pieces) and draw(st.integers(0, 3)) else draw(weird_text())
        seq = {"app": k, "gaps": k * 7 - 3, "reversed": n - k}[seqs]
        if times == "app":
            start, end = at, at + 500 + 10 * len(text)
        elif times == "equal":
            start = end = draw(st.sampled_from([0, 1000]))
        elif times == "reversed":
            start, end = 10**6 - at, 10**6 - at - 700
        else:
            start, end = draw(MS), draw(MS)
        at = end
        out.append(Segment(seq, start, end, draw(nullable(LABELS)), text))  # type: ignore[arg-type]
    return out


@st.composite
def transcripts(draw: st.DrawFn, k: int) -> Transcript:
    joined = draw(st.booleans())
    segs: list[Segment]
    if joined:  # as the app writes it: the raw text is the segments joined by a space
        segs = draw(segments(None))
        texts = [s.text for s in segs if isinstance(s.text, str)]
        raw: Text = " ".join(texts) if len(texts) == len(segs) else draw(weird_text())
    else:
        raw = draw(weird_text())
        segs = draw(segments(raw))
    created = draw(CREATED)
    return Transcript(
        id=UUID_LIKE.format(k) if draw(st.integers(0, 5)) else draw(st.sampled_from([f"ID-{k}", f"{k}", f"x%_{k}"])),
        title=draw(weird_text()),
        source=draw(st.sampled_from(["dictation", "meeting", "file"])),
        language=draw(nullable(st.sampled_from(["en", "pt-BR", "", " ", "zz", "x-klingon", "中文", "en" * 100]))),  # type: ignore[arg-type]
        model=draw(nullable(weird_text())),  # type: ignore[arg-type]
        duration_ms=draw(nullable(st.sampled_from([0, 1, 1000, 2**31, 2**63 - 1]))),  # type: ignore[arg-type]
        raw_text=raw,
        formatted_text=draw(weighted((3, st.none()), (1, st.just("")), (1, st.just(raw)), (2, weird_text()))),
        created_at=created,
        updated_at=draw(weighted((3, st.just(created)), (1, CREATED))),
        deleted_at=draw(weighted((4, st.none()), (1, TIMES))),
        segments=segs,
    )


@cache
def workshop_segments() -> tuple[tuple[str | None, str], ...]:
    """The workshop's 2,400 segments (about 100 KiB joined), the same in every example."""
    out = []
    for k in range(2400):
        words = [WORDS[(k * 5 + i) % len(WORDS)] for i in range(2 + k % 7)]
        out.append((("Ana", "Bo", None, "中文")[k % 4], f"{k}: " + " ".join(words)))
    return tuple(out)


@st.composite
def workshop(draw: st.DrawFn, k: int) -> Transcript:
    """A workshop-size transcript: raw text over 64 KiB, read by window; its variants are cheap to draw."""
    said = workshop_segments()
    raw = " ".join(text for _, text in said)
    kept = draw(st.sampled_from(["all", "none", "half"]))
    chosen = said if kept == "all" else () if kept == "none" else said[::2]
    segs = [Segment(seq, seq * 1000, seq * 1000 + 900, sp, text) for seq, (sp, text) in enumerate(chosen)]
    return Transcript(
        id=UUID_LIKE.format(k),
        title="Workshop",
        source="meeting",
        language="en",
        model=None,
        duration_ms=None,
        raw_text=raw + draw(st.sampled_from(["", "\x00 after a NUL", " trailing 🎉"])),
        formatted_text=draw(st.sampled_from([None, "", "**Formatted** " + raw[:70_000], "short"])),
        created_at="2026-05-20T10:00:00.000Z",
        updated_at="2026-05-20T10:00:00.000Z",
        deleted_at=None,
        segments=segs,
        workshop=True,
    )


@st.composite
def tasks(draw: st.DrawFn, k: int, ids: list[str]) -> Task:
    status = draw(st.sampled_from(["open", "done"]))
    return Task(
        id=UUID_LIKE.format(0xB00 + k),
        transcript_id=draw(weighted((1, st.none()), (4, st.sampled_from(ids or ["gone"])), (1, st.just("gone")))),
        title=draw(weird_text()),
        notes=draw(nullable(weird_text())),  # type: ignore[arg-type]
        status=status,
        priority=draw(st.sampled_from([None, 1, 2, 3])),
        due_at=draw(nullable(CREATED)),  # type: ignore[arg-type]
        created_at=draw(CREATED),
        completed_at=draw(nullable(TIMES)) if status == "done" else draw(weighted((5, st.none()), (1, TIMES))),  # type: ignore[arg-type]
    )


@st.composite
def shapes(draw: st.DrawFn) -> Shape:
    n = draw(st.integers(0, 5))
    rows = [draw(transcripts(k)) for k in range(n)]
    if draw(st.sampled_from([False, False, False, True])):  # one store in four: it costs the most to serve
        rows.append(draw(workshop(n)))
    ids = list(dict.fromkeys(t.id for t in rows))
    rows = [next(t for t in rows if t.id == i) for i in ids]  # ids are the primary key
    listed = draw(st.lists(st.integers(0, 10), max_size=5))
    return Shape(draw(st.booleans()), rows, [draw(tasks(k, ids)) for k in range(len(listed))])


def write(shape: Shape, path: Path) -> Path:
    """The store file for shape, written as the app leaves it (WAL, user_version 1)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path)
    conn.executescript(schema_sql() if shape.fts else no_fts_schema_sql())
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA user_version = 1")
    for t in shape.transcripts:
        insert(conn, "transcripts", {k: v for k, v in vars(t).items() if k not in ("segments", "workshop")})
        for s in t.segments:
            insert(conn, "segments", {"transcript_id": t.id, **vars(s)})
    for k in shape.tasks:
        insert(conn, "tasks", vars(k))
    conn.commit()
    conn.close()
    return path


def insert(conn: sqlite3.Connection, table: str, row: dict[str, object]) -> None:
    """One row, each Blob bound as a BLOB and other bytes cast to TEXT (not UTF-8, as a broken writer leaves it)."""
    marks = ", ".join(
        "CAST(? AS TEXT)" if isinstance(v, bytes) and not isinstance(v, Blob) else "?" for v in row.values()
    )
    conn.execute(f"INSERT INTO {table} ({', '.join(row)}) VALUES ({marks})", tuple(row.values()))
