"""An invalid argument is quoted, not echoed (issue 45, finding 11a): a 900 KB `since` gave a 900 KB error.

Real servers over stdio and HTTP on a real store: each error quotes the value's first characters and says how long
it is, whatever the argument (a time, a time word, a choice, an id), the method or the URI.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import spawn
from tests.support.sample import build_sample
from tests.support.server import Launcher, ServerProcess, check_clean_exit

LONG = 900_000  # characters: within a message's 1 MiB line
MOST = 2_000  # bytes an error may take: its words, and ~100 characters of the value


@pytest.fixture(params=["stdio", "http"])
def server(request: pytest.FixtureRequest, launcher: Launcher, tmp_path: Path) -> Iterator[ServerProcess]:
    proc = spawn(launcher, request.param, build_sample(tmp_path / "magnotia.db").path, [], None)
    proc.initialize()
    yield proc
    check_clean_exit(proc)


def said(response: dict[str, Any]) -> str:
    """What an answer says of the error: the JSON-RPC error, or a tool result marked isError."""
    if "error" in response:
        return json.dumps(response["error"])
    assert response["result"].get("isError") is True, str(response)[:MOST]
    return json.dumps(response["result"])


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("list_transcripts", {"since": "2026-05-0" + "9" * LONG}),  # not a time
        ("list_transcripts", {"since": "x" * LONG}),  # not a time word
        ("list_transcripts", {"until": "2026-05" + "0" * LONG}),  # a month of no calendar
        ("list_tasks", {"due_before": "next " + "z" * LONG}),
        ("search_transcripts", {"query": "plan", "sort": "s" * LONG}),  # not one of the choices
        ("get_transcript", {"id": "f" * LONG}),  # no such transcript
    ],
    ids=["time", "time-word", "month", "due-before", "choice", "id"],
)
def test_an_error_quotes_the_start_of_a_long_argument(server: ServerProcess, tool: str, arguments: Any) -> None:
    text = said(server.call(tool, arguments))
    assert len(text.encode()) < MOST, text[:MOST]
    value = next(v for k, v in arguments.items() if k != "query")
    assert f"({len(value)} characters)" in text, text[:MOST]


@pytest.mark.parametrize(
    ("method", "params"),
    [("tools/" + "x" * LONG, {}), ("resources/read", {"uri": "magnotia://transcript/" + "a" * LONG})],
    ids=["method", "uri"],
)
def test_a_protocol_error_quotes_the_start_of_a_long_name(server: ServerProcess, method: str, params: Any) -> None:
    response = server.request(method, params)
    text = json.dumps(response["error"])
    assert len(text.encode()) < MOST, text[:MOST]
    assert "characters)" in text, text
