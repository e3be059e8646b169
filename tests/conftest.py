from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.server import Launcher, ServerProcess
from tests.storefactory import StoreBuilder


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("magnotia-mcp")
    group.addoption("--server", default="package", help="which server to drive: package, script, frozen, container")
    group.addoption("--server-bin", default=None, help="the frozen executable, for --server frozen")


@pytest.fixture(scope="session")
def launcher(request: pytest.FixtureRequest) -> Launcher:
    return Launcher(request.config.getoption("--server"), request.config.getoption("--server-bin"))


@pytest.fixture(autouse=True)
def _isolated_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Keep platformdirs and MAGNOTIA_DB from ever pointing at a real user's store."""
    monkeypatch.delenv("MAGNOTIA_DB", raising=False)
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
def start_server(launcher: Launcher) -> Iterator[Callable[..., ServerProcess]]:
    """Start servers on stores; every one is checked for a clean exit and a clean stdout."""
    started: list[ServerProcess] = []

    def start(db: Path | None, *extra: str, env: dict[str, str] | None = None) -> ServerProcess:
        proc = ServerProcess(launcher.argv(db, list(extra)), env=env)
        started.append(proc)
        return proc

    yield start
    for proc in started:
        check_clean_exit(proc)


def check_clean_exit(proc: ServerProcess) -> None:
    """Close stdin if still open; the server must exit as expected, with no traceback and JSON-only stdout."""
    code = proc.close() if proc.proc.poll() is None else proc.proc.returncode
    assert code in proc.expected_exit, f"server exited {code}; stderr:\n{proc.stderr}"
    assert "Traceback" not in proc.stderr, proc.stderr  # never an unhandled exception
    for line in proc.raw_stdout:
        json.loads(line)  # stdout carries protocol messages only


class SharedServers:
    """Initialized servers kept for a whole test module, one per (store, revision).

    For tests that only read: each use starts with ``sync()``, so a stray or
    duplicate response left by an earlier test fails the test that meets it.
    """

    def __init__(self, launcher: Launcher) -> None:
        self.launcher = launcher
        self.servers: dict[tuple[Path, str], ServerProcess] = {}

    def get(self, db: Path, revision: str) -> ServerProcess:
        proc = self.servers.get((db, revision))
        if proc is None or proc.proc.poll() is not None:
            proc = ServerProcess(self.launcher.argv(db))
            proc.initialize(revision)
            self.servers[(db, revision)] = proc
        proc.sync()
        return proc

    def close_all(self) -> None:
        for proc in self.servers.values():
            check_clean_exit(proc)


@pytest.fixture(scope="module")
def shared_servers(launcher: Launcher) -> Iterator[SharedServers]:
    """Long-lived servers for read-only tests of one module; checked for a clean exit at its end."""
    pool = SharedServers(launcher)
    yield pool
    pool.close_all()
