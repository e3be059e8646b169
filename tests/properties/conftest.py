"""Hypothesis budgets for the property tests, and the long-lived servers they talk to.

Two settings profiles, chosen with ``$MAGNOTIA_HYPOTHESIS_PROFILE``:

* ``ci`` (the default, what ``nox -s test`` runs): a fixed budget (``budget(n)``
  examples per property, a few hundred in all), derandomized so every run tries
  the same examples, no example database, no deadline (no timing assertions
  on a shared 2-core machine);
* ``long`` (``nox -s props``): 40x the examples, a random seed that the session
  prints (rerun one with ``--hypothesis-seed N``), no per-test timeout.

Each test module keeps its servers for the whole module (one process per store)
and every example brings the connection back to a known state itself, so
examples do not depend on each other and a failure shrinks.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from tests.properties.corpus import Corpus, write_store
from tests.support.server import Launcher, ServerProcess, check_clean_exit

PROFILE_ENV = "MAGNOTIA_HYPOTHESIS_PROFILE"
LONG_FACTOR = 40

_COMMON = {
    "deadline": None,
    "database": None,
    "print_blob": True,
    # The suite's autouse fixture (an isolated HOME) is function-scoped: it holds nothing an example changes.
    "suppress_health_check": [HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large],
}
settings.register_profile("ci", derandomize=True, **_COMMON)  # type: ignore[arg-type]
settings.register_profile("long", derandomize=False, **_COMMON)  # type: ignore[arg-type]
PROFILE = os.environ.get(PROFILE_ENV, "ci")
settings.load_profile(PROFILE)


def budget(n: int) -> settings:
    """Settings for a property with n examples in CI (LONG_FACTOR times as many in the long profile)."""
    return settings(max_examples=n * (LONG_FACTOR if PROFILE == "long" else 1))


def pytest_report_header(config: pytest.Config) -> str:
    seed = config.getoption("hypothesis_seed", None)
    return f"property tests: hypothesis profile {PROFILE!r}" + (f", seed {seed}" if seed is not None else "")


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The long profile runs for minutes per property: no per-test timeout there."""
    if PROFILE != "long":
        return
    here = Path(__file__).parent
    for item in items:
        if item.path.is_relative_to(here):
            item.add_marker(pytest.mark.timeout(0), append=False)  # before any timeout a test sets itself


class Stores:
    """The property store written twice: with the full-text tables and without them."""

    def __init__(self, root: Path) -> None:
        self.fts = root / "fts" / "magnotia.db"
        self.scan = root / "scan" / "magnotia.db"
        self.corpus: Corpus = write_store(self.fts, fts=True)
        write_store(self.scan, fts=False)
        self.home = root / "home"
        self.home.mkdir()


@pytest.fixture(scope="session")
def stores(tmp_path_factory: pytest.TempPathFactory) -> Stores:
    return Stores(tmp_path_factory.mktemp("properties"))


class Servers:
    """Servers started by one test module; each is checked for a clean exit at the module's end."""

    def __init__(self, launcher: Launcher, home: Path) -> None:
        self.launcher = launcher
        self.env = {"HOME": str(home), "XDG_DATA_HOME": str(home / "xdg")}
        self.started: list[ServerProcess] = []

    def start(self, db: Path, revision: str = "2025-11-25") -> ServerProcess:
        proc = ServerProcess(self.launcher.argv(db), env=self.env, cwd=Path(tempfile.gettempdir()))
        self.started.append(proc)
        proc.initialize(revision)
        proc.sync()
        return proc

    def close(self) -> None:
        for proc in self.started:
            check_clean_exit(proc)


@pytest.fixture(scope="module")
def servers(launcher: Launcher, stores: Stores) -> Iterator[Servers]:
    pool = Servers(launcher, stores.home)
    yield pool
    pool.close()
