"""The assistant set holds together: a seed gives one store, every question's facts are in it, and only there.

The store is the real 1k one (devkit/assistant/store.py, about 3 s). Facts are matched as the grader matches
answers (``grade.normalize`` and ``grade.matches``) on what the tools can show of the planted transcripts the
question cites: title, text, speakers, date, tasks. Questions that count or list (calls, attendance, who spoke,
yesterday) are checked against the whole store by SQL, so the filler cannot have added a second right answer.
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest

from devkit.assistant import store
from devkit.assistant.grade import grade_run, judge, matches, normalize, report
from devkit.assistant.planted import PLANTED, UNIQUE_WORDS, by_key
from devkit.assistant.questions import QUESTIONS, by_id


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Iterator[sqlite3.Connection]:
    path = store.build(tmp_path_factory.mktemp("assistant") / "assistant-1k.db", store.SIZES["1k"])
    conn = sqlite3.connect(path)
    conn.row_factory = sqlite3.Row
    yield conn
    conn.close()


def _dump(path: Path) -> list[str]:
    conn = sqlite3.connect(path)
    try:
        return [
            line
            for line in conn.iterdump()
            if not line.startswith(('INSERT INTO "transcripts_fts', 'INSERT INTO "segments_fts'))
        ]
    finally:
        conn.close()


def test_a_seed_gives_one_store_and_another_seed_another(tmp_path: Path) -> None:
    size = len(PLANTED) + 60
    first, again = store.build(tmp_path / "a.db", size), store.build(tmp_path / "b.db", size)
    other = store.build(tmp_path / "c.db", size, seed=store.DEFAULT_SEED + 1)
    assert _dump(first) == _dump(again)
    assert len(_dump(first)) > 1000
    assert _dump(first) != _dump(other)


def _planted_ids(db: sqlite3.Connection) -> dict[str, str]:
    """Each planted key's transcript id, found by its title and time (unique among planted and filler)."""
    out: dict[str, str] = {}
    for p in PLANTED:
        rows = db.execute(
            "SELECT id FROM transcripts WHERE title = ? AND created_at = ?", (p.title, p.when + ":00.000Z")
        ).fetchall()
        assert len(rows) == 1, p.key
        out[p.key] = rows[0]["id"]
    return out


def _dates(stamp: str) -> str:
    moment = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    return f"{stamp[:10]} {moment:%B} {moment.day}, {moment.year} {moment.day} {moment:%B %Y} {moment:%H:%M}"


def _evidence(db: sqlite3.Connection, tid: str) -> str:
    """What the tools can show of a transcript: its texts, speakers, date, and its tasks with their due dates."""
    t = db.execute("SELECT * FROM transcripts WHERE id = ?", (tid,)).fetchone()
    parts = [t["title"], t["raw_text"], t["formatted_text"] or "", _dates(t["created_at"])]
    parts += [
        r["speaker"] or "" for r in db.execute("SELECT DISTINCT speaker FROM segments WHERE transcript_id = ?", (tid,))
    ]
    for task in db.execute("SELECT * FROM tasks WHERE transcript_id = ?", (tid,)):
        parts += [task["title"], task["notes"] or "", task["status"], _dates(task["due_at"]) if task["due_at"] else ""]
    return normalize("\n".join(parts))


def test_the_questions_are_balanced_by_kind_and_cite_planted_transcripts() -> None:
    assert len(QUESTIONS) >= 40
    assert len(by_id()) == len(QUESTIONS)
    splits = Counter(q.split for q in QUESTIONS)
    assert splits["tune"] == splits["heldout"]
    for kind in {q.kind for q in QUESTIONS}:
        mine = Counter(q.split for q in QUESTIONS if q.kind == kind)
        assert min(mine["tune"], mine["heldout"]) >= 1, kind
        assert abs(mine["tune"] - mine["heldout"]) <= 1, kind
    assert len({q.kind for q in QUESTIONS}) >= 14
    keys = by_key()
    assert all(q.facts and q.evidence and set(q.evidence) <= set(keys) for q in QUESTIONS)
    assert all(set(q.sizes) <= set(store.SIZES) for q in QUESTIONS)


def test_every_fact_is_in_the_transcripts_its_question_cites(db: sqlite3.Connection) -> None:
    ids = _planted_ids(db)
    keys = by_key()
    for q in QUESTIONS:
        if q.kind == "trash_only":
            continue
        assert not any(keys[k].trashed for k in q.evidence), q.id
        live = list(q.evidence)
        text = "\n".join(_evidence(db, ids[k]) for k in live) + f"\n{len(live)} calls"
        for i, fact in enumerate(q.facts):
            assert any(matches(p, text) for p in fact), f"{q.id}: fact {i + 1} {fact}"


def test_what_only_the_trash_holds_is_only_in_the_trash(db: sqlite3.Connection) -> None:
    ids = _planted_ids(db)
    keys = by_key()
    trash = [q for q in QUESTIONS if q.kind == "trash_only"]
    assert len(trash) >= 2
    live_text = [
        normalize(f"{r['title']}\n{r['raw_text']}\n{r['formatted_text'] or ''}")
        for r in db.execute("SELECT title, raw_text, formatted_text FROM transcripts WHERE deleted_at IS NULL")
    ]
    live_text += [
        normalize(f"{r['title']}\n{r['notes'] or ''}")
        for r in db.execute(
            "SELECT k.title, k.notes FROM tasks k LEFT JOIN transcripts t ON t.id = k.transcript_id"
            " WHERE t.deleted_at IS NULL"
        )
    ]
    for q in trash:
        assert q.forbidden, q.id
        assert all(keys[k].trashed for k in q.evidence), q.id
        held = "\n".join(_evidence(db, ids[k]) for k in q.evidence)
        for pattern in q.forbidden:
            assert matches(pattern, held), (q.id, pattern)
        for pattern in (*q.forbidden, q.id.split("-")[1]):  # the details, and the topic itself ("mallorca")
            assert not any(matches(pattern, text) for text in live_text), (q.id, pattern)


def test_the_filler_never_says_what_only_planted_transcripts_hold(db: sqlite3.Connection) -> None:
    planted = set(_planted_ids(db).values())
    rows = db.execute("SELECT id, title, raw_text FROM transcripts").fetchall()
    assert len(rows) == store.SIZES["1k"]
    filler = [normalize(f"{r['title']} {r['raw_text']}") for r in rows if r["id"] not in planted]
    filler += [
        normalize(f"{r['title']} {r['notes'] or ''}")
        for r in db.execute(
            "SELECT title, notes FROM tasks WHERE transcript_id IS NULL OR transcript_id NOT IN"
            f" ({','.join('?' * len(planted))})",
            sorted(planted),
        )
    ]
    assert len(filler) > 900
    for word in UNIQUE_WORDS:
        assert not any(word in text for text in filler), word


def _titles(db: sqlite3.Connection, sql: str, *params: str) -> set[str]:
    return {r[0] for r in db.execute(sql, params)}


SPOKE = (
    "SELECT t.title FROM transcripts t WHERE t.deleted_at IS NULL AND t.source = 'meeting'"
    " AND substr(t.created_at, 1, 7) = ? AND EXISTS (SELECT 1 FROM segments s WHERE s.transcript_id = t.id"
    " AND s.speaker = ?)"
)


def test_counts_and_lists_have_exactly_the_planted_answer(db: sqlite3.Connection) -> None:
    live = "SELECT title FROM transcripts WHERE deleted_at IS NULL AND "
    calls = db.execute(f"SELECT count(*) FROM ({live} title = 'Call with Brightwater Foods')").fetchone()[0]
    assert calls == 4
    assert len(_titles(db, f"{live} title LIKE '%Kestrel%'")) == 2  # the kickoff call and one more
    assert db.execute(f"SELECT count(*) FROM ({live} title LIKE '%Pinecrest%')").fetchone()[0] == 2
    assert _titles(db, SPOKE, "2026-03", "Jonas") == {
        "Sprint planning",
        "Kestrel Airlines kickoff call",
        "Analytics sync",
    }
    assert {t for t in _titles(db, SPOKE, "2025-11", "Priya") if "design review" in t.lower()} == {
        "Design review – checkout flow",
        "Design review – mobile onboarding",
        "Design review – admin console",
    }
    both = SPOKE + " AND EXISTS (SELECT 1 FROM segments s WHERE s.transcript_id = t.id AND s.speaker = ?)"
    assert _titles(db, both, "2025-10", "Ana", "Jonas") == {"Budget review Q4", "Hiring committee"}
    assert _titles(db, both, "2026-02", "Marta", "Kofi") == {"Partner pipeline review", "Leadership offsite"}
    assert _titles(db, SPOKE, "2026-04", "Tariq") == {
        "Security sync",
        "Website relaunch standup",
        "Team social planning",
    }
    day = "SELECT title FROM transcripts WHERE deleted_at IS NULL AND substr(created_at, 1, 10) = ?"
    assert _titles(db, day, "2026-05-28") == {"Garden", ""}
    assert _titles(db, day, "2026-05-27") == {"Idea"}
    assert _titles(db, day, "2026-05-29") == set()


def test_long_meetings_say_their_key_lines_hours_in(db: sqlite3.Connection) -> None:
    rows = db.execute(
        "SELECT t.title, t.duration_ms, s.start_ms, s.speaker"
        " FROM segments s JOIN transcripts t ON t.id = s.transcript_id"
        " WHERE s.text LIKE '%freeze hiring%' OR s.text LIKE '%mobile app rewrite%'"
    ).fetchall()
    found = {(r["title"], r["speaker"]): (r["start_ms"] / 3_600_000, r["duration_ms"] / 3_600_000) for r in rows}
    assert found.keys() == {("Leadership offsite", "Dana"), ("All-day planning workshop", "Rosa")}
    at, length = found["Leadership offsite", "Dana"]
    assert 2.0 <= at <= 2.2
    assert 2.9 <= length <= 3.1
    at, length = found["All-day planning workshop", "Rosa"]
    assert 7.6 <= at <= 7.8
    assert 9.9 <= length <= 10.1
    hiring = db.execute(
        "SELECT count(*) FROM segments s JOIN transcripts t ON t.id = s.transcript_id"
        " WHERE t.title = 'Leadership offsite' AND s.text LIKE '%hiring%'"
    ).fetchone()[0]
    assert hiring > 3  # hiring comes up all day: the moment is found by more than the word


def test_the_grader_tells_a_right_answer_from_a_wrong_one(tmp_path: Path) -> None:
    q = by_id()
    right = "Kofi promised the signed **Data Processing Agreement** from Helix Labs by 20 March 2026."
    assert judge(q["promise-kofi"], right).right
    wrong = judge(q["promise-kofi"], "Kofi promised the DPA from Helix Labs by the end of April.")
    assert not wrong.right
    assert wrong.missing == (2,)
    assert judge(q["count-brightwater"], "Four calls; the last on April 22, 2026.").right
    assert not judge(q["count-brightwater"], "5 calls, the last on 2026-04-22.").right  # 4 only inside the date
    assert judge(q["trash-mallorca"], "I found nothing about a sailing trip to Mallorca in your transcripts.").right
    leaked = judge(q["trash-mallorca"], "I couldn't find a plan, only a catamaran mentioned once.")
    assert not leaked.right
    assert leaked.forbidden == ("catamaran",)
    assert judge(q["xl-hamburg"], "Sie schließen das Büro in Hamburg zum 31. März.").right
    assert not judge(q["xl-hamburg"], "").right

    run = tmp_path / "run"
    for server, answer, calls in (("ours", right, 1), ("naive", "No idea.", 3)):
        (run / server).mkdir(parents=True)
        (run / server / "promise-kofi.txt").write_text(answer, encoding="utf-8")
        log = "".join('{"tool": "search_transcripts", "args": {}, "bytes": 900, "tokens": 300}\n' for _ in range(calls))
        (run / server / "promise-kofi.jsonl").write_text(log, encoding="utf-8")
    (run / "ours" / "promise-sven.txt").write_text("By Thursday, April 23.", encoding="utf-8")
    rows = grade_run(run, [q["promise-kofi"], q["promise-sven"], q["due-passport"]])  # no file of the last one
    assert [(r.server, r.question.id, r.right, r.cost.calls, r.cost.tokens) for r in rows] == [
        ("naive", "promise-kofi", False, 3, 900),
        ("ours", "promise-kofi", True, 1, 300),
        ("naive", "promise-sven", False, 0, 0),
        ("ours", "promise-sven", True, 0, 0),
    ]
    text = report(rows)
    assert (
        "| promise-kofi | promise | tune | wrong (fact 1, fact 2, fact 3) | 3 | 900 | 2,700 | right | 1 | 300 | 900 |"
        in text
    )
    assert "| all | 2 | 0/2 | 1.50 | 900 | 2.7 | 2/2 | 0.50 | 300 | 0.9 |" in text


@pytest.mark.slow
def test_the_10k_store_has_the_same_single_answers(tmp_path: Path) -> None:
    """At 10k the filler has ten times the chances to add a second right answer: it has none (about a minute)."""
    conn = sqlite3.connect(store.build(tmp_path / "assistant-10k.db", store.SIZES["10k"]))
    conn.row_factory = sqlite3.Row
    try:
        assert conn.execute("SELECT count(*) FROM transcripts").fetchone()[0] == store.SIZES["10k"]
        test_counts_and_lists_have_exactly_the_planted_answer(conn)
        test_every_fact_is_in_the_transcripts_its_question_cites(conn)
        test_what_only_the_trash_holds_is_only_in_the_trash(conn)
    finally:
        conn.close()
