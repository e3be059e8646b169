"""Reading tasks: pages in the contract's order (open first, soonest due first, newest first)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from magnotia_mcp.text import stored_text

if TYPE_CHECKING:  # only for annotations: importing the reader pulls in asyncio and sqlite3
    import sqlite3

    from magnotia_mcp.store.reader import Reader


# Open before done, dated before undated (earliest due first), then newest first.
# The order is read as four segments, each a plain range of the schema's
# tasks(status, due_at) index: open+dated, open+undated, done+dated,
# done+undated. The first page of open tasks never sorts more than its own rows;
# only undated segments sort (created_at has no index). Transcript titles are
# looked up for the page's rows alone: reaching a transcript's deleted_at walks
# its text's overflow pages, far too slow to do for every task.
_TASK_COLUMNS = "SELECT id, title, notes, status, priority, due_at, created_at, completed_at, transcript_id FROM tasks"
TASKS_DATED = _TASK_COLUMNS + " WHERE status = :status AND due_at IS NOT NULL"
TASKS_UNDATED = _TASK_COLUMNS + " WHERE status = :status AND due_at IS NULL"
# One transcript has a handful of tasks: find them by tasks_by_transcript (the
# unary + keeps the planner off the status/due index) and sort those few.
TASKS_DATED_OF = _TASK_COLUMNS + " WHERE transcript_id = :transcript_id AND +status = :status AND +due_at IS NOT NULL"
TASKS_UNDATED_OF = _TASK_COLUMNS + " WHERE transcript_id = :transcript_id AND +status = :status AND +due_at IS NULL"
TASK_DUE_BEFORE = " AND due_at < :due_before"
AFTER_DATED = (
    " AND due_at >= :a_due AND (due_at > :a_due OR created_at < :a_created OR (created_at = :a_created AND id < :a_id))"
)
AFTER_UNDATED = " AND (created_at < :a_created OR (created_at = :a_created AND id < :a_id))"
DATED_ORDER = " ORDER BY due_at, created_at DESC, id DESC LIMIT :limit"
UNDATED_ORDER = " ORDER BY created_at DESC, id DESC LIMIT :limit"
LIVE_TITLES = "SELECT id, title FROM transcripts WHERE id IN ({marks}) AND deleted_at IS NULL"

# (status, undated) in the contract's order.
_SEGMENTS = (("open", 0), ("open", 1), ("done", 0), ("done", 1))

TaskKey = tuple[int, int, str, str, str]


async def list_tasks(
    db: Reader,
    *,
    limit: int,
    status: str = "all",
    transcript_id: str | None = None,
    due_before: str | None = None,
    after: TaskKey | None = None,
) -> tuple[list[dict[str, Any]], TaskKey | None]:
    """A page of tasks in the contract's order, and the key to continue after (or None)."""
    rows: list[sqlite3.Row] = []
    for seg_status, undated in _SEGMENTS:
        if status not in ("all", seg_status) or (undated and due_before):
            continue  # due_before excludes undated tasks
        seg_key = (int(seg_status == "done"), undated)
        if after is not None and seg_key < after[:2]:
            continue  # the cursor is past this whole segment
        within = after is not None and seg_key == after[:2]
        if transcript_id:
            sql = TASKS_UNDATED_OF if undated else TASKS_DATED_OF
        else:
            sql = TASKS_UNDATED if undated else TASKS_DATED
        sql += TASK_DUE_BEFORE if due_before and not undated else ""
        if within:
            sql += AFTER_UNDATED if undated else AFTER_DATED
        sql += UNDATED_ORDER if undated else DATED_ORDER
        params: dict[str, Any] = {
            "status": seg_status,
            "transcript_id": transcript_id,
            "due_before": due_before,
            "limit": limit + 1 - len(rows),
        }
        if within and after is not None:
            params.update(a_due=after[2], a_created=after[3], a_id=after[4])
        rows += await db.all(sql, params)
        if len(rows) > limit:
            break
    page_rows = rows[:limit]
    linked = sorted({r["transcript_id"] for r in page_rows if r["transcript_id"] is not None})
    titles: dict[str, str] = {}
    if linked:
        marks = ",".join("?" * len(linked))
        titles = {r["id"]: r["title"] for r in await db.all(LIVE_TITLES.format(marks=marks), linked)}
    page = [
        {
            "id": r["id"],
            "title": r["title"],
            "notes": r["notes"],
            "status": r["status"],
            "priority": r["priority"],
            "due_at": stored_text(r["due_at"]),
            "created_at": stored_text(r["created_at"]),
            "completed_at": stored_text(r["completed_at"]),
            "transcript": (
                {"id": r["transcript_id"], "title": titles[r["transcript_id"]]}
                if r["transcript_id"] in titles
                else None
            ),
        }
        for r in page_rows
    ]
    if len(rows) <= limit:
        return page, None
    last = page[-1]
    key: TaskKey = (
        int(last["status"] == "done"),
        int(last["due_at"] is None),
        last["due_at"] or "",
        last["created_at"],
        last["id"],
    )
    return page, key
