"""search_transcripts with transcript_id: every moment of one transcript that matches, in spoken order, paged.

The answer keeps the search's shape: its one hit is the transcript, whose ``moments`` are a page of its
matching segments (of any term, the speaker's only with ``speaker``), and ``moments_found`` counts them all.
A transcript without segments is searched in the text get_transcript shows by default: each moment is a
snippet and the ``offset`` it starts at. Which segments match is worked out once per store generation, query
and speaker (kept in the reader's memo), so that paging through a 10-hour meeting reads only each page's
segments: by the segment index where the store has one, else all of its segments in one pass, matched in
Python as the scan matches.
"""

from __future__ import annotations

from bisect import bisect_right
from itertools import accumulate
from typing import TYPE_CHECKING, Any

from magnotia_mcp.args import cursors
from magnotia_mcp.budget import ITEM_LISTS, ITEM_STRINGS, answer_cost, squeeze
from magnotia_mcp.errors import InvalidArguments, NotFound, named
from magnotia_mcp.lru import LRU
from magnotia_mcp.tools import schema

if TYPE_CHECKING:  # annotations only: the query language loads on the first search, not at start-up
    import sqlite3

    from magnotia_mcp.search.matching import Matcher
    from magnotia_mcp.search.querylang import Query
    from magnotia_mcp.store.reader import Reader
    from magnotia_mcp.tools.base import ToolContext

TRANSCRIPT_ID = {
    "type": "string",
    "minLength": 1,
    "description": "Search inside this transcript: all its matching moments, in order.",
}
# A moment of a transcript without segments: a snippet of its text, and the character it starts at.
TEXT_MOMENT = schema.record({"offset": schema.INTEGER, "snippet": schema.STRING})
MOMENTS_FOUND = {
    "type": "integer",
    "description": "With transcript_id: how many moments match in all; next_cursor pages through them.",
}
# What matched in a transcript: the seqs of its matching segments, and which phrases (terms, alternatives) matched.
Found = tuple[list[int], list[bool]]
_KEPT = 16  # queries remembered per store generation: a few long meetings paged through


async def search_inside(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    """search_transcripts's answer inside one transcript (see the module docstring)."""
    from magnotia_mcp.search.matching import Matcher
    from magnotia_mcp.search.querylang import parse
    from magnotia_mcp.search.speakers import speaker_key
    from magnotia_mcp.store import hits as rows
    from magnotia_mcp.store import layouts, windows

    tid: str = args["transcript_id"]
    for name in ("since", "until", "source"):
        if name in args:  # they choose transcripts: inside one, they could only empty the answer
            raise InvalidArguments(
                name,
                "filters which transcripts a search finds; leave it out with transcript_id "
                "(to read around a moment, use get_transcript with start_ms)",
            )
    after, limit = -1, args["limit"]
    if "cursor" in args:
        issued, after, limit = cursors.decode("inside", args["cursor"], 3)
        if issued != tid or not 1 <= limit <= PAGE or after < 0:
            raise InvalidArguments(
                "cursor", "was not issued for this transcript_id; pass next_cursor with the transcript_id it came with"
            )
    if "speaker" in args and not args["speaker"].strip():
        raise InvalidArguments("speaker", "must name a speaker (their label in the transcript, e.g. Ana)")
    query = parse(args["query"])
    speaker = speaker_key(args["speaker"]) if "speaker" in args else None
    async with ctx.store.reader() as db:
        row = await windows.inside(db, tid)
        if row is None:
            raise NotFound(f"Transcript {named(tid)} not found")
        span = await layouts.segment_ids(db, tid)
        matcher = Matcher(query)
        if query.empty or (span is None and speaker is not None):  # no terms; or no segments, so no speakers
            keys: list[int] = []
            moments: list[dict[str, Any]] = []
            matched: list[bool] = []
            total, more = 0, False
        elif span is None:
            text = await windows.shown_text(db, row["rid"])
            keys, moments, matched, total, more = _passages(matcher, text, after, limit)
        else:
            seqs, matched = await _matching(db, matcher, tid, span, speaker)
            later = seqs[bisect_right(seqs, after) :]
            page = await windows.segments_at(db, tid, later[:limit])
            keys, moments = [s["seq"] for s in page], [_moment(matcher, s) for s in page]
            total, more = len(seqs), len(later) > limit
        mode = "fts" if db.has_fts else "scan"
        about = (await rows.about(db, [tid])).get(tid) or {"speakers": [], "duration_ms": None}
    result: dict[str, Any] = {"query": query.text, "mode": mode, "sort": args["sort"], "ranked_among": int(total > 0)}
    result["hits"] = [{**_hit(row, query, matched, moments), **about}] if total else []
    result["moments_found"] = total
    result["next_cursor"] = cursors.encode("inside", (tid, keys[-1], limit)) if more and keys else None
    return _fit(result, keys, tid, limit, args["max_tokens"], ctx.copies)


PAGE = 50  # moments a page holds at most: limit's bound


def _hit(row: sqlite3.Row, query: Query, matched: list[bool], moments: list[dict[str, Any]]) -> dict[str, Any]:
    """The transcript as the one hit: its moments say where it matched, so no snippet repeats them."""
    from magnotia_mcp.search.ranking import candidate

    c = candidate(row)
    return {
        "transcript_id": c.id,
        "title": c.title,
        "created_at": c.created_at,
        "source": c.source,
        "score": float(sum(query.clauses_hit(matched))),  # the terms matched: one transcript has no relevance to rank
        "matched_terms": query.matched_labels(matched),
        "moments": moments,
    }


async def _matching(db: Reader, matcher: Matcher, tid: str, span: tuple[int, int], speaker: str | None) -> Found:
    """The seqs of the transcript's segments that match (the speaker's only, when given), kept for the generation."""
    from magnotia_mcp.search.speakers import fold_label
    from magnotia_mcp.store import windows

    kept = db.memo.setdefault("inside", LRU(_KEPT))
    assert isinstance(kept, LRU)
    key = (tid, matcher.query.text, speaker)
    found: Found | None = kept.get(key)
    if found is None:
        text = matcher.query.text_fts()  # a term written title:... matches no segment
        match = text if db.info.has_segment_fts else None
        said = await windows.said_in(db, tid, span, match) if text is not None else []
        if speaker is not None:
            labels: dict[str | None, str | None] = {}  # a meeting has a handful of labels: each folded once
            said = [s for s in said if labels.setdefault(s["speaker"], fold_label(s["speaker"])) == speaker]
        indexes, matched = _match(matcher, [s["text"] or "" for s in said])
        found = ([said[k]["seq"] for k in indexes], matched)
        kept.put(key, found)
    return found


def _match(matcher: Matcher, texts: list[str]) -> tuple[list[int], list[bool]]:
    """The indexes of the texts where any term matches, and for each phrase whether it matched in any.

    One fold of all the texts, searched once for them all (Matcher.parts_matching); a phrase may span the
    newline between two texts, so with one each text is matched alone.
    """
    from magnotia_mcp.search.folding import fold

    if any(len(t.words) > 1 for t in matcher.query.phrases):
        folded = [fold(t) for t in texts]
        found = [k for k, f in enumerate(folded) if matcher.first_match(f) is not None]
        return found, matcher.terms_matched(*(folded[k] for k in found))
    whole = fold("\n".join(texts))
    starts = list(accumulate((len(t) + 1 for t in texts), initial=0))
    return matcher.parts_matching(whole, starts), matcher.terms_matched(whole)


def _moment(matcher: Matcher, s: sqlite3.Row) -> dict[str, Any]:
    from magnotia_mcp.search.hits import snippet
    from magnotia_mcp.text import preview

    text = s["text"] or ""
    found = snippet(matcher, text)
    return {
        "seq": s["seq"],
        "start_ms": s["start_ms"],
        "end_ms": s["end_ms"],
        "speaker": s["speaker"],
        "snippet": found or preview(text),
    }


def _passages(
    matcher: Matcher, text: str, after: int, limit: int
) -> tuple[list[int], list[dict[str, Any]], list[bool], int, bool]:
    """A text's matches as snippets, none overlapping the one before: (the match each page entry starts from,
    the page's moments after the match at after, which phrases matched, how many in all, whether more follow)."""
    from magnotia_mcp.search.folding import fold
    from magnotia_mcp.search.hits import passage

    folded = fold(text)
    edge, keys, moments = 0, [], []
    for s, e in matcher.spans(folded, 0, len(folded)):
        if s < edge:  # shown in the snippet before
            continue
        start, end, shown = passage(matcher, text, folded, (s, e))
        edge = max(end, e)
        keys.append(s)
        moments.append({"offset": start, "snippet": shown})
    at = bisect_right(keys, after)
    page = slice(at, at + limit)
    return keys[page], moments[page], matcher.terms_matched(folded), len(keys), at + limit < len(keys)


def _fit(result: dict[str, Any], keys: list[int], tid: str, limit: int, budget: int, copies: int) -> dict[str, Any]:
    """result with its page of moments cut to what fits in budget (at least one, shortened if need be)."""
    result["max_tokens"] = budget
    if not result["hits"] or not keys:
        return result
    whole = answer_cost(result, copies)
    if whole <= budget:
        return result
    hit, moments = result["hits"][0], result["hits"][0]["moments"]

    def trial(k: int) -> dict[str, Any]:
        out = {**result, "hits": [{**hit, "moments": moments[:k]}]}
        if k < len(moments):
            out["next_cursor"] = cursors.encode("inside", (tid, keys[k - 1], limit))
            out["note"] = (
                f"Only {k} of the {len(moments)} moments asked for fit within max_tokens={budget}; "
                "pass next_cursor to get the rest."
            )
        return out

    # The most that fit: lo fits (0: none yet), more than hi do not. Moments cost about alike, so the first
    # probes go where the page's cost puts the boundary: most pages take two trials, not log2(n).
    lo, hi = 0, len(moments) - 1
    empty = answer_cost(trial(0), copies)  # the answer around the moments (its cursor and note a guess's)
    guess = (len(moments) * (budget - empty)) // max(whole - empty, 1)
    probes = [guess, guess + 1]
    while lo < hi:
        ahead = [p for p in probes if lo < p <= hi]
        mid, probes = (ahead[0], ahead[1:]) if ahead else ((lo + hi + 1) // 2, [])
        if answer_cost(trial(mid), copies) <= budget:
            lo = mid
        else:
            hi = mid - 1
    if lo:
        return trial(lo)
    out = trial(1)
    out["hits"] = [{**hit, "moments": [dict(moments[0])]}]
    # The one moment stays: only its text and the hit's are shortened.
    squeeze(out, lambda r: answer_cost(r, copies) <= budget, ITEM_STRINGS, ITEM_LISTS - {"moments"})
    out["note"] = (out.get("note", "") + " Long text in the first moment was shortened to fit.").strip()
    return out
