"""What ``serve --http`` refuses, and that refusing never costs other clients: raw requests over real sockets.

No timing assertions: the idle client and the 50 concurrent ones only have to be answered.
"""

from __future__ import annotations

import http.client
import json
import os
import socket
import stat
import subprocess
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.test_concurrency import ENDLESS, ROWS, TEXT_CHARS, build_big_store, search
from tests.http.conftest import TOKEN, HttpServer, start
from tests.support.protocol import MODERN, modern_meta
from tests.support.sample import Sample
from tests.support.server import Launcher

JSON_AND_SSE = "application/json, text/event-stream"
LIST_TASKS = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "list_tasks", "arguments": {}}}


def post(
    server: HttpServer,
    message: Any,
    *,
    token: str | None = TOKEN,
    path: str = "/mcp",
    headers: dict[str, str] | None = None,
    method: str = "POST",
) -> tuple[int, dict[str, str], bytes]:
    body = message if isinstance(message, bytes) else json.dumps(message).encode()
    sent = {"Content-Type": "application/json", "Accept": JSON_AND_SSE}
    if token is not None:
        sent["Authorization"] = f"Bearer {token}"
    sent.update(headers or {})
    conn = http.client.HTTPConnection(server.host_port, timeout=60)
    try:
        conn.request(method, path, body=body if method == "POST" else None, headers=sent)
        response = conn.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        conn.close()


def test_a_tool_call_with_the_token_is_answered_as_json(served: HttpServer) -> None:
    status, headers, body = post(served, LIST_TASKS)
    assert status == 200
    assert headers["content-type"] == "application/json"
    reply = json.loads(body)
    assert reply["id"] == 1
    assert "tasks" in json.loads(reply["result"]["content"][0]["text"])  # 2025-03-26: no header
    assert "access-control-allow-origin" not in headers


def test_no_token_and_a_wrong_token_get_401_with_bearer_challenge(served: HttpServer) -> None:
    for token in (None, "wrong", TOKEN + "x", ""):
        status, headers, body = post(served, LIST_TASKS, token=token)
        assert status == 401, token
        assert headers["www-authenticate"].startswith("Bearer")
        assert b"tasks" not in body
    status, _, _ = post(served, LIST_TASKS, token=None, headers={"Authorization": f"Basic {TOKEN}"})
    assert status == 401
    assert not any(TOKEN in line for line in served.stderr), "the token reached the log"


def test_a_token_in_the_query_string_is_refused(served: HttpServer) -> None:
    for query in (f"access_token={TOKEN}", f"token={TOKEN}"):
        status, _, body = post(served, LIST_TASKS, token=TOKEN, path=f"/mcp?{query}")
        assert status == 400
        assert b"tasks" not in body
    assert not any(TOKEN in line for line in served.stderr)


def test_bad_origin_and_bad_host_get_403(served: HttpServer) -> None:
    port = served.host_port.rsplit(":", 1)[1]
    status, _, _ = post(served, LIST_TASKS, headers={"Origin": "https://evil.example"})
    assert status == 403
    status, _, _ = post(served, LIST_TASKS, headers={"Host": f"evil.example:{port}"})  # DNS rebinding
    assert status == 403
    for origin in (f"http://localhost:{port}", f"http://127.0.0.1:{port}"):
        assert post(served, LIST_TASKS, headers={"Origin": origin})[0] == 200
    assert post(served, LIST_TASKS, headers={"Host": f"localhost:{port}"})[0] == 200


def test_allow_origin_and_allow_host_widen_the_checks(launch: Callable[..., HttpServer]) -> None:
    server = launch(
        ["--allow-origin", "https://app.example", "--allow-host", "mcp.internal"], {"MAGNOTIA_MCP_TOKEN": TOKEN}
    )
    port = server.host_port.rsplit(":", 1)[1]
    assert post(server, LIST_TASKS, headers={"Origin": "https://app.example"})[0] == 200
    assert post(server, LIST_TASKS, headers={"Host": f"mcp.internal:{port}"})[0] == 200
    assert post(server, LIST_TASKS, headers={"Origin": "https://other.example"})[0] == 403


def test_http_level_refusals(served: HttpServer) -> None:
    assert post(served, LIST_TASKS, method="GET")[0] == 405
    assert post(served, LIST_TASKS, method="DELETE")[0] == 400  # no Mcp-Session-Id to end
    assert post(served, LIST_TASKS, headers={"Accept": "text/html"})[0] == 406
    assert post(served, LIST_TASKS, headers={"Content-Type": "text/plain"})[0] == 415
    assert post(served, LIST_TASKS, path="/other")[0] == 404
    status, _, body = post(served, b"{not json")
    assert status == 400
    assert json.loads(body)["error"]["code"] == -32700
    status, _, body = post(
        served, {"jsonrpc": "2.0", "id": 3, "method": "ping"}, headers={"MCP-Protocol-Version": "1999-01-01"}
    )
    assert status == 400


def test_an_oversized_body_gets_413(served: HttpServer) -> None:
    big = {"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"pad": "x" * (1 << 20)}}
    status, _, _ = post(served, big)
    assert status == 413
    assert post(served, LIST_TASKS)[0] == 200  # and the server goes on


def test_notifications_get_202_without_a_body(served: HttpServer) -> None:
    status, headers, body = post(served, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    assert (status, body) == (202, b"")
    assert "content-type" not in headers


def test_sse_when_the_client_accepts_only_event_streams(served: HttpServer) -> None:
    status, headers, body = post(
        served, {"jsonrpc": "2.0", "id": 7, "method": "ping"}, headers={"Accept": "text/event-stream"}
    )
    assert status == 200
    assert headers["content-type"] == "text/event-stream"
    events = [line.removeprefix(b"data: ") for line in body.splitlines() if line.startswith(b"data: ")]
    assert [json.loads(e)["id"] for e in events] == [7]


def test_2026_07_28_headers_must_match_the_body(served: HttpServer) -> None:
    call = {
        "jsonrpc": "2.0",
        "id": 5,
        "method": "tools/call",
        "params": {"name": "list_tasks", "arguments": {}, "_meta": modern_meta()},
    }
    good = {"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call", "Mcp-Name": "list_tasks"}
    status, _, body = post(served, call, headers=good)
    assert status == 200, body
    assert json.loads(body)["result"]["resultType"] == "complete"
    for wrong in ({"Mcp-Method": "tools/list"}, {"Mcp-Name": "get_transcript"}, {"MCP-Protocol-Version": "2025-11-25"}):
        status, _, body = post(served, call, headers={**good, **wrong})
        assert status == 400, wrong
        assert json.loads(body)["error"]["code"] == -32020
    unknown = {"jsonrpc": "2.0", "id": 6, "method": "no/such", "params": {"_meta": modern_meta()}}
    status, _, body = post(served, unknown, headers={"MCP-Protocol-Version": MODERN, "Mcp-Method": "no/such"})
    assert status == 404
    assert json.loads(body)["error"]["code"] == -32601


def test_fifty_concurrent_clients_are_each_answered(served: HttpServer) -> None:
    def one(n: int) -> tuple[int, Any]:
        status, _, body = post(served, {**LIST_TASKS, "id": n})
        return status, json.loads(body)["id"]

    with ThreadPoolExecutor(50) as pool:
        answers = list(pool.map(one, range(50)))
    assert answers == [(200, n) for n in range(50)]


def test_a_client_that_never_sends_does_not_block_others(served: HttpServer) -> None:
    host, port = served.host_port.rsplit(":", 1)
    silent = [socket.create_connection((host, int(port))) for _ in range(5)]
    half = socket.create_connection((host, int(port)))
    half.sendall(b"POST /mcp HTTP/1.1\r\nHost: " + served.host_port.encode() + b"\r\nContent-Length: 100\r\n\r\n{")
    try:
        assert post(served, LIST_TASKS)[0] == 200
    finally:
        for sock in [*silent, half]:
            sock.close()


def test_no_auth_is_refused_on_a_non_loopback_address(launcher: Launcher, sample: Sample) -> None:
    if launcher.kind == "container":
        pytest.skip("the container's loopback is not the host's: it always binds 0.0.0.0 (tests/http/conftest.py)")
    argv = launcher.argv(sample.path, ["serve", "--http", "0.0.0.0:0", "--no-auth"])
    done = subprocess.run(argv, capture_output=True, timeout=60, check=False)
    assert done.returncode == 2
    assert b"--no-auth is refused" in done.stderr


def test_no_auth_on_loopback_needs_no_token(launch: Callable[..., HttpServer]) -> None:
    server = launch(["--no-auth"])
    assert post(server, LIST_TASKS, token=None)[0] == 200
    assert post(server, LIST_TASKS, token=None, headers={"Origin": "https://evil.example"})[0] == 403


def test_a_token_is_generated_once_and_kept_with_mode_0600(launch: Callable[..., HttpServer], tmp_path: Path) -> None:
    env = {"XDG_CONFIG_HOME": str(tmp_path / "config")}
    first = launch([], env)
    saved = tmp_path / "config" / "com.magnotia.mcp" / "http-token"
    token = saved.read_text().strip()
    assert stat.S_IMODE(os.stat(saved).st_mode) == 0o600
    assert any(str(saved) in line for line in first.stderr), "the start does not say where the token is"
    assert not any(token in line for line in first.stderr), "the generated token reached the log"
    assert post(first, LIST_TASKS, token=token)[0] == 200
    first.stop()
    again = launch([], env)
    assert saved.read_text().strip() == token
    assert post(again, LIST_TASKS, token=token)[0] == 200


def test_token_file(launcher: Launcher, launch: Callable[..., HttpServer], tmp_path: Path) -> None:
    path = tmp_path / "token"
    from_file = "from-a-file-" + "z" * 32
    path.write_text(from_file + "\n")
    # Private to its owner here; in the container it is root's (the engine maps this user to root), and the
    # image's user reads it as it reads a Docker or Kubernetes secret.
    path.chmod(0o600 if launcher.local else 0o644)
    server = launch(["--token-file", str(path)])
    assert post(server, LIST_TASKS, token=from_file)[0] == 200
    assert post(server, LIST_TASKS, token=TOKEN)[0] == 401


@pytest.fixture(scope="module")
def big_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_big_store(tmp_path_factory.mktemp("big") / "magnotia.db", ROWS, TEXT_CHARS)


def test_progress_over_sse_and_cancellation_from_another_post(launcher: Launcher, big_store: Path) -> None:
    """A search asking for progress gets an SSE stream; notifications/cancelled in its own POST stops it unanswered.

    In the call's session: without one, nothing ties the notification to the call's client
    (tests/security/test_http_sessions.py).
    """
    server = start(launcher, big_store, [], {"MAGNOTIA_MCP_TOKEN": TOKEN})
    try:
        session = {"Mcp-Session-Id": open_session(server)}
        conn = http.client.HTTPConnection(server.host_port, timeout=60)
        headers = {"Content-Type": "application/json", "Accept": JSON_AND_SSE, "Authorization": f"Bearer {TOKEN}"}
        headers |= session
        call = {"jsonrpc": "2.0", "id": "long", "method": "tools/call", "params": search(ENDLESS, "tok")}
        conn.request("POST", "/mcp", body=json.dumps(call).encode(), headers=headers)
        response = conn.getresponse()
        assert response.status == 200
        assert response.getheader("content-type") == "text/event-stream"
        first = json.loads(_next_event(response))
        assert first["method"] == "notifications/progress"
        assert first["params"]["progressToken"] == "tok"
        cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "long"}}
        assert post(server, cancel, headers=session)[0] == 202
        rest = response.read()  # the stream ends: the cancelled call is never answered
        events = [json.loads(line[6:]) for line in rest.splitlines() if line.startswith(b"data: ")]
        assert all(e.get("method") == "notifications/progress" for e in events), events
        conn.close()
        assert post(server, LIST_TASKS)[0] == 200  # and its slot is free again
    finally:
        server.stop()


def open_session(server: HttpServer, revision: str = "2025-03-26") -> str:
    """The Mcp-Session-Id of a new session (initialize), for calls that a notification must be able to cancel."""
    params = {"protocolVersion": revision, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    status, headers, body = post(server, {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params})
    assert status == 200, body
    return headers["mcp-session-id"]


def _next_event(response: http.client.HTTPResponse) -> bytes:
    while True:
        line = response.readline()
        assert line, "the stream ended"
        if line.startswith(b"data: "):
            return line[6:]
