"""search_transcripts: finding transcripts by what was said in them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from magnotia_mcp.args import cursors
from magnotia_mcp.args.checks import time_range
from magnotia_mcp.budget import PageCost, answer_cost, fit_page
from magnotia_mcp.errors import InvalidArguments
from magnotia_mcp.tools import hints, inside, schema
from magnotia_mcp.tools.base import Tool, ToolContext

if TYPE_CHECKING:  # annotations only: the query language and numpy load on the first search, not at start-up
    import threading
    from pathlib import Path

    from magnotia_mcp.search.querylang import Query
    from magnotia_mcp.search.semantic.found import Near
    from magnotia_mcp.search.semantic.loaded import Filters


async def _search_transcripts(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    # Imported on the first search, not at start-up: the query language and the
    # search plans are a dozen modules that answering initialize does not need.
    from magnotia_mcp.search.plan import search_page
    from magnotia_mcp.search.querylang import parse

    if "transcript_id" in args:
        return await inside.search_inside(ctx, args)
    query = parse(args["query"])
    window = time_range(args)
    # A cursor continues a search cut for the budget: the same hits, from the first not yet given.
    skip, limit = cursors.decode("search", args["cursor"], 2) if "cursor" in args else (0, args["limit"])
    if not 0 <= skip < limit <= MAX_HITS:
        raise InvalidArguments("cursor", "is not a cursor this server issued; pass next_cursor exactly as returned")
    if "speaker" in args and not args["speaker"].strip():
        raise InvalidArguments("speaker", "must name a speaker (their label in the transcript, e.g. Ana)")
    sink = ctx.progress

    def progress(rows: int) -> None:
        if sink is not None:
            sink(rows, None, f"scanned {rows} transcripts")

    budget = args["max_tokens"]
    import asyncio

    # The index is asked on its own thread while the search by words runs: a hybrid search costs the
    # slower of the two, not their sum. The search awaits it only where it fuses (by relevance).
    meaning = asyncio.ensure_future(_meaning(ctx, args, query, limit, (window.since, window.until)))

    async def nearest() -> Near | None:
        return (await meaning)[0]

    counted = PageCost([], "hits", ctx.copies)

    def enough(partial: dict[str, Any]) -> bool:
        # The hits so far already cost more than the budget, by themselves: no page can hold more
        # of them (an answer only grows with its hits), so the rest are not shaped at all.
        # Asked after every hit: each hit is encoded once, as it comes, and fit_page reuses that.
        shaped = partial["hits"]
        counted.extend(shaped[counted.counted :])
        return counted.over(budget)

    try:
        async with ctx.store.reader() as db:
            result, total = await search_page(
                db,
                query,
                limit=limit,
                sort=args["sort"],
                since=window.since,
                until=window.until,
                source=args.get("source"),
                speaker=args.get("speaker"),
                progress=progress,
                skip=skip,
                enough=enough,
                near=nearest,
            )
            _, semantic = await meaning
            if semantic is not None:
                result["semantic"] = semantic
            # Found little on a first page: say what the store holds and what to try (issue 21, item 5).
            by_meaning = any(hit.get("matched_by", "words") != "words" for hit in result["hits"])
            found = hints.found_little(query, result["hits"]) if skip == 0 and not by_meaning else None
            if found is not None:
                filtered = any(k in args for k in ("since", "until", "source", "speaker"))
                held = {**await hints.holdings(db), "semantic_index": bool(semantic and semantic["used"])}
                hint = hints.hint(found, query, held, filtered, await hints.tasks_matching(db, args["query"], found))
                # A hint never pushes an answer over max_tokens nor crowds out its hits: alone it must fit the
                # budget, beside hits half of it; else its short form (what happened and why), else none.
                room = budget // 2 if result["hits"] else budget
                for candidate in (hint, hints.short(hint)):
                    if answer_cost(window.echoed({**result, "hits": [], "hint": candidate}), ctx.copies) <= room:
                        result["hint"] = candidate
                        break
    finally:
        if not meaning.done():
            meaning.cancel()  # the search failed or was cancelled: nothing waits for the index's answer
        elif not meaning.cancelled():
            meaning.exception()  # retrieved, so never logged as lost: the search's own error is the one said
    result["next_cursor"] = None
    answer = window.echoed(result)
    return fit_page(
        answer,
        "hits",
        budget,
        ctx.copies,
        lambda hit: cursors.encode("search", (skip + answer["hits"].index(hit) + 1, limit)),
        "hits",
        total=total,
        cost=counted,  # the hits, each encoded once as it was shaped
    )


MAX_HITS = 50


async def _meaning(
    ctx: ToolContext, args: dict[str, Any], query: Query, limit: int, times: tuple[str | None, str | None]
) -> tuple[Near | None, dict[str, Any] | None]:
    """The transcripts nearest the query in meaning, and what to say of the semantic index; (None, None) without one.

    Only a search by relevance asks the index. Nothing of the semantic extra is imported unless the store
    has an index file; the work runs on a worker thread. times: the search's since and until, as the store's
    rows are compared with them; with its source, the index scores only the transcripts it says may pass.
    """
    if args["sort"] != "relevance" or query.empty:
        return None, None
    from magnotia_mcp.search.semantic import indexfile

    path = ctx.store.path
    try:
        present = indexfile.location(path).is_file()
    except OSError:  # a cache folder this user may not look into (another user's home): no index of ours
        present = False
    if not present:
        return None, None
    import asyncio

    from magnotia_mcp.search.plan import NEAR
    from magnotia_mcp.search.speakers import speaker_key

    # A filter may leave few of the nearest: then as many as a search may ever return are asked for, to filter
    # (when even those leave too few, the plan asks again among the transcripts that pass: plan._within).
    filtered = any(k in args for k in ("since", "until", "source", "speaker"))
    speaker = speaker_key(args["speaker"]) if "speaker" in args else None
    most = NEAR * (MAX_HITS if filtered else limit)
    filters = (*times, args.get("source"))
    import threading

    given_up = threading.Event()
    try:
        return await asyncio.to_thread(_nearest, path, args["query"], most, speaker, filters, given_up)
    except asyncio.CancelledError:
        given_up.set()  # its thread stops waiting for the index: a cancelled call, or a server stopping, waits not
        raise


# One BLAS thread for the server, unless the user chose: it scores one query at a time, on a worker thread
# beside the search by words (SQLite's thread) on the same cores, and BLAS threads of its own fight those for
# them (OpenBLAS's idle ones spin). A 32k x 64 product gains nothing from splitting: in-process at 10k, hybrid
# over words went from 3.4-4.1x to 2.7-2.9x. Read by numpy's BLAS when numpy is first imported, just below.
_BLAS_THREADS = ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "VECLIB_MAXIMUM_THREADS")


def _nearest(
    path: Path,
    text: str,
    limit: int,
    speaker: str | None = None,
    filters: Filters = (None, None, None),
    given_up: threading.Event | None = None,
) -> tuple[Near | None, dict[str, Any]]:
    import os

    for name in _BLAS_THREADS:
        os.environ.setdefault(name, "1")
    try:
        from magnotia_mcp.search.semantic.loaded import Unavailable
        from magnotia_mcp.search.semantic.model import ModelError
        from magnotia_mcp.search.semantic.nearest import searcher
    except ImportError as exc:
        why = (
            f"this store has a semantic index, but the semantic extra is not installed ({exc.name} is missing): "
            "pip install 'magnotia-mcp[semantic]'; this search went by words only"
        )
        return None, {"used": False, "why": why}
    try:
        found = searcher(path, given_up=given_up)
    except Unavailable as exc:
        return None, {"used": False, "why": f"{exc}; this search went by words only"}
    from magnotia_mcp.search.semantic import refresh

    try:
        near = found.near(text, limit, speaker, filters)
    except ModelError as exc:  # its file changed under the server (cut short): never garbage, and never an error
        return None, {"used": False, "why": f"{exc}; this search went by words only"}
    complete = found.index.complete and not refresh.behind(path, found)
    refresh.after_search(path, found)  # new transcripts are embedded on a thread of its own, for the next searches
    return near, {"used": True, "transcripts": found.covered, "complete": complete}


_TIME = {
    "seq": schema.INTEGER,
    "start_ms": schema.INTEGER,
    "end_ms": schema.INTEGER,
    "speaker": schema.nullable("string"),
}

# Only in an answer that found nothing or only weak partial matches (tools/hints).
HINT = {
    **schema.record(
        {
            "found": {"type": "string", "enum": ["nothing", "partial"]},
            "message": schema.STRING,
            "store": schema.record(
                {
                    "transcripts": schema.INTEGER,
                    "newest_only": {"type": "boolean"},
                    "languages": schema.list_of(
                        schema.record(
                            {
                                "language": schema.nullable("string"),
                                "name": schema.STRING,
                                "transcripts": schema.INTEGER,
                                "guessed": {"type": "boolean"},
                            },
                            optional=("guessed",),
                        )
                    ),
                    "first_at": schema.nullable("string"),
                    "last_at": schema.nullable("string"),
                    "semantic_index": {"type": "boolean"},
                }
            ),
            "try": schema.list_of(schema.STRING),
        },
        optional=("store", "try"),
    ),
    "description": "Present when the search found nothing or only weak partial matches: why, what the store "
    "holds (languages of its live transcripts with counts, null when not recorded; of the newest 5,000 when "
    "newest_only; its time span; whether a semantic index exists) and the next calls worth trying.",
}

# Only when the store has a semantic index (magnotia-mcp index).
SEMANTIC = {
    **schema.record(
        {
            "used": {"type": "boolean"},
            "transcripts": schema.INTEGER,
            "complete": {"type": "boolean"},
            "why": schema.STRING,
        },
        optional=("transcripts", "complete", "why"),
    ),
    "description": "Whether the semantic index took part (hits found by meaning say matched_by); how many "
    "transcripts it covers and whether it is complete (a partial index finds by meaning only among those; the "
    "server catches up with new transcripts by itself); or why it could not be used.",
}

SEARCH_TRANSCRIPTS = Tool(
    "search_transcripts",
    "Search transcripts",
    "Find transcripts by words, best first (a hit need not have every word; endings, case and accents do not "
    'matter). Syntax: "a phrase", word*, a OR b, title:word. It matches words, not meaning: when a few words '
    "find little, join synonyms and translations into the store's languages with OR. Hits carry matched_terms, "
    "speakers, duration_ms and up to 3 moments (start_ms, speaker), else a snippet. With transcript_id: every "
    "matching moment of that transcript.",
    schema.arguments(
        {
            "query": {"type": "string", "minLength": 1, "maxLength": 500, "description": "Words or a question."},
            "limit": schema.limit(MAX_HITS, 10, "How many hits."),
            "sort": {
                "type": "string",
                "enum": ["relevance", "newest", "oldest"],
                "default": "relevance",
                "description": "newest/oldest: every term required, in time order.",
            },
            "speaker": {
                "type": "string",
                "minLength": 1,
                "maxLength": 200,
                "description": "Only what this speaker said.",
            },
            "since": schema.time("Created at or after"),
            "until": schema.UNTIL,
            "source": schema.source(),
            "transcript_id": inside.TRANSCRIPT_ID,
            "cursor": {"type": "string", "description": "next_cursor of the previous answer (same query)."},
            "max_tokens": schema.max_tokens(),
        },
        required=("query",),
    ),
    schema.record(
        {
            "range": schema.RANGE,
            "query": schema.STRING,
            "mode": {"type": "string", "enum": ["fts", "scan"]},
            "sort": {"type": "string", "enum": ["relevance", "newest", "oldest"]},
            "ranked_among": {
                "type": "integer",
                "description": "How many matching transcripts were ranked: all, or the newest 1,000 matches.",
            },
            "hits": schema.list_of(
                schema.record(
                    {
                        "transcript_id": schema.STRING,
                        "title": schema.STRING,
                        "created_at": schema.STRING,
                        "source": schema.SOURCE,
                        "snippet": schema.STRING,
                        "score": {
                            "type": "number",
                            "description": "Relevance, higher is better: the number of terms matched, plus "
                            "BM25 scaled into [0, 1).",
                        },
                        "matched_terms": schema.list_of(schema.STRING),
                        "moments": schema.list_of(
                            {"anyOf": [schema.record({**_TIME, "snippet": schema.STRING}), inside.TEXT_MOMENT]}
                        ),
                        "matched_by": {
                            "type": "string",
                            "enum": ["words", "meaning", "both"],
                            "description": "With a semantic index: found by its words, by meaning, or both.",
                        },
                        "similarity": {
                            "type": "number",
                            "description": "With a semantic index: the cosine of its passage nearest the query.",
                        },
                        "speakers": schema.SPEAKERS,
                        "duration_ms": schema.nullable("integer"),
                    },
                    optional=("snippet", "matched_by", "similarity"),
                )
            ),
            "moments_found": inside.MOMENTS_FOUND,
            "next_cursor": {
                "type": ["string", "null"],
                "description": "Hits left out to fit max_tokens: pass as cursor (same query) for the rest.",
            },
            "hint": HINT,
            "semantic": SEMANTIC,
            **schema.BUDGET_FIELDS,
        },
        optional=("range", "note", "hint", "semantic", "moments_found"),
    ),
    _search_transcripts,
)
