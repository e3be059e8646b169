"""The start-up rule: the answer to ``initialize`` goes out before asyncio, sqlite3 or aiosqlite load.

Those imports cost more than everything else before the first answer, and a
host waits for that answer. The proof is by order, not by time: the server runs
under ``python -X importtime``, which reports each import on stderr as it
happens, with stderr and the protocol stream on the same pipe, so the pipe holds
every import and the answer in the order they happened.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.server import Launcher

HEAVY = ("asyncio", "sqlite3", "_sqlite3", "aiosqlite")
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}},
}
CALL = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "list_tasks", "arguments": {}}}


@pytest.fixture
def traced(launcher: Launcher, tmp_path: Path) -> Iterator[subprocess.Popen[bytes]]:
    """The server under ``-X importtime``, stdout and stderr on one pipe."""
    if launcher.kind not in ("package", "script"):
        pytest.skip("-X importtime is a flag of the Python interpreter; the frozen build and the image run this code")
    argv = [launcher.python, "-X", "importtime", "-m", "magnotia_mcp", "--db", str(tmp_path / "magnotia.db")]
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    yield proc
    proc.kill()
    proc.wait()


def _send(proc: subprocess.Popen[bytes], message: dict[str, object]) -> None:
    assert proc.stdin is not None
    proc.stdin.write(json.dumps(message).encode() + b"\n")
    proc.stdin.flush()


def _imports_until_answer(proc: subprocess.Popen[bytes], request_id: int) -> list[str]:
    """The modules imported before the answer to request_id, in order."""
    assert proc.stdout is not None
    imported: list[str] = []
    for raw in proc.stdout:
        line = raw.decode("utf-8", "replace").rstrip("\n")
        if line.startswith("import time:"):
            name = line.rsplit("|", 1)[-1].strip()
            if name != "imported package":  # the table's header
                imported.append(name)
        elif line.startswith("{") and json.loads(line).get("id") == request_id:
            return imported
    raise AssertionError(f"the server ended without answering request {request_id}")


def test_initialize_is_answered_before_asyncio_sqlite3_or_aiosqlite_are_imported(
    traced: subprocess.Popen[bytes],
) -> None:
    _send(traced, INITIALIZE)
    before = _imports_until_answer(traced, 1)
    assert "magnotia_mcp.protocol.server" in before  # the trace does show what start-up imports
    assert not [m for m in before if m in HEAVY], before
    # The same trace catches them once a call needs the store: the check can fail.
    _send(traced, CALL)
    later = _imports_until_answer(traced, 2)
    assert {"asyncio", "sqlite3", "aiosqlite"} <= set(later), later


def test_serving_on_stdio_imports_nothing_of_http_doctor_or_install(traced: subprocess.Popen[bytes]) -> None:
    """The command line loads only what serving on stdin/stdout needs, before initialize and after a call."""
    _send(traced, INITIALIZE)
    imported = _imports_until_answer(traced, 1)
    _send(traced, CALL)
    imported += _imports_until_answer(traced, 2)
    assert "magnotia_mcp.cli.serve" in imported  # the trace shows the command line's modules
    # By name, wherever the package keeps them: magnotia_mcp.transport.http.app or any module under it.
    others = {"http", "bearer", "doctor", "install", "serve_http"}
    unneeded = [m for m in imported if m.startswith("magnotia_mcp.") and others & set(m.split("."))]
    unneeded += [m for m in imported if m.split(".")[0] in ("uvicorn", "h11")]
    assert not unneeded, imported


def test_serving_on_stdio_leaves_ssl_unloaded(traced: subprocess.Popen[bytes]) -> None:
    """asyncio would load ssl (and OpenSSL, about 5 MiB resident) though nothing on stdin/stdout uses it."""
    _send(traced, INITIALIZE)
    imported = _imports_until_answer(traced, 1)
    _send(traced, CALL)
    imported += _imports_until_answer(traced, 2)
    assert "asyncio" in imported  # the call did start the event loop
    # asyncio still tries "import ssl" (the trace lists each try); _ssl is OpenSSL actually loading.
    assert "_ssl" not in imported, imported


def test_serving_with_cursors_leaves_openssl_unloaded(traced: subprocess.Popen[bytes]) -> None:
    """A cursor's tag is blake2b, which hashlib would take from _blake2 after loading OpenSSL (_hashlib, a MiB)."""
    _send(traced, INITIALIZE)
    imported = _imports_until_answer(traced, 1)
    paged = {"name": "list_transcripts", "arguments": {"cursor": "e30.0000000000000000"}}
    _send(traced, {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": paged})
    imported += _imports_until_answer(traced, 2)
    assert "_blake2" in imported  # the cursor was checked
    assert "_hashlib" not in imported, imported
