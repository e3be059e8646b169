"""README.md's benchmark figures are the latest full run's, written by the benchmark (benchmarks/readme.py).

A hand edit of a figure inside a ``<!-- bench:... -->`` block fails here; so does a run whose
latest.md the README was not rewritten from (``python benchmarks/readme.py`` rewrites it).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]


def _readme_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_readme", ROOT / "benchmarks" / "readme.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_readme_quotes_the_latest_run_as_the_benchmark_wrote_it() -> None:
    readme = _readme_module()
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    latest = (ROOT / "benchmarks" / "results" / "latest.md").read_text(encoding="utf-8")
    assert set(readme.blocks(text)) == {"channels", "performance"}
    assert readme.blocks(readme.rewrite(text, latest)) == readme.blocks(text), (
        "README.md's figures differ from benchmarks/results/latest.md: run python benchmarks/readme.py"
    )


def test_a_figure_edited_by_hand_is_caught() -> None:
    readme = _readme_module()
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    latest = (ROOT / "benchmarks" / "results" / "latest.md").read_text(encoding="utf-8")
    block = readme.blocks(text)["performance"]
    edited = text.replace(block, block.replace(" ms |", " ms (edited) |", 1))
    assert edited != text
    assert readme.blocks(readme.rewrite(edited, latest)) != readme.blocks(edited)
