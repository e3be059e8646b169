"""`index --download-model` against a planted link, a shared folder and a hostile mirror (issue 45, 3 and 10).

A real HTTP server on a loopback socket plays the hub (tests/semantic/test_download.py's Hub, and two of its own
here: one that trickles a byte at a time, one that redirects). Over the command the pin is the real model's, which
no server here satisfies: what is checked there is what reaches the disk and the network first, and what the user
is told. In-process, ``download.fetch`` gets a pin of the test model's files. POSIX only (links, modes, umask).
"""

from __future__ import annotations

import os
import shutil
import socket
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from magnotia_mcp.search.semantic import download, indexfile
from magnotia_mcp.search.semantic.model import StaticModel
from tests.semantic import stores
from tests.semantic.test_download import Hub, paths, pin_of
from tests.support.server import Launcher
from tests.support.unprivileged import why_no_read_only_mount

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="links, modes and umask are POSIX")
REAL = download.POTION_MULTILINGUAL
PRECIOUS = "the user's own notes\n"
DEADLINE_ENV = "MAGNOTIA_MCP_DOWNLOAD_DEADLINE"  # seconds a download may take in all (docs/search.md)


@pytest.fixture(autouse=True)
def _local(launcher: Launcher) -> None:
    if not launcher.local or launcher.kind in ("frozen", "container"):
        pytest.skip("the index command and its cache folder are this machine's, with the semantic extra")


@pytest.fixture
def pinned(model_dir: Path) -> download.Pinned:
    return pin_of(model_dir)


@pytest.fixture
def hub(pinned: download.Pinned, model_dir: Path) -> Iterator[Hub]:
    served = Hub(paths(pinned, model_dir))
    yield served
    served.close()


@pytest.fixture
def model_dir() -> Path:
    import static_model  # noqa: PLC0415 (a test dependency)

    return Path(static_model.__file__).parent / "model"


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    path = tmp_path / "victim" / "notes.txt"
    path.parent.mkdir(mode=0o700)
    path.write_text(PRECIOUS, encoding="utf-8")
    path.chmod(0o600)
    return path


def command(
    db: Path,
    cache: Path,
    mirror: str,
    *,
    umask: int | None = None,
    env: dict[str, str] | None = None,
    prefix: tuple[str, ...] = (),
    timeout: float = 120,
) -> subprocess.CompletedProcess[str]:
    """`index --download-model` from mirror, its cache folder set to cache; run by prefix (a wrapper) when given."""
    argv = [sys.executable, "-m", "magnotia_mcp", "index", "--db", str(db), "--download-model", "--model-mirror"]
    return subprocess.run(
        [*prefix, *argv, mirror],
        env={**os.environ, indexfile.CACHE_ENV: str(cache), **(env or {})},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=timeout,
        check=False,
        preexec_fn=None if umask is None else lambda: os.umask(umask),
    )


def one_line(done: subprocess.CompletedProcess[str], *needles: str) -> str:
    """The command's failure: exit 1, nothing on stdout, and its last stderr line (after progress) holds each needle."""
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stdout == ""
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("magnotia-mcp index: "), done.stderr
    for needle in needles:
        assert needle in last, (needle, last)
    return last


# -- finding 3: planted links, open folders -------------------------------------------------------------------------


@pytest.mark.parametrize("target", ["a file of the user's", "a name not yet taken"])
def test_a_link_planted_at_a_part_receives_nothing(
    pinned: download.Pinned, hub: Hub, model_dir: Path, tmp_path: Path, victim: Path, target: str
) -> None:
    folder = tmp_path / "model"
    folder.mkdir(mode=0o700)
    aimed = victim if target == "a file of the user's" else victim.with_name("new.txt")
    for file in pinned.files:
        (folder / f"{file.name}.part").symlink_to(aimed)
    download.fetch(pinned, folder, mirror=hub.url)
    for file in pinned.files:
        assert (folder / file.name).read_bytes() == (model_dir / file.name).read_bytes()
        assert not (folder / f"{file.name}.part").is_symlink()
    assert victim.read_text(encoding="utf-8") == PRECIOUS
    assert sorted(p.name for p in victim.parent.iterdir()) == ["notes.txt"]  # nothing created through a link


def test_a_part_is_created_private_under_umask_000(pinned: download.Pinned, hub: Hub, tmp_path: Path) -> None:
    weights = next(f for f in pinned.files if f.name == "model.safetensors")
    hub.cut[pinned.url("", weights)] = weights.size // 3
    folder = tmp_path / "model"
    before = os.umask(0)
    try:
        with pytest.raises(download.DownloadError, match="run the command again to go on"):
            download.fetch(pinned, folder, mirror=hub.url)
    finally:
        os.umask(before)
    part = folder / "model.safetensors.part"
    assert stat.S_IMODE(os.stat(part).st_mode) == 0o600
    came = [f.name for f in pinned.files[: [f.name for f in pinned.files].index("model.safetensors")]]
    assert came  # config.json came whole before the cut, renamed from its part
    for name in came:
        assert stat.S_IMODE(os.stat(folder / name).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(folder).st_mode) == 0o700


def test_the_commands_folders_are_created_private_under_umask_000(tmp_path: Path, model_dir: Path) -> None:
    db = stores.write(tmp_path / "app" / "magnotia.db")
    cache = tmp_path / "home" / "cache" / "magnotia"
    wrong = Hub(paths(REAL, model_dir))  # answers every file; the real pin refuses the bytes
    try:
        one_line(command(db, cache, wrong.url, umask=0), "is not the pinned file")
    finally:
        wrong.close()
    folder = download.folder_for(REAL, cache)
    created = [tmp_path / "home", tmp_path / "home" / "cache", cache, cache / "models", folder.parent, folder]
    assert {str(p): stat.S_IMODE(os.stat(p).st_mode) for p in created} == {str(p): 0o700 for p in created}


def test_a_cache_folder_others_may_write_gets_no_model(tmp_path: Path, model_dir: Path) -> None:
    db = stores.write(tmp_path / "app" / "magnotia.db")
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    wrong = Hub(paths(REAL, model_dir))
    try:
        one_line(command(db, shared, wrong.url), str(shared), f"chmod go-w {shared}")
        assert wrong.requests == []
    finally:
        wrong.close()
    assert list(shared.iterdir()) == []


def test_a_folder_at_a_parts_name_is_named_with_what_to_do(tmp_path: Path, model_dir: Path) -> None:
    """A folder where a part would be written cannot be resumed nor removed: the line says so and what to run, not
    "what came so far is kept" (nothing came), and asks the mirror nothing."""
    db = stores.write(tmp_path / "app" / "magnotia.db")
    cache = tmp_path / "cache"
    folder = download.folder_for(REAL, cache)
    first = REAL.files[0].name
    (folder / f"{first}.part" / "inside").mkdir(parents=True)
    hub = Hub(paths(REAL, model_dir))
    try:
        line = one_line(command(db, cache, hub.url), f"cannot write the download of {hub.url}", f"rm -r {folder}")
        assert "kept" not in line
        assert hub.requests == []
    finally:
        hub.close()
    assert (folder / f"{first}.part" / "inside").is_dir()  # nothing of the user's removed


# -- finding 10: a deadline, and no redirect to another scheme -------------------------------------------------------


class Trickle:
    """A mirror that answers every GET with a body of unknown length, sent one byte at a time, a pause between."""

    def __init__(self, count: int, pause: float) -> None:
        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                self.send_response(200)
                self.send_header("Connection", "close")  # no Content-Length: the body ends when the connection does
                self.end_headers()
                for _ in range(count):
                    try:
                        self.wfile.write(b"{")
                        self.wfile.flush()
                    except OSError:
                        return  # the client gave up
                    time.sleep(pause)
                self.close_connection = True

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_a_mirror_that_trickles_is_given_up_at_the_deadline(tmp_path: Path) -> None:
    """One byte every quarter second would end only when the mirror chose: the deadline ends it, the part kept."""
    db = stores.write(tmp_path / "app" / "magnotia.db")
    cache = tmp_path / "cache"
    slow = Trickle(count=80, pause=0.25)
    try:
        done = command(db, cache, slow.url, env={DEADLINE_ENV: "2"})
    finally:
        slow.close()
    line = one_line(done, "deadline", DEADLINE_ENV, "run the command again to go on")
    assert "is not the pinned file" not in line
    assert not indexfile.location(db).exists()


class Listener:
    """A TCP port that counts the connections made to it, and turns each away (an FTP server's 421)."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.port = self.sock.getsockname()[1]
        self.accepted = 0
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.accepted += 1
            with conn:
                conn.sendall(b"421 Service not available\r\n")

    def close(self) -> None:
        self.sock.close()


class Redirecting:
    """A mirror that sends every GET elsewhere with a 302."""

    def __init__(self, to: str) -> None:
        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                self.send_response(302)
                self.send_header("Location", to)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


WHY_NO_OWN_RESOLVER = why_no_read_only_mount()


@pytest.mark.skipif(WHY_NO_OWN_RESOLVER is not None, reason=WHY_NO_OWN_RESOLVER or "")
def test_a_resolver_that_never_answers_is_given_up_at_the_deadline(tmp_path: Path) -> None:
    """The mirror's host name is looked up through a name server that takes every query and answers none (a real
    resolver, /etc/resolv.conf bound over in a private mount namespace). No socket timeout bounds the lookup: it held
    a run for as long as the resolver's own retries (here 30 s x 5) past any deadline. Now the deadline ends it."""
    db = stores.write(tmp_path / "app" / "magnotia.db")
    silent = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    silent.bind(("127.53.53.53", 53))  # any 127/8 address is this machine's; port 53 is where glibc asks
    conf = tmp_path / "resolv.conf"
    conf.write_text("nameserver 127.53.53.53\noptions timeout:30 attempts:5\n", encoding="ascii")
    try:
        done = command(
            db,
            tmp_path / "cache",
            "https://mirror.magnotia.invalid",
            env={DEADLINE_ENV: "2"},
            prefix=("unshare", "-m", "sh", "-c", f'mount --bind {conf} /etc/resolv.conf && exec "$@"', "sh"),
            timeout=100,  # under the resolver's 150 s: without the fix this expires, and the test fails
        )
        silent.settimeout(0)
        assert silent.recv(512)  # the lookup reached the silent name server (no answer came from elsewhere)
    finally:
        silent.close()
    one_line(done, "mirror.magnotia.invalid", "deadline of 2 s", DEADLINE_ENV, "run the command again to go on")


def test_a_redirect_to_ftp_is_refused_before_any_connection(tmp_path: Path) -> None:
    db = stores.write(tmp_path / "app" / "magnotia.db")
    ftp = Listener()
    away = f"ftp://127.0.0.1:{ftp.port}/model.safetensors"
    mirror = Redirecting(away)
    try:
        done = command(db, tmp_path / "cache", mirror.url)
    finally:
        mirror.close()
        ftp.close()
    one_line(done, "redirect", away, "run the command again to go on")
    assert ftp.accepted == 0


def test_a_redirect_within_an_http_mirror_is_followed(
    pinned: download.Pinned, hub: Hub, model_dir: Path, tmp_path: Path
) -> None:
    """A mirror the user gave as http:// (this loopback one) may send a file to another of its paths."""
    moved = Redirecting(hub.url + "/" + pinned.repo + "/resolve/" + pinned.revision + "/config.json")
    config = next(f for f in pinned.files if f.name == "config.json")
    only = download.Pinned(pinned.repo, pinned.revision, (config,))
    try:
        download.fetch(only, tmp_path / "model", mirror=moved.url)
    finally:
        moved.close()
    assert (tmp_path / "model" / "config.json").read_bytes() == (model_dir / "config.json").read_bytes()


@pytest.mark.parametrize(
    ("start", "to", "followed"),
    [
        ("https://huggingface.co/a", "https://cdn-lfs.hf.co/b", True),
        ("https://huggingface.co/a", "http://cdn-lfs.hf.co/b", False),  # never down to plain http
        ("https://huggingface.co/a", "ftp://cdn-lfs.hf.co/b", False),
        ("https://huggingface.co/a", "file:///etc/passwd", False),
        ("http://127.0.0.1:8000/a", "http://127.0.0.1:8000/b", True),  # a mirror given as http:// stays so
        ("http://127.0.0.1:8000/a", "https://mirror.example/b", True),
        ("http://127.0.0.1:8000/a", "ftp://127.0.0.1/b", False),
    ],
)
def test_which_redirects_are_followed(start: str, to: str, followed: bool) -> None:
    assert download.redirect_allowed(start, to) is followed


# -- round 2: the files in place, a resumed part, the sizes a mirror states ----------------------------------------

NEIGHBOUR = 65534
ROOT_ONLY = pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0, reason="giving a file to another user needs root"
)


@pytest.mark.parametrize("how", [pytest.param("another user's", marks=ROOT_ONLY), "open to others"])
def test_a_file_in_place_that_others_may_change_is_fetched_again(
    pinned: download.Pinned, hub: Hub, model_dir: Path, tmp_path: Path, how: str
) -> None:
    """The pinned bytes, in a file another user owns or others may write: checked now, they may be changed later,
    and the model's loader refuses such a file. It was taken as fetched; now it is fetched again and renamed over."""
    folder = tmp_path / "model"
    folder.mkdir(mode=0o700)
    for file in pinned.files:
        shutil.copyfile(model_dir / file.name, folder / file.name)
        (folder / file.name).chmod(0o600)
    config = next(f for f in pinned.files if f.name == "config.json")
    if how == "another user's":
        os.chown(folder / config.name, NEIGHBOUR, NEIGHBOUR)
    else:
        (folder / config.name).chmod(0o666)
    download.fetch(pinned, folder, mirror=hub.url)
    assert hub.requests == [(pinned.url("", config), None)]  # that one only: the others are the user's, and match
    st = os.stat(folder / config.name)
    assert (st.st_uid, stat.S_IMODE(st.st_mode)) == (os.getuid(), 0o600)
    assert StaticModel.load(folder).dims == 64


def test_a_part_resumed_is_made_private_first(
    pinned: download.Pinned, hub: Hub, model_dir: Path, tmp_path: Path
) -> None:
    """A part of the user's left open to others (an older version's, under umask 000): resumed, and given 0600
    first. The file it becomes keeps its mode; it kept 0666, which the model's loader refuses."""
    folder = tmp_path / "model"
    folder.mkdir(mode=0o700)
    config = next(f for f in pinned.files if f.name == "config.json")
    part = folder / f"{config.name}.part"
    part.write_bytes((model_dir / config.name).read_bytes()[: config.size // 2])
    part.chmod(0o666)
    download.fetch(pinned, folder, mirror=hub.url)
    assert (pinned.url("", config), f"bytes={config.size // 2}-") in hub.requests  # resumed, not started again
    assert stat.S_IMODE(os.stat(folder / config.name).st_mode) == 0o600
    assert StaticModel.load(folder).dims == 64


class Stated:
    """A mirror that states the size given in Content-Length, sends two bytes and closes."""

    def __init__(self, size: str) -> None:
        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                self.send_response(200)
                self.send_header("Content-Length", size)
                self.send_header("Connection", "close")
                self.end_headers()
                self.wfile.write(b"{}")

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.mark.parametrize("size", ["\N{SUPERSCRIPT TWO}", "9" * 5000], ids=["a superscript two", "5,000 digits"])
def test_a_size_that_is_no_number_ends_the_run_in_one_line(tmp_path: Path, size: str) -> None:
    """str.isdigit() takes "²" and int() refuses it, as it refuses 5,000 digits: each was a traceback. Now such a
    size is no size: the bytes that come are counted, and too few of them are said in one line."""
    db = stores.write(tmp_path / "app" / "magnotia.db")
    mirror = Stated(size)
    try:
        done = command(db, tmp_path / "cache", mirror.url)
    finally:
        mirror.close()
    assert "Traceback" not in done.stderr, done.stderr
    one_line(done, "could not download", "2 of 271 bytes came", "run the command again to go on")


def test_no_folder_is_made_in_a_models_folder_others_may_write(tmp_path: Path, model_dir: Path) -> None:
    """The cache folder is the user's, its models/ open to all: refused in one line, with nothing fetched and no
    folder made in it (the model's folders were made first, then the way to them checked)."""
    db = stores.write(tmp_path / "app" / "magnotia.db")
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    models = cache / "models"
    models.mkdir()
    models.chmod(0o777)
    wrong = Hub(paths(REAL, model_dir))
    try:
        one_line(command(db, cache, wrong.url), f"the folder {models} (mode 0777)", f"chmod go-w {models}")
        assert wrong.requests == []
    finally:
        wrong.close()
    assert list(models.iterdir()) == []
