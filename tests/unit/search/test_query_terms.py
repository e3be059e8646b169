"""What a query's terms are since relevance search: function words dropped, plain words stemmed, the rest as written.

Each expectation is checked both ways a query runs: scan-mode matching
(``Matcher.matches`` over folded text) and SQLite's own FTS5 (an in-memory table
with the store's tokenizer, as tests/unit/search/test_querylang.py uses it).
``fts_at_least(k)``, the expression relevance ranking sends to the index, must
be valid FTS5 and select exactly the rows that match at least k clauses.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from magnotia_mcp.search.folding import fold
from magnotia_mcp.search.matching import Matcher
from magnotia_mcp.search.querylang import Query, parse
from tests.support.fts_reference import DOCS, load, rowids


@pytest.fixture(scope="module")
def fts() -> Iterator[sqlite3.Connection]:
    conn = sqlite3.connect(":memory:")
    conn.execute(DOCS)
    yield conn
    conn.close()


def _finds(conn: sqlite3.Connection, query: Query, text: str) -> bool:
    """Whether query matches text, after checking that FTS5 and the scan agree on it."""
    load(conn, [("", text)])
    by_fts = rowids(conn, query.fts()) == {0}
    assert Matcher(query).matches(fold(text)) is by_fts, (query.text, text)
    return by_fts


# -- function words -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "labels"),
    [
        pytest.param("what did we decide about the budget", ["decide", "budget"], id="english"),
        pytest.param("o que decidimos sobre o orçamento", ["orçamento"], id="portuguese"),
        pytest.param("qué se dijo sobre el presupuesto", ["presupuesto"], id="spanish"),
        pytest.param("was haben wir über das Budget gesagt", ["Budget", "gesagt"], id="german"),
        pytest.param("quand avons nous parlé du budget", ["parlé", "budget"], id="french"),
        pytest.param("What Did WE say about THE roadmap", ["roadmap"], id="any-case"),
        pytest.param("Über Dächer", ["Dächer"], id="accented-function-word"),
        pytest.param("what's the plan for the launch", ["plan", "launch"], id="english-contraction"),
        pytest.param("we\u2019ll review it", ["review"], id="typographic-apostrophe"),
        pytest.param("l'orçamento d'abord", ["orçamento", "abord"], id="french-elision"),
    ],
)
def test_function_words_are_dropped_in_each_language(text: str, labels: list[str]) -> None:
    """A question keeps only the words that say what it is about; labels are those words as written."""
    query = parse(text)
    assert query.labels == labels
    assert len(query.clauses) == len(labels)


@pytest.mark.parametrize(
    ("text", "labels"),
    [
        pytest.param("the", ["the"], id="one-function-word"),
        pytest.param("what did we", ["what", "did", "we"], id="only-function-words"),
        pytest.param("o que", ["o", "que"], id="only-portuguese-function-words"),
    ],
)
def test_a_query_of_function_words_only_keeps_them_all(text: str, labels: list[str], fts: sqlite3.Connection) -> None:
    """Nothing else left: every word is searched, so "the" still finds "the"."""
    query = parse(text)
    assert query.labels == labels
    assert _finds(fts, query, f"and {text} again")
    assert not _finds(fts, query, "nothing of it here")


@pytest.mark.parametrize(
    ("text", "labels", "found_in", "not_in"),
    [
        pytest.param('"the" budget', ['"the"', "budget"], "the budget", "a budget", id="quoted-word"),
        pytest.param('"what we decided"', ['"what we decided"'], "so what we decided was", "we decided", id="phrase"),
        pytest.param("the* budget", ["the*", "budget"], "their budget", "a budget", id="prefix"),
        pytest.param("what OR budget", ["what OR budget"], "what now", "nothing", id="or"),
    ],
)
def test_quoted_prefixed_and_or_function_words_are_kept(
    text: str, labels: list[str], found_in: str, not_in: str, fts: sqlite3.Connection
) -> None:
    """Only a single plain word is a function word: quoted, with *, or in an OR, it is searched."""
    query = parse(text)
    assert query.labels == labels
    assert _finds(fts, query, found_in)
    assert not _finds(fts, query, not_in)


# -- stemming -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "finds"),
    [
        pytest.param("plans", ["the plan", "Plans", "planned it", "PLANNING"], id="plans"),
        pytest.param("decisions", ["one decision", "Décision prise"], id="decisions"),
        pytest.param("meetings", ["the meeting"], id="meetings"),
        pytest.param("approved", ["approval", "approve"], id="approved"),
        pytest.param("budgets", ["budget"], id="budgets"),
        pytest.param("reuniões", ["a reunião de hoje", "reuniao", "REUNIÕES"], id="portuguese-accents"),
        pytest.param("Orçamentos", ["o orçamento", "orcamento"], id="portuguese-cedilla"),
        pytest.param("décisions", ["decision", "décision"], id="french-accents"),
        pytest.param("presupuestos", ["el presupuesto"], id="spanish"),
        pytest.param("Entscheidungen", ["die Entscheidung"], id="german"),
        pytest.param("what are the plans", ["the plan"], id="in-a-question"),
    ],
)
def test_plain_words_find_their_inflections(text: str, finds: list[str], fts: sqlite3.Connection) -> None:
    """A plain word is searched as its stem's prefix, case and accents aside, with and without the index."""
    query = parse(text)
    assert all(term.prefix for clause in query.clauses for term in clause)
    for found in finds:
        assert _finds(fts, query, found), found


@pytest.mark.parametrize(
    ("text", "misses"),
    [
        pytest.param("plan", "planning", id="short-words-whole"),
        pytest.param("budg", "budget", id="four-letters-whole"),
        pytest.param('"plans"', "the plan", id="quoted-word-as-written"),
        pytest.param('"budget plans"', "budget plan", id="quoted-phrase-as-written"),
        pytest.param("plans*", "the plan", id="prefix-as-written"),
        pytest.param("decisions", "decide", id="a-stem-is-not-a-synonym"),
        pytest.param("plans", "airplane", id="the-stem-starts-a-word"),
    ],
)
def test_stemming_stays_within_its_bounds(text: str, misses: str, fts: sqlite3.Connection) -> None:
    """Words of four letters or fewer, quoted words and phrases, and prefixes mean what they wrote."""
    assert not _finds(fts, parse(text), misses)


def test_a_stem_is_a_prefix_of_the_word_and_of_its_folded_form() -> None:
    """Plans is plan*, decisions decis*: never longer than the word, never a different spelling."""
    for word, stem in (("plans", "plan"), ("decisions", "decis"), ("Reuniões", "reuni"), ("Orçamentos", "orcament")):
        (clause,) = parse(word).clauses
        assert [(t.words, t.prefix) for t in clause] == [((stem,), True)]
        assert fold(word).startswith(stem)


@pytest.mark.parametrize(
    ("text", "found_in", "not_in"),
    [
        pytest.param("milk OR bread", "buy bread", "buy eggs", id="or"),
        pytest.param("milks OR breads", "buy bread", "buy eggs", id="or-stems-each-side"),
        pytest.param('"budget review"', "the budget review", "review of the budget", id="phrase-in-order"),
        pytest.param("quarter*", "quarterly", "a quart", id="prefix"),
        pytest.param('"the budget"*', "the budgets", "the plan", id="phrase-prefix"),
    ],
)
def test_phrases_prefixes_and_or_keep_their_meaning(
    text: str, found_in: str, not_in: str, fts: sqlite3.Connection
) -> None:
    assert _finds(fts, parse(text), found_in)
    assert not _finds(fts, parse(text), not_in)


def test_or_is_one_clause_and_each_clause_keeps_its_label() -> None:
    query = parse('what are the plans OR budgets for "Q3 launch"')
    assert query.labels == ["plans OR budgets", '"Q3 launch"']
    assert [len(c) for c in query.clauses] == [2, 1]


# -- fts_at_least ---------------------------------------------------------------------

CORPUS = [
    ("Budget review", "We agreed the quarterly budget for May."),
    ("Roadmap", "The release planning and roadmap for the next quarter."),
    ("Hiring plans", "Two engineers; the budget allows it."),
    ("", "Quarterly budget, hiring and roadmap: the plan."),
    ("Café", "A chat about naïve designs."),
    ("Decisions", "We decided on the plans and the budgets."),
    ("Groceries", "milk and bread"),
    ("Mixed", "planning a budget review of the roadmap"),
]
AT_LEAST_QUERIES = [
    "budget",
    "budget roadmap",
    "what did we decide about the budget and the roadmap",
    "plans budget hiring roadmap",
    '"budget review" roadmap milk',
    "quarter* OR café hiring",
    "the",
    "plans OR decisions budgets",
]


def _at_least_agrees(conn: sqlite3.Connection, query: Query, rows: list[tuple[str, str]]) -> None:
    """For every k, FTS5 selects with fts_at_least(k) exactly the rows the scan says match k or more clauses."""
    load(conn, rows)
    covered = {i: sum(Matcher(query).matched(fold(title), fold(body))) for i, (title, body) in enumerate(rows)}
    for k in range(1, len(query.clauses) + 1):
        assert rowids(conn, query.fts_at_least(k)) == {i for i, n in covered.items() if n >= k}, (query.text, k)
    assert rowids(conn, query.fts_at_least(len(query.clauses))) == rowids(conn, query.fts())


@pytest.mark.parametrize("text", AT_LEAST_QUERIES)
def test_fts_at_least_k_selects_the_rows_with_k_or_more_clauses(text: str, fts: sqlite3.Connection) -> None:
    query = parse(text)
    _at_least_agrees(fts, query, CORPUS)
    # Not vacuous: the corpus has rows at more than one coverage level for multi-clause queries.
    levels = {sum(Matcher(query).matched(fold(t), fold(b))) for t, b in CORPUS}
    assert len(levels) >= 2


# -- any input --------------------------------------------------------------------------

# Text made of what the query language gives a meaning to, and what FTS5 would (if it ever saw it).
_SYNTAX = st.sampled_from(['"', "*", "OR", "AND", "NOT", "NEAR", "(", ")", ":", "^", "-", "+", "{", "}", "'", ","])
WORD_LIST = ["budget", "plans", "the", "what", "café", "Über", "o", "que", "reuniões", "e\u0301", "x"]
_WORDS = st.sampled_from(WORD_LIST)
_PIECES = st.one_of(_SYNTAX, _WORDS, st.text(alphabet="abcé\"*() -'", max_size=6))
QUERY_TEXT = st.lists(_PIECES, max_size=8).map(" ".join) | st.lists(_PIECES, max_size=8).map("".join)
# Fixed seed and budget: the same 300 inputs every run. The fixture is a table reloaded by each example.
FIXTURE_OK = [HealthCheck.function_scoped_fixture]
ANY_TEXT = st.text(st.characters(exclude_categories=()), max_size=40)  # lone surrogates too


@settings(derandomize=True, database=None, max_examples=300, deadline=None, suppress_health_check=FIXTURE_OK)
@given(text=QUERY_TEXT)
def test_no_query_is_a_syntax_error_and_both_modes_agree(text: str, fts: sqlite3.Connection) -> None:
    """Whatever the input, every expression the search sends is valid FTS5 and selects what the scan selects."""
    query = parse(text)
    rows = [*CORPUS, (text, text), ("", text.upper()), ("planning", " ".join(reversed(WORD_LIST)))]
    load(fts, rows)
    if query.empty:
        return
    by_fts = rowids(fts, query.fts())
    assert by_fts == {i for i, (t, b) in enumerate(rows) if Matcher(query).matches(fold(t), fold(b))}
    assert rowids(fts, query.fts("title")) == {i for i, (t, _) in enumerate(rows) if Matcher(query).matches(fold(t))}
    if len(query.clauses) <= 5:  # fts_at_least(k) grows as C(n, k)
        _at_least_agrees(fts, query, rows)
    for clause in query.clause_fts():
        rowids(fts, clause)
    assert len(query.labels) == len(query.clauses)


@settings(derandomize=True, database=None, max_examples=300, deadline=None, suppress_health_check=FIXTURE_OK)
@given(text=ANY_TEXT)
def test_no_unicode_text_is_a_syntax_error(text: str, fts: sqlite3.Connection) -> None:
    """Any string at all (surrogates and control characters included) parses, and FTS5 takes every expression."""
    query = parse(text)
    load(fts, CORPUS)
    if query.empty:
        return
    rowids(fts, query.fts())
    rowids(fts, query.fts("body"))
    for k in range(1, min(len(query.clauses), 4) + 1):
        rowids(fts, query.fts_at_least(k))
