"""Search hits shaped for the answer: the terms matched, the best moments (else a snippet), each said once.

The shape is what ``tools/search.py``'s output schema describes (it stays there:
``tools/list`` needs it at start-up, before the query language is loaded). The
rows come from ``store.hits``; everything here is Python over them.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Awaitable, Callable, Iterable
from itertools import accumulate
from typing import TYPE_CHECKING, Any

from magnotia_mcp.search.folding import fold
from magnotia_mcp.store import hits as rows
from magnotia_mcp.text import preview

if TYPE_CHECKING:  # only for annotations: importing the pool pulls in asyncio and sqlite3
    import sqlite3

    from magnotia_mcp.search.matching import Matcher
    from magnotia_mcp.search.ranking import Candidate
    from magnotia_mcp.store.reader import Reader

MOMENTS = 3
HIT_BATCH = 10
SNIPPET_CHARS = 200
_LEAD = 60


async def shape(
    db: Reader,
    matcher: Matcher,
    ranked: list[Candidate],
    said: dict[str, list[sqlite3.Row]] | None,
    enough: Callable[[list[dict[str, Any]]], bool] | None = None,
    decorate: Callable[[dict[str, Any]], Awaitable[None]] | None = None,
    cited: frozenset[str] = frozenset(),
) -> list[dict[str, Any]]:
    """The hits for ranked candidates; said: a speaker's segments by transcript, when only they count.

    enough(hits so far), asked after each hit, stops the shaping early (the hits are then a prefix):
    a budget often holds fewer hits than a batch, and a hit costs more to shape than to count.
    decorate(hit) completes each hit before it is counted (how a fused hit matched, its cited moments).
    cited: the transcripts whose moments decorate gives (found by meaning alone): their segments are not
    read, nor their moments by words looked for.
    When the first hit has every clause of the query, a hit below it that lacks some shows one moment, not
    three: it stays on the page (a hit need not have every word) at a third of the cost. So does a hit whose
    best moment has fewer clauses than the first hit's (``least_clauses``): its words are spread over lines
    that each say one of them ("sign-up flow", "come back to it"), below one that says them together.
    """
    hits: list[dict[str, Any]] = []
    first_line = 0  # how many clauses the first hit's best moment has
    shown: set[str] = set()  # what the moments of the hits so far quote (_lean)
    every = len(matcher.query.clauses)
    # Texts and segments are read a few hits at a time: the whole text of 50 long
    # meetings at once would set the server's peak memory.
    for start in range(0, len(ranked), HIT_BATCH):
        batch = ranked[start : start + HIT_BATCH]
        if said is None:
            texts = await rows.texts(db, [c.rid for c in batch])
            # With the full-text index a long hit is shaped from the index and its matching segments.
            long = {rid for rid, r in texts.items() if r["raw_text"] is None}
            segs = await rows.segments(db, [c.id for c in batch if c.rid not in long and c.id not in cited])
        for c in batch:
            if said is not None:
                segments = said.get(c.id, [])  # none for a hit found by meaning alone: decorate cites it
                spoken: list[str | None] = ["\n".join(s["text"] for s in segments)]
                hit, line = _shaped(matcher, c, *_matched_and_snippet(matcher, c, spoken, speaker=True), segments)
            elif c.rid in long:
                hit, line = await _long_hit(db, matcher, c)
            else:
                row = texts.get(c.rid)
                columns = [row["raw_text"] if row else None, row["formatted_text"] if row else None]
                shaped = _matched_and_snippet(matcher, c, columns)
                hit, line = _shaped(matcher, c, *shaped, segs.get(c.id, []), titled=_titled(matcher, c))
            if not hits:
                first_line = line
            elif (c.coverage < every and ranked[0].coverage == every) or line < least_clauses(first_line):
                # Below a hit with every clause, a near miss is named with its best moment only; so is a hit
                # whose words are spread over its lines, below one that says them in one line.
                hit["moments"] = hit["moments"][:1]
            if decorate is not None:
                await decorate(hit)
            _lean(hit, shown)
            hits.append(hit)
            if enough is not None and enough(hits):
                return hits
    return hits


def _lean(hit: dict[str, Any], shown: set[str]) -> None:
    """Nothing the model reads twice: a hit with moments has no snippet (they quote where it matched, with time
    and speaker), and a moment that quotes what a hit above already quoted is left out (filler a broad query
    finds in every meeting), unless it is the hit's only one. shown: what the moments above quoted."""
    moments = hit["moments"]
    if not moments:
        return
    fresh = [m for m in moments if _quoted(m) not in shown]
    hit["moments"] = fresh or moments[:1]
    shown.update(_quoted(m) for m in hit["moments"])
    del hit["snippet"]


def _quoted(moment: dict[str, Any]) -> str:
    return fold(moment["snippet"].replace("**", "")).strip(" …")


def _matched_and_snippet(
    matcher: Matcher, c: Candidate, texts: list[str | None], *, speaker: bool = False
) -> tuple[list[bool], str]:
    """The terms (each alternative) a hit matches and its snippet, folding no more of its texts than they need.

    texts: its raw and formatted texts, or what one speaker said (speaker: then only the terms written
    title:... count in its title). A candidate that has every clause (the ranking counted them), each of one
    term, needs only the text its snippet comes from, most often the formatted one; otherwise each text is
    folded once, for the terms it matches and for its snippet.
    """
    query = matcher.query
    if c.coverage == len(query.clauses) == len(query.phrases):
        return [True] * len(query.phrases), _best_snippet(matcher, texts) or c.title or ""
    folded = [fold(t) if t else None for t in texts]
    title = fold(c.title) if c.title else ""
    if speaker:
        said = matcher.terms_matched(*(f for f in folded if f))
        hits = [a or b for a, b in zip(said, matcher.title_terms(title), strict=True)]
    else:
        hits = matcher.terms_matched(*(f for f in folded if f), title=title)
    # No text at all (a meeting kept only as segments no moment cites): its title is all there is to show.
    return hits, _best_snippet(matcher, texts, folded) or c.title or ""


def _titled(matcher: Matcher, c: Candidate) -> bool:
    """Whether the hit's title alone has every clause of the query (it says why the hit was found)."""
    return bool(c.title) and matcher.matches(title=fold(c.title))


def _shaped(
    matcher: Matcher,
    c: Candidate,
    matched: list[bool],
    snippet_text: str,
    segments: list[sqlite3.Row],
    *,
    titled: bool = False,
) -> tuple[dict[str, Any], int]:
    """The hit, and how many clauses its best moment has. titled: the title has every clause; then a moment
    must have every clause too to be worth reading."""
    moments, line = _moments(matcher, segments, len(matcher.query.clauses) if titled else 1)
    hit = {
        "transcript_id": c.id,
        "title": c.title,
        "created_at": c.created_at,
        "source": c.source,
        "snippet": snippet_text,
        # Clauses matched, then BM25 squashed into [0, 1): higher is better, in hit order.
        "score": round(c.coverage + c.relevance / (1 + c.relevance), 6),
        # Each term or alternative it matched (matched: one flag per phrase), once.
        "matched_terms": matcher.query.matched_labels(matched),
        "moments": moments,
    }
    return hit, line


async def _long_hit(db: Reader, matcher: Matcher, c: Candidate) -> tuple[dict[str, Any], int]:
    """A hit on a long transcript, shaped without reading its text: the cost follows its matches.

    The terms it matches come from the full-text index (one lookup per term); the snippet and
    moments from its matching segments (found with the segment index), the snippet from the first
    of them in spoken order. Only when no segment matches (the words are in the title, or only
    in the formatted text) is the head of its texts read for a snippet.
    """
    query = matcher.query
    matched = await rows.clauses_hit(db, c.rid, [t.fts() for t in query.phrases])
    said = query.text_fts()  # a term restricted to the title matches no segment
    segments = await rows.matching_segments(db, c.id, said) if said is not None else []
    found = next((snippet(matcher, s["text"]) for s in segments if matcher.first_match(fold(s["text"]))), None)
    if found is None:
        heads = await rows.heads(db, c.rid)
        found = _best_snippet(matcher, [heads["raw_text"], heads["formatted_text"]] if heads else [])
    return _shaped(matcher, c, matched, found, segments, titled=_titled(matcher, c))


def _best_snippet(matcher: Matcher, texts: list[str | None], folded: list[str | None] | None = None) -> str:
    """Around the first match: in the formatted text (it reads best), else the raw text (texts: raw, formatted).

    With no match in them (a hit found by its title), the opening of the formatted text, else the raw one:
    the title is in the hit already. folded: the texts already folded, when the caller has them.
    """
    for k in reversed(range(len(texts))):
        text = texts[k]
        found = snippet(matcher, text, folded[k] if folded else None) if text else None
        if found is not None:
            return found
    return preview(next((t for t in reversed(texts) if t and t.strip()), ""), SNIPPET_CHARS)


def least_clauses(best: int) -> int:
    """The fewest clauses a hit is shown with in full beside the best one's best: one fewer when that has three or
    more (a question's second answer often lacks one of its words), else as many (with one word of two, it is
    what a model skims past)."""
    return best - 1 if best >= 3 else best


def _moments(matcher: Matcher, segments: list[sqlite3.Row], least: int = 1) -> tuple[list[dict[str, Any]], int]:
    """The segments that match best (most clauses, then most hits; the earlier on ties), none with under half the
    clauses of the best, nor under least; and how many clauses the best has (0: no segment matches)."""
    # One fold for all the segments (folding keeps offsets, so each segment is a slice of it):
    # a call per segment costs more than the folding itself.
    texts = [s["text"] or "" for s in segments]
    whole = fold("\n".join(texts))
    starts = list(accumulate((len(t) + 1 for t in texts), initial=0))
    # ranking.coverage, for many segments: the clause of each phrase (phrases go clause by clause).
    clause_of = [k for k, clause in enumerate(matcher.query.clauses) for _ in clause]
    scored = []
    for k, counts in _segment_counts(matcher, whole, starts):
        covered = len({clause_of[i] for i, n in enumerate(counts) if n})
        scored.append(((-covered, -sum(counts), segments[k]["seq"]), k))
    scored.sort(key=lambda item: item[0])
    # A moment with under half the clauses of the best one is a stray word (a hit's "page" beside the one that
    # said "pricing page copy ready"): tokens the model reads for nothing. One with half of them stays: a line
    # that names only "Riverside" beside one that says "move to the Riverside building" is how the story goes on.
    best = -scored[0][0][0] if scored else 0
    moments = []
    for (neg_covered, *_), k in scored[:MOMENTS]:
        if -neg_covered * 2 < best or -neg_covered < least:
            break
        s = segments[k]
        found = snippet(matcher, texts[k], whole[starts[k] : starts[k + 1] - 1])
        moments.append(
            {
                "seq": s["seq"],
                "start_ms": s["start_ms"],
                "end_ms": s["end_ms"],
                "speaker": s["speaker"],
                "snippet": found or preview(s["text"]),
            }
        )
    return moments, best


def segment_moment(s: sqlite3.Row) -> dict[str, Any]:
    """A moment found by meaning: one segment, its start as the snippet."""
    return {
        "seq": s["seq"],
        "start_ms": s["start_ms"],
        "end_ms": s["end_ms"],
        "speaker": s["speaker"],
        "snippet": preview(s["text"] or "", SNIPPET_CHARS),
    }


def _segment_counts(matcher: Matcher, whole: str, starts: list[int]) -> Iterable[tuple[int, list[int]]]:
    """(index, hits per phrase) of each segment that matches, in order.

    The segments are at starts in whole, their folded texts joined by newlines. When every
    term is one word, no match spans the newline between two segments: each phrase's matches
    are found in one pass over the whole text and counted for the segment they start in.
    A phrase may span it, so then each segment is matched on its own.
    """
    if any(len(t.words) > 1 for t in matcher.query.phrases):
        for k in range(len(starts) - 1):
            folded = whole[starts[k] : starts[k + 1] - 1]
            if matcher.first_match(folded) is not None:
                yield k, matcher.phrase_counts(folded)
        return
    found: dict[int, list[int]] = {}
    phrases = len(matcher.query.phrases)
    for i, at in enumerate(matcher.phrase_starts(whole)):
        for a in at:
            found.setdefault(bisect_right(starts, a) - 1, [0] * phrases)[i] += 1
    for k in sorted(found):
        yield k, found[k]


def snippet(matcher: Matcher, text: str, folded: str | None = None) -> str | None:
    """Up to ~200 characters around the first match, each match wrapped in ``**``."""
    folded = fold(text) if folded is None else folded
    first = matcher.first_match(folded)
    return None if first is None else passage(matcher, text, folded, first.span())[2]


def passage(matcher: Matcher, text: str, folded: str, first: tuple[int, int]) -> tuple[int, int, str]:
    """(start, end, snippet) of the snippet around the match at span first: where it starts and ends in text."""
    start = max(0, first[0] - _LEAD)
    if start > 0:
        # Start on a word: step forward past the word we landed in.
        space = text.find(" ", start, first[0])
        start = space + 1 if space != -1 else first[0]
    end = min(len(text), start + SNIPPET_CHARS)
    if end < len(text):
        space = text.rfind(" ", first[1], end)
        if space != -1:
            end = space
    # A match longer than the snippet starts inside it: search to its end, mark the part shown.
    spans = matcher.spans(folded, start, max(end, first[1]))
    out: list[str] = ["…"] if start > 0 else []
    pos = start
    for s, e in spans:
        stop = min(e, end)
        out += [text[pos:s], "**", text[s:stop], "**"]
        pos = stop
    out.append(text[pos:end])
    if end < len(text):
        out.append("…")
    return start, end, " ".join("".join(out).split())
