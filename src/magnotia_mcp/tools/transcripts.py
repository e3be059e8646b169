"""list_transcripts and get_transcript: browsing and reading transcripts."""

from __future__ import annotations

from typing import Any

from magnotia_mcp import cursors
from magnotia_mcp.arguments import time_range
from magnotia_mcp.errors import InvalidArguments
from magnotia_mcp.tools import schema
from magnotia_mcp.tools.base import Tool, ToolContext


async def _list_transcripts(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    from magnotia_mcp.store.transcripts import list_transcripts  # on first use: initialize does not need it

    after = cursors.decode("transcripts", args["cursor"], 2) if "cursor" in args else None
    window = time_range(args)
    async with ctx.store.reader() as db:
        page, key = await list_transcripts(
            db, limit=args["limit"], after=after, since=window.since, until=window.until, source=args.get("source")
        )
    return window.echoed({"transcripts": page, "next_cursor": cursors.encode("transcripts", key) if key else None})


LIST_TRANSCRIPTS = Tool(
    "list_transcripts",
    "List transcripts",
    "List the user's Magnotia transcripts (dictations, meetings, imported files), newest first, "
    "with a short preview of each. Filter by time or kind; page with cursor. "
    "Use get_transcript for the full text.",
    schema.arguments(
        {
            "limit": schema.limit(100, 20, "Page size, 1-100."),
            "cursor": schema.CURSOR,
            "since": schema.time("Only transcripts created at or after"),
            "until": schema.time("Only transcripts created before"),
            "source": schema.source("transcripts"),
        }
    ),
    schema.record(
        {
            "transcripts": schema.list_of(
                schema.record(
                    {
                        "id": schema.STRING,
                        "title": schema.STRING,
                        "source": schema.SOURCE,
                        "language": schema.nullable("string"),
                        "created_at": schema.STRING,
                        "duration_ms": schema.nullable("integer"),
                        "preview": schema.STRING,
                        "speakers": schema.SPEAKERS,
                    }
                )
            ),
            "next_cursor": schema.NEXT_CURSOR,
            "range": schema.RANGE,
        },
        optional=("range",),
    ),
    _list_transcripts,
)


async def _get_transcript(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    from magnotia_mcp.store.transcripts import get_transcript  # on first use: initialize does not need it

    start_ms, end_ms = args.get("start_ms"), args.get("end_ms")
    if (start_ms is not None or end_ms is not None) and args["offset"]:
        raise InvalidArguments("offset", "give offset or start_ms/end_ms, not both")
    if start_ms is not None and end_ms is not None and end_ms <= start_ms:
        raise InvalidArguments("end_ms", f"must be after start_ms ({start_ms}), not {end_ms}")
    async with ctx.store.reader() as db:
        return await get_transcript(
            db,
            transcript_id=args["id"],
            fmt=args["format"],
            offset=args["offset"],
            start_ms=start_ms,
            end_ms=end_ms,
            max_chars=args["max_chars"],
            include_segments=args["include_segments"],
        )


GET_TRANSCRIPT = Tool(
    "get_transcript",
    "Read a transcript",
    "Read one transcript by id: its details, a window of its text, and the tasks extracted from it. "
    "Long text comes in windows: when next_offset is not null, call again with offset=next_offset. "
    "To read what was said between two moments of a recording, give start_ms/end_ms instead of offset. "
    "Set include_segments for time-stamped, speaker-labelled pieces of the window.",
    schema.arguments(
        {
            "id": {
                "type": "string",
                "description": "The transcript's id, from list_transcripts or search_transcripts.",
            },
            "format": {
                "type": "string",
                "enum": ["formatted", "raw"],
                "default": "formatted",
                "description": "formatted: the app's LLM-formatted text (raw where not formatted yet); "
                "raw: verbatim speech-to-text.",
            },
            "offset": {
                "type": "integer",
                "minimum": 0,
                "default": 0,
                "description": "First character of the window (use next_offset from the previous call).",
            },
            "start_ms": {
                "type": "integer",
                "minimum": 0,
                "description": "Instead of offset: start the window where what was said at this time "
                "(milliseconds into the recording, e.g. 7800000 for 2:10:00) begins.",
            },
            "end_ms": {
                "type": "integer",
                "minimum": 1,
                "description": "With start_ms (or alone, from the start): end the window with what was said "
                "before this time; max_chars still applies.",
            },
            "max_chars": schema.limit(100000, 20000, "Window size in characters, 1-100000."),
            "include_segments": {
                "type": "boolean",
                "default": False,
                "description": "Also return the time-stamped segments that overlap the window.",
            },
        },
        required=("id",),
    ),
    schema.record(
        {
            "id": schema.STRING,
            "title": schema.STRING,
            "source": schema.SOURCE,
            "language": schema.nullable("string"),
            "model": schema.nullable("string"),
            "created_at": schema.STRING,
            "updated_at": schema.STRING,
            "duration_ms": schema.nullable("integer"),
            "format": {"type": "string", "enum": ["formatted", "raw"]},
            "text": schema.STRING,
            "offset": schema.INTEGER,
            "total_chars": schema.INTEGER,
            "next_offset": schema.nullable("integer"),
            "speakers": schema.SPEAKERS,
            "segments": schema.list_of(
                schema.record(
                    {
                        "seq": schema.INTEGER,
                        "start_ms": schema.INTEGER,
                        "end_ms": schema.INTEGER,
                        "speaker": schema.nullable("string"),
                        "text": schema.STRING,
                    }
                )
            ),
            "tasks": schema.list_of(
                schema.record(
                    {
                        "id": schema.STRING,
                        "title": schema.STRING,
                        "status": {"type": "string", "enum": ["open", "done"]},
                        "due_at": schema.nullable("string"),
                    }
                )
            ),
        },
        optional=("segments",),
    ),
    _get_transcript,
)
