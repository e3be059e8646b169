"""The real server under ``serve --http``, found from its "listening on" line, for every kind of server.

Everything under tests/http/ drives that process over real sockets. The package, the console
script and the frozen executable listen on a free loopback port. The container listens on
0.0.0.0 inside (a loopback bind there is unreachable from the host), published on
``127.0.0.1`` at the same port number it listens on, so the URL, Host and Origin the tests
send are those of a loopback server. A 0.0.0.0 bind skips the Host check unless told the
names it is reached by, so the container gets ``--allow-host`` and ``--allow-origin`` for
127.0.0.1 and localhost: what a user publishing on 127.0.0.1 gives it (docs/containers.md).
"""

from __future__ import annotations

import hashlib
import os
import re
import socket
import subprocess
import threading
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.support.sample import Sample, build_sample
from tests.support.server import Launcher

TOKEN = "test-token-" + "x" * 24
READY = re.compile(r"listening on (http://\S+/mcp)")
# The first start of a container (podman sets up its network) is slower than a process.
READY_TIMEOUT = 60.0
SAFETY = 60.0  # seconds: only so that a broken server fails a test instead of hanging it
# Where the container sees a --token-file: Compose's place for secrets.
CONTAINER_TOKEN_FILE = "/run/secrets/magnotia-mcp-token"


class HttpServer:
    """One ``serve --http`` process: its URL, its stderr so far, and how to stop it.

    reach: ``HOST:PORT`` clients use instead of the one announced (a container's published port).
    container: the engine and name of the container to remove if its client does not stop it.
    """

    def __init__(
        self,
        argv: list[str],
        env: dict[str, str],
        *,
        reach: str | None = None,
        container: tuple[str, str] | None = None,
    ) -> None:
        self.container = container
        self.proc = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
        )
        self.stderr: list[str] = []
        self.stdout = bytearray()  # must stay empty: over HTTP, as over stdio, stdout carries nothing else
        stdout = self.proc.stdout
        assert stdout is not None
        self.stdout_reader = threading.Thread(target=lambda: self.stdout.extend(stdout.read()), daemon=True)
        self.stdout_reader.start()
        found = threading.Event()
        self.url = ""

        def drain() -> None:
            assert self.proc.stderr is not None
            for raw in self.proc.stderr:
                line = raw.decode("utf-8", "replace")
                self.stderr.append(line)
                match = READY.search(line)
                if match and not self.url:
                    self.url = f"http://{reach}/mcp" if reach else match.group(1)
                    found.set()
            found.set()  # exited before listening

        threading.Thread(target=drain, daemon=True).start()
        if not found.wait(READY_TIMEOUT) or not self.url:
            self.stop()
            raise AssertionError("serve --http never said where it listens:\n" + "".join(self.stderr))

    @property
    def host_port(self) -> str:
        return self.url.removeprefix("http://").removesuffix("/mcp")

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.terminate()  # the engine's client passes SIGTERM on to the container
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        code = self.proc.wait()
        self.stdout_reader.join(30)
        if self.container is not None:
            engine, name = self.container
            subprocess.run([engine, "rm", "--force", name], capture_output=True, timeout=60, check=False)
        return code


def start(launcher: Launcher, db: Path, extra: list[str], env: dict[str, str] | None = None) -> HttpServer:
    base = dict(os.environ)
    base.pop("MAGNOTIA_MCP_TOKEN", None)
    base.update(env or {})
    if launcher.kind == "container":
        return start_container(db, extra, env or {}, base)
    return HttpServer(launcher.argv(db, ["serve", "--http", "127.0.0.1:0", *extra]), base)


def engine_and_image() -> tuple[str, str]:
    return os.environ.get("MAGNOTIA_MCP_ENGINE", "podman"), os.environ.get("MAGNOTIA_MCP_IMAGE", "magnotia-mcp:test")


def free_port() -> int:
    """A port free on 127.0.0.1 now, for the engine to publish (it may be taken again before; then the start fails)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start_container(db: Path, extra: list[str], env: dict[str, str], client_env: dict[str, str]) -> HttpServer:
    """The image as docs/containers.md runs it: read-only, its own user, the store ``:ro``, one published port."""
    if "--no-auth" in extra:
        pytest.skip("--no-auth is for a loopback bind, and the container's loopback is not reachable from the host")
    engine, image = engine_and_image()
    argv = [engine, "run", "--rm", "--read-only", "-v", f"{db.parent}:/data:ro"]
    if db.name != "magnotia.db":
        argv += ["-e", f"MAGNOTIA_DB=/data/{db.name}"]
    for variable, value in env.items():
        argv += ["-e", variable]  # the value comes from the client's environment, not its command line
        if variable == "XDG_CONFIG_HOME":
            # Where the server saves a token it generates: the image's user must create it there. Sticky,
            # like /tmp: a folder others may write is refused for a token unless only owners may swap files.
            folder = Path(value)
            folder.mkdir(parents=True, exist_ok=True)
            folder.chmod(0o1777)
            argv += ["-v", f"{folder}:{folder}"]
    extra = list(extra)
    if "--token-file" in extra:
        at = extra.index("--token-file") + 1
        argv += ["-v", f"{Path(extra[at]).resolve()}:{CONTAINER_TOKEN_FILE}:ro"]
        extra[at] = CONTAINER_TOKEN_FILE
    attempts = 3
    while True:
        port = free_port()
        name = f"magnotia-http-{uuid.uuid4().hex[:12]}"
        loopback = ["127.0.0.1", "localhost"]
        allow = [arg for host in loopback for arg in ("--allow-host", host, "--allow-origin", f"http://{host}:{port}")]
        published = ["--name", name, "-p", f"127.0.0.1:{port}:{port}"]
        command = [image, "serve", "--http", f"0.0.0.0:{port}", *allow, *extra]
        try:
            return HttpServer(
                [*argv, *published, *command], client_env, reach=f"127.0.0.1:{port}", container=(engine, name)
            )
        except AssertionError as error:
            # Another process took the port between free_port() and the engine binding it: another one.
            attempts -= 1
            if "address already in use" not in str(error) or not attempts:
                raise


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Sample:
    return build_sample(tmp_path_factory.mktemp("http") / "magnotia.db")


@pytest.fixture
def served(launcher: Launcher, sample: Sample) -> Iterator[HttpServer]:
    """The sample store over HTTP with TOKEN required; the store and its folder must be as they were afterwards."""
    before = footprint(sample.path)
    server = start(launcher, sample.path, [], {"MAGNOTIA_MCP_TOKEN": TOKEN})
    yield server
    assert server.stop() == 0, "".join(server.stderr)
    assert server.stdout == b"", "serve --http wrote on stdout"
    assert footprint(sample.path) == before, "the store or its folder changed"


@pytest.fixture
def launch(launcher: Launcher, sample: Sample) -> Iterator[Callable[..., HttpServer]]:
    started: list[HttpServer] = []

    def make(extra: list[str], env: dict[str, str] | None = None) -> HttpServer:
        server = start(launcher, sample.path, extra, env)
        started.append(server)
        return server

    before = footprint(sample.path)
    yield make
    for server in started:
        server.stop()
        assert server.stdout == b"", "serve --http wrote on stdout"
    assert footprint(sample.path) == before, "the store or its folder changed"


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def footprint(path: Path) -> tuple[str, list[str]]:
    """The store's bytes and the names in its folder (no -wal/-shm/-journal of the server's may stay)."""
    return digest(path), sorted(entry.name for entry in path.parent.iterdir())


def connect(server: HttpServer) -> socket.socket:
    """A raw TCP connection to the server (IPv6 addresses unbracketed)."""
    host, port = server.host_port.rsplit(":", 1)
    return socket.create_connection((host.strip("[]"), int(port)), timeout=SAFETY)


def closed_by_server(sock: socket.socket) -> bool:
    """Whether the server closes this connection (reading until end-of-file); what it sent is ignored."""
    sock.settimeout(SAFETY)
    try:
        while sock.recv(4096):
            pass
    except TimeoutError:
        return False
    except ConnectionResetError:
        return True
    return True
