"""The store's directory mounted read-only (the ``docker -v db:/data:ro`` case), for real.

Each server runs inside its own mount namespace (``unshare -m``) in which the
store's directory is bind-mounted read-only; the app (a writer connection
here) works on the same files through the ordinary, writable view outside.
Needs root (for the namespace); the server itself also runs as an
unprivileged user (uid 65534). That user runs a copy of the server built once
per run in a world-readable temporary folder (tests/support/unprivileged.py),
never the checkout's own files, so these tests pass wherever the checkout lives.
"""

from __future__ import annotations

import shlex
import shutil
import sqlite3
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from devkit.storefactory import StoreBuilder, ts
from tests.support.server import Launcher, ServerProcess, check_clean_exit
from tests.support.unprivileged import (
    interpreter_paths,
    reachable_steps,
    readable_copy,
    why_no_read_only_mount,
    world_readable_dir,
)

NOBODY = 65534


WHY_NOT = why_no_read_only_mount()
pytestmark = pytest.mark.skipif(WHY_NOT is not None, reason=WHY_NOT or "")


@pytest.fixture(autouse=True)
def _local_server_only(launcher: Launcher) -> None:
    if not launcher.local:
        pytest.skip("the container kind is itself the read-only mount case; these tests need a local process")


@pytest.fixture(scope="session")
def nobody_launcher(launcher: Launcher) -> Iterator[Launcher]:
    """The server under test, copied once per run where uid 65534 can read it."""
    root = world_readable_dir("magnotia-mcp-nobody-")
    try:
        yield readable_copy(launcher, root)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _unprivileged_prefix(launcher: Launcher, stage: Path) -> tuple[str, list[str]]:
    """Shell steps that make the copy's interpreter reachable for uid 65534 inside the namespace, and setpriv."""
    if shutil.which("setpriv") is None:
        pytest.skip("needs setpriv (util-linux) to drop to an unprivileged user")
    steps = reachable_steps(interpreter_paths(launcher), stage)
    if steps is None:
        pytest.skip(f"the interpreter sits behind several closed directories: {interpreter_paths(launcher)}")
    return steps, ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]


class ReadOnlyServers:
    """Start servers inside a private mount namespace where the store's directory is read-only."""

    def __init__(self, launcher: Launcher, nobody: Callable[[], Launcher], scratch: Path) -> None:
        self.launcher = launcher
        self.nobody = nobody  # built on first use: only the uid-65534 tests need the copy
        self.scratch = scratch
        self.started: list[ServerProcess] = []

    def start(self, db: Path, *, unprivileged: bool = False, read_only: bool = True) -> ServerProcess:
        launcher = self.nobody() if unprivileged else self.launcher
        server_argv = launcher.argv(db)
        steps = f"mount --bind -o ro {shlex.quote(str(db.parent))} {shlex.quote(str(db.parent))}; " if read_only else ""
        prefix: list[str] = []
        if unprivileged:
            more, prefix = _unprivileged_prefix(launcher, self.scratch / f"stage{len(self.started)}")
            steps += more
        script = "set -e; " + steps + 'exec "$@"'
        proc = ServerProcess(["unshare", "-m", "sh", "-c", script, "sh", *prefix, *server_argv], cwd=Path("/"))
        self.started.append(proc)
        proc.initialize("2025-06-18")
        return proc


@pytest.fixture
def ro(launcher: Launcher, request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ReadOnlyServers]:
    def nobody() -> Launcher:
        copy = request.getfixturevalue("nobody_launcher")
        assert isinstance(copy, Launcher)
        return copy

    servers = ReadOnlyServers(launcher, nobody, tmp_path / "scratch")
    yield servers
    for proc in servers.started:
        check_clean_exit(proc)


@pytest.fixture
def shared_dir() -> Iterator[Path]:
    """A directory every user can read (pytest's own tmp is closed to others), removed afterwards."""
    path = world_readable_dir("magnotia-ro-")
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(params=[pytest.param(False, id="root"), pytest.param(True, id="uid-65534")])
def unprivileged(request: pytest.FixtureRequest) -> bool:
    return bool(request.param)


@pytest.fixture
def store_dir(tmp_path: Path, shared_dir: Path, unprivileged: bool) -> Path:
    return shared_dir if unprivileged else tmp_path / "store"


def clean_store(directory: Path, titles: tuple[str, ...] = ("First", "Second")) -> Path:
    """A WAL store the app has closed cleanly: no -wal or -shm beside it; readable by everyone."""
    b = StoreBuilder(directory / "magnotia.db")
    for i, title in enumerate(titles):
        t = b.transcript(title=title, raw_text=f"{title} budget notes", created_at=ts(1 + i))
        b.task(transcript_id=t, title=f"Task of {title}", created_at=ts(1 + i))
    db = b.close()
    assert sorted(p.name for p in directory.iterdir()) == ["magnotia.db"]
    assert db.read_bytes()[18:20] == b"\x02\x02", "the header should say WAL mode"
    db.chmod(0o644)
    return db


def titles(server: ServerProcess) -> list[str]:
    return [t["title"] for t in server.result("list_transcripts", {"limit": 100})["transcripts"]]


def insert(app: sqlite3.Connection, n: int, title: str) -> None:
    app.execute(
        "INSERT INTO transcripts (id, title, source, raw_text, created_at, updated_at)"
        " VALUES (?, ?, 'dictation', ?, ?, ?)",
        (f"id-{n}", title, f"{title} budget notes", ts(10 + n), ts(10 + n)),
    )


def test_the_mount_is_really_read_only(ro: ReadOnlyServers, tmp_path: Path) -> None:
    """Sanity: inside the namespace the directory refuses writes; outside it stays writable."""
    directory = tmp_path / "probe"
    directory.mkdir()
    q = shlex.quote(str(directory))
    inside = subprocess.run(
        ["unshare", "-m", "sh", "-c", f"mount --bind -o ro {q} {q} && touch {q}/x"],
        capture_output=True,
        timeout=10,
        check=False,
    )
    assert inside.returncode != 0
    assert b"Read-only file system" in inside.stderr
    (directory / "y").touch()
    assert not (directory / "x").exists()


def test_a_cleanly_closed_wal_store_on_a_read_only_mount_serves_every_tool(
    ro: ReadOnlyServers, store_dir: Path, unprivileged: bool
) -> None:
    """No -wal/-shm and a read-only directory (mode=ro cannot open it): every tool still works."""
    db = clean_store(store_dir)
    server = ro.start(db, unprivileged=unprivileged)
    listed = server.result("list_transcripts")["transcripts"]
    assert [t["title"] for t in listed] == ["Second", "First"]
    got = server.result("get_transcript", {"id": listed[0]["id"], "include_segments": True})
    assert got["text"] == "Second budget notes"
    assert got["tasks"][0]["title"] == "Task of Second"
    hits = server.result("search_transcripts", {"query": "budget"})
    assert hits["mode"] == "fts"
    assert {h["title"] for h in hits["hits"]} == {"First", "Second"}
    assert len(server.result("list_tasks")["tasks"]) == 2
    assert sorted(p.name for p in store_dir.iterdir()) == ["magnotia.db"]


def test_a_store_the_app_is_writing_is_followed_through_a_read_only_mount(
    ro: ReadOnlyServers, store_dir: Path, unprivileged: bool
) -> None:
    """The app holds the store open in WAL mode: committed rows show on the next call, uncommitted ones never."""
    db = clean_store(store_dir)
    app = sqlite3.connect(db, isolation_level=None)
    try:
        insert(app, 1, "Committed before start")
        app.execute("BEGIN IMMEDIATE")
        insert(app, 2, "Pending")
        for extra in ("-wal", "-shm"):
            assert db.with_name(db.name + extra).exists()
        server = ro.start(db, unprivileged=unprivileged)
        assert titles(server) == ["Committed before start", "Second", "First"]
        app.execute("COMMIT")
        assert titles(server)[0] == "Pending"
        for n in range(3, 6):
            insert(app, n, f"Live {n}")
            assert titles(server)[0] == f"Live {n}"
            hits = server.result("search_transcripts", {"query": f"live {n}"})["hits"]
            assert hits[0]["title"] == f"Live {n}"  # the one with both terms ranks first
            assert [h["title"] for h in hits if len(h["matched_terms"]) == 2] == [f"Live {n}"]
            timed = server.result("search_transcripts", {"query": f"live {n}", "sort": "newest"})["hits"]
            assert [h["title"] for h in timed] == [f"Live {n}"]
    finally:
        app.close()


@pytest.mark.parametrize(
    "app_keeps_open", [pytest.param(True, id="app-stays-open"), pytest.param(False, id="app-closes")]
)
def test_an_app_that_starts_after_the_server_is_seen_on_the_next_call(
    ro: ReadOnlyServers, store_dir: Path, unprivileged: bool, app_keeps_open: bool
) -> None:
    """The server opened the clean store immutably; once the app writes (or writes and quits), it sees the rows."""
    db = clean_store(store_dir)
    server = ro.start(db, unprivileged=unprivileged)
    assert titles(server) == ["Second", "First"]
    app = sqlite3.connect(db, isolation_level=None)
    try:
        insert(app, 1, "Written after start")
        if not app_keeps_open:
            app.close()
            assert sorted(p.name for p in store_dir.iterdir()) == ["magnotia.db"]  # checkpointed and cleaned up
        assert titles(server) == ["Written after start", "Second", "First"]
        assert [t["title"] for t in server.result("list_tasks")["tasks"]] == ["Task of Second", "Task of First"]
        if not app_keeps_open:
            app = sqlite3.connect(db, isolation_level=None)
        insert(app, 2, "Second session")
        assert titles(server)[0] == "Second session"
    finally:
        app.close()
    assert titles(server)[:2] == ["Second session", "Written after start"]


def test_an_unprivileged_reader_in_a_directory_it_cannot_write_serves_the_store(
    ro: ReadOnlyServers, shared_dir: Path
) -> None:
    """uid 65534, no mount, a root-owned 0755 directory (SQLITE_READONLY_DIRECTORY for mode=ro): it still works."""
    db = clean_store(shared_dir)
    server = ro.start(db, unprivileged=True, read_only=False)
    assert titles(server) == ["Second", "First"]
    assert server.result("search_transcripts", {"query": "budget"})["hits"]
    assert sorted(p.name for p in shared_dir.iterdir()) == ["magnotia.db"]


def test_a_missing_store_on_a_read_only_mount_is_a_clear_error(ro: ReadOnlyServers, tmp_path: Path) -> None:
    """Nothing at the path on a read-only mount: -32603 naming the path, and the server keeps serving."""
    directory = tmp_path / "nothing"
    directory.mkdir()
    server = ro.start(directory / "magnotia.db")
    response = server.call("list_transcripts")
    assert response["error"]["code"] == -32603
    assert str(directory / "magnotia.db") in response["error"]["message"]
    assert server.request("ping")["result"] == {}


@pytest.mark.parametrize(
    "closed", [pytest.param("directory", id="directory-0700"), pytest.param("file", id="file-0600")]
)
def test_a_store_this_user_may_not_read_is_a_clear_error_not_a_crash(
    ro: ReadOnlyServers, shared_dir: Path, closed: str
) -> None:
    """uid 65534 and a store it may not read: initialize is answered, calls get -32603 saying what to check."""
    if closed == "directory":
        private = shared_dir / "private"
        private.mkdir()
        db = clean_store(private)
        private.chmod(0o700)
    else:
        db = clean_store(shared_dir)
        db.chmod(0o600)
    server = ro.start(db, unprivileged=True, read_only=False)
    for tool, arguments in (("list_transcripts", {}), ("search_transcripts", {"query": "budget"})):
        response = server.call(tool, arguments)
        assert response["error"]["code"] == -32603, response
        assert str(db) in response["error"]["message"]
        assert "may read" in response["error"]["message"]
    assert server.request("ping")["result"] == {}
