"""Options and fixtures for every kind of test: which server to drive, an isolated home, fresh stores."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from devkit.storefactory import StoreBuilder
from tests.support.server import Launcher


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("magnotia-mcp")
    group.addoption("--server", default="package", help="which server to drive: package, script, frozen, container")
    group.addoption("--server-bin", default=None, help="the frozen executable, for --server frozen")
    group.addoption(
        "--dist-artifact",
        default=None,
        help="a built wheel or sdist for tests/distribution (nox -s dist passes each; without it those tests skip)",
    )


@pytest.fixture(scope="session")
def launcher(request: pytest.FixtureRequest) -> Launcher:
    return Launcher(request.config.getoption("--server"), request.config.getoption("--server-bin"))


@pytest.fixture(autouse=True)
def _isolated_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Keep platformdirs, MAGNOTIA_DB and MAGNOTIA_DATA_DIR from ever pointing at a real user's store."""
    monkeypatch.delenv("MAGNOTIA_DB", raising=False)
    monkeypatch.delenv("MAGNOTIA_DATA_DIR", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg-data"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))


@pytest.fixture
def new_store(tmp_path: Path) -> Callable[..., StoreBuilder]:
    """A builder for a fresh store at <tmp>/<name>/magnotia.db."""
    count = 0

    def make(name: str | None = None, *, fts: bool = True) -> StoreBuilder:
        nonlocal count
        count += 1
        return StoreBuilder(tmp_path / (name or f"store{count}") / "magnotia.db", fts=fts)

    return make
