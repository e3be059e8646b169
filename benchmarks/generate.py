"""Generate large, realistic Magnotia stores for the benchmarks.

A store is built from the contract schema file itself (``schema_v1.sql``), so it
has exactly the tables, indexes, FTS5 tables and triggers the app creates. The
content is pseudo-English drawn from a Zipf-like distribution over a vocabulary
of real common words followed by a long tail of generated rare words, so common
words match nearly every transcript and rare ones only a handful.

Shape (per the benchmark issue): ~40% meetings of ~60 diarized segments, ~50%
one-segment dictations, the rest uploaded files; ~6,000 characters of raw text
on average; formatted text for most transcripts; ~2 tasks per 3 transcripts;
~2% of transcripts in the trash; ``created_at`` spread over ~3 years. Beside
them, one all-day workshop (10 hours, >= 20,000 segments, >= 1.2M characters:
the long meeting the window and search costs are measured on) and a few short
notes that share its marker word (``WORKSHOP_WORD``), so a search can be run
with and without it among its hits.

Everything is derived from the seed and the chunk number, so a store is the same
byte for byte whatever the number of worker processes. Stores are cached under
``benchmarks/.cache/`` (or ``$MAGNOTIA_BENCH_CACHE``), keyed by size, generator
version and a hash of the schema text; a cached store is reused as is.

Usage: ``python benchmarks/generate.py --sizes 1k,10k,100k``
"""

from __future__ import annotations

import argparse
import array
import hashlib
import json
import math
import multiprocessing
import os
import random
import re
import sqlite3
import sys
import time
import unicodedata
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "GENERATOR_VERSION",
    "StoreInfo",
    "cache_dir",
    "default_schema_path",
    "ensure_store",
    "parse_size",
    "size_label",
]

# Bump whenever the content or shape of generated stores changes: it is part of
# the cache key, so old stores are not reused by mistake.
GENERATOR_VERSION = 2
DEFAULT_SEED = 20260509
CHUNK = 500  # transcripts per unit of work (and per insert transaction)

BENCH_DIR = Path(__file__).resolve().parent
REPO_DIR = BENCH_DIR.parent

# The newest created_at; the store spans ~3 years before it.
END_EPOCH_MS = 1_777_593_600_000  # 2026-05-01T00:00:00Z
SPAN_MS = 1096 * 86_400_000

# ---------------------------------------------------------------------------
# Vocabulary

# Real words, roughly in order of spoken frequency; the first ranks of the Zipf
# distribution. Fillers ("um", "uh") exist only in raw text.
_COMMON_TEXT = """
the i and to a you that it of is we in so this like know for be was on have
they just but what it's not with do think yeah are there can one if about at
all going get don't go at right me my really because or as an he some would
people time there's them had out up then were now okay when see could more how
their which also our us by want need make good work will been thing things
these lot very kind other team can't those project well much where meeting
because way next week any should into back new first said look over something
its even still here two only did let's sure through data customer after why
going before actually maybe most today change feature release plan call
question design review user product issue idea deadline budget sprint roadmap
quarter launch test build deploy server client report number update point
problem process decision today tomorrow monday tuesday wednesday thursday
friday morning afternoon email document team's manager support sales marketing
engineering finance legal contract price cost value risk goal target metric
dashboard feedback priority task version bug fix ticket backlog estimate
schedule agenda notes summary follow action owner status demo prototype
research interview survey launch partner vendor invoice payment account login
password security privacy model audio transcript recording microphone speaker
language format export import sync cloud local device laptop phone app website
page screen button
"""
_COMMON = tuple(_COMMON_TEXT.split())

# Accented words (the tokenizer folds their diacritics) and a few names.
_ACCENTED = [
    "café",
    "naïve",
    "résumé",
    "façade",
    "jalapeño",
    "São",
    "Paulo",
    "Zoë",
    "crème",
    "brûlée",
    "Müller",
    "José",
    "Björn",
    "fiancée",
    "déjà",
    "vu",
    "piñata",
    "Ångström",
    "Ñandú",
    "coördinate",
    "über",
    "Kraków",
    "Dvořák",
]
_NAMES = [
    "Ana",
    "Bruno",
    "Chen",
    "Dmitri",
    "Elena",
    "Fatima",
    "Gabriel",
    "Hiro",
    "Ines",
    "Jonas",
    "Kofi",
    "Lucia",
    "Marta",
    "Nikhil",
    "Olga",
    "Priya",
    "Quentin",
    "Rosa",
    "Sven",
    "Tariq",
    "Uma",
    "Viktor",
    "Wen",
    "Yusuf",
]
_ONSETS = (
    "b",
    "c",
    "d",
    "f",
    "g",
    "h",
    "j",
    "k",
    "l",
    "m",
    "n",
    "p",
    "r",
    "s",
    "t",
    "v",
    "w",
    "z",
    "br",
    "cl",
    "dr",
    "fl",
    "gr",
    "pl",
    "pr",
    "sk",
    "st",
    "str",
    "tr",
    "th",
    "sh",
    "ch",
)
_VOWELS = ("a", "e", "i", "o", "u", "ai", "ea", "io", "ou", "ia")
_CODAS = ["", "", "", "n", "r", "s", "l", "m", "nd", "st", "rk", "x", "th"]

RARE_WORDS = 150_000  # generated tail of the vocabulary
TABLE_BITS = 22
TABLE_SIZE = 1 << TABLE_BITS
_TABLE_SHIFT = 32 - TABLE_BITS
ZIPF_S = 1.2
ZIPF_Q = 2.7
FILLERS = ("um", "uh", "you know", "I mean")
SPEAKERS_POOL = _NAMES + [f"Speaker {n}" for n in range(1, 7)]
MODELS = (
    "whisper-large-v3-turbo",
    "whisper-large-v3-turbo",
    "whisper-large-v3-turbo",
    "whisper-small",
    "parakeet-tdt-0.6b-v2",
)
LANGUAGES = ("en",) * 90 + ("en-GB",) * 4 + ("pt-BR",) * 3 + ("fr",) * 2 + ("de",)


@dataclass(frozen=True)
class Vocabulary:
    """The words, their cumulative Zipf weights, and each word's rank."""

    words: list[str]
    table: list[str]  # each word repeated in proportion to its weight: uniform draws follow Zipf
    rank: dict[str, int]
    first_rare: int  # rank of the first generated word


def build_vocabulary(seed: int) -> Vocabulary:
    """The same vocabulary for the same seed, in every process."""
    rng = random.Random(f"vocab:{seed}")
    words: list[str] = []
    seen: set[str] = set()
    for w in _COMMON:
        if w not in seen:
            seen.add(w)
            words.append(w)
    # Accented words and names sit in the middle ranks: present, not everywhere.
    mid = _ACCENTED + _NAMES
    first_rare = len(words) + len(mid)
    words_mid = list(mid)
    rare: list[str] = []
    while len(rare) < RARE_WORDS:
        n = rng.choice((2, 2, 3, 3, 3, 4))
        w = "".join(rng.choice(_ONSETS) + rng.choice(_VOWELS) for _ in range(n)) + rng.choice(_CODAS)
        if w not in seen and len(w) >= 4:
            seen.add(w)
            rare.append(w)
    # Interleave the accented words and names into ranks ~400..2,000.
    tail = rare[:]
    for i, w in enumerate(words_mid):
        tail.insert(150 + i * 60, w)
    words.extend(tail)
    # Uniform draws from a table are ~3x faster than weighted draws. Words whose
    # expected share of the table is below one entry get 0 or 1 at random, so the
    # tail keeps its expected frequency.
    weights = [1.0 / (r + 1 + ZIPF_Q) ** ZIPF_S for r in range(len(words))]
    scale = TABLE_SIZE / sum(weights)
    table: list[str] = []
    for w, x in zip(words, weights, strict=True):
        share = x * scale
        table.extend([w] * (int(share) + (rng.random() < share - int(share))))
    # Rounding leaves the table a little off TABLE_SIZE: pad or trim its tail.
    table = (table + rng.choices(words[first_rare:], k=max(0, TABLE_SIZE - len(table))))[:TABLE_SIZE]
    return Vocabulary(words, table, {w: r for r, w in enumerate(words)}, first_rare)


# ---------------------------------------------------------------------------
# Content


def _ts(epoch_ms: int) -> str:
    """RFC 3339 UTC with milliseconds and a Z, as the app writes them."""
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(epoch_ms // 1000)) + f".{epoch_ms % 1000:03d}Z"


def _uuid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


@dataclass
class Chunk:
    """The rows of one unit of work, ready for executemany."""

    transcripts: list[tuple[Any, ...]] = field(default_factory=list)
    segments: list[tuple[Any, ...]] = field(default_factory=list)
    tasks: list[tuple[Any, ...]] = field(default_factory=list)
    rare_words: list[str] = field(default_factory=list)
    phrases: list[str] = field(default_factory=list)
    raw_chars: int = 0


_VOCAB: Vocabulary | None = None


def _vocab(seed: int) -> Vocabulary:
    global _VOCAB
    if _VOCAB is None:
        _VOCAB = build_vocabulary(seed)
    return _VOCAB


def _sentences(rng: random.Random, voc: Vocabulary, n_words: int) -> list[str]:
    """About n_words of text as a list of punctuated sentences."""
    idx = array.array("I", rng.randbytes(4 * max(n_words, 3)))
    if sys.byteorder == "big":
        idx.byteswap()  # the same words on every machine
    table = voc.table
    toks = [table[x >> _TABLE_SHIFT] for x in idx]
    rnd = rng.random
    out: list[str] = []
    i = 0
    while i < len(toks):
        n = 4 + int(rnd() * 17)
        s = toks[i : i + n]
        i += n
        if len(s) > 6 and rnd() < 0.3:
            k = 2 + int(rnd() * (len(s) - 3))
            s[k] = s[k] + ","
        s[0] = s[0].capitalize() if s[0].islower() else s[0]
        out.append(" ".join(s) + ("?" if rnd() < 0.12 else "."))
    return out


def _raw(rng: random.Random, sentences: list[str]) -> str:
    """Speech-to-text output: the sentences with a few spoken fillers."""
    parts: list[str] = []
    for s in sentences:
        if rng.random() < 0.15:
            parts.append(rng.choice(FILLERS).capitalize() + ", " + s[:1].lower() + s[1:])
        else:
            parts.append(s)
    return " ".join(parts)


def _title(rng: random.Random, voc: Vocabulary, source: str) -> str:
    if rng.random() < 0.05:
        return ""  # not titled yet
    w = rng.choices(voc.words[60:3000], k=3)
    name = rng.choice(_NAMES)
    if source == "meeting":
        pattern = rng.choice(
            ("Weekly sync: {0} {1}", "{N} / {0} review", "Call with {N} about {0}", "{0} {1} planning", "Standup {2}")
        )
    elif source == "dictation":
        pattern = rng.choice(("Note on {0}", "{0} {1} idea", "Reminder: {0} {1}", "Thoughts about {0} {2}"))
    else:
        pattern = rng.choice(("{0} {1} recording", "Interview with {N}", "Lecture: {0} {1} {2}"))
    t = pattern.format(*w, N=name)
    return t[:1].upper() + t[1:]


def make_chunk(seed: int, n_total: int, chunk_no: int) -> Chunk:
    """Rows for transcripts [chunk_no*CHUNK, ...) of a store of n_total."""
    voc = _vocab(seed)
    rng = random.Random(f"chunk:{seed}:{n_total}:{chunk_no}")
    out = Chunk()
    lo = chunk_no * CHUNK
    hi = min(n_total, lo + CHUNK)
    live_ids: list[tuple[str, int]] = []
    for i in range(lo, hi):
        tid = _uuid(rng)
        created = END_EPOCH_MS - SPAN_MS + int((i + rng.random() * 0.9) * SPAN_MS / n_total)
        r = rng.random()
        source = "meeting" if r < 0.40 else ("dictation" if r < 0.90 else "file")
        seg_texts: list[tuple[str, str | None, int]] = []  # text, speaker, n_words
        if source == "meeting":
            n_seg = rng.randint(35, 85) * (4 if rng.random() < 0.01 else 1)
            speakers = rng.sample(SPEAKERS_POOL, rng.randint(2, 6))
            for _ in range(n_seg):
                nw = int(rng.expovariate(1 / 29)) + 3
                sents = _sentences(rng, voc, nw)
                seg_texts.append((_raw(rng, sents), rng.choice(speakers), nw))
        elif source == "dictation":
            nw = int(rng.lognormvariate(4.7, 0.6)) + 5
            sents = _sentences(rng, voc, nw)
            seg_texts.append((_raw(rng, sents), None, nw))
        else:
            n_seg = rng.randint(15, 45)
            for _ in range(n_seg):
                nw = int(rng.expovariate(1 / 38)) + 5
                sents = _sentences(rng, voc, nw)
                seg_texts.append((_raw(rng, sents), None, nw))
        if rng.random() < 0.003:  # an emoji now and then, outside the BMP
            t0, sp0, nw0 = seg_texts[0]
            seg_texts[0] = (t0 + " 👍🏽 done.", sp0, nw0)
        raw_text = " ".join(t for t, _, _ in seg_texts)
        # Segments and duration: ~380 ms a word plus pauses.
        ms = 0
        for seq, (text, speaker, nw) in enumerate(seg_texts):
            start = ms + rng.randint(0, 900)
            end = start + nw * rng.randint(300, 460)
            ms = end
            out.segments.append((tid, seq, start, end, speaker, text))
        duration = ms + rng.randint(0, 2000)
        formatted: str | None
        if rng.random() < 0.85:
            if source == "meeting":
                formatted = "\n\n".join(f"**{sp}:** {_unfill(t)}" for t, sp, _ in seg_texts)
            else:
                body = _unfill(raw_text)
                paras = re.split(r"(?<=[.?]) (?=[A-Z])", body)
                step = rng.randint(3, 7)
                formatted = "\n\n".join(" ".join(paras[k : k + step]) for k in range(0, len(paras), step))
        else:
            formatted = None
        language: str | None = rng.choice(LANGUAGES) if rng.random() > 0.01 else None
        if language == "fr" and rng.random() < 0.5:
            # Decomposed accents (base letter + combining mark), as some tools write them.
            raw_text = unicodedata.normalize("NFD", raw_text)
        updated = created + duration + rng.randint(1_000, 600_000)
        deleted = _ts(updated + rng.randint(60_000, 90 * 86_400_000)) if rng.random() < 0.02 else None
        out.transcripts.append(
            (
                tid,
                _title(rng, voc, source),
                source,
                language,
                rng.choice(MODELS) if rng.random() > 0.02 else None,
                duration,
                raw_text,
                formatted,
                _ts(created),
                _ts(updated),
                deleted,
            )
        )
        out.raw_chars += len(raw_text)
        if deleted is None:
            live_ids.append((tid, created))
            if rng.random() < 0.05:
                toks = raw_text.split()
                if len(toks) > 8:
                    rarest = max((t.strip(",.?") for t in toks), key=lambda t: voc.rank.get(t.lower(), -1))
                    if voc.rank.get(rarest.lower(), -1) >= voc.first_rare:
                        out.rare_words.append(rarest.lower())
                    k = rng.randrange(len(toks) - 3)
                    phrase = " ".join(t.strip(",.?").lower() for t in toks[k : k + rng.randint(2, 3)])
                    if phrase.isascii():
                        out.phrases.append(phrase)
        # ~2 tasks per 3 transcripts, most extracted from one.
        for _ in range(_poisson(rng, 2 / 3)):
            out.tasks.append(_task(rng, voc, tid, created))
    for _ in range(_poisson(rng, (hi - lo) * 0.05)):  # tasks typed in by hand
        created = END_EPOCH_MS - SPAN_MS + int(rng.uniform(lo, hi) * SPAN_MS / n_total)
        out.tasks.append(_task(rng, voc, None, created))
    return out


# The long meeting: what it takes to read a window or shape a search hit must not
# follow its size. Created last, so it is on the first page of every list.
WORKSHOP_SEGMENTS = 21_000
WORKSHOP_MIN_CHARS = 1_250_000
WORKSHOP_MS = 10 * 3_600_000
# Said 30 times in the workshop and once in each of WORKSHOP_NOTES short notes.
WORKSHOP_WORD = "quillion"
WORKSHOP_NOTES = 5
# A speaker who first speaks in the last hour: a speaker list must walk to the end.
_LATE_SPEAKER = "Guest speaker"


def make_workshop(seed: int) -> tuple[Chunk, dict[str, Any]]:
    """The all-day workshop and the notes that share its marker word; and what the benchmark needs to know."""
    voc = _vocab(seed)
    rng = random.Random(f"workshop:{seed}")
    out = Chunk()
    tid = _uuid(rng)
    created = END_EPOCH_MS - WORKSHOP_MS - 3_600_000
    speakers = rng.sample(SPEAKERS_POOL, 6)
    texts: list[str] = []
    said = {int(WORKSHOP_SEGMENTS * k / 30) + 7 for k in range(30)}
    chars = 0
    seq = 0
    while seq < WORKSHOP_SEGMENTS or chars < WORKSHOP_MIN_CHARS:
        text = _raw(rng, _sentences(rng, voc, int(rng.expovariate(1 / 9)) + 3))
        if seq in said:
            text = f"{text} The {WORKSHOP_WORD} came up again."
        late = seq >= WORKSHOP_SEGMENTS * 9 // 10
        speaker = _LATE_SPEAKER if late and rng.random() < 0.1 else rng.choice(speakers)
        texts.append(text)
        # Evenly over ten hours: the times are what a start_ms/end_ms window seeks on.
        start = seq * WORKSHOP_MS // WORKSHOP_SEGMENTS
        out.segments.append((tid, seq, start, start + WORKSHOP_MS // WORKSHOP_SEGMENTS - 50, speaker, text))
        chars += len(text) + 1
        seq += 1
    raw_text = " ".join(texts)
    spoken = [s[4] for s in out.segments]
    formatted = "\n\n".join(f"**{sp}:** {_unfill(t)}" for t, sp in zip(texts, spoken, strict=True))
    ended = created + WORKSHOP_MS
    out.transcripts.append(
        (
            tid,
            "All-day workshop: planning the year",
            "meeting",
            "en",
            MODELS[0],
            WORKSHOP_MS,
            raw_text,
            formatted,
            _ts(created),
            _ts(ended + 60_000),
            None,
        )
    )
    out.raw_chars += len(raw_text)
    for _ in range(12):
        out.tasks.append(_task(rng, voc, tid, created))
    for k in range(WORKSHOP_NOTES):
        note = f"{_raw(rng, _sentences(rng, voc, 40))} Remember the {WORKSHOP_WORD} from the workshop."
        at = created - (k + 1) * 86_400_000
        out.transcripts.append(
            (
                _uuid(rng),
                f"Note on the {WORKSHOP_WORD} {k + 1}",
                "dictation",
                "en",
                MODELS[0],
                30_000,
                note,
                None,
                _ts(at),
                _ts(at + 60_000),
                None,
            )
        )
        out.segments.append((out.transcripts[-1][0], 0, 0, 30_000, None, note))
        out.raw_chars += len(note)
    info = {
        "id": tid,
        "created_at": _ts(created),
        "segments": len(out.segments) - WORKSHOP_NOTES,
        "raw_chars": len(raw_text),
        "formatted_chars": len(formatted),
        "duration_ms": WORKSHOP_MS,
        "word": WORKSHOP_WORD,
        "notes": WORKSHOP_NOTES,
    }
    return out, info


def _unfill(text: str) -> str:
    """The formatter's cleanup: drop fillers and re-capitalise."""
    for f in FILLERS:
        cap = f.capitalize() + ", "
        idx = text.find(cap)
        while idx != -1:
            rest = text[idx + len(cap) :]
            text = text[:idx] + rest[:1].upper() + rest[1:]
            idx = text.find(cap, idx)
    return text


def _poisson(rng: random.Random, lam: float) -> int:
    # Knuth's method: fine for the small means used here.
    if lam > 30:
        return max(0, int(rng.gauss(lam, math.sqrt(lam)) + 0.5))
    limit, k, p = math.exp(-lam), 0, rng.random()
    while p > limit:
        k += 1
        p *= rng.random()
    return k


def _task(rng: random.Random, voc: Vocabulary, tid: str | None, created: int) -> tuple[Any, ...]:
    w = rng.choices(voc.words[60:5000], k=3)
    title = rng.choice(
        (
            "Follow up on {0} {1}",
            "Send {0} to {N}",
            "Review the {0} {1}",
            "Book a call with {N} about {0}",
            "Fix {0} {1} {2}",
            "Draft {0} for the {1} meeting",
            "Ask {N} about {0}",
        )
    ).format(*w, N=rng.choice(_NAMES))
    notes = " ".join(_sentences(rng, voc, rng.randint(6, 30))) if rng.random() < 0.5 else None
    t_created = created + rng.randint(60_000, 3_600_000)
    done = rng.random() < 0.55
    completed = _ts(t_created + rng.randint(600_000, 20 * 86_400_000)) if done else None
    due = None
    if rng.random() < 0.65:
        due = _ts(t_created + rng.randint(-2, 45) * 86_400_000 + rng.randint(0, 86_399) * 1000)
    priority = rng.choice((None, None, 1, 2, 2, 3, 3))
    return (_uuid(rng), tid, title, notes, "done" if done else "open", priority, due, _ts(t_created), completed)


# ---------------------------------------------------------------------------
# Building a store


def parse_size(text: str) -> int:
    """'1k' -> 1000, '2.5k' -> 2500, '1m' -> 1000000, '300' -> 300."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kKmM]?)\s*", text)
    if not m:
        raise ValueError(f"not a store size: {text!r} (try 1k, 10k, 100k)")
    n = float(m.group(1)) * {"": 1, "k": 1_000, "m": 1_000_000}[m.group(2).lower()]
    if n < 1:
        raise ValueError(f"store size must be at least 1: {text!r}")
    return int(n)


def size_label(n: int) -> str:
    """1000 -> '1k', 100000 -> '100k', 1500 -> '1500'."""
    if n % 1_000_000 == 0:
        return f"{n // 1_000_000}m"
    if n % 1_000 == 0:
        return f"{n // 1_000}k"
    return str(n)


def default_schema_path() -> Path:
    """The package's copy of the store schema, else the one in docs/."""
    for p in (
        REPO_DIR / "src" / "magnotia_mcp" / "schema_v1.sql",
        REPO_DIR / "docs" / "store-schema-v1.sql",
    ):
        if p.is_file():
            return p
    raise FileNotFoundError("no schema: pass --schema (src/magnotia_mcp/schema_v1.sql is missing)")


def cache_dir() -> Path:
    env = os.environ.get("MAGNOTIA_BENCH_CACHE")
    return Path(env) if env else BENCH_DIR / ".cache"


@dataclass(frozen=True)
class StoreInfo:
    """Where a store is and what the driver needs to know about its content."""

    path: Path
    size: int
    meta: dict[str, Any]


def store_path(size: int, schema_text: str, directory: Path) -> Path:
    digest = hashlib.sha256(schema_text.encode()).hexdigest()[:10]
    return directory / f"store-{size_label(size)}-g{GENERATOR_VERSION}-{digest}.db"


def _split_schema(schema_text: str) -> tuple[str, list[str]]:
    """The schema without its triggers, and the trigger statements verbatim."""
    triggers = re.findall(r"CREATE TRIGGER\b.*?\bEND;", schema_text, flags=re.S | re.I)
    rest = schema_text
    for t in triggers:
        rest = rest.replace(t, "")
    return rest, triggers


def _chunks(seed: int, size: int, workers: int) -> Iterator[Chunk]:
    n_chunks = (size + CHUNK - 1) // CHUNK
    if workers <= 1 or n_chunks <= 2:
        for c in range(n_chunks):
            yield make_chunk(seed, size, c)
        return
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(workers) as pool:
        yield from pool.imap(_make_chunk_star, [(seed, size, c) for c in range(n_chunks)], chunksize=1)


def _make_chunk_star(a: tuple[int, int, int]) -> Chunk:
    return make_chunk(*a)


def build_store(
    path: Path,
    size: int,
    schema_text: str,
    *,
    seed: int = DEFAULT_SEED,
    workers: int | None = None,
    fts_mode: str = "rebuild",
    log: bool = True,
) -> dict[str, Any]:
    """Create a store of `size` transcripts at `path` (replaced if present); returns its metadata."""
    t_start = time.perf_counter()
    workers = workers if workers is not None else max(1, min(4, os.cpu_count() or 1))
    tmp = path.with_name(path.name + ".part")
    for p in (tmp, Path(f"{tmp}-wal"), Path(f"{tmp}-shm"), Path(f"{tmp}-journal")):
        p.unlink(missing_ok=True)
    path.parent.mkdir(parents=True, exist_ok=True)
    schema_no_triggers, triggers = _split_schema(schema_text)
    con = sqlite3.connect(tmp, isolation_level=None)
    try:
        con.executescript(schema_text if fts_mode == "triggers" else schema_no_triggers)
        # Bulk load without a journal; the schema's WAL mode is restored at the end.
        con.execute("PRAGMA journal_mode=OFF")
        con.execute("PRAGMA synchronous=OFF")
        con.execute("PRAGMA cache_size=-262144")
        con.execute("PRAGMA temp_store=MEMORY")
        counts = {"transcripts": 0, "segments": 0, "tasks": 0, "raw_chars": 0}
        rare: list[str] = []
        phrases: list[str] = []
        for ch in _chunks(seed, size, workers):
            _insert(con, ch)
            counts["transcripts"] += len(ch.transcripts)
            counts["segments"] += len(ch.segments)
            counts["tasks"] += len(ch.tasks)
            counts["raw_chars"] += ch.raw_chars
            rare.extend(ch.rare_words)
            phrases.extend(ch.phrases)
            if log and counts["transcripts"] % 10_000 == 0:
                print(
                    f"  {counts['transcripts']:>7} transcripts  {time.perf_counter() - t_start:6.1f}s",
                    file=sys.stderr,
                    flush=True,
                )
        workshop, workshop_info = make_workshop(seed)
        _insert(con, workshop)
        counts["transcripts"] += len(workshop.transcripts)
        counts["segments"] += len(workshop.segments)
        counts["tasks"] += len(workshop.tasks)
        counts["raw_chars"] += workshop.raw_chars
        t_load = time.perf_counter() - t_start
        if fts_mode != "triggers":
            con.execute("INSERT INTO transcripts_fts (transcripts_fts) VALUES ('rebuild')")
            con.execute("INSERT INTO segments_fts (segments_fts) VALUES ('rebuild')")
            for t in triggers:
                con.execute(t)
        t_fts = time.perf_counter() - t_start - t_load
        meta = _meta(con, size, seed, counts, rare, phrases)
        meta["workshop"] = workshop_info
        con.execute("PRAGMA journal_mode=WAL")
        con.execute("PRAGMA user_version=1")
        con.execute("PRAGMA optimize")
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        con.close()
    for suffix in ("-wal", "-shm"):
        Path(f"{tmp}{suffix}").unlink(missing_ok=True)
    meta["build_seconds"] = {
        "load": round(t_load, 2),
        "fts": round(t_fts, 2),
        "total": round(time.perf_counter() - t_start, 2),
    }
    meta["bytes"] = tmp.stat().st_size
    os.replace(tmp, path)
    Path(f"{path}.meta.json").write_text(json.dumps(meta, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return meta


def _insert(con: sqlite3.Connection, ch: Chunk) -> None:
    """One chunk's rows in one transaction."""
    con.execute("BEGIN")
    con.executemany(
        "INSERT INTO transcripts (id, title, source, language, model, duration_ms, raw_text,"
        " formatted_text, created_at, updated_at, deleted_at)"
        " VALUES (?,?,?,?,?,?,?,?,?,?,?)",
        ch.transcripts,
    )
    con.executemany(
        "INSERT INTO segments (transcript_id, seq, start_ms, end_ms, speaker, text) VALUES (?,?,?,?,?,?)",
        ch.segments,
    )
    con.executemany(
        "INSERT INTO tasks (id, transcript_id, title, notes, status, priority, due_at,"
        " created_at, completed_at) VALUES (?,?,?,?,?,?,?,?,?)",
        ch.tasks,
    )
    con.execute("COMMIT")


def _meta(
    con: sqlite3.Connection, size: int, seed: int, counts: dict[str, int], rare: list[str], phrases: list[str]
) -> dict[str, Any]:
    """What the driver needs to build varied queries: words by frequency class, phrases, prefixes."""
    voc = _vocab(seed)

    def live_df(match: str) -> int:
        row = con.execute(
            "SELECT count(*) FROM transcripts_fts f JOIN transcripts t ON t.rowid = f.rowid"
            " WHERE transcripts_fts MATCH ? AND t.deleted_at IS NULL",
            (match,),
        ).fetchone()
        return int(row[0])

    rng = random.Random(f"meta:{seed}:{size}")
    rare_uniq = sorted(set(rare))
    rng.shuffle(rare_uniq)
    rare_ok = [w for w in rare_uniq[:60] if live_df(f'"{w}"') >= 1][:40]
    rng.shuffle(phrases)
    common = ["the", "and", "meeting", "project", "think", "customer", "release", "budget", "design", "data"]
    mid = [w for w in voc.words[400:1400] if w.isascii()]
    rng.shuffle(mid)
    prefixes = sorted({w[:4] for w in voc.words[60:400] if len(w) >= 6 and w.isascii()})
    rng.shuffle(prefixes)
    total = counts["transcripts"]
    return {
        "generator_version": GENERATOR_VERSION,
        "seed": seed,
        "size": size,
        "counts": counts,
        "avg_raw_chars": round(counts["raw_chars"] / max(total, 1)),
        "live_transcripts": int(con.execute("SELECT count(*) FROM transcripts WHERE deleted_at IS NULL").fetchone()[0]),
        "common_words": common,
        "mid_words": mid[:40],
        "rare_words": rare_ok,
        "phrases": phrases[:40],
        "prefixes": prefixes[:20],
        "accented_words": ["café", "cafe", "résumé", "resume", "São", "jalapeno", "Müller"],
        "df": {w: live_df(f'"{w}"') for w in common[:3] + rare_ok[:3]},
    }


def ensure_store(
    size: int,
    *,
    schema: Path | None = None,
    directory: Path | None = None,
    seed: int = DEFAULT_SEED,
    force: bool = False,
    workers: int | None = None,
    fts_mode: str = "rebuild",
    log: bool = True,
) -> StoreInfo:
    """The cached store of `size` transcripts, built first if it is not there yet."""
    schema = schema or default_schema_path()
    schema_text = schema.read_text(encoding="utf-8")
    directory = directory or cache_dir()
    if seed != DEFAULT_SEED:
        directory = directory / f"seed-{seed}"
    path = store_path(size, schema_text, directory)
    meta_path = Path(f"{path}.meta.json")
    if force or not (path.is_file() and meta_path.is_file()):
        if log:
            print(f"generating {size_label(size)} store -> {path}", file=sys.stderr, flush=True)
        meta = build_store(path, size, schema_text, seed=seed, workers=workers, fts_mode=fts_mode, log=log)
        if log:
            b = meta["build_seconds"]
            print(
                f"  done in {b['total']}s (load {b['load']}s, fts {b['fts']}s),"
                f" {meta['bytes'] / 2**20:.0f} MiB, avg {meta['avg_raw_chars']} chars",
                file=sys.stderr,
                flush=True,
            )
    else:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
    return StoreInfo(path, size, meta)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "--sizes", default="1k,10k", help="comma-separated transcript counts, e.g. 1k,10k,100k (default: %(default)s)"
    )
    ap.add_argument(
        "--schema",
        type=Path,
        default=None,
        help="schema SQL file (default: src/magnotia_mcp/schema_v1.sql, else docs/store-schema-v1.sql)",
    )
    ap.add_argument(
        "--cache-dir",
        type=Path,
        default=None,
        help="where stores are kept (default: $MAGNOTIA_BENCH_CACHE or benchmarks/.cache)",
    )
    ap.add_argument("--seed", type=int, default=DEFAULT_SEED, help="random seed (default: %(default)s)")
    ap.add_argument(
        "--workers", type=int, default=None, help="text-generating processes (default: CPU count, at most 4)"
    )
    ap.add_argument(
        "--fts-mode",
        choices=("rebuild", "triggers"),
        default="rebuild",
        help="fill the FTS tables by one 'rebuild' after the load (default, faster) or by the"
        " schema's triggers row by row (the app's own path, ~25% slower); both index the same rows",
    )
    ap.add_argument("--force", action="store_true", help="rebuild even when a cached store exists")
    args = ap.parse_args(argv)
    try:
        sizes = [parse_size(s) for s in args.sizes.split(",") if s.strip()]
    except ValueError as e:
        ap.error(str(e))
    for n in sizes:
        info = ensure_store(
            n,
            schema=args.schema,
            directory=args.cache_dir,
            seed=args.seed,
            force=args.force,
            workers=args.workers,
            fts_mode=args.fts_mode,
        )
        print(info.path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
