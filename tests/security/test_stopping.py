"""SIGTERM stops the server promptly, whatever its calls wait for (issue 45, finding 11c): it waited about 40 s for
calls that waited for the semantic index to load.

A real server over pipes on a real index whose model file is a FIFO nobody writes: the index's load blocks for
good, and each search by relevance waits for it as long as the server lets it (here an hour: the wrapper below).
Proved by order: the searches are in flight (a ping sent after them is answered) and more are queued behind them;
SIGTERM ends the process, exit 0, with none of them answered, long before any wait could end. The bounded waits
are hang guards only.
"""

from __future__ import annotations

import os
import shutil
import signal
import sys
from pathlib import Path
from typing import Any

import pytest

from magnotia_mcp.search.semantic import indexfile
from tests.security.test_semantic_index import MODEL, cli
from tests.semantic import stores
from tests.support.server import Launcher, ServerProcess

HOUR = 3600.0
# The server, with each search waiting up to HOUR for the index to load (instead of nearest.WAIT's seconds).
PATIENT = (
    "import functools, runpy, sys; from magnotia_mcp.search.semantic import nearest; "
    f"nearest.searcher = functools.partial(nearest.searcher, wait={HOUR}); "
    "sys.argv = ['magnotia-mcp', *sys.argv[1:]]; runpy.run_module('magnotia_mcp', run_name='__main__')"
)
IN_FLIGHT = 8  # transport.limits.MAX_PENDING: the calls the server runs at once
QUEUED = 4  # behind them, read but not started


@pytest.fixture(autouse=True)
def _home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, launcher: Launcher) -> None:
    if launcher.kind not in ("package", "script"):
        pytest.skip("the one-file build and the image have no semantic extra")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv(indexfile.CACHE_ENV, str(tmp_path / "cache"))


def search(i: int) -> dict[str, Any]:
    return {"name": "search_transcripts", "arguments": {"query": f"new head of development {i}"}}


@pytest.mark.skipif(not hasattr(os, "mkfifo") or not hasattr(signal, "SIGTERM"), reason="no FIFOs or SIGTERM here")
def test_sigterm_ends_the_server_while_searches_wait_for_the_index(tmp_path: Path) -> None:
    db = stores.write(tmp_path / "store" / "magnotia.db")
    model = Path(shutil.copytree(MODEL, tmp_path / "model"))
    done = cli("index", "--db", str(db), "--model", str(model))
    assert done.returncode == 0, done.stderr
    (model / "model.safetensors").unlink()
    os.mkfifo(model / "model.safetensors")  # the load opens it to check the model, and blocks: nobody writes it
    server = ServerProcess([sys.executable, "-c", PATIENT, "--db", str(db)])
    try:
        server.initialize()
        calls = {server.send_request("tools/call", search(i)) for i in range(IN_FLIGHT)}
        assert server.request("ping")["result"] == {}  # handed over after them: all of them are in flight
        calls |= {server.send_request("tools/call", search(i)) for i in range(QUEUED)}
        server.proc.send_signal(signal.SIGTERM)
        assert server.wait(60) == 0, server.stderr  # the searches' waits end in an hour
        server.messages_until_eof()
        assert not calls & server.answered_ids(), server.answered_ids()
        assert "Traceback" not in server.stderr, server.stderr
    finally:
        server.kill()
