"""The real server under ``serve --http`` on a free loopback port, found from its "listening on" line.

Everything under tests/http/ drives that process over real sockets. The HTTP transport is
checked here for the package and the console script; the frozen build and the image are not
(yet) run with --http, so those kinds skip.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.support.sample import Sample, build_sample
from tests.support.server import Launcher

TOKEN = "test-token-" + "x" * 24
READY = re.compile(r"listening on (http://\S+/mcp)")
READY_TIMEOUT = 30.0


class HttpServer:
    """One ``serve --http`` process: its URL, its stderr so far, and how to stop it."""

    def __init__(self, argv: list[str], env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env
        )
        self.stderr: list[str] = []
        found = threading.Event()
        self.url = ""

        def drain() -> None:
            assert self.proc.stderr is not None
            for raw in self.proc.stderr:
                line = raw.decode("utf-8", "replace")
                self.stderr.append(line)
                match = READY.search(line)
                if match and not self.url:
                    self.url = match.group(1)
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
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        return self.proc.wait()


def start(launcher: Launcher, db: Path, extra: list[str], env: dict[str, str] | None = None) -> HttpServer:
    if launcher.kind not in ("package", "script"):
        pytest.skip("serve --http is checked on the package and the console script only so far")
    base = dict(os.environ)
    base.pop("MAGNOTIA_MCP_TOKEN", None)
    base.update(env or {})
    return HttpServer(launcher.argv(db, ["serve", "--http", "127.0.0.1:0", *extra]), base)


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Sample:
    return build_sample(tmp_path_factory.mktemp("http") / "magnotia.db")


@pytest.fixture
def served(launcher: Launcher, sample: Sample) -> Iterator[HttpServer]:
    """The sample store over HTTP with TOKEN required; the store must be unchanged afterwards."""
    before = digest(sample.path)
    server = start(launcher, sample.path, [], {"MAGNOTIA_MCP_TOKEN": TOKEN})
    yield server
    server.stop()
    assert digest(sample.path) == before, "the store changed"


@pytest.fixture
def launch(launcher: Launcher, sample: Sample) -> Iterator[Callable[..., HttpServer]]:
    started: list[HttpServer] = []

    def make(extra: list[str], env: dict[str, str] | None = None) -> HttpServer:
        server = start(launcher, sample.path, extra, env)
        started.append(server)
        return server

    yield make
    for server in started:
        server.stop()


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()
