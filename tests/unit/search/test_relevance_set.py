"""Checks of the judged relevance set itself (devkit/relevance.py): its shape, its store, its metrics.

No server runs here; tests/e2e/relevance_check.py judges the server with it.
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from pathlib import Path

import pytest

from devkit import relevance
from devkit.relevance import KINDS, QUERIES, Query, recall_at, reciprocal_rank
from magnotia_mcp.search.folding import fold
from magnotia_mcp.search.matching import Matcher
from magnotia_mcp.search.querylang import parse


def test_every_query_is_judged_against_live_topic_transcripts() -> None:
    about = {d.id: d for d in relevance.DOCUMENTS if d.role == "about"}
    assert len(relevance.TOPICS) >= 8
    for topic in relevance.TOPICS:
        mine = [q for q in QUERIES if q.topic == topic]
        assert Counter(q.kind for q in mine) == dict.fromkeys(KINDS, 3), topic
        assert len({q.relevant for q in mine}) == 1, topic  # a topic's queries share one judgment
        relevant = mine[0].relevant
        assert 1 <= len(relevant) <= 2, topic
        assert all(about[t].topic == topic for t in relevant), topic
        assert not relevant & relevance.TRASHED_IDS
    assert len({q.text for q in QUERIES}) == len(QUERIES)
    # Two topics also have a transcript about them in the trash.
    assert {relevance.BY_ID[t].topic for t in relevance.TRASHED_IDS} == {"budget", "churn"}


def test_about_transcripts_are_old_and_outnumbered() -> None:
    live = [d for d in relevance.DOCUMENTS if d.deleted_at is None]
    assert 150 <= len(relevance.DOCUMENTS) <= 300
    for d in live:
        if d.role == "about":
            newer = sum(1 for other in live if other.created_at > d.created_at)
            assert newer >= 0.75 * len(live), d.key
    passing = [d for d in live if d.role == "passing"]
    assert len(passing) >= 100
    # Every passing mention is newer than every about transcript: newest first puts them all on top.
    assert min(d.created_at for d in passing) > max(d.created_at for d in live if d.role == "about")


def test_documents_are_oldest_first_with_unique_ids() -> None:
    assert [d.created_at for d in relevance.DOCUMENTS] == sorted(d.created_at for d in relevance.DOCUMENTS)
    assert len(relevance.BY_ID) == len(relevance.DOCUMENTS)


@pytest.mark.parametrize("fts", [True, False], ids=["fts", "no-fts"])
def test_store_holds_the_set(tmp_path: Path, fts: bool) -> None:
    path = relevance.build_store(tmp_path / "judged" / "magnotia.db", fts=fts)
    con = sqlite3.connect(path)
    try:
        rows = con.execute("SELECT id, title, created_at, deleted_at IS NOT NULL FROM transcripts").fetchall()
        tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        segments = con.execute("SELECT count(*) FROM segments").fetchone()[0]
    finally:
        con.close()
    assert {(r[0], r[1], r[2], bool(r[3])) for r in rows} == {
        (d.id, d.title, d.created_at, d.deleted_at is not None) for d in relevance.DOCUMENTS
    }
    assert segments == sum(len(d.segments) for d in relevance.DOCUMENTS)
    assert ("transcripts_fts" in tables) is fts


def test_the_store_is_the_same_on_every_build(tmp_path: Path) -> None:
    dumps = []
    for name in ("a", "b"):
        con = sqlite3.connect(relevance.build_store(tmp_path / name / "magnotia.db"))
        try:
            dumps.append(list(con.execute("SELECT * FROM transcripts ORDER BY rowid")))
        finally:
            con.close()
    assert dumps[0] == dumps[1]


def test_metrics() -> None:
    assert reciprocal_rank(["x", "a", "b"], {"a", "b"}) == 0.5
    assert reciprocal_rank(["x"] * 10 + ["a"], {"a"}) == 0.0  # beyond the first ten
    assert reciprocal_rank([], {"a"}) == 0.0
    assert recall_at(["a", "x", "x", "x", "x", "b"], {"a", "b"}) == 0.5  # b is sixth
    assert recall_at(["b", "a"], {"a", "b"}) == 1.0
    queries = [Query("q1", "keyword", "t", frozenset({"a"})), Query("q2", "question", "t", frozenset({"a", "b"}))]
    answers = {"q1": ["x", "a"], "q2": ["b", "x", "x", "x", "x", "a"]}
    figures = relevance.evaluate(lambda q: answers[q], queries).figures()
    assert (figures["keyword"].mrr, figures["keyword"].recall_at_5) == (0.5, 1.0)
    assert (figures["question"].mrr, figures["question"].recall_at_5) == (1.0, 0.5)


def test_a_perfect_search_scores_one_and_an_empty_one_zero() -> None:
    by_text = {q.text: q for q in QUERIES}
    perfect = relevance.evaluate(lambda text: sorted(by_text[text].relevant))
    assert all(f.mrr == f.recall_at_5 == 1.0 for f in perfect.figures().values())
    assert not perfect.misses()
    empty = relevance.evaluate(lambda _: [])
    assert all(f.mrr == f.recall_at_5 == 0.0 for f in empty.figures().values())
    trashed = relevance.evaluate(lambda _: sorted(relevance.TRASHED_IDS))
    assert len(trashed.trashed()) == len(QUERIES)


# -- the queries by meaning (devkit/relevance_meaning.py, issue 21) ---------------------------------


def _clauses_matched(query: Query, doc: relevance.Doc) -> list[bool]:
    """Which of the query's clauses the server's own matcher finds in the transcript (title and text)."""
    return Matcher(parse(query.text)).matched(fold(doc.title), *(fold(text) for _, text in doc.segments))


def test_meaning_queries_are_judged_and_half_held_out() -> None:
    queries = relevance.MEANING_QUERIES
    assert {q.kind for q in queries} == set(relevance.MEANING_KINDS)
    assert not set(relevance.MEANING_KINDS) & set(KINDS)
    for kind in relevance.MEANING_KINDS:
        mine = [q for q in queries if q.kind == kind]
        assert len(mine) >= 8, kind
        assert sum(q.held_out for q in mine) * 2 == len(mine), kind  # half kept out of any tuning
    assert not any(q.held_out for q in QUERIES)
    assert len({q.text for q in (*QUERIES, *queries)}) == len(QUERIES) + len(queries)
    for q in queries:
        assert q.relevant, q.text
        assert not q.relevant & relevance.TRASHED_IDS, q.text
        assert all(relevance.BY_ID[t].role == "about" for t in q.relevant), q.text


def test_meaning_queries_share_no_word_with_their_answer() -> None:
    for q in relevance.MEANING_QUERIES:
        for t in q.relevant:
            assert not any(_clauses_matched(q, relevance.BY_ID[t])), (q.text, relevance.BY_ID[t].key)


def test_paraphrases_share_words_with_other_transcripts() -> None:
    live = [d for d in relevance.DOCUMENTS if d.deleted_at is None]
    for q in relevance.MEANING_QUERIES:
        if q.kind == "paraphrase":
            assert any(any(_clauses_matched(q, d)) for d in live if d.id not in q.relevant), q.text


def test_cross_language_answers_are_not_in_english() -> None:
    for q in relevance.MEANING_QUERIES:
        if q.kind == "crosslang":
            assert all(relevance.BY_ID[t].language != "en" for t in q.relevant), q.text


def test_held_out_figures() -> None:
    queries = relevance.MEANING_QUERIES
    perfect = relevance.evaluate(lambda text: sorted(next(q for q in queries if q.text == text).relevant), queries)
    held = perfect.held_out()
    assert len(held.outcomes) * 2 == len(queries)
    assert all(f.mrr == f.recall_at_5 == 1.0 for f in held.figures(relevance.MEANING_KINDS).values())
    assert (
        held.figures(relevance.MEANING_KINDS)["paraphrase"].queries * 2
        == perfect.figures(relevance.MEANING_KINDS)["paraphrase"].queries
    )
