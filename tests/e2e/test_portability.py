"""What Windows hosts and odd locales send and expect, over real pipes, for every channel.

* CRLF: a client on Windows may end each JSON line with ``\\r\\n``; every line is answered,
  a bare ``\\r\\n`` is an empty line (ignored), and a ``\\r`` and its ``\\n`` may come in two writes.
* UTF-8 whatever the locale: under ``LANG=C``/``LC_ALL=C`` with ``PYTHONUTF8=0``,
  ``PYTHONCOERCECLOCALE=0`` and no ``PYTHONIOENCODING`` (Python's ASCII case), non-ASCII text
  in requests and in the store comes back as the same characters, written as raw UTF-8 bytes
  (not ``\\u`` escapes, never ``?`` or U+FFFD). The server reads and writes bytes on its fds, so the
  locale must not matter. (The container's environment is the image's; the bytes are checked the same.)
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from devkit.storefactory import StoreBuilder
from tests.support.server import Launcher, ServerProcess

ASCII_LOCALE = {"LANG": "C", "LC_ALL": "C", "LC_CTYPE": "C", "PYTHONUTF8": "0", "PYTHONCOERCECLOCALE": "0"}
TITLE = "Réunion d'été — Zürich ☕"
TEXT = "Le café coûte 3 €. Naïve façade, Ærøskøbing, Łódź, 東京で会議, Привет, 🎉 done."
INIT = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "crlf-client", "version": "0"}}


def line(message: dict[str, Any], end: bytes = b"\r\n") -> bytes:
    """One message as a client writes it: UTF-8 JSON (non-ASCII as is), then end."""
    return json.dumps(message, ensure_ascii=False).encode("utf-8") + end


def request(id: Any, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": id, "method": method}
    if params is not None:
        message["params"] = params
    return message


def store_with_text(new_store: Callable[..., StoreBuilder], launcher: Launcher) -> tuple[Path, str]:
    store = new_store()
    tid = store.transcript(title=TITLE, raw_text=TEXT, segments=[("Zoë", TEXT)])
    return store.close(), tid


def test_crlf_terminated_lines_are_answered(
    start_server: Callable[..., ServerProcess], new_store: Callable[..., StoreBuilder], launcher: Launcher
) -> None:
    db, tid = store_with_text(new_store, launcher)
    proc = start_server(db)
    proc.send_raw(line(request(1, "initialize", INIT)) + b"\r\n")  # and an empty CRLF line after it
    assert proc.read_response(1)["result"]["protocolVersion"] == "2025-06-18"
    proc.send_raw(line({"jsonrpc": "2.0", "method": "notifications/initialized"}) + line(request(2, "ping")))
    assert proc.read_response(2) == {"jsonrpc": "2.0", "id": 2, "result": {}}

    # The \r and its \n in separate writes (a pipe may cut anywhere).
    call = line(request(3, "tools/call", {"name": "get_transcript", "arguments": {"id": tid}}))
    proc.send_raw(call[:-1])
    proc.send_raw(call[-1:])
    result = proc.read_response(3)["result"]
    assert result.get("isError") is not True, result
    assert json.loads(result["content"][0]["text"])["text"] == TEXT

    # Several CRLF lines in one write, a tool call among them: each answered (a ping may overtake the call).
    search = request(5, "tools/call", {"name": "search_transcripts", "arguments": {"query": "coûte"}})
    proc.send_raw(line(request(4, "ping")) + line(search) + line(request(6, "ping")))
    assert proc.response(4)["result"] == {}
    hits = json.loads(proc.response(5)["result"]["content"][0]["text"])["hits"]
    assert [h["transcript_id"] for h in hits] == [tid]
    assert proc.response(6)["result"] == {}

    # A broken CRLF line is a parse error like any other; the next line is served.
    proc.send_raw(b'{"jsonrpc": "2.0", "id": 7,\r\n' + line(request(8, "ping")))
    assert proc.read_response(None)["error"]["code"] == -32700
    assert proc.read_response(8)["result"] == {}
    assert all(not raw.endswith(b"\r\n") for raw in proc.raw_stdout), "answers end with \\n alone"


def test_utf8_in_and_out_under_an_ascii_locale(
    start_server: Callable[..., ServerProcess],
    new_store: Callable[..., StoreBuilder],
    launcher: Launcher,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("PYTHONIOENCODING", raising=False)
    db, tid = store_with_text(new_store, launcher)
    proc = start_server(db, env=ASCII_LOCALE)
    proc.initialize()
    odd_id = "id-é€😀"

    # Non-ASCII in: the request id and the query, as raw UTF-8 bytes on stdin.
    search = {"name": "search_transcripts", "arguments": {"query": "café Zürich", "speaker": "Zoë"}}
    proc.send_raw(line(request(odd_id, "tools/call", search), b"\n"))
    answer = proc.read_response(odd_id)
    hit = json.loads(answer["result"]["content"][0]["text"])["hits"][0]
    assert (hit["transcript_id"], hit["title"]) == (tid, TITLE)

    proc.send_raw(line(request(2, "tools/call", {"name": "get_transcript", "arguments": {"id": tid}})))
    got = json.loads(proc.read_response(2)["result"]["content"][0]["text"])
    assert (got["title"], got["text"]) == (TITLE, TEXT)

    # An error that quotes what the client sent keeps its characters too.
    proc.send_raw(line(request(3, "tools/call", {"name": "get_transcript", "arguments": {"id": "nöpe-☃"}})))
    error = proc.read_response(3)
    error_text = json.dumps(error, ensure_ascii=False)
    assert "nöpe-☃" in error_text, error

    # Out, on the wire: the same characters as UTF-8 bytes, not escapes and not replacements.
    wire = b"".join(proc.raw_stdout)
    wire.decode("utf-8")  # strict: every byte sequence is valid UTF-8
    for text in (odd_id, TITLE, "Ærøskøbing, Łódź, 東京で会議, Привет, 🎉", "nöpe-☃"):
        assert json.dumps(text, ensure_ascii=False)[1:-1].encode("utf-8") in wire, text
    assert b"\\u00e9" not in wire
    assert "\ufffd".encode() not in wire
    assert b"Traceback" not in b"".join(proc.stderr_chunks)


@pytest.mark.parametrize("locale", ["default", "ascii"])
def test_a_store_in_a_folder_with_spaces_and_non_ascii_characters(
    locale: str,
    start_server: Callable[..., ServerProcess],
    new_store: Callable[..., StoreBuilder],
    launcher: Launcher,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A user's folder named "Café ☕ notes": served, and named as it is in messages."""
    if not launcher.local:
        pytest.skip("the container always sees its store at /data/magnotia.db")
    monkeypatch.delenv("PYTHONIOENCODING", raising=False)
    env = ASCII_LOCALE if locale == "ascii" else None
    store = new_store("Café ☕ notes")
    tid = store.transcript(title=TITLE, raw_text=TEXT)
    db = store.close()
    proc = start_server(db, env=env)
    proc.initialize()
    listed = proc.result("list_transcripts", {})["transcripts"]
    assert [(t["id"], t["title"]) for t in listed] == [(tid, TITLE)]

    absent = db.parent / "nowhere ünder" / "magnotia.db"
    missing = start_server(absent, env=env)
    missing.initialize()
    response = missing.call("list_transcripts", {})
    message = json.dumps(response, ensure_ascii=False)
    assert str(absent) in message, message
