"""title:word and title:"a phrase": terms sought in the title only; and the terms (alternatives) a hit lists.

Each query is checked both ways a query runs, against SQLite's own FTS5 (an in-memory table with the store's
tokenizer and a title column, as tests/unit/search/test_query_terms.py uses it) and the scan's matching.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

import pytest

from magnotia_mcp.search.folding import fold
from magnotia_mcp.search.matching import Matcher, sql_any_clause, sql_match
from magnotia_mcp.search.querylang import Term, parse
from tests.support.fts_reference import DOCS, load, rowids

ROWS = [
    ("Design review", "the icons and the menu"),
    ("Weekly sync", "before the design review we fix bugs"),
    ("Designs for Q3", "review of the roadmap"),
    ("Relocation", "we move next month"),
]


@pytest.fixture(scope="module")
def fts() -> Iterator[sqlite3.Connection]:
    conn = sqlite3.connect(":memory:")
    conn.execute(DOCS)
    load(conn, ROWS)
    yield conn
    conn.close()


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ('title:"design review"', {0}),
        ('"design review"', {0, 1}),
        ("title:designs", {0, 2}),  # stemmed: design*
        ("title:design review", {0, 2}),  # review anywhere; design* (a word that is its own stem is a prefix)
        ("title:review", {0}),
        ("title:relocation OR title:review", {0, 3}),
        ("title:desi*", {0, 2}),
        ("TITLE:designs", {0, 2}),
    ],
)
def test_title_terms_match_titles_only_in_both_modes(fts: sqlite3.Connection, text: str, found: set[int]) -> None:
    query = parse(text)
    assert rowids(fts, query.fts()) == found
    matcher = Matcher(query)
    assert {i for i, (t, b) in enumerate(ROWS) if matcher.matches(fold(b), title=fold(t))} == found
    assert {i for i, (t, b) in enumerate(ROWS) if sql_match(text, t, b)} == found


@pytest.mark.parametrize("text", ["title", "title:", 'title:""', "title:*", 'title:"', "subtitle:design", "a:title"])
def test_title_with_nothing_after_it_is_no_title_term(text: str, fts: sqlite3.Connection) -> None:
    """No input is a syntax error; title alone is a word of the text."""
    query = parse(text)
    assert not any(t.title for t in query.phrases)
    rowids(fts, query.fts())  # valid FTS5


def test_a_title_term_is_its_own_term_as_written() -> None:
    query = parse('title:"design review" title:plans budget')
    assert [t.title for t in query.phrases] == [True, True, False]
    assert query.phrases[0] == Term(("design", "review"), False, True)
    assert query.phrases[1].prefix  # stemmed as any plain word
    assert query.term_labels == ['title:"design review"', "title:plans", "budget"]
    assert query.text_fts() == '"budg"*'
    assert query.title_fts() == 'title : "design review" OR title : "plan"*'
    # A function word written with title: is meant, not dropped.
    assert parse("title:the").term_labels == ["title:the"]


def test_matched_terms_are_each_alternative_once() -> None:
    query = parse("move OR moving OR relocation plan plan")
    assert query.labels == ["move OR moving OR relocation", "plan", "plan"]
    matcher = Matcher(query)
    hits = matcher.terms_matched(fold("the relocation plan"))
    assert query.matched_labels(hits) == ["relocation", "plan"]
    assert query.clauses_hit(hits) == [True, True, True]
    assert query.clauses_matched(["relocation", "plan"]) == 3
    assert query.clauses_matched(["move"]) == 1


def test_a_segment_matches_title_terms_only_through_its_transcripts_title() -> None:
    """What a speaker's search asks of each segment: a text term in what was said, a title term in the title."""
    assert sql_any_clause('title:"design review" icons', "the icons", "Weekly") == 1
    assert sql_any_clause('title:"design review" icons', "the menu", "Design review") == 1
    assert sql_any_clause('title:"design review" icons', "a design review", "Weekly") == 0
    assert sql_any_clause("icons", "the menu", "icons") == 0  # a plain word counts in what was said only
    matcher = Matcher(parse('title:"design review" icons'))
    assert matcher.title_terms(fold("Design review: icons")) == [True, False]
    assert matcher.phrase_counts(fold("design review icons")) == [0, 1]
    assert matcher.phrase_counts(fold("design review icons"), title=True) == [1, 1]
