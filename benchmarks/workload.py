"""The workload: a seeded, shuffled mix of calls shaped by what a store holds.

Each tool gets about the same number of calls: first and deep pages (cursor
chaining), filters, random ids and text windows, and searches for common, rare,
two-word, phrase, prefix, OR, filtered and accented queries. Those keyword
searches run with the default order (relevance); search also gets half as many
question-style searches ("what did we decide about the budget design", 3 to 6
content words from the store's common, mid and rare words) and a tenth as many
`sort: newest` searches, so that the time-order plans stay measured.

The store's all-day workshop (see generate.py) gets calls of its own: windows of
its text at random offsets and times, with and without segments, and its marker
word searched with the workshop among the hits and, the same search, without it
(``until`` its start). They are drawn last too.
"""

from __future__ import annotations

import random
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass

from client import Json
from floor import parse  # the package's query parser (floor.py finds it in a checkout too)


@dataclass
class Scenario:
    """One logical request, followed for up to `pages` pages (cursor chaining)."""

    tool: str
    kind: str
    args: Json
    pages: int = 1


# Question templates: "{}" takes the words drawn from the store; the template's own
# content words ("decide", "notes", "happening"...) count towards the 3 to 6.
QUESTIONS = (
    "what did we decide about the {}",
    "notes on {}s",
    "when is the {} happening",
    "what was the status of the {}",
    "did anyone mention {} in the meeting",
    "what are the next steps for {}",
    "who is working on the {}",
    "summary of {}",
)
QUESTION_WORDS = (3, 6)  # content words per question, inclusive


def search_group(kind: str) -> str:
    """The group a search scenario's kind is reported in: keyword, question, newest or workshop."""
    if kind.startswith("workshop"):
        return "workshop"
    if kind.startswith("question"):
        return "question"
    if kind.startswith("newest"):
        return "newest"
    return "keyword"


@dataclass
class StoreFacts:
    """What the workload draws its arguments from."""

    live: list[tuple[str, str, int]]  # id, source, length of formatted-or-raw text
    task_transcripts: list[str]
    first: str
    last: str
    due_first: str
    due_last: str


def store_facts(con: sqlite3.Connection, rng: random.Random, want: int) -> StoreFacts:
    """Random live transcripts (by random rowid, so the big stores are not scanned) and ranges."""
    max_rowid = con.execute("SELECT max(rowid) FROM transcripts").fetchone()[0]
    live: list[tuple[str, str, int]] = []
    tries = 0
    while len(live) < want and tries < want * 20:
        tries += 1
        row = con.execute(
            "SELECT id, source, length(coalesce(formatted_text, raw_text)) FROM transcripts"
            " WHERE rowid = ? AND deleted_at IS NULL",
            (rng.randint(1, max_rowid),),
        ).fetchone()
        if row:
            live.append((row[0], row[1], row[2]))
    tids = [r[0] for r in con.execute("SELECT DISTINCT transcript_id FROM tasks WHERE transcript_id IS NOT NULL")]
    rng.shuffle(tids)
    first, last = con.execute("SELECT min(created_at), max(created_at) FROM transcripts").fetchone()
    d0, d1 = con.execute("SELECT min(due_at), max(due_at) FROM tasks").fetchone()
    return StoreFacts(live, tids[:want], first, last, d0, d1)


def _time_between(rng: random.Random, lo: str, hi: str) -> str:
    """A random argument time in [lo, hi]: a plain date or RFC 3339 without fraction."""
    t0 = time.mktime(time.strptime(lo[:10], "%Y-%m-%d"))
    t1 = time.mktime(time.strptime(hi[:10], "%Y-%m-%d"))
    t = time.gmtime(rng.uniform(t0, t1))
    if rng.random() < 0.5:
        return time.strftime("%Y-%m-%d", t)
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", t)


def build_workload(facts: StoreFacts, meta: Json, calls: int, rng: random.Random) -> list[Scenario]:
    """A shuffled, seeded mix of about `calls` calls per tool."""
    sources = ("dictation", "meeting", "file")
    out: list[Scenario] = []

    def fill(tool: str, make: Callable[[], Scenario]) -> None:
        n = 0
        while n < calls:
            s = make()
            out.append(s)
            n += s.pages

    def lt() -> Scenario:
        r = rng.random()
        if r < 0.15:
            return Scenario("list_transcripts", "first", {})
        if r < 0.25:
            return Scenario("list_transcripts", "first", {"limit": 100})
        if r < 0.40:
            return Scenario("list_transcripts", "filter", {"source": rng.choice(sources), "limit": 50})
        if r < 0.50:
            return Scenario("list_transcripts", "filter", {"since": _time_between(rng, facts.first, facts.last)})
        if r < 0.60:
            lo = _time_between(rng, facts.first, facts.last)
            return Scenario(
                "list_transcripts", "filter", {"since": lo, "until": _time_between(rng, lo, facts.last), "limit": 100}
            )
        if r < 0.85:
            return Scenario("list_transcripts", "chain", {"limit": rng.choice((20, 50, 100))}, pages=10)
        a: Json = {"until": _time_between(rng, facts.first, facts.last), "limit": 50}
        if rng.random() < 0.5:
            a["source"] = rng.choice(sources)
        return Scenario("list_transcripts", "chain", a, pages=5)

    def gt() -> Scenario:
        tid, _, length = rng.choice(facts.live)
        r = rng.random()
        if r < 0.3:
            return Scenario("get_transcript", "formatted", {"id": tid})
        if r < 0.45:
            return Scenario("get_transcript", "raw", {"id": tid, "format": "raw"})
        if r < 0.7:
            return Scenario(
                "get_transcript",
                "window",
                {"id": tid, "offset": rng.randrange(max(1, length)), "max_chars": rng.choice((500, 2000))},
            )
        if r < 0.9:
            meetings = [x for x in facts.live if x[1] == "meeting"] or facts.live
            tid, _, length = rng.choice(meetings)
            return Scenario(
                "get_transcript",
                "segments",
                {"id": tid, "include_segments": True, "offset": rng.randrange(max(1, length)), "max_chars": 4000},
            )
        return Scenario("get_transcript", "whole", {"id": tid, "max_chars": 100000, "include_segments": True})

    common, mid, rare = meta["common_words"], meta["mid_words"], meta["rare_words"] or meta["mid_words"]
    phrases, prefixes = meta["phrases"] or mid, meta["prefixes"]

    def st() -> Scenario:
        """A keyword search (the mix from before relevance ranking), in the default order."""
        r = rng.random()
        a: Json
        if r < 0.15:
            kind, a = "common", {"query": rng.choice(common)}
        elif r < 0.25:
            kind, a = "mid", {"query": rng.choice(mid)}
        elif r < 0.40:
            kind, a = "rare", {"query": rng.choice(rare)}
        elif r < 0.55:
            kind, a = "two-word", {"query": f"{rng.choice(common)} {rng.choice(mid)}"}
        elif r < 0.67:
            kind, a = "phrase", {"query": f'"{rng.choice(phrases)}"'}
        elif r < 0.77:
            kind, a = "prefix", {"query": rng.choice(prefixes) + "*"}
        elif r < 0.85:
            kind, a = "or", {"query": f"{rng.choice(rare)} OR {rng.choice(mid)}"}
        elif r < 0.95:
            kind, a = "filtered", {"query": rng.choice(common + mid)}
            if rng.random() < 0.5:
                a["source"] = rng.choice(sources)
            else:
                a["since"] = _time_between(rng, facts.first, facts.last)
        else:
            kind, a = "accented", {"query": rng.choice(meta["accented_words"])}
        if rng.random() < 0.2:
            a["limit"] = 50
        return Scenario("search_transcripts", kind, a)

    # Content words only (function words such as "the" are dropped from queries).
    content_common = [w for w in common if len(parse(f"{w} zzz").clauses) == 2]

    def question() -> Scenario:
        """A question: common words only (the hard case: terms in most transcripts), some mid or a rare one."""
        template = rng.choice(QUESTIONS)
        fixed = len(parse(template.format("zzz")).clauses) - 1
        n = rng.randint(max(QUESTION_WORDS[0], fixed + 1), QUESTION_WORDS[1]) - fixed
        r = rng.random()
        if r < 0.4:
            kind, words = "question-common", rng.sample(content_common, n)
        elif r < 0.75:
            kind = "question-mid"
            words = [*rng.sample(content_common, n - 1), rng.choice(mid)]
        else:
            kind = "question-rare"
            words = [*rng.sample(content_common + mid, n - 1), rng.choice(rare)]
        rng.shuffle(words)
        a: Json = {"query": template.format(" ".join(words))}
        if rng.random() < 0.2:
            a["limit"] = 50
        return Scenario("search_transcripts", kind, a)

    def newest() -> Scenario:
        """A search in time order (every term required, as before relevance ranking)."""
        r = rng.random()
        a: Json
        if r < 0.35:
            kind, a = "newest-common", {"query": rng.choice(common)}
        elif r < 0.65:
            kind, a = "newest-two-word", {"query": f"{rng.choice(common)} {rng.choice(mid)}"}
        elif r < 0.85:
            kind, a = "newest-rare", {"query": rng.choice(rare)}
        else:
            kind, a = "newest-filtered", {"query": rng.choice(common + mid), "source": rng.choice(sources)}
        a["sort"] = "newest"
        return Scenario("search_transcripts", kind, a)

    def tk() -> Scenario:
        r = rng.random()
        if r < 0.3:
            return Scenario(
                "list_tasks", "first", {"status": rng.choice(("open", "done", "all"))} if rng.random() < 0.8 else {}
            )
        if r < 0.5:
            return Scenario("list_tasks", "transcript", {"transcript_id": rng.choice(facts.task_transcripts)})
        if r < 0.65:
            return Scenario(
                "list_tasks",
                "due_before",
                {
                    "due_before": _time_between(rng, facts.due_first, facts.due_last),
                    "status": rng.choice(("open", "all")),
                },
            )
        return Scenario(
            "list_tasks",
            "chain",
            {"status": rng.choice(("open", "done", "all")), "limit": rng.choice((50, 100))},
            pages=8,
        )

    fill("list_transcripts", lt)
    fill("get_transcript", gt)
    fill("search_transcripts", st)
    fill("list_tasks", tk)

    def workshop_read() -> Scenario:
        w = meta["workshop"]
        r = rng.random()
        fmt = rng.choice(("formatted", "raw"))
        if r < 0.4:
            a: Json = {"id": w["id"], "format": fmt, "offset": rng.randrange(w["formatted_chars"])}
            return Scenario("get_transcript", "workshop-window", a)
        if r < 0.8:
            a = {"id": w["id"], "format": fmt, "offset": rng.randrange(w["raw_chars"]), "include_segments": True}
            return Scenario("get_transcript", "workshop-segments", a)
        start = rng.randrange(w["duration_ms"] - 600_000)  # ten minutes of it
        a = {"id": w["id"], "start_ms": start, "end_ms": start + 600_000, "include_segments": True}
        return Scenario("get_transcript", "workshop-time", a)

    # Drawn last, so that the calls above are the ones earlier benchmarks made.
    out += [question() for _ in range(max(2, calls // 2))]
    out += [newest() for _ in range(max(2, calls // 10))]
    if "workshop" in meta:
        w = meta["workshop"]
        out += [workshop_read() for _ in range(max(3, calls // 3))]
        for _ in range(max(2, calls // 5)):
            out.append(Scenario("search_transcripts", "workshop-hit", {"query": w["word"]}))
            out.append(
                Scenario("search_transcripts", "workshop-excluded", {"query": w["word"], "until": w["created_at"]})
            )
    rng.shuffle(out)
    return out
