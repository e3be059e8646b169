"""Words and meaning in one ranking: reciprocal rank fusion of the lexical and the semantic lists.

Each list gives a transcript ``1 / (K + rank)``; the sums order the result, and a tie keeps the
lexical order (then the semantic one). A transcript both lists found rises above one that only
one list found at the same rank, and an exact match in words is never pushed below a transcript
the words did not find unless meaning ranks that one clearly higher. Pure Python: no numpy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from magnotia_mcp.search.ranking import Candidate

K = 60  # the constant of Cormack, Clarke and Büttcher (2009), the usual one: ranks matter, scores do not
MatchedBy = Literal["words", "meaning", "both"]


def fuse(
    lexical: list[Candidate], semantic: list[Candidate], clauses: int
) -> tuple[list[Candidate], dict[str, MatchedBy]]:
    """Both lists fused, best first, and how each transcript in it was found.

    A transcript that has every term of the query (clauses of them) stays above those that do not:
    a keyword search that matches in full is answered by its words, and meaning reorders those hits
    among themselves and decides among the partial matches and the rest.
    """
    score: dict[str, float] = {}
    first: dict[str, tuple[int, int]] = {}
    by_id: dict[str, Candidate] = {}
    for which, ranked in enumerate((lexical, semantic)):
        for rank, c in enumerate(ranked):
            score[c.id] = score.get(c.id, 0.0) + 1.0 / (K + rank + 1)
            first.setdefault(c.id, (which, rank))
            by_id.setdefault(c.id, c)  # the lexical candidate, when there is one: it carries coverage and BM25
    words = {c.id for c in lexical}
    meaning = {c.id for c in semantic}
    full = {c.id for c in lexical if c.coverage >= clauses}
    order = sorted(score, key=lambda i: (i not in full, -score[i], first[i]))
    how: dict[str, MatchedBy] = {
        i: "both" if i in words and i in meaning else "words" if i in words else "meaning" for i in order
    }
    return [by_id[i] for i in order], how
