"""Search by meaning (the semantic extra), end to end: the index command and the server, as real processes.

The model is the one the test dependency ``tokenlearn-static-model`` ships (Model2Vec's folder layout:
64 dimensions, a multilingual tokenizer, 10k int8 rows): it is loaded through the same code as a model a
user downloads. It is small and weak, so these tests check what the code does with a model (what is
indexed, fused, cited, hidden, rebuilt), on queries it gets right; quality is measured in docs/search.md.
The index goes to a cache folder of the test's own ($MAGNOTIA_MCP_CACHE_DIR, inherited by the processes).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import static_model

Index = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture(scope="session")
def model_dir() -> Path:
    return Path(static_model.__file__).parent / "model"


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("MAGNOTIA_MCP_CACHE_DIR", str(folder))
    return folder


def run_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "magnotia_mcp", *args],
        env={**os.environ, **(env or {})},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=120,
        check=False,
    )


@pytest.fixture
def index(cache: Path) -> Index:
    """Run `magnotia-mcp index --db DB ARGS...` as a process; the completed process."""

    def run(db: Path, *args: str) -> subprocess.CompletedProcess[str]:
        return run_cli("index", "--db", str(db), *args)

    return run
