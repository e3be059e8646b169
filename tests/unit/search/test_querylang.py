"""magnotia_mcp.search.querylang: the search language, judged against SQLite's own FTS5 (unicode61) as the reference.

A real in-memory FTS5 table with the store's tokenizer answers what a query
means; scan-mode matching (``Matcher.matches`` over ``fold``ed text) must agree.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

import pytest

from magnotia_mcp.search.folding import _FOLD, _LATIN_BLOCKS_END, fold
from magnotia_mcp.search.hits import snippet
from magnotia_mcp.search.matching import Matcher
from magnotia_mcp.search.querylang import parse
from tests.support.fts_reference import DOCS, TOKENIZER, load, rowids
from tests.unit.texts import WINDOW_TEXTS

ODD_QUERIES = [
    '"',
    '""',
    "*",
    "**",
    "NEAR(",
    "NEAR(a b)",
    "-",
    "-foo",
    "AND",
    "OR",
    "NOT",
    "a OR",
    "OR a",
    "a OR OR b",
    '"unclosed phrase',
    'one "two',
    "🎉🎉",
    "👩‍👩‍👧",
    "x" * 500,
    "'; DROP TABLE transcripts; --",
    "title:foo",
    "foo:",
    "^foo",
    "a + b",
    "(a",
    "a)",
    "{a b}",
    "col : x",
    "*foo",
    "fo*o",
    "\\",
    "\x00",
    "e\u0301",
    "_",
    "a_b",
    "   ",
    '"*"',
    '"a" * "b"',
    "İ",
]

CORPUS = [
    "The café opens at nine",
    "CAFE society meeting",
    "Cafe\u0301 au lait, decomposed",
    "Ein schönes Café in Köln",
    "e\u0301cole primaire, decomposed",
    "École normale",
    "İstanbul trip notes",
    "istanbul again",
    "ΣΟΦΊΑ lecture",
    "σοφια lecture",
    "أحمد called",
    "احمد called",
    "naïve approach",
    "quarterly budget review",
    "budget for the quarter",
    "review of the budget",
    "release planning and roadmap",
    "pre-release checks",
    "don't forget milk",
    "Straße und Strasse",
    "mañana temprano",
    "Ærøskøbing harbour",
]
SEARCHES = [
    "cafe",
    "CAFÉ",
    "café",
    "ecole",
    "école",
    "istanbul",
    "İstanbul",
    "σοφια",
    "σοφία",
    "احمد",
    "naive",
    "budget review",
    '"budget review"',
    "review budget",
    "quarter*",
    "budget OR roadmap",
    "release",
    "pre-release",
    "don't",
    "dont",
    "strasse",
    "manana",
    "aerøskøbing",
    "ærøskøbing",
]


@pytest.fixture(scope="module")
def fts_reference() -> Iterator[sqlite3.Connection]:
    """An in-memory FTS5 table with the store's tokenizer: the reference for what a query means."""
    conn = sqlite3.connect(":memory:")
    conn.execute(DOCS)
    conn.execute(f"CREATE VIRTUAL TABLE probe USING fts5 (text, tokenize = '{TOKENIZER}')")
    conn.execute("CREATE VIRTUAL TABLE probe_terms USING fts5vocab(probe, 'row')")
    yield conn
    conn.close()


def _tokens(conn: sqlite3.Connection, text: str) -> set[str]:
    """The terms unicode61 (remove_diacritics 2) cuts text into."""
    conn.execute("DELETE FROM probe")
    conn.execute("INSERT INTO probe (text) VALUES (?)", (text,))
    return {term for (term,) in conn.execute("SELECT term FROM probe_terms")}


# Every odd query is also a document: most of them then have rows that match, so agreeing is not vacuous.
# Each row pairs two different texts, so a column filter and a per-column phrase have something to get wrong.
ODD_DOCS = [*CORPUS, *ODD_QUERIES]
ODD_ROWS = [(doc, ODD_DOCS[(i + 7) % len(ODD_DOCS)]) for i, doc in enumerate(ODD_DOCS)]


@pytest.mark.parametrize("text", [pytest.param(q, id=f"q{i}") for i, q in enumerate(ODD_QUERIES)])
def test_any_query_parses_to_an_fts5_expression_that_means_what_the_scan_means(
    text: str, fts_reference: sqlite3.Connection
) -> None:
    """No input is a syntax error, and whatever it parses to, FTS5 and the scan select the same rows.

    An empty query is one with nothing unicode61 would index; any other query finds
    its own text, in both modes, and the snippet of that text marks the match.
    """
    query = parse(text)
    if query.empty:
        assert _tokens(fts_reference, text) == set(), "a query with searchable words parsed as empty"
        assert snippet(Matcher(query), text) is None
        return
    tokens = _tokens(fts_reference, text) | {"or"}
    for term in (term for clause in query.clauses for term in clause):
        *before, last = (fold(w) for w in term.words)
        assert set(before) <= tokens, "the query searches for a word that is not in it"
        # A plain word may be searched as its stem: a prefix of a word of the query, never another word.
        if term.prefix:
            assert any(t.startswith(last) for t in tokens), f"{last}* is not a prefix of any word of the query"
        else:
            assert last in tokens, "the query searches for a word that is not in it"
    load(fts_reference, ODD_ROWS)
    whole = rowids(fts_reference, query.fts())
    matcher = Matcher(query)
    assert whole == {i for i, (title, body) in enumerate(ODD_ROWS) if matcher.matches(fold(body), title=fold(title))}
    titles = rowids(fts_reference, query.fts("title"))
    assert titles == {i for i, (title, _) in enumerate(ODD_ROWS) if matcher.matches(title=fold(title))}
    assert ODD_DOCS.index(text) in titles, "a query does not find its own text"
    marked = snippet(Matcher(query), text)
    if all(t.title for t in query.phrases):  # title:... is sought in titles alone: no text's snippet marks it
        assert marked is None
        return
    assert marked is not None
    assert "**" in marked  # even a match longer than the snippet is marked where it shows


@pytest.mark.parametrize("text", [pytest.param(q, id=q) for q in SEARCHES])
def test_a_query_matches_the_same_rows_with_and_without_the_index(text: str, fts_reference: sqlite3.Connection) -> None:
    """Scan-mode matching agrees with FTS5 (unicode61, remove_diacritics 2) on every row."""
    load(fts_reference, [("", doc) for doc in CORPUS])
    query = parse(text)
    by_fts = rowids(fts_reference, query.fts())
    by_scan = {i for i, doc in enumerate(CORPUS) if Matcher(query).matches(fold(doc))}
    assert by_scan == by_fts, {
        "only fts": [CORPUS[i] for i in sorted(by_fts - by_scan)],
        "only scan": [CORPUS[i] for i in sorted(by_scan - by_fts)],
    }


@pytest.mark.parametrize("text", [pytest.param(q, id=q) for q in ("cafe", "ecole", "caf*", '"ecole primaire"')])
def test_one_matcher_answers_alike_before_and_after_it_meets_combining_marks(text: str) -> None:
    """A matcher compiles its form for combining marks on first need: what it saw before changes nothing."""
    shared = Matcher(parse(text))
    marked = [doc for doc in CORPUS if "\u0301" in doc]
    assert marked  # the corpus has decomposed text, so the second form is built here
    for doc in [*CORPUS, *reversed(CORPUS)]:
        folded = fold(doc)
        fresh = Matcher(parse(text))
        assert shared.matches(folded) is fresh.matches(folded), doc
        assert shared.phrase_counts(folded) == fresh.phrase_counts(folded), doc
        assert snippet(shared, doc) == snippet(fresh, doc), doc
    assert any(shared.matches(fold(doc)) for doc in marked)


@pytest.mark.parametrize(
    ("query", "text", "hit"),
    [
        pytest.param("budget review", "review of the budget", True, id="and-any-order"),
        pytest.param("budget review", "budget only", False, id="and-needs-all"),
        pytest.param('"budget review"', "review of the budget", False, id="phrase-in-order"),
        pytest.param('"the budget"', "review of the budget", True, id="phrase-found"),
        pytest.param("budg*", "the budget", True, id="prefix"),
        pytest.param("budg", "the budget", False, id="word-is-not-prefix"),
        pytest.param("milk OR bread", "buy bread", True, id="or-either"),
        pytest.param("milk OR bread", "buy eggs", False, id="or-neither"),
        pytest.param("or", "this or that", True, id="lone-or-is-a-word"),
        pytest.param("CAFE", "le café", True, id="case-and-accent"),
        pytest.param("café", "CAFE", True, id="accent-in-query"),
    ],
)
def test_the_query_language_means_what_the_contract_says(query: str, text: str, hit: bool) -> None:
    """AND in any order, phrases, prefixes, OR, case and accents behave as documented."""
    assert Matcher(parse(query)).matches(fold(text)) is hit


# -- folding -----------------------------------------------------------------------


def test_fold_keeps_every_offset() -> None:
    """Folding never changes a text's length, so snippet offsets stay right."""
    for text in [*CORPUS, *WINDOW_TEXTS.values(), "ǅ ǈ ẞ ﬁ İ ß Σ ς µ ſ"]:
        assert len(fold(text)) == len(text), text


def test_the_fast_fold_table_covers_every_character_that_loses_a_diacritic() -> None:
    """Past the fast path's table, folding is plain lower-casing: no character there loses a mark."""
    beyond = [
        code
        for code in range(_LATIN_BLOCKS_END, 0x110000)
        if not 0xD800 <= code <= 0xDFFF and len(chr(code).lower()) == 1 and _FOLD[code] != chr(code).lower()
    ]
    assert beyond == []


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("Café ÉCOLE naïve", id="latin"),
        pytest.param("ΟΔΟΣ οδός", id="greek-capital-sigma"),
        pytest.param("İstanbul", id="dotted-capital-i"),
        pytest.param("Tiếng Việt", id="vietnamese"),
        pytest.param("e\u0301cole", id="decomposed"),
        pytest.param("Ångström Å", id="angstrom-sign"),
    ],
)
def test_fold_keeps_length_and_matches_the_per_character_table(text: str) -> None:
    """fold's fast path gives what folding each character alone gives, at the same offsets."""
    assert fold(text) == text.translate(_FOLD)
    assert len(fold(text)) == len(text)


# -- snippets ----------------------------------------------------------------------


def test_snippet_wraps_each_match_and_stays_near_the_first() -> None:
    """The snippet bolds every match within it, starts at a word and stays within ~200 characters."""
    text = ("filler words here " * 30) + "the Budget meeting about the budget " + ("tail words " * 40)
    out = snippet(Matcher(parse("budget")), text)
    assert out is not None
    assert out.count("**Budget**") == 1
    assert out.count("**budget**") == 1
    assert out.startswith("…")
    assert out.endswith("…")
    assert len(out) <= 200 + 2 + 4 * 2
    assert snippet(Matcher(parse("absent")), text) is None
