"""End-to-end tests: each drives a real server process (the kind chosen with --server) over pipes.

Everything under tests/e2e/ is marked ``e2e``; ``nox -s freeze`` and ``nox -s docker``
run this folder against the one-file executable and the container image.

Transports: ``start_server`` and ``shared_servers`` serve over stdio, or over Streamable HTTP
(``serve --http`` on a free loopback port, started by tests/http/conftest.py's ``start``, each
message a POST: tests/support/http_client.py) for a test or module marked
``pytest.mark.transports("stdio", "http")``: such tests run once per transport, ids ending
``[stdio]``/``[http]``, with the same code and the same assertions.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.http.conftest import TOKEN
from tests.http.conftest import start as start_http
from tests.support.app import App
from tests.support.http_client import HttpSession
from tests.support.server import Launcher, ServerProcess, SharedServers, check_clean_exit

TRANSPORTS = ("stdio", "http")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "transports(*names): run the test's servers over each of these (stdio, http); default stdio only"
    )


@pytest.hookimpl(tryfirst=True)  # before -m selects by marker
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test under this folder ``e2e``: the kind of a test is where it lives."""
    here = Path(__file__).parent
    for item in items:
        if item.path.is_relative_to(here):
            item.add_marker(pytest.mark.e2e)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """A test whose servers come from these fixtures runs once per transport its closest marker names."""
    marker = metafunc.definition.get_closest_marker("transports")
    if marker is None or "transport" not in metafunc.fixturenames:
        return
    unknown = set(marker.args) - set(TRANSPORTS)
    if unknown or not marker.args:
        raise pytest.UsageError(f"transports{marker.args}: each must be one of {TRANSPORTS}")
    names = list(marker.args)
    chosen = metafunc.config.getoption("--transports")
    if chosen:  # a fast variant: the artifact sessions run HTTP through tests/http instead
        wanted = chosen.split(",")
        if set(wanted) - set(TRANSPORTS):
            raise pytest.UsageError(f"--transports {chosen}: each must be one of {TRANSPORTS}")
        names = [name for name in names if name in wanted] or names
    # Module scope: a module's tests run grouped by transport, so one set of shared servers is up at a time.
    metafunc.parametrize("transport", names, scope="module")


@pytest.fixture(scope="module")
def transport() -> str:
    """stdio, unless the transports marker parametrizes it."""
    return "stdio"


def spawn(
    launcher: Launcher, transport: str, db: Path | None, extra: list[str], env: dict[str, str] | None
) -> ServerProcess:
    if transport == "stdio":
        return ServerProcess(launcher.argv(db, extra), env=env)
    if db is None:
        raise ValueError("over HTTP a test names its store")
    # start() skips the kinds it cannot serve over HTTP yet, with its reason.
    return HttpSession(start_http(launcher, db, extra, {**(env or {}), "MAGNOTIA_MCP_TOKEN": TOKEN}), TOKEN)


@pytest.fixture
def start_server(launcher: Launcher, transport: str) -> Iterator[Callable[..., ServerProcess]]:
    """Start servers on stores; every one is checked for a clean exit and a clean stdout."""
    started: list[ServerProcess] = []

    def start(db: Path | None, *extra: str, env: dict[str, str] | None = None) -> ServerProcess:
        proc = spawn(launcher, transport, db, list(extra), env)
        started.append(proc)
        return proc

    yield start
    for proc in started:
        check_clean_exit(proc)


@pytest.fixture(scope="module")
def shared_servers(launcher: Launcher, transport: str) -> Iterator[SharedServers]:
    """Long-lived servers for read-only tests of one module; checked for a clean exit at its end."""
    pool = SharedServers(launcher, lambda db: spawn(launcher, transport, db, [], None))
    yield pool
    pool.close_all()


@pytest.fixture
def apps() -> Iterator[Callable[[Path], App]]:
    """Start app processes; any still running at the end (a failed test) is killed."""
    started: list[App] = []

    def start(db: Path) -> App:
        app = App.start(db)
        started.append(app)
        return app

    yield start
    for app in started:
        app.kill()
