"""Issue 21, measured and not shipped: other rules for fusing words and meaning, on the judged sets.

The shipped rule (``search.fusion.fuse``) is reciprocal rank fusion, ``1 / (60 + rank)`` from each list, with
the full keyword matches kept first. On the paraphrase set it costs a good model half of what it finds alone
(docs/search.md): the transcripts that share the question's words in another sense are found by both lists
and rise above the answer, found by meaning alone. This script runs the product's own search
(``search.plan.search_page`` on the judged store) with each embedder's nearest transcripts, once per rule:

* ``shipped``: the rule above;
* ``coverage``: a hit by words counts by the share of the query's terms it has (1 of 3: a third of its rank's
  share), so a partial match in another sense weighs less than the answer found by meaning;
* ``meaning x1.5``, ``meaning x2``: meaning's list weighs more;
* ``k10``, ``coverage k10``: the constant 10 instead of 60 (the first ranks weigh more);
* ``no full matches first``: plain reciprocal rank fusion, without the rule that keeps full keyword matches first.

Reproduce (e5 needs the environment of devkit/compare_models.py; ``static`` runs in the dev one)::

    taskset -c 0,1 /work/e5venv/bin/python -m devkit.fusion_variants --embedders static,e5

Run by hand from the repository's root, never by the tests. It prints the judged table for every rule, then the
held-out and tuning halves of the sets by meaning.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from devkit import compare_models as models
from devkit import relevance
from magnotia_mcp.search import fusion, plan
from magnotia_mcp.search.fusion import MatchedBy
from magnotia_mcp.search.plan import NEAR
from magnotia_mcp.search.ranking import Candidate
from magnotia_mcp.search.semantic.build import quantized
from magnotia_mcp.search.semantic.found import Found
from magnotia_mcp.search.semantic.nearest import FLOOR
from magnotia_mcp.tools.search import MAX_HITS

Fuse = Callable[[list[Candidate], list[Candidate], int], tuple[list[Candidate], dict[str, MatchedBy]]]


def weighted(*, coverage: bool = False, meaning: float = 1.0, k: int = fusion.K, full_first: bool = True) -> Fuse:
    """``fusion.fuse`` with weights: words by the share of terms a hit has (coverage), meaning by a factor; full_first
    False drops the rule that keeps the full keyword matches first."""

    def fuse(
        lexical: list[Candidate], semantic: list[Candidate], clauses: int
    ) -> tuple[list[Candidate], dict[str, MatchedBy]]:
        score: dict[str, float] = {}
        first: dict[str, tuple[int, int]] = {}
        by_id: dict[str, Candidate] = {}
        for which, ranked in enumerate((lexical, semantic)):
            for rank, c in enumerate(ranked):
                weight = meaning if which else (c.coverage / clauses if coverage and clauses else 1.0)
                score[c.id] = score.get(c.id, 0.0) + weight / (k + rank + 1)
                first.setdefault(c.id, (which, rank))
                by_id.setdefault(c.id, c)
        words = {c.id for c in lexical}
        near = {c.id for c in semantic}
        full = {c.id for c in lexical if c.coverage >= clauses} if full_first else set()
        order = sorted(score, key=lambda i: (i not in full, -score[i], first[i]))
        how: dict[str, MatchedBy] = {
            i: "both" if i in words and i in near else "words" if i in words else "meaning" for i in order
        }
        return [by_id[i] for i in order], how

    return fuse


RULES: dict[str, Fuse] = {
    "shipped": fusion.fuse,
    "coverage": weighted(coverage=True),
    "meaning x1.5": weighted(meaning=1.5),
    "meaning x2": weighted(meaning=2.0),
    "k10": weighted(k=10),
    "coverage k10": weighted(coverage=True, k=10),
    "no full matches first": weighted(full_first=False),
}


def nearest_lists(name: str) -> list[list[Found]]:
    """Each judged query's nearest transcripts for one embedder, as the index would answer (above FLOOR)."""
    ids, starts, texts, _ = models._judged_windows()
    model = models._embedder(name)
    scales, rows = quantized(model.passages(texts))
    wide = rows.astype(np.float32)
    at = np.asarray(starts, dtype=np.int64)
    out: list[list[Found]] = []
    for q in models.ALL_QUERIES:
        ranked, best = models._ranked(ids, at, scales, wide, model.query(q.text))
        kept = [Found(d, s, []) for d, s in zip(ranked, best, strict=True) if s >= FLOOR]
        out.append(kept[: NEAR * MAX_HITS])
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--embedders", default="static", help="comma-separated: static, e5")
    args = parser.parse_args(argv)
    evaluations: dict[str, relevance.Evaluation] = {}
    with tempfile.TemporaryDirectory() as tmp:
        store = relevance.build_store(Path(tmp) / "store" / "magnotia.db")
        evaluations["words"] = models._evaluation(asyncio.run(models._searches(store, None)))
        for name in args.embedders.split(","):
            near = nearest_lists(name)
            ranked = [[f.doc for f in n][: relevance.DEPTH] for n in near]
            evaluations[f"{name} by meaning alone"] = models._evaluation(ranked)
            for label, rule in RULES.items():
                vars(plan)["fuse"] = rule  # the plan calls fuse by this name: each rule runs the product's search
                evaluations[f"{name} {label}"] = models._evaluation(asyncio.run(models._searches(store, near)))
            vars(plan)["fuse"] = fusion.fuse
    print(relevance.table(evaluations, models.ALL_KINDS))
    print(models._held_out_table(evaluations))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
