"""The app's folder is left as the server found it (issue 10).

A reader that opens a WAL store ``mode=ro`` in a writable folder while the app
is closed creates ``-wal`` and ``-shm`` and leaves them; one that is still open
when the app quits keeps the app from tidying them away. In each of the four
states (folder writable or read-only, app running or not) no file appears that
was not there before the server started, and the store's bytes never change;
an app that quits while the server runs (idle) leaves its folder clean.

The read-only folder is a read-only bind mount in a private mount namespace
for a local server (root only) and the ``:ro`` volume for the container; the
writable folder is the plain folder, mounted read-write (and opened to the
container's user) for the container.
"""

from __future__ import annotations

import hashlib
import shlex
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from devkit.storefactory import StoreBuilder, ts
from tests.support.app import App
from tests.support.server import Launcher, ServerProcess, check_clean_exit
from tests.support.unprivileged import why_no_read_only_mount

LOG_WAIT = 30.0  # seconds: only so that a server that never lets go fails the test instead of hanging it
IDLE_CLOSED = "idle connection"


Serve = Callable[[Path, bool], ServerProcess]


@pytest.fixture
def serve(launcher: Launcher) -> Iterator[Serve]:
    """Start a server (debug log) on a store whose folder is writable or read-only; checked for a clean exit."""
    started: list[ServerProcess] = []

    def start(db: Path, writable: bool) -> ServerProcess:
        argv = launcher.argv(db, ["--log-level", "debug"], writable_dir=writable)
        if launcher.local and not writable:
            why_not = why_no_read_only_mount()
            if why_not:
                pytest.skip(why_not)
            folder = shlex.quote(str(db.parent))
            script = f'set -e; mount --bind -o ro {folder} {folder}; exec "$@"'
            argv = ["unshare", "-m", "sh", "-c", script, "sh", *argv]
        server = ServerProcess(argv, cwd=Path("/"))
        started.append(server)
        server.initialize("2025-06-18")
        return server

    yield start
    for server in started:
        check_clean_exit(server)


def clean_store(folder: Path, launcher: Launcher, writable: bool) -> Path:
    """A WAL store the app has closed cleanly; the folder opened to the container's user when it is to be writable."""
    b = StoreBuilder(folder / "magnotia.db")
    for day, title in enumerate(("First", "Second"), start=1):
        tid = b.transcript(title=title, raw_text=f"{title} budget notes", created_at=ts(day))
        b.task(transcript_id=tid, title=f"Task of {title}", created_at=ts(day))
    db = b.close()
    assert files(folder) == ["magnotia.db"]
    assert db.read_bytes()[18:20] == b"\x02\x02", "the header should say WAL mode"
    if writable and not launcher.local:
        folder.chmod(0o777)  # the container runs as another user: let it create files, so that it could
    return db


def files(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def titles(server: ServerProcess) -> list[str]:
    return [t["title"] for t in server.result("list_transcripts")["transcripts"]]


def use_every_tool(server: ServerProcess) -> None:
    listed = server.result("list_transcripts")["transcripts"]
    assert [t["title"] for t in listed][-2:] == ["Second", "First"]
    assert server.result("get_transcript", {"id": listed[-1]["id"]})["text"] == "First budget notes"
    found = server.result("search_transcripts", {"query": "budget"})
    assert found["mode"] == "fts"
    assert {h["title"] for h in found["hits"]} >= {"First", "Second"}
    assert {t["title"] for t in server.result("list_tasks")["tasks"]} == {"Task of First", "Task of Second"}


def idle_closes(server: ServerProcess) -> list[str]:
    return [line for line in server.stderr.splitlines() if IDLE_CLOSED in line]


def wait_until_let_go(server: ServerProcess, seen: int) -> None:
    """Wait for the server to log, after the seen-th such line, that it closed its idle connections and holds none."""
    deadline = time.monotonic() + LOG_WAIT
    while not any(line.endswith("; 0 open") for line in idle_closes(server)[seen:]):
        assert time.monotonic() < deadline, f"the server never let go of the store; stderr:\n{server.stderr}"
        time.sleep(0.01)  # polling for the log line, not waiting for time to pass


WRITABLE = [pytest.param(True, id="writable-folder"), pytest.param(False, id="read-only-folder")]


@pytest.mark.parametrize("writable", WRITABLE)
@pytest.mark.parametrize("app_running", [pytest.param(True, id="app-running"), pytest.param(False, id="app-closed")])
def test_the_server_leaves_no_file_beside_the_store_and_changes_no_byte(
    serve: Serve, apps: Callable[[Path], App], launcher: Launcher, tmp_path: Path, writable: bool, app_running: bool
) -> None:
    """After the server exits, the folder holds the files it held before; the store file is byte for byte the same."""
    folder = tmp_path / "store"
    db = clean_store(folder, launcher, writable)
    app = apps(db) if app_running else None
    before = files(folder)
    assert before == (["magnotia.db", "magnotia.db-shm", "magnotia.db-wal"] if app else ["magnotia.db"])
    store_bytes = digest(db)
    server = serve(db, writable)
    use_every_tool(server)
    if app is not None:
        app.insert("Live", "live budget notes", ts(9))  # the server reads the app's WAL
        assert titles(server)[0] == "Live"
    assert server.close() == 0
    assert files(folder) == before
    assert digest(db) == store_bytes
    if app is not None:
        app.close()  # the last connection to close: it checkpoints and tidies up
        assert files(folder) == ["magnotia.db"]


@pytest.mark.parametrize("writable", WRITABLE)
@pytest.mark.parametrize(
    "app_starts", [pytest.param("before", id="app-started-first"), pytest.param("after", id="app-started-later")]
)
def test_an_app_that_quits_while_the_server_idles_tidies_its_folder(
    serve: Serve,
    apps: Callable[[Path], App],
    launcher: Launcher,
    tmp_path: Path,
    writable: bool,
    app_starts: str,
) -> None:
    """The app quits while the server runs: once the server has let go (idle), the app deletes -wal/-shm as usual."""
    folder = tmp_path / "store"
    db = clean_store(folder, launcher, writable)
    app = apps(db) if app_starts == "before" else None
    server = serve(db, writable)
    use_every_tool(server)
    if app is None:
        app = apps(db)  # the server read the store immutable until now
    app.insert("Live", "live budget notes", ts(9))
    seen = len(idle_closes(server))
    assert titles(server)[0] == "Live"  # read through mode=ro: the app is writing
    wait_until_let_go(server, seen)
    app.close()
    assert files(folder) == ["magnotia.db"], "the app could not tidy up: the server still held the store"
    assert titles(server)[0] == "Live"  # from the checkpointed file
    assert server.close() == 0
    assert files(folder) == ["magnotia.db"]
