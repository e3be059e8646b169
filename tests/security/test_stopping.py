"""SIGTERM stops the server promptly, whatever its calls wait for (issue 45, finding 11c): it waited about 40 s for
calls that waited for the semantic index to load.

A real server over pipes on a real index, run by a wrapper (PATIENT) that changes two things only: each search by
relevance waits for the index to load as long as the server lets it (an hour, instead of nearest.WAIT's seconds),
and the load's read of the model never returns, as on a network mount that stopped answering. (The test first made
the model file a FIFO nobody writes; the model folder's checks now refuse one at once, so the load ended and the
searches were answered, and the test passed on a race.) Proved by order: the load says it is stuck (a line on
stderr), the searches are in flight (a ping sent after them is answered) and more are queued behind them; SIGTERM
ends the process, exit 0, with none of them answered, long before any wait could end. The bounded waits are hang
guards only.
"""

from __future__ import annotations

import signal
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from magnotia_mcp.search.semantic import indexfile
from tests.security.test_semantic_index import MODEL, cli
from tests.semantic import stores
from tests.support.server import Launcher, ServerProcess

HOUR = 3600.0
STUCK = "test: the model's read is stuck"
PATIENT = f"""
import functools, runpy, sys, threading
from magnotia_mcp.search.semantic import nearest

nearest.searcher = functools.partial(nearest.searcher, wait={HOUR})  # each search waits up to an hour for the load

def stuck(meta):  # the load's first read, the model's: it never returns
    print({STUCK!r}, file=sys.stderr, flush=True)
    threading.Event().wait()

nearest._load_model = stuck
sys.argv = ['magnotia-mcp', *sys.argv[1:]]
runpy.run_module('magnotia_mcp', run_name='__main__')
"""
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


def said(server: ServerProcess, line: str) -> None:
    """Wait until the server has written line to stderr (a hang guard: 60 s)."""
    for _ in range(600):
        if line in server.stderr:
            return
        time.sleep(0.1)
    raise AssertionError(f"the server never said {line!r}; stderr:\n{server.stderr}")


@pytest.mark.skipif(not hasattr(signal, "SIGTERM") or sys.platform == "win32", reason="no SIGTERM here")
def test_sigterm_ends_the_server_while_searches_wait_for_the_index(tmp_path: Path) -> None:
    db = stores.write(tmp_path / "store" / "magnotia.db")
    done = cli("index", "--db", str(db), "--model", str(MODEL))
    assert done.returncode == 0, done.stderr
    server = ServerProcess([sys.executable, "-c", PATIENT, "--db", str(db)])
    try:
        server.initialize()
        calls = {server.send_request("tools/call", search(i)) for i in range(IN_FLIGHT)}
        said(server, STUCK)  # the first search started the load, and it is stuck
        assert server.request("ping")["result"] == {}  # handed over after them: all of them are in flight
        calls |= {server.send_request("tools/call", search(i)) for i in range(QUEUED)}
        assert not calls & server.answered_ids()  # all waiting
        server.proc.send_signal(signal.SIGTERM)
        assert server.wait(60) == 0, server.stderr  # the searches' waits end in an hour
        server.messages_until_eof()
        assert not calls & server.answered_ids(), server.answered_ids()
        assert "Traceback" not in server.stderr, server.stderr
        assert server.stderr.count(STUCK) == 1  # one load, shared by every search
    finally:
        server.kill()
