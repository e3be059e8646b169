"""The semantic index's files against a neighbour: a shared cache folder, planted files and links (issue 45, 1 and 2).

Where the cache folder ($MAGNOTIA_MCP_CACHE_DIR) is one another user may write, or holds a folder or file of
another user's, `magnotia-mcp index` refuses with one line that says the fix (as ssh does with StrictModes), the
server searches by words and says why, and doctor says the same; nothing is written there. What the project creates
is private (folders 0700, files 0600) under any umask, and no file it creates anew follows a planted link.
Real processes (the command, doctor, the server over stdio) on real files, in a throwaway HOME; root-only tests give
files to another user (uid 65534) as the neighbour would own them. POSIX only: Windows has neither owners nor modes.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import static_model

from magnotia_mcp.search.semantic import indexfile, nearest, refresh
from magnotia_mcp.store.opening import stamp as store_stamp
from tests.semantic import stores
from tests.support.checked import checked_result
from tests.support.links import chain_through_open_folder
from tests.support.server import Launcher, ServerProcess

MODEL = Path(static_model.__file__).parent / "model"
NEIGHBOUR = 65534
ROOT_ONLY = pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0, reason="giving a file to another user needs root"
)
pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="owners and modes are POSIX")


@pytest.fixture(autouse=True)
def _local(launcher: Launcher) -> None:
    if not launcher.local or launcher.kind in ("frozen", "container"):
        pytest.skip("the index command and its cache folder are this machine's, with the semantic extra")


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return stores.write(tmp_path / "app" / "magnotia.db")


def run(*args: str, cache: Path, umask: int | None = None) -> subprocess.CompletedProcess[str]:
    """`magnotia-mcp ARGS...` with the cache folder set to cache, under umask when given."""
    return subprocess.run(
        [sys.executable, "-m", "magnotia_mcp", *args],
        env={**os.environ, indexfile.CACHE_ENV: str(cache)},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=120,
        check=False,
        preexec_fn=None if umask is None else lambda: os.umask(umask),
    )


def index(db: Path, cache: Path, umask: int | None = None) -> subprocess.CompletedProcess[str]:
    return run("index", "--db", str(db), "--model", str(MODEL), cache=cache, umask=umask)


def refusal(done: subprocess.CompletedProcess[str], *needles: str) -> str:
    """The command's refusal: exit 1, nothing on stdout, one line on stderr holding every needle."""
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    return lines[0]


def doctor(db: Path, cache: Path) -> dict[str, Any]:
    done = run("doctor", "--db", str(db), "--json", cache=cache)
    return json.loads(done.stdout)["semantic_index"]  # type: ignore[no-any-return]


def docs(path: Path) -> int:
    conn = sqlite3.connect(path)
    try:
        return int(conn.execute("SELECT count(*) FROM docs").fetchone()[0])
    finally:
        conn.close()


def relevance_search(launcher: Launcher, db: Path, cache: Path) -> dict[str, Any]:
    server = ServerProcess(launcher.argv(db), env={indexfile.CACHE_ENV: str(cache)})
    try:
        server.initialize()
        return checked_result(server, "search_transcripts", {"query": "export bug"})
    finally:
        server.proc.kill()
        server.proc.wait()


def located(db: Path, cache: Path) -> Path:
    """Where the store's index goes with the cache folder set to cache."""
    saved = os.environ.get(indexfile.CACHE_ENV)
    os.environ[indexfile.CACHE_ENV] = str(cache)
    try:
        return indexfile.location(db)
    finally:
        if saved is None:
            del os.environ[indexfile.CACHE_ENV]
        else:
            os.environ[indexfile.CACHE_ENV] = saved


def built(db: Path, cache: Path) -> Path:
    """The store's index, built by the command into cache; its path."""
    done = index(db, cache)
    assert done.returncode == 0, done.stderr
    return located(db, cache)


# -- finding 1: whose folder, whose file ---------------------------------------------------------------------------


def test_a_cache_folder_others_may_write_is_refused_by_index_doctor_and_the_server(
    launcher: Launcher, db: Path, tmp_path: Path
) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    line = refusal(index(db, shared), str(shared), f"chmod go-w {shared}")
    assert "Traceback" not in line
    assert list(shared.iterdir()) == []  # nothing written there
    # An index built while the folder was private, then the folder opened to others: never read again.
    private = tmp_path / "private"
    built(db, private)
    private.chmod(0o777)
    state = doctor(db, private)
    assert state["state"] == "unusable"
    assert f"chmod go-w {private}" in state["why"]
    answer = relevance_search(launcher, db, private)
    assert answer["semantic"]["used"] is False
    assert f"chmod go-w {private}" in answer["semantic"]["why"]
    assert answer["hits"][0]["transcript_id"] == stores.EXPORT  # by words, as ever


def test_a_link_in_the_middle_of_a_chain_to_the_cache_folder_kept_in_an_open_folder_is_refused(
    launcher: Launcher, db: Path, tmp_path: Path
) -> None:
    """The cache folder is named by a link (in the user's own folder) to a link in an open folder, which leads back
    to the user's own folder: neither the folder named nor where it leads is open, but anyone may repoint the
    middle link (and so swap the index the server reads)."""
    own = tmp_path / "own"
    index_file = built(db, own)
    cache, shared = chain_through_open_folder(tmp_path, own, "cache")
    refusal(index(db, cache), f"the folder {shared} (mode 0777)", f"chmod go-w {shared}")
    state = doctor(db, cache)
    assert state["state"] == "unusable"
    assert f"chmod go-w {shared}" in state["why"]
    answer = relevance_search(launcher, db, cache)
    assert answer["semantic"]["used"] is False
    assert f"chmod go-w {shared}" in answer["semantic"]["why"]
    assert answer["hits"][0]["transcript_id"] == stores.EXPORT  # by words, as ever
    shared.chmod(0o755)
    assert index(db, cache).returncode == 0
    assert relevance_search(launcher, db, cache)["semantic"]["used"] is True
    assert index_file.is_file()


@ROOT_ONLY
def test_an_index_another_user_planted_in_a_shared_folder_is_never_filled(db: Path, tmp_path: Path) -> None:
    """/tmp-like (sticky, open to all): the neighbour made index/ first and put a valid, empty index there, 0666."""
    own = built(db, tmp_path / "own")
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    planted = located(db, shared)
    planted.parent.mkdir(mode=0o777)
    planted.parent.chmod(0o777)
    os.chown(planted.parent, NEIGHBOUR, NEIGHBOUR)
    shutil.copyfile(own, planted)
    conn = sqlite3.connect(planted)
    with conn:
        conn.execute("DELETE FROM docs")
        conn.execute("UPDATE meta SET value = '0' WHERE key = 'complete'")
    conn.close()
    planted.chmod(0o666)
    os.chown(planted, NEIGHBOUR, NEIGHBOUR)
    refusal(index(db, shared), str(planted.parent), f"another user (uid {NEIGHBOUR})", indexfile.CACHE_ENV)
    assert docs(planted) == 0  # the victim's transcripts never went into the neighbour's file
    assert os.stat(planted).st_uid == NEIGHBOUR
    # The same file, in a folder of the user's own: still the neighbour's, and refused (remove it, then index).
    mine = tmp_path / "mine"
    place = located(db, mine)
    place.parent.mkdir(parents=True, mode=0o700)
    shutil.copy2(planted, place)
    os.chown(place, NEIGHBOUR, NEIGHBOUR)
    refusal(index(db, mine), str(place), f"another user (uid {NEIGHBOUR})", f"rm {place}")
    assert docs(place) == 0


def test_a_link_in_place_of_the_mark_is_replaced_never_followed(db: Path, tmp_path: Path) -> None:
    """The .current mark only saves a comparison: a link there is not current, and the next run renames a file of
    its own over it (the link, not its target); the index, its companions and the folder are what is refused."""
    cache = tmp_path / "cache"
    path = Path(f"{built(db, cache)}.current")
    victim = tmp_path / "victim.txt"
    victim.write_text("the user's own notes\n", encoding="utf-8")
    victim.chmod(0o600)
    path.unlink()
    path.symlink_to(victim)
    index(db, cache)
    assert victim.read_text(encoding="utf-8") == "the user's own notes\n"
    assert not path.is_symlink()
    assert path.is_file()
    assert doctor(db, cache)["state"] == "ready"


@pytest.mark.parametrize("suffix", ["", "-wal", "-shm"])
def test_a_file_of_the_index_others_may_use_or_a_link_in_its_place_is_refused(
    db: Path, tmp_path: Path, suffix: str
) -> None:
    cache = tmp_path / "cache"
    path = Path(f"{built(db, cache)}{suffix}")
    victim = tmp_path / "victim.txt"
    victim.write_text("the user's own notes\n", encoding="utf-8")
    victim.chmod(0o600)
    if suffix == "":
        path.chmod(0o644)  # readable by all: what was said, as vectors
        fix = f"chmod 600 {path}"
    else:
        path.unlink(missing_ok=True)
        path.symlink_to(victim)
        fix = f"rm {path}"
    refusal(index(db, cache), str(path), fix)
    assert victim.read_text(encoding="utf-8") == "the user's own notes\n"
    state = doctor(db, cache)
    assert state["state"] == "unusable"
    assert fix in state["why"]


def test_folders_and_files_are_created_private_under_umask_000(db: Path, tmp_path: Path) -> None:
    cache = tmp_path / "home" / "cache" / "magnotia"
    done = index(db, cache, umask=0)
    assert done.returncode == 0, done.stderr
    created = [tmp_path / "home", tmp_path / "home" / "cache", cache, cache / "index"]
    assert {str(p): stat.S_IMODE(os.stat(p).st_mode) for p in created} == {str(p): 0o700 for p in created}
    path = located(db, cache)
    files = [p for p in (path, Path(f"{path}.current"), Path(f"{path}-wal"), Path(f"{path}-shm")) if p.exists()]
    assert files[:2] == [path, Path(f"{path}.current")]
    assert {str(p): stat.S_IMODE(os.stat(p).st_mode) for p in files} == {str(p): 0o600 for p in files}


# -- finding 2: the mark's temporary file --------------------------------------------------------------------------


@pytest.mark.skipif(not Path("/proc/sys/kernel/ns_last_pid").exists(), reason="needs Linux's last pid")
def test_links_planted_at_the_marks_temporary_names_receive_nothing(db: Path, tmp_path: Path) -> None:
    """The mark's temporary file was `<index>.current.<pid>`: links there for the next pids caught the run's."""
    cache = tmp_path / "cache"
    path = built(db, cache)
    victim = tmp_path / "victim.txt"
    victim.write_text("the user's own notes\n", encoding="utf-8")
    victim.chmod(0o600)
    last = int(Path("/proc/sys/kernel/ns_last_pid").read_text())
    top = int(Path("/proc/sys/kernel/pid_max").read_text())
    upcoming = [last + i for i in range(1, 3000) if last + i < top] + list(range(300, max(300, last + 3000 - top)))
    for pid in upcoming:
        Path(f"{path}.current.{pid}").symlink_to(victim)
    proc = subprocess.Popen(
        [sys.executable, "-m", "magnotia_mcp", "index", "--db", str(db), "--model", str(MODEL)],
        env={**os.environ, indexfile.CACHE_ENV: str(cache)},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert proc.pid in upcoming  # the run's own pid had a link waiting: the test tried what it means to
    assert victim.read_text(encoding="utf-8") == "the user's own notes\n"
    mark = Path(f"{path}.current")
    assert stat.S_ISREG(os.lstat(mark).st_mode)
    assert stat.S_IMODE(os.lstat(mark).st_mode) == 0o600
    assert set(json.loads(mark.read_text(encoding="utf-8"))) == {"store", "index"}


# -- round 2: a mark the user's runs did not write -----------------------------------------------------------------


@pytest.mark.parametrize("whose", [pytest.param("another user's", marks=ROOT_ONLY), "open to others"])
def test_a_mark_the_users_runs_did_not_write_is_never_believed(
    db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, whose: str
) -> None:
    """The .current mark says that the index was current with the store as it is now, so the first search checks
    nothing. One in its place that another user owns, or that others may write, is not the user's runs' word: the
    store moved (a new meeting) and the mark claims it did not; the first search checks anyway, embeds the meeting,
    and renames a mark of the user's own over it."""
    cache = tmp_path / "cache"
    path = built(db, cache)
    monkeypatch.setenv(indexfile.CACHE_ENV, str(cache))
    found = nearest.searcher(db, wait=60)
    stores.add_meeting(db)
    indexfile.mark_current(db, store_stamp(db), found.index.stamp)  # the claim: current with the store as it is
    mark = Path(f"{path}.current")
    assert indexfile.was_current(db, store_stamp(db), found.index.stamp)  # believed, as the user's own
    if whose == "another user's":
        os.chown(mark, NEIGHBOUR, NEIGHBOUR)
    else:
        mark.chmod(0o666)
    run = refresh.after_search(db, found)
    assert run is not None  # the store is checked, not taken at the mark's word
    run.join(120)
    assert not run.is_alive()
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("SELECT 1 FROM docs WHERE id = ?", (stores.NEW,)).fetchone() is not None
    finally:
        conn.close()
    st = os.lstat(mark)
    assert (st.st_uid, stat.S_IMODE(st.st_mode)) == (os.getuid(), 0o600)
