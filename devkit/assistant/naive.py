"""The naive baseline: a plain MCP server (the SDK's MCPServer, FastMCP before mcp 2) of the same four tools.

What a developer writes in an afternoon: the same tool and argument names (a subset), plain FTS5 where every
word of the query is required (no stemming, no OR, no ranking beyond FTS5's own, no hint), times as RFC 3339
dates only, and answers as JSON text held to a fixed character cap. It opens the store read-only and never
shows the trash, tasks of trashed transcripts included.

    python -m devkit.assistant.naive --db STORE
"""

from __future__ import annotations

import argparse
import json
import re
import sqlite3
from datetime import datetime, timezone
from pathlib import Path
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from pydantic import Field

CAP = 20_000  # characters of any answer
INSTRUCTIONS = "Read-only access to the user's Magnotia transcripts (meetings, dictations, files) and tasks."


def open_store(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path.resolve().as_uri() + "?mode=ro", uri=True, check_same_thread=False)
    conn.row_factory = sqlite3.Row
    return conn


def stamp(name: str, value: str | None) -> str | None:
    """An RFC 3339 date or date-time as the store writes times (UTC, milliseconds, Z)."""
    if value is None:
        return None
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(f"{name} must be an RFC 3339 date or date-time, e.g. 2026-05-09") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.000Z")


def answer(result: dict[str, Any], key: str | None = None) -> str:
    """result as JSON text; a list under key loses items from its end until the text fits CAP."""
    text = json.dumps(result, ensure_ascii=False, indent=2)
    while key and len(text) > CAP and len(result[key]) > 1:
        result[key] = result[key][:-1]
        text = json.dumps(result, ensure_ascii=False, indent=2)
    return text[:CAP]


def page(key: str, rows: list[sqlite3.Row], limit: int, start: int) -> str:
    """A page of at most limit rows (rows holds one more when there are more) that fits CAP, and its cursor."""
    items = [dict(r) for r in rows[:limit]]
    more = len(rows) > limit
    while True:
        cursor = str(start + len(items)) if more else None
        text = json.dumps({key: items, "next_cursor": cursor}, ensure_ascii=False, indent=2)
        if len(text) <= CAP or len(items) <= 1:
            return text[:CAP]
        items, more = items[:-1], True


def _between(since: str | None, until: str | None) -> tuple[str, list[str]]:
    low, high = stamp("since", since), stamp("until", until)
    sql = (" AND t.created_at >= ?" if low else "") + (" AND t.created_at < ?" if high else "")
    return sql, [v for v in (low, high) if v]


def build(db: Path) -> MCPServer:
    conn = open_store(db)
    server: MCPServer = MCPServer("naive-magnotia", instructions=INSTRUCTIONS, log_level="WARNING")

    @server.tool(structured_output=False, description="Full-text search of transcripts; every word must match.")
    def search_transcripts(
        query: Annotated[str, Field(description="Words to find")],
        limit: Annotated[int, Field(ge=1, le=50, description="Max hits")] = 10,
        since: Annotated[str | None, Field(description="RFC 3339 date, e.g. 2026-05-01")] = None,
        until: Annotated[str | None, Field(description="RFC 3339 date (exclusive)")] = None,
    ) -> str:
        words = re.findall(r"\w+", query)
        hits: list[dict[str, Any]] = []
        if words:
            where, params = _between(since, until)
            rows = conn.execute(
                "SELECT t.id, t.title, t.created_at, t.source, t.language,"
                " snippet(transcripts_fts, -1, '[', ']', '…', 24) AS snippet"
                " FROM transcripts_fts JOIN transcripts t ON t.rowid = transcripts_fts.rowid"
                f" WHERE transcripts_fts MATCH ? AND t.deleted_at IS NULL{where} ORDER BY rank LIMIT ?",
                [" ".join(f'"{w}"' for w in words), *params, limit],
            )
            hits = [dict(r) for r in rows]
        return answer({"query": query, "hits": hits}, "hits")

    @server.tool(structured_output=False, description="List transcripts, newest first.")
    def list_transcripts(
        limit: Annotated[int, Field(ge=1, le=100, description="Page size")] = 20,
        cursor: Annotated[str | None, Field(description="next_cursor of the previous page")] = None,
        since: Annotated[str | None, Field(description="RFC 3339 date, e.g. 2026-05-01")] = None,
        until: Annotated[str | None, Field(description="RFC 3339 date (exclusive)")] = None,
    ) -> str:
        start = int(cursor or 0)
        where, params = _between(since, until)
        rows = conn.execute(
            "SELECT t.id, t.title, t.created_at, t.source, t.language, t.duration_ms,"
            " substr(coalesce(t.formatted_text, t.raw_text), 1, 200) AS preview"
            f" FROM transcripts t WHERE t.deleted_at IS NULL{where} ORDER BY t.created_at DESC, t.id DESC"
            " LIMIT ? OFFSET ?",
            [*params, limit + 1, start],
        ).fetchall()
        return page("transcripts", rows, limit, start)

    @server.tool(structured_output=False, description="Read a transcript's text, in windows.")
    def get_transcript(
        id: Annotated[str, Field(description="Transcript id")],
        offset: Annotated[int, Field(ge=0, description="First character")] = 0,
        max_chars: Annotated[int, Field(ge=1, le=CAP, description="Window size")] = CAP,
    ) -> str:
        row = conn.execute(
            "SELECT id, title, created_at, source, language, duration_ms, coalesce(formatted_text, raw_text) AS text"
            " FROM transcripts WHERE id = ? AND deleted_at IS NULL",
            [id],
        ).fetchone()
        if row is None:
            raise ValueError(f"Transcript {id} not found")
        result = dict(row)
        whole = result.pop("text")
        window = whole[offset : offset + max_chars]
        end = offset + len(window)
        result.update(text=window, offset=offset, total_chars=len(whole), next_offset=end if end < len(whole) else None)
        return answer(result)

    @server.tool(structured_output=False, description="List tasks: open first, by due date.")
    def list_tasks(
        status: Annotated[str, Field(pattern="^(open|done|all)$", description="open, done or all")] = "all",
        transcript_id: Annotated[str | None, Field(description="Only this transcript's tasks")] = None,
        limit: Annotated[int, Field(ge=1, le=100, description="Page size")] = 50,
        cursor: Annotated[str | None, Field(description="next_cursor of the previous page")] = None,
    ) -> str:
        start = int(cursor or 0)
        where = (" AND k.status = ?" if status != "all" else "") + (" AND k.transcript_id = ?" if transcript_id else "")
        params: list[Any] = [v for v in (status if status != "all" else None, transcript_id) if v]
        rows = conn.execute(
            "SELECT k.id, k.title, k.notes, k.status, k.due_at, k.transcript_id FROM tasks k"
            " LEFT JOIN transcripts t ON t.id = k.transcript_id"
            f" WHERE (k.transcript_id IS NULL OR t.deleted_at IS NULL){where}"
            " ORDER BY k.status = 'done', k.due_at IS NULL, k.due_at, k.created_at DESC LIMIT ? OFFSET ?",
            [*params, limit + 1, start],
        ).fetchall()
        return page("tasks", rows, limit, start)

    return server


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--db", type=Path, required=True, help="the store (opened read-only)")
    args = parser.parse_args(argv)
    if not args.db.is_file():
        parser.error(f"no store at {args.db}")
    build(args.db).run()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
