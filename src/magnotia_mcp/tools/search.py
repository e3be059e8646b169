"""search_transcripts: finding transcripts by what was said in them."""

from __future__ import annotations

from typing import Any

from magnotia_mcp.arguments import parse_time
from magnotia_mcp.querylang import parse
from magnotia_mcp.store.search import search_transcripts
from magnotia_mcp.tools import schema
from magnotia_mcp.tools.base import Tool, ToolContext


async def _search_transcripts(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    query = parse(args["query"])
    since = parse_time("since", args["since"]) if "since" in args else None
    until = parse_time("until", args["until"]) if "until" in args else None
    sink = ctx.progress

    def progress(rows: int) -> None:
        if sink is not None:
            sink(rows, None, f"scanned {rows} transcripts")

    async with ctx.store.reader() as db:
        return await search_transcripts(
            db, query, limit=args["limit"], since=since, until=until, source=args.get("source"), progress=progress
        )


SEARCH_TRANSCRIPTS = Tool(
    "search_transcripts",
    "Search transcripts",
    "Full-text search over the user's transcripts (titles and text). All words must appear, in any order, "
    'case- and accent-insensitively; "a quoted phrase" must appear as written; word* matches a prefix; '
    "OR between two terms accepts either. Hits come best first: title matches, then text matches, "
    "newest first within each, with a snippet (matches in **bold**) and the first matching segment's time.",
    schema.arguments(
        {
            "query": {"type": "string", "minLength": 1, "maxLength": 500, "description": "What to look for."},
            "limit": schema.limit(50, 10, "How many hits, 1-50."),
            "since": schema.time("Only transcripts created at or after"),
            "until": schema.time("Only transcripts created before"),
            "source": schema.source("transcripts"),
        },
        required=("query",),
    ),
    schema.record(
        {
            "query": schema.STRING,
            "mode": {"type": "string", "enum": ["fts", "scan"]},
            "hits": schema.list_of(
                schema.record(
                    {
                        "transcript_id": schema.STRING,
                        "title": schema.STRING,
                        "created_at": schema.STRING,
                        "source": schema.SOURCE,
                        "snippet": schema.STRING,
                        "score": {"type": "number"},
                        "segment": schema.record(
                            {
                                "seq": schema.INTEGER,
                                "start_ms": schema.INTEGER,
                                "end_ms": schema.INTEGER,
                                "speaker": schema.nullable("string"),
                            },
                            nullable=True,
                        ),
                    }
                )
            ),
        }
    ),
    _search_transcripts,
)
