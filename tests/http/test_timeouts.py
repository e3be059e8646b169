"""Slow and silent clients are cut off (``--request-timeout``); a call in progress is not.

Proved by events, not clocks: the server closing a socket is seen as end-of-file, and "longer
than the deadline" is shown by a silent connection, opened later, having been closed first.
"""

from __future__ import annotations

import http.client
import json
import subprocess
from collections.abc import Callable

import pytest

from tests.http.conftest import SAFETY, TOKEN, HttpServer, closed_by_server, connect
from tests.http.test_security import JSON_AND_SSE, LIST_TASKS, post
from tests.support.sample import Sample
from tests.support.server import Launcher


def test_silent_slow_and_half_sent_requests_are_cut_off(launch: Callable[..., HttpServer]) -> None:
    server = launch(["--request-timeout", "1"], {"MAGNOTIA_MCP_TOKEN": TOKEN})
    silent = connect(server)
    trickle = connect(server)
    trickle.sendall(b"POST /mcp HTTP/1.1\r\nHost: " + server.host_port.encode() + b"\r\nContent-")
    half = connect(server)
    half.sendall(
        b"POST /mcp HTTP/1.1\r\nHost: "
        + server.host_port.encode()
        + f"\r\nAuthorization: Bearer {TOKEN}\r\nContent-Type: application/json\r\nAccept: {JSON_AND_SSE}\r\n"
        "Content-Length: 100\r\n\r\n{".encode()
    )
    assert post(server, LIST_TASKS)[0] == 200, "others are served meanwhile"
    assert closed_by_server(silent), "a connection that never sends is closed"
    assert closed_by_server(trickle), "headers that never end are closed"
    half.settimeout(SAFETY)
    answer = half.makefile("rb").read()
    assert answer.startswith(b"HTTP/1.1 408 "), answer[:80]
    assert b"came too slowly" in answer
    assert post(server, LIST_TASKS)[0] == 200
    for sock in (silent, trickle, half):
        sock.close()


def test_a_connection_that_keeps_its_deadline_is_served_on_each_request(launch: Callable[..., HttpServer]) -> None:
    server = launch(["--request-timeout", "1"], {"MAGNOTIA_MCP_TOKEN": TOKEN})
    conn = http.client.HTTPConnection(server.host_port, timeout=SAFETY)
    headers = {"Content-Type": "application/json", "Accept": JSON_AND_SSE, "Authorization": f"Bearer {TOKEN}"}
    for n in range(3):
        conn.request("POST", "/mcp", body=json.dumps({**LIST_TASKS, "id": n}).encode(), headers=headers)
        response = conn.getresponse()
        assert (response.status, json.loads(response.read())["id"]) == (200, n)
    conn.close()


def test_request_timeout_must_be_positive(launcher: Launcher, sample: Sample) -> None:
    if launcher.kind not in ("package", "script", "frozen"):
        pytest.skip("an argument error is the same code in every channel; the container adds nothing here")
    argv = launcher.argv(sample.path, ["serve", "--http", "127.0.0.1:0", "--request-timeout", "0"])
    done = subprocess.run(argv, capture_output=True, timeout=60, check=False)
    assert done.returncode == 2
    assert b"--request-timeout must be a positive number of seconds" in done.stderr
