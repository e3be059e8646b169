"""list_transcripts and get_transcript: browsing and reading transcripts."""

from __future__ import annotations

from typing import Any

from magnotia_mcp.args import cursors
from magnotia_mcp.args.checks import time_range
from magnotia_mcp.budget import PageCost, fit_page
from magnotia_mcp.errors import InvalidArguments
from magnotia_mcp.tools import schema
from magnotia_mcp.tools.base import Tool, ToolContext
from magnotia_mcp.tools.window_fit import fit_window


async def _list_transcripts(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    from magnotia_mcp.search.speakers import spoke  # on first use, as the store is
    from magnotia_mcp.store.transcripts import list_transcripts  # on first use: initialize does not need it

    after = cursors.decode("transcripts", args["cursor"], 2) if "cursor" in args else None
    window = time_range(args)
    # Rows are counted as they are read, and no more are read than their mean cost says may fit:
    # a 100-row page that can carry 36 reads about 42, not 101 previews and speaker lists.
    counted = PageCost([], "transcripts", ctx.copies)

    def wanted(page: list[dict[str, Any]]) -> int:
        counted.extend(page[counted.counted :])
        return counted.more(args["max_tokens"])

    async with ctx.store.reader() as db:
        page, key, full = await list_transcripts(
            db,
            limit=args["limit"],
            after=after,
            since=window.since,
            until=window.until,
            source=args.get("source"),
            wanted=wanted,
            speakers=spoke(args["speaker"]) if "speaker" in args else None,
            previews=args.get("previews", True),
        )
    answer = window.echoed({"transcripts": page, "next_cursor": cursors.encode("transcripts", key) if key else None})
    return fit_page(
        answer,
        "transcripts",
        args["max_tokens"],
        ctx.copies,
        lambda item: cursors.encode("transcripts", (item["created_at"], item["id"])),
        "transcripts",
        total=full,
        cost=counted if counted.counted else None,
    )


LIST_TRANSCRIPTS = Tool(
    "list_transcripts",
    "List transcripts",
    "List the user's transcripts newest first, each with its speakers, duration and a preview. "
    "Filter by time, source or speaker.",
    schema.arguments(
        {
            "limit": schema.limit(100, 20, "Page size."),
            "cursor": schema.CURSOR,
            "since": schema.time("Created at or after"),
            "until": schema.UNTIL,
            "source": schema.source(),
            "speaker": {
                "type": ["string", "array"],
                "items": {"type": "string"},
                "minItems": 1,
                "maxItems": 10,
                "description": "Only where this speaker (each of these) spoke.",
            },
            "previews": {"type": "boolean", "description": "false: no previews."},
            "max_tokens": schema.max_tokens(),
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
                    },
                    optional=("preview",),
                )
            ),
            "next_cursor": schema.NEXT_CURSOR,
            "range": schema.RANGE,
            **schema.BUDGET_FIELDS,
        },
        optional=("range", "note"),
    ),
    _list_transcripts,
)


async def _get_transcript(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    from magnotia_mcp.store.transcripts import read_transcript  # on first use: initialize does not need it

    start_ms, end_ms = args.get("start_ms"), args.get("end_ms")
    by_time = start_ms is not None or end_ms is not None
    if by_time and args["offset"]:
        raise InvalidArguments("offset", "give offset or start_ms/end_ms, not both")
    if start_ms is not None and end_ms is not None and end_ms <= start_ms:
        raise InvalidArguments("end_ms", f"must be after start_ms ({start_ms}), not {end_ms}")
    async with ctx.store.reader() as db:
        # Read once: a window over the budget is cut in memory (window_fit), its segments by what the store
        # says each needs, not read again shorter.
        result, needs = await read_transcript(
            db,
            transcript_id=args["id"],
            fmt=args["format"],
            offset=args["offset"],
            start_ms=start_ms,
            end_ms=end_ms,
            max_chars=args["max_chars"],
            include_segments=args["include_segments"],
        )
    return fit_window(result, needs, args["max_tokens"], ctx.copies, by_time)


GET_TRANSCRIPT = Tool(
    "get_transcript",
    "Read a transcript",
    "Read one transcript: details, tasks and a window of its text; read on with offset=next_offset. "
    "start_ms/end_ms read what was said between two times of the recording.",
    schema.arguments(
        {
            "id": {
                "type": "string",
                "description": "The transcript's id.",
            },
            "format": {
                "type": "string",
                "enum": ["formatted", "raw"],
                "default": "formatted",
                "description": "raw: the speech-to-text as heard.",
            },
            "offset": {
                "type": "integer",
                "minimum": 0,
                "default": 0,
                "description": "First character of the window.",
            },
            "start_ms": {
                "type": "integer",
                "minimum": 0,
                "description": "Instead of offset: from what was said at this time (ms into the recording).",
            },
            "end_ms": {
                "type": "integer",
                "minimum": 1,
                "description": "Up to what was said before this time (ms).",
            },
            "max_chars": schema.limit(100000, 20000, "Window size in characters."),
            "max_tokens": schema.max_tokens(),
            "include_segments": {
                "type": "boolean",
                "default": False,
                "description": "Add the window's timed, speaker-labelled segments.",
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
            "truncated": {
                "type": "boolean",
                "description": "Whether the window was cut shorter than max_chars (or the time window) asked, "
                "to stay within max_tokens; note says how to read on.",
            },
            "next_max_chars": {
                "type": "integer",
                "description": "When the window was cut (truncated): the characters of the window asked for "
                "that are left after next_offset; offset=next_offset, max_chars=next_max_chars reads just them.",
            },
            **schema.BUDGET_FIELDS,
        },
        optional=("segments", "note", "next_max_chars"),
    ),
    _get_transcript,
)
