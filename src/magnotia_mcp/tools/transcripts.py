"""list_transcripts and get_transcript: browsing and reading transcripts."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from magnotia_mcp.args import cursors
from magnotia_mcp.args.checks import time_range
from magnotia_mcp.budget import (
    PageCost,
    answer_cost,
    cost_with_string,
    fit_page,
    prefix_within,
    squeeze,
    string_cost,
    string_parts,
)
from magnotia_mcp.errors import InvalidArguments
from magnotia_mcp.text import window_end
from magnotia_mcp.tools import schema
from magnotia_mcp.tools.base import Tool, ToolContext


async def _list_transcripts(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    from magnotia_mcp.search.speakers import spoke  # on first use, as the store is
    from magnotia_mcp.store.transcripts import list_transcripts  # on first use: initialize does not need it

    after = cursors.decode("transcripts", args["cursor"], 2) if "cursor" in args else None
    window = time_range(args)
    # Rows are counted as they are read, and no more are read once they alone are over the budget:
    # a 100-row page that can carry 20 reads about 24, not 101 previews and speaker lists.
    counted = PageCost([], "transcripts", ctx.copies)

    def enough(page: list[dict[str, Any]]) -> bool:
        counted.extend(page[counted.counted :])
        return counted.over(args["max_tokens"])

    async with ctx.store.reader() as db:
        page, key, full = await list_transcripts(
            db,
            limit=args["limit"],
            after=after,
            since=window.since,
            until=window.until,
            source=args.get("source"),
            enough=enough,
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
    "List the user's Magnotia transcripts (dictations, meetings, imported files), newest first, "
    "with a short preview of each. Filter by time, kind or speaker; page with cursor. "
    "Use get_transcript for the full text.",
    schema.arguments(
        {
            "limit": schema.limit(100, 20, "Page size, 1-100."),
            "cursor": schema.CURSOR,
            "since": schema.time("Only transcripts created at or after"),
            "until": schema.time("Only transcripts created before"),
            "source": schema.source("transcripts"),
            "speaker": {
                "type": ["string", "array"],
                "items": {"type": "string"},
                "minItems": 1,
                "maxItems": 10,
                "description": "Only transcripts where this speaker (or each of these) spoke, e.g. Ana.",
            },
            "previews": {"type": "boolean", "description": "false leaves previews out."},
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
    from magnotia_mcp.store.transcripts import get_transcript  # on first use: initialize does not need it

    start_ms, end_ms = args.get("start_ms"), args.get("end_ms")
    by_time = start_ms is not None or end_ms is not None
    if by_time and args["offset"]:
        raise InvalidArguments("offset", "give offset or start_ms/end_ms, not both")
    if start_ms is not None and end_ms is not None and end_ms <= start_ms:
        raise InvalidArguments("end_ms", f"must be after start_ms ({start_ms}), not {end_ms}")
    async with ctx.store.reader() as db:

        async def read(chars: int) -> dict[str, Any]:
            return await get_transcript(
                db,
                transcript_id=args["id"],
                fmt=args["format"],
                offset=args["offset"],
                start_ms=start_ms,
                end_ms=end_ms,
                max_chars=chars,
                include_segments=args["include_segments"],
            )

        return await _fit_window(await read(args["max_chars"]), read, args["max_tokens"], ctx.copies, by_time)


# What may give way in a transcript's details when they alone would fill the budget.
_DETAILS = frozenset({"title", "speakers", "speaker"})  # never "text": windows must rebuild the whole
_DETAIL_LISTS = frozenset({"tasks", "speakers", "segments"})


async def _fit_window(
    result: dict[str, Any], read: Callable[[int], Awaitable[dict[str, Any]]], budget: int, copies: int, by_time: bool
) -> dict[str, Any]:
    """The window cut shorter until the whole answer costs at most budget; the answer says what was cut."""
    asked_end = result["offset"] + len(result["text"])  # the window max_chars (and the times) asked for
    counted = (result["text"], string_parts(result["text"]))  # the text, the longest part, encoded once
    if "segments" not in result:  # text past what one copy of it can cost cannot fit: not costed again and again
        result = _prefix(result, max(1, prefix_within(result["text"], budget // copies + 1, counted[1])))
    shortened, smallest = False, False
    while True:
        result["max_tokens"] = budget
        shortened |= _shorten_details(result, budget, copies)
        _say(result, asked_end, budget, by_time, shortened)
        if counted[0] != result["text"]:
            counted = (result["text"], string_parts(result["text"]))
        cost = cost_with_string(result, copies, "text", counted[1])
        if cost <= budget:
            return result
        text = result["text"]
        # A window holds at least one character, or cluster (a line break and a combining mark: a window cut shorter
        # holds it whole), or reading would not go on.
        if len(text) <= 1 or smallest:
            segments = list(result.get("segments") or ())
            shortened |= squeeze(result, lambda r: answer_cost(r, copies) <= budget, _DETAILS, _DETAIL_LISTS)
            _say(result, asked_end, budget, by_time, shortened)
            _say_segments_left(result, segments)
            return result
        # What the text (and its segments) may cost, as a share of what they cost now.
        fixed = answer_cost({**result, "text": "", "segments": []}, copies)
        share = (budget - fixed) / max(1, cost - fixed)
        chars = max(1, min(prefix_within(text, int(string_cost(text) * share)), len(text) - 1))
        # Without segments the shorter window is a prefix of this one; segments are placed by the store.
        result = await read(chars) if "segments" in result else _prefix(result, chars)
        smallest = len(result["text"]) >= len(text)


def _say_segments_left(result: dict[str, Any], segments: list[dict[str, Any]]) -> None:
    """When segments had to be left out (an empty or one-character window), the note says where they go on.

    The text cannot move the window on here, so the segments' times are the only way to read the rest.
    """
    shown = len(result.get("segments") or ())
    if "segments" not in result or shown >= len(segments):
        return
    first = segments[shown]
    more = (
        f"Segments from seq {first['seq']} on were left out to fit: call get_transcript again with "
        f"start_ms={first['start_ms']} and include_segments=true to read on."
    )
    result["note"] = f"{result['note']} {more}" if result.get("note") else more


def _prefix(result: dict[str, Any], chars: int) -> dict[str, Any]:
    """result with the window's text cut at most chars long, on a safe boundary."""
    cut = window_end(result["text"], 0, chars)
    end = result["offset"] + cut
    return {**result, "text": result["text"][:cut], "next_offset": end if end < result["total_chars"] else None}


def _shorten_details(result: dict[str, Any], budget: int, copies: int) -> bool:
    """Huge details (a very long title, thousands of tasks or speakers) give way first, to half the budget."""
    segments = result.pop("segments", None)
    shrank = squeeze(result, lambda r: answer_cost({**r, "text": ""}, copies) <= budget // 2, _DETAILS, _DETAIL_LISTS)
    if segments is not None:
        result["segments"] = segments
    return shrank


def _say(result: dict[str, Any], asked_end: int, budget: int, by_time: bool, shortened: bool) -> None:
    """truncated, next_max_chars and note: whether the window was cut for the budget, and how to read on."""
    end = result["offset"] + len(result["text"])
    result["truncated"] = end < asked_end
    result.pop("next_max_chars", None)
    result.pop("note", None)
    notes = []
    if end < asked_end:
        result["next_max_chars"] = rest = asked_end - end
        how = (
            f"with offset={end}, max_chars={rest} to read the rest of the time window"
            if by_time
            else f"with offset={end} to read on (max_chars={rest} reads just the rest of this window)"
        )
        notes.append(
            f"Cut at character {end}, {rest} characters short of the window asked for, to keep this answer "
            f"within max_tokens={budget}: call get_transcript again {how}."
        )
    if shortened:
        notes.append(
            "Very long details (title, speakers, tasks or segments) were shortened to fit; list_tasks with "
            "this transcript_id lists every task."
        )
    if notes:
        result["note"] = " ".join(notes)


GET_TRANSCRIPT = Tool(
    "get_transcript",
    "Read a transcript",
    "Read one transcript by id: its details, a window of its text, and the tasks extracted from it. "
    "Long text comes in windows: when next_offset is not null, call again with offset=next_offset. "
    "A window is also cut to keep the answer within max_tokens (truncated and note say so). "
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
            "max_chars": schema.limit(
                100000, 20000, "Window size in characters, 1-100000; max_tokens may cut the window shorter."
            ),
            "max_tokens": schema.max_tokens(),
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
