"""Hostile inputs on the semantic path (issue 45, finding 7): a lone surrogate in search_transcripts' query or
speaker (a "\\ud800" escape in the JSON: not Unicode, no UTF-8 form) is answered with an index as without one.

Real processes over stdio and HTTP, the index built by `magnotia-mcp index` with the small model the test
dependency tokenlearn-static-model ships; a throwaway HOME and cache folder.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from magnotia_mcp.search.semantic import indexfile
from tests.e2e.conftest import spawn
from tests.security.test_semantic_index import indexed
from tests.semantic import stores
from tests.support.server import Launcher, ServerProcess, check_clean_exit

LONE = "\ud800"


@pytest.fixture(autouse=True)
def _home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, launcher: Launcher) -> None:
    if launcher.kind not in ("package", "script"):
        pytest.skip("the one-file build and the image have no semantic extra")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv(indexfile.CACHE_ENV, str(tmp_path / "cache"))


@pytest.fixture(params=["stdio", "http"])
def serve(request: pytest.FixtureRequest, launcher: Launcher) -> Iterator[Any]:
    """Start servers on a store over the transport; each must exit cleanly at the end."""
    started: list[ServerProcess] = []

    def start(db: Path, cache: Path) -> ServerProcess:
        proc = spawn(launcher, request.param, db, [], {indexfile.CACHE_ENV: str(cache)})
        started.append(proc)
        proc.initialize()
        return proc

    yield start
    for proc in started:
        check_clean_exit(proc)


def hits(server: ServerProcess, arguments: dict[str, Any]) -> tuple[list[str], dict[str, Any] | None]:
    """The transcripts a search finds, and what it says of the semantic index; an error fails the test."""
    result = server.result("search_transcripts", arguments)
    return [hit["transcript_id"] for hit in result["hits"]], result.get("semantic")


@pytest.mark.parametrize(
    "arguments",
    [
        {"query": f"campaigns {LONE}"},
        {"query": f"campaigns{LONE}money"},
        {"query": "campaigns", "speaker": f"Ana{LONE}"},
        {"query": f"money {LONE}", "speaker": LONE},
    ],
    ids=["query", "query-inside-a-word", "speaker", "both"],
)
def test_a_lone_surrogate_is_answered_with_an_index_as_without(
    tmp_path: Path, serve: Any, arguments: dict[str, Any]
) -> None:
    db = indexed(tmp_path)
    without, said = hits(serve(db, tmp_path / "empty-cache"), arguments)
    assert said is None  # no index there: the search went by words
    with_index, semantic = hits(serve(db, tmp_path / "cache"), arguments)
    assert semantic is not None
    assert semantic["used"] is True, semantic
    # By words, the same transcripts; by meaning, only more (a U+FFFD in the query matches nothing of its own).
    assert set(without) <= set(with_index), (without, with_index)
    if "speaker" in arguments:
        assert with_index == without == []  # no label holds a lone surrogate: nobody said anything
    else:
        assert stores.BUDGET in with_index  # "campaigns" is in it, by words
