"""The four tools: their schemas, descriptions and handlers, side by side.

``TOOLS`` is the table the dispatcher serves from: each entry's input schema
is what ``tools/list`` shows a model *and* what ``arguments.validate``
enforces; its output schema describes exactly what the handler returns.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from magnotia_mcp import cursors, queries
from magnotia_mcp.arguments import parse_time, validate
from magnotia_mcp.querylang import parse

if TYPE_CHECKING:
    from magnotia_mcp.store import Store

Progress = Callable[[int, int | None, str], None]


class ToolContext:
    """What a handler may use: the store, and a progress sink (no-op unless asked)."""

    __slots__ = ("progress", "store")

    def __init__(self, store: Store, progress: Progress | None = None) -> None:
        self.store = store
        self.progress = progress


Handler = Callable[[ToolContext, dict[str, Any]], Awaitable[dict[str, Any]]]


class Tool:
    __slots__ = ("description", "handler", "input_schema", "name", "output_schema", "title")

    def __init__(
        self,
        name: str,
        title: str,
        description: str,
        input_schema: dict[str, Any],
        output_schema: dict[str, Any],
        handler: Handler,
    ) -> None:
        self.name = name
        self.title = title
        self.description = description
        self.input_schema = input_schema
        self.output_schema = output_schema
        self.handler = handler

    async def call(self, ctx: ToolContext, arguments: object) -> dict[str, Any]:
        return await self.handler(ctx, validate(self.input_schema, arguments))


# Read-only, same answer for the same store, nothing outside the user's machine.
ANNOTATIONS = {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True, "openWorldHint": False}

SOURCES = ["dictation", "meeting", "file"]
_TIME_HELP = "RFC 3339 time (2026-05-09T14:03:12Z) or a date (2026-05-09 = that day's start, UTC)"


def _obj(properties: dict[str, Any], required: tuple[str, ...] = ()) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": properties, "additionalProperties": False}
    if required:
        schema["required"] = list(required)
    return schema


def _nullable(kind: str) -> dict[str, Any]:
    return {"type": [kind, "null"]}


def _record(properties: dict[str, Any], *, optional: tuple[str, ...] = (), nullable: bool = False) -> dict[str, Any]:
    """An output object: every property is always present (maybe null) unless named optional."""
    return {
        "type": ["object", "null"] if nullable else "object",
        "properties": properties,
        "required": [name for name in properties if name not in optional],
    }


def _list_of(item: dict[str, Any]) -> dict[str, Any]:
    return {"type": "array", "items": item}


_STRING = {"type": "string"}
_INTEGER = {"type": "integer"}
_SOURCE = {"type": "string", "enum": SOURCES}


def _source(what: str) -> dict[str, Any]:
    return {"type": "string", "enum": SOURCES, "description": f"Only {what} of this kind."}


def _limit(high: int, default: int, what: str) -> dict[str, Any]:
    return {"type": "integer", "minimum": 1, "maximum": high, "default": default, "description": what}


_CURSOR = {"type": "string", "description": "next_cursor from the previous page; omit for the first page."}
_NEXT_CURSOR = {"type": ["string", "null"], "description": "Pass as cursor for the next page; null on the last."}
_TRANSCRIPT_REF = _record({"id": _STRING, "title": _STRING}, nullable=True)


# -- list_transcripts -----------------------------------------------------------


async def _list_transcripts(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    after = cursors.decode("transcripts", args["cursor"], 2) if "cursor" in args else None
    since = parse_time("since", args["since"]) if "since" in args else None
    until = parse_time("until", args["until"]) if "until" in args else None
    async with ctx.store.reader() as db:
        page, key = await queries.list_transcripts(
            db, limit=args["limit"], after=after, since=since, until=until, source=args.get("source")
        )
    return {"transcripts": page, "next_cursor": cursors.encode("transcripts", key) if key else None}


LIST_TRANSCRIPTS = Tool(
    "list_transcripts",
    "List transcripts",
    "List the user's Magnotia transcripts (dictations, meetings, imported files), newest first, "
    "with a short preview of each. Filter by time or kind; page with cursor. "
    "Use get_transcript for the full text.",
    _obj(
        {
            "limit": _limit(100, 20, "Page size, 1-100."),
            "cursor": _CURSOR,
            "since": {"type": "string", "description": f"Only transcripts created at or after this {_TIME_HELP}."},
            "until": {"type": "string", "description": f"Only transcripts created before this {_TIME_HELP}."},
            "source": _source("transcripts"),
        }
    ),
    _record(
        {
            "transcripts": _list_of(
                _record(
                    {
                        "id": _STRING,
                        "title": _STRING,
                        "source": _SOURCE,
                        "language": _nullable("string"),
                        "created_at": _STRING,
                        "duration_ms": _nullable("integer"),
                        "preview": _STRING,
                    }
                )
            ),
            "next_cursor": _NEXT_CURSOR,
        }
    ),
    _list_transcripts,
)


# -- get_transcript -------------------------------------------------------------


async def _get_transcript(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    async with ctx.store.reader() as db:
        return await queries.get_transcript(
            db,
            transcript_id=args["id"],
            fmt=args["format"],
            offset=args["offset"],
            max_chars=args["max_chars"],
            include_segments=args["include_segments"],
        )


GET_TRANSCRIPT = Tool(
    "get_transcript",
    "Read a transcript",
    "Read one transcript by id: its details, a window of its text, and the tasks extracted from it. "
    "Long text comes in windows: when next_offset is not null, call again with offset=next_offset. "
    "Set include_segments for time-stamped, speaker-labelled pieces of the window.",
    _obj(
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
            "max_chars": _limit(100000, 20000, "Window size in characters, 1-100000."),
            "include_segments": {
                "type": "boolean",
                "default": False,
                "description": "Also return the time-stamped segments that overlap the window.",
            },
        },
        required=("id",),
    ),
    _record(
        {
            "id": _STRING,
            "title": _STRING,
            "source": _SOURCE,
            "language": _nullable("string"),
            "model": _nullable("string"),
            "created_at": _STRING,
            "updated_at": _STRING,
            "duration_ms": _nullable("integer"),
            "format": {"type": "string", "enum": ["formatted", "raw"]},
            "text": _STRING,
            "offset": _INTEGER,
            "total_chars": _INTEGER,
            "next_offset": _nullable("integer"),
            "segments": _list_of(
                _record(
                    {
                        "seq": _INTEGER,
                        "start_ms": _INTEGER,
                        "end_ms": _INTEGER,
                        "speaker": _nullable("string"),
                        "text": _STRING,
                    }
                )
            ),
            "tasks": _list_of(
                _record(
                    {
                        "id": _STRING,
                        "title": _STRING,
                        "status": {"type": "string", "enum": ["open", "done"]},
                        "due_at": _nullable("string"),
                    }
                )
            ),
        },
        optional=("segments",),
    ),
    _get_transcript,
)


# -- search_transcripts -----------------------------------------------------------


async def _search_transcripts(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    query = parse(args["query"])
    since = parse_time("since", args["since"]) if "since" in args else None
    until = parse_time("until", args["until"]) if "until" in args else None
    sink = ctx.progress

    def progress(rows: int) -> None:
        if sink is not None:
            sink(rows, None, f"scanned {rows} transcripts")

    async with ctx.store.reader() as db:
        return await queries.search_transcripts(
            db, query, limit=args["limit"], since=since, until=until, source=args.get("source"), progress=progress
        )


SEARCH_TRANSCRIPTS = Tool(
    "search_transcripts",
    "Search transcripts",
    "Full-text search over the user's transcripts (titles and text). All words must appear, in any order, "
    'case- and accent-insensitively; "a quoted phrase" must appear as written; word* matches a prefix; '
    "OR between two terms accepts either. Hits come best first: title matches, then text matches, "
    "newest first within each, with a snippet (matches in **bold**) and the first matching segment's time.",
    _obj(
        {
            "query": {"type": "string", "minLength": 1, "maxLength": 500, "description": "What to look for."},
            "limit": _limit(50, 10, "How many hits, 1-50."),
            "since": {"type": "string", "description": f"Only transcripts created at or after this {_TIME_HELP}."},
            "until": {"type": "string", "description": f"Only transcripts created before this {_TIME_HELP}."},
            "source": _source("transcripts"),
        },
        required=("query",),
    ),
    _record(
        {
            "query": _STRING,
            "mode": {"type": "string", "enum": ["fts", "scan"]},
            "hits": _list_of(
                _record(
                    {
                        "transcript_id": _STRING,
                        "title": _STRING,
                        "created_at": _STRING,
                        "source": _SOURCE,
                        "snippet": _STRING,
                        "score": {"type": "number"},
                        "segment": _record(
                            {
                                "seq": _INTEGER,
                                "start_ms": _INTEGER,
                                "end_ms": _INTEGER,
                                "speaker": _nullable("string"),
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


# -- list_tasks -------------------------------------------------------------------


async def _list_tasks(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    after = cursors.decode("tasks", args["cursor"], 5) if "cursor" in args else None
    due_before = parse_time("due_before", args["due_before"]) if "due_before" in args else None
    async with ctx.store.reader() as db:
        page, key = await queries.list_tasks(
            db,
            limit=args["limit"],
            status=args["status"],
            transcript_id=args.get("transcript_id"),
            due_before=due_before,
            after=after,
        )
    return {"tasks": page, "next_cursor": cursors.encode("tasks", key) if key else None}


LIST_TASKS = Tool(
    "list_tasks",
    "List tasks",
    "List the action items Magnotia extracted from the user's transcripts: open before done, then by due "
    "date (undated last), then newest first. Filter by status, source transcript or due date; page with cursor.",
    _obj(
        {
            "status": {
                "type": "string",
                "enum": ["open", "done", "all"],
                "default": "all",
                "description": "Which tasks: open, done, or all.",
            },
            "transcript_id": {"type": "string", "description": "Only tasks extracted from this transcript."},
            "due_before": {"type": "string", "description": f"Only tasks due before this {_TIME_HELP}."},
            "limit": _limit(100, 50, "Page size, 1-100."),
            "cursor": _CURSOR,
        }
    ),
    _record(
        {
            "tasks": _list_of(
                _record(
                    {
                        "id": _STRING,
                        "title": _STRING,
                        "notes": _nullable("string"),
                        "status": {"type": "string", "enum": ["open", "done"]},
                        "priority": _nullable("integer"),
                        "due_at": _nullable("string"),
                        "created_at": _STRING,
                        "completed_at": _nullable("string"),
                        "transcript": _TRANSCRIPT_REF,
                    }
                )
            ),
            "next_cursor": _NEXT_CURSOR,
        }
    ),
    _list_tasks,
)


TOOLS: dict[str, Tool] = {t.name: t for t in (LIST_TRANSCRIPTS, GET_TRANSCRIPT, SEARCH_TRANSCRIPTS, LIST_TASKS)}
