"""End-to-end tests: each drives a real server process (the kind chosen with --server) over pipes.

Everything under tests/e2e/ is marked ``e2e``; ``nox -s freeze`` and ``nox -s docker``
run this folder against the one-file executable and the container image.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.support.server import Launcher, ServerProcess, SharedServers, check_clean_exit


@pytest.hookimpl(tryfirst=True)  # before -m selects by marker
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test under this folder ``e2e``: the kind of a test is where it lives."""
    here = Path(__file__).parent
    for item in items:
        if item.path.is_relative_to(here):
            item.add_marker(pytest.mark.e2e)


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


@pytest.fixture(scope="module")
def shared_servers(launcher: Launcher) -> Iterator[SharedServers]:
    """Long-lived servers for read-only tests of one module; checked for a clean exit at its end."""
    pool = SharedServers(launcher)
    yield pool
    pool.close_all()
