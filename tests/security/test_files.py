"""Paths a user (or whoever can write the store's folder) hands the server: nothing there may hang it (issue 18).

A FIFO opened for reading waits for a writer that never comes: at ``--db`` / ``$MAGNOTIA_DB``, or at the
store's ``-shm`` (which the server reads to see commits), such a file must be refused or ignored, not waited on.
Real servers over real pipes, real FIFOs; nothing ever opens a FIFO for writing, so a server that waits on one
never answers and the test fails on its client's timeout.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from devkit.storefactory import StoreBuilder
from tests.support.server import Launcher, ServerProcess

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")


@pytest.fixture(autouse=True)
def _local(launcher: Launcher) -> None:
    if not launcher.local:
        pytest.skip("a FIFO made here is not one inside the container")


def fifo_store(tmp_path: Path) -> Path:
    path = tmp_path / "store" / "magnotia.db"
    path.parent.mkdir()
    os.mkfifo(path)
    return path


def tool_error(proc: ServerProcess) -> str:
    """A tool call's answer on a store that cannot be read: the JSON-RPC error saying why (as for a missing one)."""
    response = proc.call("list_transcripts", {})
    assert "error" in response, response
    return str(response["error"]["message"])


def test_doctor_refuses_a_fifo_as_the_store(tmp_path: Path) -> None:
    path = fifo_store(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "magnotia_mcp", "--db", str(path), "doctor"],
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=60,
        check=False,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"{path} is not a regular file (a FIFO)" in done.stdout


@pytest.mark.parametrize("where", ["--db", "MAGNOTIA_DB"])
def test_a_tool_call_on_a_fifo_store_answers_with_an_error(launcher: Launcher, tmp_path: Path, where: str) -> None:
    path = fifo_store(tmp_path)
    if where == "--db":
        proc = ServerProcess(launcher.argv(path))
    else:
        proc = ServerProcess(launcher.argv(None), env={"MAGNOTIA_DB": str(path)})
    try:
        proc.initialize()
        assert f"{path} is not a regular file (a FIFO)" in tool_error(proc)
        # The server is still there for the next call, which looks again.
        assert f"{path} is not a regular file (a FIFO)" in tool_error(proc)
    finally:
        proc.proc.kill()
        proc.proc.wait()


def test_a_fifo_beside_the_store_as_its_shm_does_not_hang_the_server(launcher: Launcher, tmp_path: Path) -> None:
    """The -shm is read to see the app's commits: a FIFO planted there is not a WAL index, and is not waited on."""
    builder = StoreBuilder(tmp_path / "store" / "magnotia.db")
    builder.transcript(title="Kept", raw_text="hello")
    path = builder.close()
    os.mkfifo(str(path) + "-shm")
    proc = ServerProcess(launcher.argv(path))
    try:
        proc.initialize()
        response = proc.call("list_transcripts", {})
        assert "result" in response, response
    finally:
        proc.proc.kill()
        proc.proc.wait()
