"""Reading tasks: pages in the contract's order (open first, soonest due first, newest first)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

from magnotia_mcp.store.plans import query_text
from magnotia_mcp.text import stored_text

if TYPE_CHECKING:  # only for annotations: importing the reader pulls in asyncio and sqlite3
    import sqlite3

    from magnotia_mcp.store.reader import Reader


# Open before done, dated before undated (earliest due first), then newest first.
# The order is read as four segments, each a plain range of the schema's
# tasks(status, due_at) index: open+dated, open+undated, done+dated,
# done+undated. The first page of open tasks never sorts more than its own rows;
# only undated segments sort (created_at has no index). Transcripts are looked
# up for the rows read alone, after the sort: reaching a transcript's deleted_at
# walks its text's overflow pages, far too slow to do for every task.
_TASK_COLUMNS = "SELECT id, title, notes, status, priority, due_at, created_at, completed_at, transcript_id FROM tasks"
TASKS_DATED = _TASK_COLUMNS + " WHERE status = :status AND due_at IS NOT NULL"
TASKS_UNDATED = _TASK_COLUMNS + " WHERE status = :status AND due_at IS NULL"
# One transcript has a handful of tasks: find them by tasks_by_transcript (the
# unary + keeps the planner off the status/due index) and sort those few.
TASKS_DATED_OF = _TASK_COLUMNS + " WHERE transcript_id = :transcript_id AND +status = :status AND +due_at IS NOT NULL"
TASKS_UNDATED_OF = _TASK_COLUMNS + " WHERE transcript_id = :transcript_id AND +status = :status AND +due_at IS NULL"
TASK_DUE_BEFORE = " AND due_at < :due_before"
# Words: the query language's matcher (the scan's), run on the reader thread row by row. Tasks
# have no full-text index, so a query means the same whether the store has *_fts tables or not.
# A row is matched only if it may match: in ASCII text (nearly all), every clause's words are
# substrings (LIKE ignores ASCII case), a test in C ten times cheaper than the call into Python.
TASK_MATCHES = " AND CASE WHEN {maybe} THEN magnotia_match(:q, CAST(title AS BLOB), CAST(notes AS BLOB)) ELSE 0 END"
NOT_ASCII = "length(title) <> length(CAST(title AS BLOB)) OR coalesce(length(notes) <> length(CAST(notes AS BLOB)), 0)"
HOLDS = "(title LIKE :{name} OR coalesce(notes LIKE :{name}, 0))"
AFTER_DATED = (
    " AND due_at >= :a_due AND (due_at > :a_due OR created_at < :a_created OR (created_at = :a_created AND id < :a_id))"
)
AFTER_UNDATED = " AND (created_at < :a_created OR (created_at = :a_created AND id < :a_id))"
DATED_ORDER = " ORDER BY due_at, created_at DESC, id DESC LIMIT :limit"
UNDATED_ORDER = " ORDER BY created_at DESC, id DESC LIMIT :limit"
SOURCES = (
    "SELECT id, title, created_at, source, deleted_at IS NOT NULL AS trashed FROM transcripts WHERE id IN ({marks})"
)

# (status, undated) in the contract's order.
_SEGMENTS = (("open", 0), ("open", 1), ("done", 0), ("done", 1))

TaskKey = tuple[int, int, str, str, str]


class Words(NamedTuple):
    """A query on tasks' title and notes.

    text: the query as written; match: ``magnotia_match(text, title, notes)``, 1 where it matches;
    needles: for some of its clauses (those of ASCII words), each alternative's folded words, every
    one of which a match holds: what may match is told from what cannot without a call into Python.
    """

    text: str
    match: Callable[..., int]
    needles: list[list[tuple[str, ...]]]

    def sql(self) -> tuple[str, dict[str, str]]:
        """The condition a task's row must meet, and its parameters."""
        params: dict[str, str] = {"q": query_text(self.text)}
        clauses = []
        for clause in self.needles:
            alternatives = []
            for words in clause:
                holds = []
                for word in words:
                    name = f"w{len(params)}"
                    params[name] = f"%{word}%"
                    holds.append(HOLDS.format(name=name))
                alternatives.append(" AND ".join(holds))
            clauses.append("(" + " OR ".join(f"({a})" for a in alternatives) + ")")
        maybe = f"{NOT_ASCII} OR (" + " AND ".join(clauses) + ")" if clauses else "1"
        return TASK_MATCHES.format(maybe=maybe), params


class _Sources:
    """The transcripts tasks came from, each looked up once per call: its reference, or in the trash."""

    def __init__(self) -> None:
        self.refs: dict[str, dict[str, Any]] = {}
        self.trashed: set[str] = set()
        self.seen: set[str] = set()  # looked up, found or not (a task may name a transcript long gone)

    async def read(self, db: Reader, rows: list[sqlite3.Row]) -> None:
        new = sorted({r["transcript_id"] for r in rows if r["transcript_id"] is not None} - self.seen)
        if not new:
            return
        self.seen.update(new)
        for r in await db.all(SOURCES.format(marks=",".join("?" * len(new))), new):
            if r["trashed"]:
                self.trashed.add(r["id"])
            else:
                self.refs[r["id"]] = {
                    "id": r["id"],
                    "title": r["title"],
                    "created_at": stored_text(r["created_at"]),
                    "source": r["source"],
                }

    def shown(self, row: sqlite3.Row) -> bool:
        """A task of a transcript in the trash is never shown; one whose transcript is gone is."""
        return row["transcript_id"] not in self.trashed


async def list_tasks(
    db: Reader,
    *,
    limit: int,
    status: str = "all",
    transcript_id: str | None = None,
    due_before: str | None = None,
    after: TaskKey | None = None,
    words: Words | None = None,
) -> tuple[list[dict[str, Any]], TaskKey | None]:
    """A page of tasks in the contract's order, and the key to continue after (or None); with words, only matches."""
    matches, match_params = words.sql() if words is not None else ("", {})
    if words is not None:
        await db.ensure_function("magnotia_match", words.match)
    sources = _Sources()
    rows: list[sqlite3.Row] = []
    for seg_status, undated in _SEGMENTS:
        if status not in ("all", seg_status) or (undated and due_before):
            continue  # due_before excludes undated tasks
        seg_key = (int(seg_status == "done"), undated)
        if after is not None and seg_key < after[:2]:
            continue  # the cursor is past this whole segment
        if transcript_id:
            sql = TASKS_UNDATED_OF if undated else TASKS_DATED_OF
        else:
            sql = TASKS_UNDATED if undated else TASKS_DATED
        sql += TASK_DUE_BEFORE if due_before and not undated else ""
        sql += matches
        params: dict[str, Any] = {
            "status": seg_status,
            "transcript_id": transcript_id,
            "due_before": due_before,
            **match_params,
        }
        within = after[2:] if after is not None and seg_key == after[:2] else None
        # Read on in this segment until the page is full or the segment ends: tasks of trashed
        # transcripts are dropped once read, and the next batch starts after the last row read.
        while len(rows) <= limit:
            want = limit + 1 - len(rows)
            batch = await db.all(
                sql
                + ((AFTER_UNDATED if undated else AFTER_DATED) if within else "")
                + (UNDATED_ORDER if undated else DATED_ORDER),
                {**params, "limit": want, **_after_params(within)},
            )
            await sources.read(db, batch)
            rows += [r for r in batch if sources.shown(r)]
            if len(batch) < want:
                break  # the segment is read to its end
            last = batch[-1]
            within = (last["due_at"] or "", last["created_at"], last["id"])
        if len(rows) > limit:
            break
    page = [_task(r, sources.refs) for r in rows[:limit]]
    if len(rows) <= limit:
        return page, None
    last_task = page[-1]
    key: TaskKey = (
        int(last_task["status"] == "done"),
        int(last_task["due_at"] is None),
        last_task["due_at"] or "",
        last_task["created_at"],
        last_task["id"],
    )
    return page, key


async def count_matching(db: Reader, words: Words, cap: int) -> int:
    """How many tasks match words and would be listed (none of a transcript in the trash), counted up to cap.

    In rowid order, not the contract's: a count needs no order, and a scan of the table reads its pages in turn.
    """
    matches, params = words.sql()
    await db.ensure_function("magnotia_match", words.match)
    sources, shown, after = _Sources(), 0, 0
    while shown < cap:
        sql = "SELECT rowid, transcript_id FROM tasks WHERE rowid > :after" + matches + " ORDER BY rowid LIMIT :n"
        batch = await db.all(sql, {**params, "after": after, "n": cap})
        await sources.read(db, batch)
        shown += sum(map(sources.shown, batch))
        if len(batch) < cap:
            break
        after = batch[-1]["rowid"]
    return min(shown, cap)


def _after_params(within: tuple[Any, ...] | None) -> dict[str, Any]:
    return {} if within is None else {"a_due": within[0], "a_created": within[1], "a_id": within[2]}


def _task(r: sqlite3.Row, refs: dict[str, dict[str, Any]]) -> dict[str, Any]:
    return {
        "id": r["id"],
        "title": r["title"],
        "notes": r["notes"],
        "status": r["status"],
        "priority": r["priority"],
        "due_at": stored_text(r["due_at"]),
        "created_at": stored_text(r["created_at"]),
        "completed_at": stored_text(r["completed_at"]),
        # Its transcript's title, date and source, so where a task came from takes no second call.
        "transcript": refs.get(r["transcript_id"]) if r["transcript_id"] is not None else None,
    }
