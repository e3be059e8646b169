"""A local attacker's sockets against ``serve --http``: idle and half-sent connections, churn, log volume, Host forms.

Real sockets on loopback against the real server process. No timing assertions: every bound is
shown by order (what was opened first is closed first, a request sent after the flood is
answered) and by counts (lines written on stderr).
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import re
import select
import socket
from collections.abc import Callable, Iterator
from typing import BinaryIO

import pytest

from tests.http.conftest import SAFETY, TOKEN, HttpServer, closed_by_server, connect
from tests.http.test_security import JSON_AND_SSE, LIST_TASKS, post
from tests.support.sample import Sample
from tests.support.server import Launcher

IDLE = 300
# Long enough that no connection of a test is closed for being slow: the bounds shown here must
# hold without the first-byte deadline's help.
PATIENT = ["--request-timeout", "3600"]


@contextlib.contextmanager
def sockets() -> Iterator[list[socket.socket]]:
    opened: list[socket.socket] = []
    try:
        yield opened
    finally:
        for sock in opened:
            sock.close()


def raw_request(
    server: HttpServer, message: dict[str, object], request_id: int, *, expect_continue: bool = False
) -> bytes:
    """One authenticated POST of message (with request_id as its id), as bytes on the wire."""
    body = json.dumps({**message, "id": request_id}).encode()
    expect = "Expect: 100-continue\r\n" if expect_continue else ""
    head = (
        f"POST /mcp HTTP/1.1\r\nHost: {server.host_port}\r\nAuthorization: Bearer {TOKEN}\r\n{expect}"
        f"Content-Type: application/json\r\nAccept: {JSON_AND_SSE}\r\nContent-Length: {len(body)}\r\n\r\n"
    )
    return head.encode() + body


def read_head(reader: BinaryIO) -> tuple[int, int]:
    """A response's status and Content-Length (0 when absent), read up to the blank line."""
    status = int(reader.readline().split()[1])
    length = 0
    while (line := reader.readline()) not in (b"\r\n", b""):
        name, _, value = line.decode("latin-1").partition(":")
        if name.strip().lower() == "content-length":
            length = int(value)
    return status, length


def answers(sock: socket.socket, count: int) -> list[tuple[int, object]]:
    """Read count responses from one connection: (status, the JSON-RPC id); a 100 Continue is skipped."""
    sock.settimeout(SAFETY)
    reader = sock.makefile("rb")
    found: list[tuple[int, object]] = []
    while len(found) < count:
        status, length = read_head(reader)
        if status != 100:
            body = reader.read(length)
            found.append((status, json.loads(body).get("id") if body else None))
    return found


def _bindable(family: socket.AddressFamily, host: str) -> bool:
    try:
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            probe.bind((host, 0))
    except OSError:
        return False
    return True


# -- finding 2: idle connections ---------------------------------------------------------


def test_300_idle_connections_do_not_shut_out_an_authenticated_request(launch: Callable[..., HttpServer]) -> None:
    server = launch(PATIENT, {"MAGNOTIA_MCP_TOKEN": TOKEN})
    with sockets() as idle:
        idle.extend(connect(server) for _ in range(IDLE))
        # Sent after all 300 connected: the server accepts in order, so they are all open by then.
        status, _, body = post(server, LIST_TASKS)
        assert status == 200, body
        assert json.loads(body)["id"] == 1
        # Half-sent requests (headers never finished, or a body never sent) cost no more than silent ones.
        cut = 0
        for n in range(IDLE):
            sock = connect(server)
            idle.append(sock)
            cut = 30 if n % 2 else 200
            sock.sendall(raw_request(server, LIST_TASKS, n)[:cut])
        assert post(server, {**LIST_TASKS, "id": 2})[0] == 200
        last = idle[-1]  # a connection of the flood is still served once it sends the rest of its request
        last.sendall(raw_request(server, LIST_TASKS, IDLE - 1)[cut:])
        assert answers(last, 1) == [(200, IDLE - 1)]


def test_a_loop_reopening_idle_connections_never_shuts_out_authenticated_requests(
    launch: Callable[..., HttpServer],
) -> None:
    server = launch(PATIENT, {"MAGNOTIA_MCP_TOKEN": TOKEN})
    answered = []
    with sockets() as window:
        for n in range(1, 2001):
            window.append(connect(server))
            if len(window) > IDLE:
                window.pop(0).close()
            if n % 200 == 0:
                status, _, body = post(server, {**LIST_TASKS, "id": n})
                answered.append((status, json.loads(body).get("id") if status == 200 else body))
    assert answered == [(200, n) for n in range(200, 2001, 200)]


def test_past_the_connection_cap_the_oldest_waiting_connection_is_closed_first(
    launch: Callable[..., HttpServer],
) -> None:
    cap = 64
    server = launch([*PATIENT, "--max-connections", str(cap)], {"MAGNOTIA_MCP_TOKEN": TOKEN})
    with sockets() as flood:
        flood.extend(connect(server) for _ in range(3 * cap))
        assert post(server, LIST_TASKS)[0] == 200
        # The newest of the flood is still open and served; the oldest were closed to make room.
        newest = flood[-1]
        newest.sendall(raw_request(server, LIST_TASKS, 9))
        assert answers(newest, 1) == [(200, 9)]
        assert all(closed_by_server(sock) for sock in flood[:cap]), "the oldest waiting connections are closed"
    lines = [line for line in server.stderr if "connection" in line.lower() and "closed" in line.lower()]
    assert len(lines) <= 2, lines  # counted, not one line per connection


@pytest.mark.skipif(
    not all(_bindable(socket.AF_INET, a) for a in ("127.0.0.2", "127.0.0.3")),
    reason="needs 127.0.0.2 and 127.0.0.3 as source addresses (Linux has all of 127/8)",
)
def test_a_flooding_peer_loses_its_own_connections_first(launch: Callable[..., HttpServer]) -> None:
    """The connections to close are taken from the peer with the most waiting: another peer's older ones stay."""
    cap = 32
    server = launch([*PATIENT, "--max-connections", str(cap)], {"MAGNOTIA_MCP_TOKEN": TOKEN})
    host, port = server.host_port.rsplit(":", 1)
    with sockets() as opened:
        mine = [socket.create_connection((host, int(port)), SAFETY, ("127.0.0.3", 0)) for _ in range(8)]
        opened.extend(mine)
        flood = [socket.create_connection((host, int(port)), SAFETY, ("127.0.0.2", 0)) for _ in range(4 * cap)]
        opened.extend(flood)
        assert closed_by_server(flood[0]), "the flood's oldest connection is closed"
        for n, sock in enumerate(mine):  # older than the whole flood, yet still open and served
            sock.sendall(raw_request(server, LIST_TASKS, n))
            assert answers(sock, 1) == [(200, n)]


def test_a_full_server_of_requests_in_progress_turns_new_connections_away_until_one_ends(
    launch: Callable[..., HttpServer],
) -> None:
    """Connections whose request is in progress are never closed to make room: the newcomer is."""
    cap = 16
    server = launch([*PATIENT, "--max-connections", str(cap)], {"MAGNOTIA_MCP_TOKEN": TOKEN})
    with sockets() as busy:
        for n in range(cap):
            sock = connect(server)
            busy.append(sock)
            request = raw_request(server, LIST_TASKS, n, expect_continue=True)
            head, _, body = request.partition(b"\r\n\r\n")
            sock.sendall(head + b"\r\n\r\n")
            # "100 Continue" comes once the server reads the body: from then on the request is in progress.
            assert read_head(sock.makefile("rb"))[0] == 100
            sock.sendall(body[:-1])
        newcomer = connect(server)
        busy.append(newcomer)
        assert closed_by_server(newcomer), "no room: the new connection is closed, not one in progress"
        first = busy[0]
        first.sendall(b"}")
        assert answers(first, 1) == [(200, 0)]  # the requests in progress were kept
        first.close()
        assert post(server, LIST_TASKS)[0] == 200  # and the room it left is usable


# -- request limits ------------------------------------------------------------------------


def test_pipelined_requests_on_one_connection_are_answered_in_order(launch: Callable[..., HttpServer]) -> None:
    server = launch([], {"MAGNOTIA_MCP_TOKEN": TOKEN})
    with sockets() as opened:
        sock = connect(server)
        opened.append(sock)
        sock.sendall(b"".join(raw_request(server, LIST_TASKS, n) for n in range(50)))
        assert answers(sock, 50) == [(200, n) for n in range(50)]


def test_many_requests_on_one_keep_alive_connection(launch: Callable[..., HttpServer]) -> None:
    server = launch([], {"MAGNOTIA_MCP_TOKEN": TOKEN})
    conn = http.client.HTTPConnection(server.host_port, timeout=SAFETY)
    headers = {"Content-Type": "application/json", "Accept": JSON_AND_SSE, "Authorization": f"Bearer {TOKEN}"}
    seen = []
    for n in range(500):
        conn.request("POST", "/mcp", body=json.dumps({"jsonrpc": "2.0", "id": n, "method": "ping"}), headers=headers)
        response = conn.getresponse()
        seen.append((response.status, json.loads(response.read())["id"]))
    conn.close()
    assert seen == [(200, n) for n in range(500)]


@pytest.mark.skipif(not hasattr(select, "poll"), reason="needs poll() to see the connection reset")
def test_a_client_that_stops_reading_its_answers_is_cut_off(launch: Callable[..., HttpServer]) -> None:
    """Pipelined requests whose answers are never read: the server stops waiting for the reader.

    The answers (~8 KB each, ~75 MB in all) outgrow every buffer between server and client, so
    the server's writes stall, and with them its reading of the next requests. Without a
    deadline on writing, the connection (and, for a call, its slot) was held for as long as the
    client kept it open. With it, the server drops the connection: the client sees it reset
    (while still sending, or afterwards: poll() reports the error and the hang-up).
    """
    server = launch(["--request-timeout", "1"], {"MAGNOTIA_MCP_TOKEN": TOKEN})
    request = raw_request(server, {"jsonrpc": "2.0", "method": "tools/list"}, 1)
    reader = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    with contextlib.closing(reader):
        reader.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # before connecting: a small window
        host, port = server.host_port.rsplit(":", 1)
        reader.connect((host, int(port)))
        reader.settimeout(SAFETY)
        try:
            reader.sendall(request * 10_000)
        except ConnectionError:
            pass  # reset while sending: dropped
        else:
            watch = select.poll()
            watch.register(reader, 0)  # no POLLIN (unread answers are there): only an error or a hang-up
            events = watch.poll(SAFETY * 1000)
            assert events, "the server kept waiting for a client that does not read"
            assert events[0][1] & (select.POLLERR | select.POLLHUP)
    assert post(server, LIST_TASKS)[0] == 200


def test_an_oversized_head_and_an_oversized_chunked_body_are_refused(launch: Callable[..., HttpServer]) -> None:
    """A head over 64 KiB gets 400 and the connection closed; a chunked body (no length to check first) 413 at 1 MiB."""
    server = launch([], {"MAGNOTIA_MCP_TOKEN": TOKEN})
    with sockets() as opened:
        sock = connect(server)
        opened.append(sock)
        head = raw_request(server, LIST_TASKS, 1).split(b"\r\n\r\n")[0]
        pad = b"".join(b"X-Pad-%d: %s\r\n" % (n, b"x" * 1000) for n in range(70))  # 70 KB of headers
        sock.sendall(head + b"\r\n" + pad + b"\r\n")
        assert read_head(sock.makefile("rb"))[0] == 400
        assert closed_by_server(sock)
        chunked = connect(server)
        opened.append(chunked)
        head = (
            raw_request(server, LIST_TASKS, 2)
            .split(b"\r\n\r\n")[0]
            .replace(b"Content-Length: ", b"Transfer-Encoding: chunked\r\nX-Was-Length: ")
        )
        chunk = b"%x\r\n%s\r\n" % (64 * 1024, b" " * (64 * 1024))
        chunked.sendall(head + b"\r\n\r\n" + chunk * 17)  # 1 MiB + 64 KiB, never ended
        assert answers(chunked, 1) == [(413, None)]
    assert post(server, LIST_TASKS)[0] == 200


# -- log volume ------------------------------------------------------------------------------


def test_abuse_writes_a_bounded_number_of_log_lines(launch: Callable[..., HttpServer]) -> None:
    server = launch(PATIENT, {"MAGNOTIA_MCP_TOKEN": TOKEN})
    before = len(server.stderr)
    garbage = 300
    for _ in range(garbage):
        sock = connect(server)
        sock.sendall(b"NOT HTTP AT ALL\r\n\r\n")
        assert closed_by_server(sock)
        sock.close()
    for n in range(100):  # uvicorn warns twice about each upgrade it cannot do
        status, _, _ = post(server, {**LIST_TASKS, "id": n}, headers={"Connection": "Upgrade", "Upgrade": "websocket"})
        assert status == 200
    with sockets() as idle:
        idle.extend(connect(server) for _ in range(IDLE))
        for n in range(20):  # on a server that refuses these for the idle ones, each refusal was a line
            post(server, {**LIST_TASKS, "id": n})
    assert server.stop() == 0
    written = server.stderr[before:]
    assert len(written) <= 10, "".join(written)  # a few kinds, each once and then a count: not per attempt
    # The count is kept: the lines about the malformed requests add up to all of them.
    told = 0
    for line in written:
        if "invalid http" in line.lower():
            more = re.search(r"(\d+) more", line)
            told += int(more.group(1)) if more else 1
    assert told == garbage, "".join(written)


# -- finding 7: loopback aliases --------------------------------------------------------------


def _start_on(launcher: Launcher, sample_: Sample, bind: str) -> HttpServer:
    env = {k: v for k, v in os.environ.items() if k != "MAGNOTIA_MCP_TOKEN"}
    env["MAGNOTIA_MCP_TOKEN"] = TOKEN
    return HttpServer(launcher.argv(sample_.path, ["serve", "--http", bind]), env)


@pytest.mark.parametrize(
    ("bind", "family", "own", "others"),
    [
        ("127.0.0.2", socket.AF_INET, ["127.0.0.2"], ["127.0.0.3"]),
        ("[::1]", socket.AF_INET6, ["[::1]", "[0:0:0:0:0:0:0:1]", "[0000::0001]", "[::0:1]"], ["[::2]", "[::1%25lo]"]),
    ],
)
def test_a_loopback_alias_accepts_its_own_address_in_any_form(
    launcher: Launcher, sample: Sample, bind: str, family: socket.AddressFamily, own: list[str], others: list[str]
) -> None:
    if launcher.kind == "container":
        pytest.skip("the container's loopback is not the host's: it always binds 0.0.0.0")
    if not _bindable(family, bind.strip("[]")):
        pytest.skip(f"{bind} cannot be bound on this machine")
    server = _start_on(launcher, sample, f"{bind}:0")
    try:
        port = server.host_port.rsplit(":", 1)[1]
        for name in own:
            for host in (f"{name}:{port}", name, f"{name.upper()}:{port}"):
                status, _, body = post(server, LIST_TASKS, headers={"Host": host})
                assert status == 200, (host, body)
            origin = f"http://{name}:{port}"
            assert post(server, LIST_TASKS, headers={"Origin": origin})[0] == 200, origin
        for host in [*others, "evil.example"]:
            assert post(server, LIST_TASKS, headers={"Host": f"{host}:{port}"})[0] == 403, host
        assert post(server, LIST_TASKS, headers={"Host": f"{own[0]}:1"})[0] == 403, "another port"
        assert post(server, LIST_TASKS, headers={"Origin": f"http://{own[0]}:1"})[0] == 403
        assert post(server, LIST_TASKS, headers={"Host": f"localhost:{port}"})[0] == 200
    finally:
        assert server.stop() == 0
