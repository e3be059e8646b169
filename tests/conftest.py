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
        "--transports",
        default=None,
        help="comma-separated: run e2e tests over only these of the transports each names (the artifact sessions "
        "pass stdio and run tests/http beside; a test that names none of them keeps its own)",
    )
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


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A throwaway home for install tests: HOME, XDG_CONFIG_HOME and APPDATA inside it, no host CLI on PATH."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("APPDATA", str(home / "AppData" / "Roaming"))
    for var in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "MAGNOTIA_DB"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    return home
