"""Reciprocal rank fusion of the lexical and semantic orders, and the rule that keeps full keyword matches first."""

from __future__ import annotations

from magnotia_mcp.search.fusion import fuse
from magnotia_mcp.search.ranking import Candidate


def c(tid: str, coverage: int = 0) -> Candidate:
    return Candidate(0, tid, tid, "2026-05-01T00:00:00.000Z", "meeting", coverage, 0.0)


def test_found_by_both_rises_and_each_says_how() -> None:
    order, how = fuse([c("a", 1), c("b", 1)], [c("b"), c("m")], clauses=2)
    assert [x.id for x in order] == ["b", "a", "m"]
    assert how == {"b": "both", "a": "words", "m": "meaning"}
    assert order[0].coverage == 1  # the lexical candidate is kept: it carries coverage and BM25


def test_a_full_keyword_match_stays_above_what_only_meaning_found() -> None:
    order, _ = fuse([c("full", 2)], [c("m1"), c("m2"), c("full")], clauses=2)
    assert [x.id for x in order] == ["full", "m1", "m2"]
    order, _ = fuse([c("full", 2), c("partial", 1)], [c("m1"), c("partial")], clauses=2)
    ids = [x.id for x in order]
    assert ids == ["full", "partial", "m1"]  # partial: found by both, so above m1 (meaning's first only)


def test_meaning_outranks_a_weak_partial_match() -> None:
    """A partial keyword match at rank 3 of words; meaning's first: fused by rank, meaning's first goes above it."""
    order, _ = fuse([c("p1", 1), c("p2", 1), c("p3", 1)], [c("m"), c("p1")], clauses=3)
    ids = [x.id for x in order]
    assert ids[0] == "p1"
    assert ids.index("m") < ids.index("p3")


def test_ties_keep_the_order_by_words() -> None:
    order, _ = fuse([c("w", 1)], [c("m")], clauses=2)
    assert [x.id for x in order] == ["w", "m"]
    assert fuse([], [], clauses=1) == ([], {})
