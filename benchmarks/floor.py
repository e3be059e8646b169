"""The floor: each tool's logical query run in-process with `sqlite3`.

Straightforward, index-friendly, read-only SQL written here, timed call by call
next to the server so every figure has a baseline from the same run on the same
warm page cache. Search queries go through the package's own query-language
parser, so the floor and the server match the same rows; the parsing is done
before the clock starts (`prepare`), so that the floor times SQL only.

Relevance search (the default order) has the naive plan as its floor: every live
transcript with any of the query's terms, ordered by FTS5's `bm25()` (title
weighted 4), `LIMIT n`. That is a latency floor, not an answer check: the server
ranks by coverage first and within a bounded window, by design. Searches in time
order (`sort: newest`) keep the floor they had before relevance ranking.
"""

from __future__ import annotations

import re
import sqlite3
import sys
from functools import lru_cache
from pathlib import Path
from typing import Any

import generate
from client import Json

try:
    from magnotia_mcp.search.querylang import parse
except ImportError:  # a checkout without the package installed (server_env in run.py allows it): use its src/
    sys.path.insert(0, str(generate.REPO_DIR / "src"))
    from magnotia_mcp.search.querylang import parse

__all__ = ["Cursor", "Floor", "parse", "store_time"]  # parse: workload.py builds its questions with it


def store_time(value: str) -> str:
    """An argument time (RFC 3339 or plain date) in the store's text form."""
    if len(value) == 10:
        return value + "T00:00:00.000Z"
    m = re.fullmatch(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(\.\d+)?Z", value)
    if not m:
        raise ValueError(value)
    frac = (m.group(2) or ".000")[:4].ljust(4, "0")
    return m.group(1) + frac + "Z"


Cursor = Any  # the floor's own keyset position, or None


class Floor:
    """Straightforward read-only SQL for each tool; returns (items, next position)."""

    def __init__(self, path: Path) -> None:
        self.con = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)
        self.con.execute("PRAGMA query_only=1")

    def close(self) -> None:
        self.con.close()

    def list_transcripts(self, a: Json, pos: Cursor) -> tuple[list[Any], Cursor]:
        where = ["deleted_at IS NULL"]
        p: Json = {"n": a.get("limit", 20) + 1}
        if "since" in a:
            where.append("created_at >= :since")
            p["since"] = store_time(a["since"])
        if "until" in a:
            where.append("created_at < :until")
            p["until"] = store_time(a["until"])
        if "source" in a:
            where.append("source = :source")
            p["source"] = a["source"]
        if pos is not None:
            where.append("(created_at, id) < (:c_at, :c_id)")
            p["c_at"], p["c_id"] = pos
        rows = self.con.execute(
            "SELECT id, title, source, language, created_at, duration_ms,"
            " substr(coalesce(formatted_text, raw_text), 1, 201) FROM transcripts"
            f" WHERE {' AND '.join(where)} ORDER BY created_at DESC, id DESC LIMIT :n",
            p,
        ).fetchall()
        more = len(rows) > p["n"] - 1
        rows = rows[: p["n"] - 1]
        return rows, ((rows[-1][4], rows[-1][0]) if more else None)

    def get_transcript(self, a: Json, _pos: Cursor) -> tuple[list[Any], Cursor]:
        text_col = "raw_text" if a.get("format") == "raw" else "coalesce(formatted_text, raw_text)"
        row = self.con.execute(
            f"SELECT id, title, source, language, model, created_at, updated_at, duration_ms, {text_col}"
            " FROM transcripts WHERE id = ? AND deleted_at IS NULL",
            (a["id"],),
        ).fetchone()
        if row is None:
            return [], None
        off = a.get("offset", 0)
        window = row[8][off : off + a.get("max_chars", 20000)]
        tasks = self.con.execute(
            "SELECT id, title, status, due_at FROM tasks WHERE transcript_id = ? ORDER BY created_at", (a["id"],)
        ).fetchall()
        segs: list[Any] = []
        if a.get("include_segments"):
            segs = self.con.execute(
                "SELECT seq, start_ms, end_ms, speaker, text FROM segments WHERE transcript_id = ? ORDER BY seq",
                (a["id"],),
            ).fetchall()
        return [row[:8], window, tasks, segs], None

    def prepare(self, tool: str, a: Json) -> None:
        """Untimed work before a call: a search's query parsed (the floor times SQL, not the parser)."""
        if tool == "search_transcripts":
            self._match(a["query"])

    @staticmethod
    @lru_cache(maxsize=4096)
    def _match(text: str) -> tuple[str, str] | None:
        """(every clause, any clause) as FTS5 MATCH expressions, or None when nothing is left to search for."""
        # The package's own parser: the floor matches exactly what the server's index matches.
        query = parse(text)
        return None if query.empty else (query.fts(), query.fts_at_least(1))

    def search_transcripts(self, a: Json, _pos: Cursor) -> tuple[list[Any], Cursor]:
        match = self._match(a["query"])
        if match is None:  # nothing to search for (and an empty MATCH is an FTS5 error)
            return [], None
        limit = a.get("limit", 10)
        where = ["deleted_at IS NULL"]
        p: Json = {}
        for key, cond in (
            ("since", "created_at >= :since"),
            ("until", "created_at < :until"),
            ("source", "source = :source"),
        ):
            if key in a:
                where.append(cond)
                p[key] = store_time(a[key]) if key != "source" else a[key]
        if a.get("sort", "relevance") == "relevance":
            return self._relevance(match[1], limit, where, p), None
        q = match[0]
        # Rank in the index first (a join would touch every matching row), then
        # drop trashed/filtered rows. Without filters the top few nearly always
        # survive; with filters (or when too few survive), one full ranked pass
        # checked in batches.
        ranked_sql = "SELECT rowid, rank FROM transcripts_fts WHERE transcripts_fts MATCH ? ORDER BY rank"
        k = limit * 2 + 10
        hits: list[Any] = []
        ranked: list[int] = []
        score: dict[int, float] = {}  # bm25 from the ranking pass: a separate bm25() call recounts the corpus
        if len(where) == 1:
            for rowid, rank in self.con.execute(ranked_sql + " LIMIT ?", (q, k)):
                ranked.append(rowid)
                score[rowid] = rank
            rows = self._filtered(ranked, where, p)
            hits = [rows[r] for r in ranked if r in rows][:limit]
        if len(hits) < limit and (len(where) > 1 or len(ranked) == k):
            cur = self.con.execute(ranked_sql, (q,))
            hits = []
            while len(hits) < limit:
                batch: list[int] = []
                for rowid, rank in cur.fetchmany(500):
                    batch.append(rowid)
                    score[rowid] = rank
                if not batch:
                    break
                rows = self._filtered(batch, where, p)
                hits.extend(rows[r] for r in batch if r in rows)
            hits = hits[:limit]
        out: list[Any] = []
        for h in hits:
            snip = self.con.execute(
                "SELECT snippet(transcripts_fts, -1, '**', '**', '…', 24)"
                " FROM transcripts_fts WHERE transcripts_fts MATCH ? AND rowid = ?",
                (q, h[0]),
            ).fetchone()
            lo, hi = self.con.execute(
                "SELECT min(id), max(id) FROM segments WHERE transcript_id = ?", (h[1],)
            ).fetchone()
            seg = None
            if lo is not None:
                seg = self.con.execute(
                    "SELECT s.seq, s.start_ms, s.end_ms, s.speaker FROM segments_fts JOIN segments s"
                    " ON s.id = segments_fts.rowid WHERE segments_fts MATCH ? AND segments_fts.rowid"
                    " BETWEEN ? AND ? ORDER BY s.seq LIMIT 1",
                    (q, lo, hi),
                ).fetchone()
            out.append((h, snip, score[h[0]], seg))
        return out, None

    def _relevance(self, q: str, limit: int, where: list[str], p: Json) -> list[Any]:
        """The naive relevance plan: every live row with any term, ordered by bm25(), then each hit's snippet."""
        cond = " AND ".join(f"t.{c}" for c in where)
        hits = self.con.execute(
            "SELECT t.rowid, t.id, t.title, t.created_at, t.source, bm25(transcripts_fts, 4.0, 1.0, 1.0) AS score"
            " FROM transcripts_fts JOIN transcripts AS t ON t.rowid = transcripts_fts.rowid"
            f" WHERE transcripts_fts MATCH :q AND {cond} ORDER BY score LIMIT :n",
            {**p, "q": q, "n": limit},
        ).fetchall()
        return [(h, self._snippet(q, h[0])) for h in hits]

    def _snippet(self, q: str, rowid: int) -> Any:
        return self.con.execute(
            "SELECT snippet(transcripts_fts, -1, '**', '**', '…', 24)"
            " FROM transcripts_fts WHERE transcripts_fts MATCH ? AND rowid = ?",
            (q, rowid),
        ).fetchone()

    def _filtered(self, ranked: list[int], where: list[str], p: Json) -> dict[int, Any]:
        params: Json = {f"r{i}": v for i, v in enumerate(ranked)}
        params.update(p)
        marks = ",".join(f":r{i}" for i in range(len(ranked)))
        return {
            r[0]: r
            for r in self.con.execute(
                f"SELECT rowid, id, title, created_at, source FROM transcripts WHERE rowid IN ({marks})"
                f" AND {' AND '.join(where)}",
                params,
            )
        }

    def list_tasks(self, a: Json, pos: Cursor) -> tuple[list[Any], Cursor]:
        where: list[str] = []
        p: Json = {"n": a.get("limit", 50) + 1}
        if a.get("status", "all") != "all":
            where.append("k.status = :status")
            p["status"] = a["status"]
        if "transcript_id" in a:
            where.append("k.transcript_id = :tid")
            p["tid"] = a["transcript_id"]
        if "due_before" in a:
            where.append("k.due_at < :due")
            p["due"] = store_time(a["due_before"])
        # A task of a transcript in the trash is never listed.
        where.append(
            "NOT EXISTS (SELECT 1 FROM transcripts d WHERE d.id = k.transcript_id AND d.deleted_at IS NOT NULL)"
        )
        if pos is not None:
            # Keyset on (status='done', due_at IS NULL, due_at, created_at DESC, id DESC).
            where.append(
                "((k.status = 'done') > :s0 OR ((k.status = 'done') = :s0 AND ((k.due_at IS NULL) > :n0"
                " OR ((k.due_at IS NULL) = :n0 AND (k.due_at > :d0 OR (k.due_at IS :d0 AND"
                " (k.created_at < :c0 OR (k.created_at = :c0 AND k.id < :i0))))))))"
            )
            p["s0"], p["n0"], p["d0"], p["c0"], p["i0"] = pos
        # The page first, then its transcripts: joining before the sort would look
        # up the transcript of every task.
        order = "ORDER BY k.status = 'done', k.due_at IS NULL, k.due_at, k.created_at DESC, k.id DESC"
        rows = self.con.execute(
            "SELECT k.id, k.title, k.notes, k.status, k.priority, k.due_at, k.created_at, k.completed_at,"
            " t.id, t.title, t.created_at, t.source FROM (SELECT * FROM tasks k"
            + (f" WHERE {' AND '.join(where)}" if where else "")
            + f" {order} LIMIT :n) k LEFT JOIN transcripts t ON t.id = k.transcript_id AND t.deleted_at IS NULL"
            f" {order}",
            p,
        ).fetchall()
        more = len(rows) > p["n"] - 1
        rows = rows[: p["n"] - 1]
        if not more:
            return rows, None
        last = rows[-1]
        return rows, (int(last[3] == "done"), int(last[5] is None), last[5], last[6], last[0])
