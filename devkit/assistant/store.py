"""Write the assistant set's store: the planted transcripts among everyday filler, 1k or 10k in all.

Deterministic from the seed (ids, dates, text and times), written with ``devkit.storefactory.StoreBuilder`` from the
contract schema (FTS tables and their triggers included). Segments carry real times (about 15 characters a
second of speech), raw text is the segments joined by a space as the app writes it, formatted text one paragraph
per speaker turn. About 2% of the filler is in the trash, besides the planted trash.

    python -m devkit.assistant.store --size 1k --out /work/eval/assistant-1k.db
"""

from __future__ import annotations

import argparse
import random
import uuid
from collections.abc import Sequence
from datetime import datetime, timedelta, timezone
from pathlib import Path

from devkit.assistant import filler
from devkit.assistant.planted import (
    FIRST_DAY,
    NOW,
    PLANTED,
    QUIET_DAYS,
    RESERVED_PAIRS,
    RESERVED_SPEAKERS,
    RESERVED_TITLE,
    Planted,
)
from devkit.storefactory import StoreBuilder

DEFAULT_SEED = 44
SIZES = {"1k": 1_000, "10k": 10_000}
LANGUAGES = (("en", 0.80), ("pt-BR", 0.07), ("es", 0.05), ("de", 0.04), ("fr", 0.04))
MS_PER_CHAR = 65  # about 15 characters a second of speech
GAP_MS = 400


def stamp(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def _at(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=timezone.utc)


class Writer:
    """One store being written: ids and filler from one seeded generator, so a seed gives the same store."""

    def __init__(self, path: Path, seed: int) -> None:
        self.rng = random.Random(seed)
        self.builder = StoreBuilder(path)

    def new_id(self) -> str:
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))

    def transcript(
        self,
        *,
        title: str,
        source: str,
        language: str,
        created: datetime,
        turns: list[tuple[str | None, str, int]],  # speaker, text, start_ms
        formatted: bool,
        trashed: bool,
    ) -> str:
        tid = self.new_id()
        raw = " ".join(text for _, text, _ in turns)
        paragraphs: list[str] = []
        for speaker, text, _ in turns:
            if speaker is None:
                paragraphs.append(text)
            elif paragraphs and paragraphs[-1].startswith(f"**{speaker}:**"):
                paragraphs[-1] += " " + text
            else:
                paragraphs.append(f"**{speaker}:** {text}")
        ends = [start + max(1500, MS_PER_CHAR * len(text)) for _, text, start in turns]
        duration = ends[-1] if ends else 0
        self.builder.transcript(
            id=tid,
            title=title,
            source=source,
            language=language,
            duration_ms=duration,
            raw_text=raw,
            formatted_text="\n\n".join(paragraphs) if formatted else None,
            created_at=stamp(created),
            updated_at=stamp(created + timedelta(milliseconds=duration + 60_000)),
            deleted_at=stamp(created + timedelta(days=3)) if trashed else None,
            segments=[],
        )
        for seq, ((speaker, text, start), end) in enumerate(zip(turns, ends, strict=True)):
            self.builder.execute(
                "INSERT INTO segments (transcript_id, seq, start_ms, end_ms, speaker, text) VALUES (?,?,?,?,?,?)",
                (tid, seq, start, end, speaker, text),
            )
        return tid

    def task(
        self, tid: str | None, title: str, notes: str | None, status: str, due: str | None, created: datetime
    ) -> None:
        done = stamp(created + timedelta(days=2)) if status == "done" else None
        self.builder.task(
            id=self.new_id(),
            transcript_id=tid,
            title=title,
            notes=notes,
            status=status,
            priority=self.rng.choice((None, 1, 2, 3)),
            due_at=due,
            created_at=stamp(created + timedelta(minutes=5)),
            completed_at=done,
        )


def timed(lines: Sequence[tuple[str | None, str]]) -> list[tuple[str | None, str, int]]:
    """Lines said one after the other, each as long as its text."""
    out: list[tuple[str | None, str, int]] = []
    at = 0
    for speaker, text in lines:
        out.append((speaker, text, at))
        at += max(1500, MS_PER_CHAR * len(text)) + GAP_MS
    return out


def planted_turns(w: Writer, p: Planted) -> list[tuple[str | None, str, int]]:
    speakers = list(dict.fromkeys(line.speaker for line in p.lines if line.speaker))
    if p.source != "meeting":
        return timed([(line.speaker, line.text) for line in p.lines])
    if p.hours:  # a long meeting: everyday talk up to each key line's minute, and on to the end
        others = [n for n in ("Ana", "Chen", "Elena", "Nikhil", "Wen") if n not in speakers]
        voices = [*speakers, *others[:3]]
        out: list[tuple[str | None, str, int]] = []
        at = 0
        keys = sorted(p.lines, key=lambda line: line.at_min or 0.0)
        for stop, key in [*((int((k.at_min or 0) * 60_000), k) for k in keys), (int(p.hours * 3_600_000), None)]:
            while at < stop - 20_000:
                text = filler.line(w.rng, p.language)
                out.append((w.rng.choice(voices), text, at))
                at += max(1500, MS_PER_CHAR * len(text)) + GAP_MS + w.rng.randint(0, 8_000)
            if key is not None:
                at = max(at, stop)
                out.append((key.speaker, key.text, at))
                at += max(1500, MS_PER_CHAR * len(key.text)) + GAP_MS
        return out
    before = [(w.rng.choice(speakers), filler.line(w.rng, p.language)) for _ in range(w.rng.randint(2, 4))]
    after = [(w.rng.choice(speakers), filler.line(w.rng, p.language)) for _ in range(w.rng.randint(1, 3))]
    return timed([*before, *((line.speaker, line.text) for line in p.lines), *after])


def write_planted(w: Writer) -> None:
    for p in PLANTED:
        created = _at(p.when)
        tid = w.transcript(
            title=p.title,
            source=p.source,
            language=p.language,
            created=created,
            turns=planted_turns(w, p),
            formatted=p.formatted,
            trashed=p.trashed,
        )
        for t in p.tasks:
            due = stamp(_at(t.due)) if t.due else None
            w.task(tid, t.title, t.notes, t.status, due, created)


def _allowed(month: str, title: str, speakers: list[str]) -> bool:
    pair = RESERVED_PAIRS.get(month)
    if pair and set(pair) <= set(speakers):
        return False
    if RESERVED_SPEAKERS.get(month) in speakers:
        return False
    r_month, r_title, r_name = RESERVED_TITLE
    return not (month == r_month and r_title.lower() in title.lower() and r_name in speakers)


def _filler_time(w: Writer) -> datetime:
    span = (NOW - FIRST_DAY).days
    while True:
        day = FIRST_DAY + timedelta(days=w.rng.randrange(span))
        if day.strftime("%Y-%m-%d") not in QUIET_DAYS:
            return day + timedelta(hours=w.rng.randint(7, 20), minutes=w.rng.randrange(60), seconds=w.rng.randrange(60))


def write_filler(w: Writer, count: int) -> None:
    languages = [code for code, _ in LANGUAGES]
    weights = [share for _, share in LANGUAGES]
    for _ in range(count):
        created = _filler_time(w)
        kind = w.rng.random()
        trashed = w.rng.random() < 0.02
        if kind < 0.55:
            language = w.rng.choices(languages, weights)[0]
            title = filler.meeting_title(w.rng, language)
            while True:
                speakers = w.rng.sample(filler.NAMES, w.rng.randint(2, 5))
                if _allowed(created.strftime("%Y-%m"), title, speakers):
                    break
            lines = [(w.rng.choice(speakers), filler.line(w.rng, language)) for _ in range(w.rng.randint(8, 40))]
            tid = w.transcript(
                title=title,
                source="meeting",
                language=language,
                created=created,
                turns=timed(lines),
                formatted=w.rng.random() < 0.9,
                trashed=trashed,
            )
            tasks = w.rng.choice((0, 0, 1, 1, 2, 3))
        elif kind < 0.90:
            title, text = filler.dictation(w.rng)
            tid = w.transcript(
                title=title,
                source="dictation",
                language="en",
                created=created,
                turns=timed([(None, text)]),
                formatted=w.rng.random() < 0.8,
                trashed=trashed,
            )
            tasks = w.rng.choice((0, 0, 0, 1))
        else:
            voice: list[tuple[str | None, str]] = [
                (None, filler.line(w.rng, "en")) for _ in range(w.rng.randint(5, 20))
            ]
            tid = w.transcript(
                title=filler.file_title(w.rng),
                source="file",
                language="en",
                created=created,
                turns=timed(voice),
                formatted=True,
                trashed=trashed,
            )
            tasks = 0
        for _ in range(tasks):
            title, notes = filler.task(w.rng)
            status = "done" if w.rng.random() < 0.45 else "open"
            due = stamp(created + timedelta(days=w.rng.randint(1, 30), hours=2)) if w.rng.random() < 0.6 else None
            w.task(tid, title, notes, status, due, created)


def build(path: Path, size: int, seed: int = DEFAULT_SEED) -> Path:
    """The store of size transcripts (planted ones included) at path, which must not exist yet."""
    if path.exists():
        raise FileExistsError(path)
    w = Writer(path, seed)
    write_planted(w)
    write_filler(w, max(0, size - len(PLANTED)))
    return w.builder.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", choices=sorted(SIZES), required=True)
    parser.add_argument("--out", type=Path, required=True, help="the store file to write (must not exist)")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    args = parser.parse_args(argv)
    path = build(args.out, SIZES[args.size], args.seed)
    print(f"{path}: {SIZES[args.size]} transcripts, seed {args.seed}, now {NOW.isoformat()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
