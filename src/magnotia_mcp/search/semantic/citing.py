"""How a hit found by meaning says so: ``matched_by``, its similarity, and the moments it cites.

A hit found by meaning cites the segment nearest the query in each of its best windows (its start and end
times and speaker: a moment a model can quote), not its first words; a text without segments, the passage
that matched. The segments of a page's cited windows are read in one query.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from magnotia_mcp.search import hits
from magnotia_mcp.search.fusion import MatchedBy
from magnotia_mcp.store import hits as hit_rows
from magnotia_mcp.text import preview

if TYPE_CHECKING:
    import sqlite3

    from magnotia_mcp.search.semantic.found import Found, Near
    from magnotia_mcp.store.reader import Reader


class PageSegments:
    """The segments the cited chunks of a page's hits span, read in one query when the first hit is cited.

    spoken: in a search restricted to a speaker, their seqs by transcript: only their segments are cited.
    """

    def __init__(self, db: Reader, near: Near, page: list[str], spoken: dict[str, set[int]] | None) -> None:
        self.db = db
        self.found: dict[str, Found] = {f.doc: f for f in near.found}
        self.page = [tid for tid in page if tid in self.found]
        self.spoken = spoken
        self.read: dict[str, list[list[sqlite3.Row]]] | None = None

    async def of(self, tid: str) -> list[list[sqlite3.Row]]:
        """Each of the transcript's cited windows' segments (a title, or text without segments, has none)."""
        if self.read is None:
            spans = {t: _spans(self.found[t]) for t in self.page}
            self.read = await hit_rows.chunk_segments(self.db, spans)
        groups = self.read.get(tid, [])
        if self.spoken is not None:
            own = self.spoken.get(tid, set())
            groups = [[s for s in g if s["seq"] in own] for g in groups]
        return [g for g in groups if g]

    async def piece(self, tid: str, k: int) -> str:
        """The k-th window of the text of a transcript without segments (empty if its text is gone or shorter)."""
        from magnotia_mcp.search.semantic.chunks import piece  # noqa: PLC0415 - only once an index answered

        text = await hit_rows.embedded_text(self.db, tid)
        return piece(text, k) if text is not None else ""


def _spans(found: Found) -> list[tuple[int, int]]:
    return [(c.first_seq, c.last_seq) for c in found.chunks if c.first_seq is not None and c.last_seq is not None]


async def cite(how: dict[str, MatchedBy], near: Near, segments: PageSegments, hit: dict[str, Any]) -> None:
    """Say how a fused hit matched; one found by meaning cites the segments nearest the query, not its first words."""
    tid = hit["transcript_id"]
    hit["matched_by"] = how[tid]
    # The index may have answered with it and the fusion not counted it (past the page's share of meaning's list):
    # then it was found by words alone, and says nothing of meaning.
    found = segments.found.get(tid) if how[tid] != "words" else None
    if found is None:
        return
    hit["similarity"] = round(found.score, 4)
    # Each window that has segments cites its segment nearest the query: one embedding for all of a hit's windows.
    groups = await segments.of(tid)
    picks = near.closest([[s["text"] or "" for s in g] for g in groups])
    # Two windows may pick one segment (a long one is cut into several windows, or a speaker's words are all
    # one segment of the windows they spoke in): it is cited once.
    cited = list({g[i]["seq"]: hits.segment_moment(g[i]) for g, i in zip(groups, picks, strict=True)}.values())
    if how[tid] == "meaning":  # shaped without its segments (shape's cited): its moments are these
        hit["moments"] = cited
        if not cited and found.chunks and found.chunks[0].piece is not None:
            # A text without segments (a dictation kept as text, an imported file): no moment has a time to
            # cite, so the snippet is the passage that matched, not the opening shape fell back to.
            passage = await segments.piece(tid, found.chunks[0].piece)
            if passage:
                hit["snippet"] = preview(passage, hits.SNIPPET_CHARS)
    else:  # words found it too: its own moments first, then those of meaning not already there
        seen = {m["seq"] for m in hit["moments"]}
        hit["moments"] += [m for m in cited if m["seq"] not in seen][: max(0, hits.MOMENTS - len(hit["moments"]))]
