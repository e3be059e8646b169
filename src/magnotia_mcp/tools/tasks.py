"""list_tasks: the action items extracted from transcripts."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from magnotia_mcp.args import cursors
from magnotia_mcp.args.checks import time_range
from magnotia_mcp.budget import fit_page
from magnotia_mcp.tools import schema
from magnotia_mcp.tools.base import Tool, ToolContext

if TYPE_CHECKING:  # annotations only: the store's SQL is imported on first use
    from magnotia_mcp.store.tasks import Words


PAGE = 50
# Tasks found by words come soonest due first, not by relevance: a model reads a page whole, and a broad
# query's 50 tasks cost it about 11,000 tokens (the assistant set) where 10 show what matched and a cursor.
QUERY_PAGE = 10


async def _list_tasks(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    from magnotia_mcp.store.tasks import list_tasks  # on first use: initialize does not need it

    after = cursors.decode("tasks", args["cursor"], 5) if "cursor" in args else None
    window = time_range(args, None, "due_before")  # due_before is an until: "today" means before tomorrow
    words = query_words(args["query"]) if "query" in args else None
    page: list[dict[str, Any]] = []
    key = None
    if words is not None or "query" not in args:  # a query of no word matches no task, as it finds no transcript
        async with ctx.store.reader() as db:
            page, key = await list_tasks(
                db,
                limit=args.get("limit", QUERY_PAGE if "query" in args else PAGE),
                status=args["status"],
                transcript_id=args.get("transcript_id"),
                due_before=window.until,
                after=after,
                words=words,
            )
    answer = window.echoed({"tasks": page, "next_cursor": cursors.encode("tasks", key) if key else None})
    return fit_page(answer, "tasks", args["max_tokens"], ctx.copies, _cursor_after, "tasks")


def query_words(text: str) -> Words | None:
    """The query on tasks' title and notes, in the query language of search_transcripts; None if it has no word."""
    # Imported on the first query: the query language is a dozen modules list_tasks does not otherwise need.
    from magnotia_mcp.search.folding import fold
    from magnotia_mcp.search.matching import sql_match
    from magnotia_mcp.search.querylang import parse
    from magnotia_mcp.store.tasks import Words

    query = parse(text)
    if query.empty:
        return None
    needles = []
    for clause in query.clauses:
        alternatives = [tuple(fold(w) for w in term.words) for term in clause]
        # A word LIKE can test exactly: ASCII (LIKE folds ASCII case only) and none of its wildcards.
        if all(w.isascii() and not set(w) & set("%_\\") for words in alternatives for w in words):
            needles.append(alternatives)
    return Words(text, sql_match, needles)


def _cursor_after(task: dict[str, Any]) -> str:
    """The cursor that continues after task (the key store.tasks orders by)."""
    due = task["due_at"]
    return cursors.encode(
        "tasks", (int(task["status"] == "done"), int(due is None), due or "", task["created_at"], task["id"])
    )


LIST_TASKS = Tool(
    "list_tasks",
    "List tasks",
    "List the tasks extracted from the user's transcripts, open first, soonest due first, each with its "
    "transcript's title, date and source. Filter by words, status, transcript or due date.",
    schema.arguments(
        {
            "status": {
                "type": "string",
                "enum": ["open", "done", "all"],
                "default": "all",
                "description": "open, done or all.",
            },
            "query": {
                "type": "string",
                "minLength": 1,
                "maxLength": 500,
                "description": "Words in the title or notes, as in search_transcripts.",
            },
            "transcript_id": {"type": "string", "description": "Only this transcript's tasks."},
            "due_before": schema.time("Due before"),
            # No schema default: a page of tasks found by words is shorter (QUERY_PAGE) than a plain list's.
            "limit": {
                "type": "integer",
                "minimum": 1,
                "maximum": 100,
                "description": "Page size: 50, 10 with a query.",
            },
            "cursor": schema.CURSOR,
            "max_tokens": schema.max_tokens(),
        }
    ),
    schema.record(
        {
            "tasks": schema.list_of(
                schema.record(
                    {
                        "id": schema.STRING,
                        "title": schema.STRING,
                        "notes": schema.nullable("string"),
                        "status": {"type": "string", "enum": ["open", "done"]},
                        "priority": schema.nullable("integer"),
                        "due_at": schema.nullable("string"),
                        "created_at": schema.STRING,
                        "completed_at": schema.nullable("string"),
                        "transcript": schema.TRANSCRIPT_REF,
                    }
                )
            ),
            "next_cursor": schema.NEXT_CURSOR,
            "range": schema.RANGE,
            **schema.BUDGET_FIELDS,
        },
        optional=("range", "note"),
    ),
    _list_tasks,
)
