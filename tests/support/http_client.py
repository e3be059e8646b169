"""The e2e checks over Streamable HTTP: a ``ServerProcess`` whose messages travel as POSTs to ``serve --http``.

``HttpSession`` is a ``ServerProcess`` (so every helper the tests use, and every annotation,
stays as it is) with only the transport underneath replaced: each message sent is one POST
to ``/mcp`` on one keep-alive connection (stdlib ``http.client``), carrying the headers a
client of the revision in use sends; what comes back (a JSON body, or each event of an SSE
stream) is queued as the "lines" ``ServerProcess`` reads. Reading, the order checks and the
validation of every message against its revision's official schema are therefore the same
code for both transports.

What differs legitimately, handled here rather than by the tests:

* what the server "wrote": ``raw_stdout`` holds each message received over HTTP, one per
  entry, so the checks that every byte shown is JSON (``check_clean_exit``) and that nothing
  of the trash shows (the tests slice ``raw_stdout``) read what an HTTP client received;
* the HTTP status must agree with the body: 202 and nothing for a notification, 200 for a
  result, 200 or 4xx for a JSON-RPC error, never 5xx or a body that is no JSON-RPC message;
* ending: ``close()`` ends the session the server opened on ``initialize`` (DELETE), then
  stops the server as a service manager does (SIGTERM, via the launcher's own ``stop``), where
  stdio closes stdin; the exit code must be one expected (0);
* stderr: the lines the launcher collects from the server's stderr.
"""

from __future__ import annotations

import base64
import http.client
import json
import queue
import socket
import subprocess
from typing import Any, Protocol
from urllib.parse import urlsplit

from tests.support.protocol import LEGACY, META_VERSION, MODERN
from tests.support.server import DEFAULT_TIMEOUT, ServerProcess
from tests.support.wire_schema import WireTracker

ACCEPT = "application/json, text/event-stream"
# The body param each method mirrors in the Mcp-Name header (2026-07-28).
NAME_BEARING = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}
# A hang guard, not a timing check: the slowest tool call is bounded by the server's --call-timeout (30 s).
HTTP_TIMEOUT = 3 * DEFAULT_TIMEOUT


class Served(Protocol):
    """A running ``serve --http`` as its launcher reports it (tests/http/conftest.py's ``HttpServer``)."""

    url: str
    proc: subprocess.Popen[bytes]

    @property
    def stderr(self) -> list[str]: ...

    def stop(self) -> int: ...


def name_header(value: str) -> str:
    """An Mcp-Name value: as is when plain printable ASCII, else the ``=?base64?…?=`` form."""
    if value.isascii() and value.isprintable() and value == value.strip() and not value.startswith("=?"):
        return value
    return "=?base64?" + base64.b64encode(value.encode("utf-8")).decode("ascii") + "?="


def sse_messages(body: bytes) -> list[bytes]:
    """The data of each ``message`` event of an SSE stream (data lines of one event joined by newlines)."""
    out: list[bytes] = []
    for event in body.replace(b"\r\n", b"\n").split(b"\n\n"):
        kind, data = b"message", []
        for line in event.split(b"\n"):
            field, _, value = line.partition(b":")
            value = value.removeprefix(b" ")
            if field == b"event":
                kind = value
            elif field == b"data":
                data.append(value)
        if data and kind == b"message":
            out.append(b"\n".join(data))
    return out


class HttpSession(ServerProcess):
    """One client of one ``serve --http`` process, with the interface of ``ServerProcess``."""

    # ServerProcess.__init__ starts a process on pipes; here the launcher has started one that listens,
    # so only the session state ServerProcess's methods use is set up.
    def __init__(self, served: Served, token: str | None, revision: str | None = None) -> None:
        self.served = served
        self.token = token
        url = urlsplit(served.url)
        self.netloc, self.path = url.netloc, url.path or "/"
        self.proc = served.proc
        self.argv = [str(a) for a in served.proc.args] if isinstance(served.proc.args, list) else []
        self.revision = revision
        self.lines: queue.Queue[bytes | None] = queue.Queue()
        self.wire = WireTracker()
        self.responses: dict[Any, dict[str, Any]] = {}
        self.notifications: list[dict[str, Any]] = []
        self._sent_partial = b""
        self.raw_stdout: list[bytes] = []
        self.stderr_chunks: list[bytes] = []
        self._next_id = 0
        self.expected_exit = {0}
        self.session_id: str | None = None  # Mcp-Session-Id, if the server issues one on initialize
        self._conn: http.client.HTTPConnection | None = None

    @property
    def stderr(self) -> str:
        return "".join(self.served.stderr)

    # -- sending: one POST per message --------------------------------------------------

    def send_raw(self, data: bytes) -> None:
        """Each complete line is one message, POSTed as one body (as stdio would submit it)."""
        self._sent_partial += data
        *lines, self._sent_partial = self._sent_partial.split(b"\n")
        for line in lines:
            self.post(line)

    def post(self, body: bytes) -> None:
        try:
            message: Any = json.loads(body)
        except (ValueError, RecursionError):
            message = None
        else:
            self.wire.client_sent(message)
        status, headers, payload = self._exchange(body, self.headers_for(message))
        if isinstance(message, dict) and message.get("method") == "initialize" and "mcp-session-id" in headers:
            self.session_id = headers["mcp-session-id"]
        kind = headers.get("content-type", "").split(";")[0].strip().lower()
        where = f"HTTP {status} ({kind or 'no content type'}) for {body[:200]!r}"
        expects_answer = isinstance(message, dict) and "id" in message and "method" in message
        if status == 202:
            assert not payload, f"{where}: 202 with a body {payload[:200]!r}"
            assert not expects_answer, f"{where}: a request was accepted without an answer"
            return
        if status == 204 and not payload:
            return  # a request cancelled meanwhile: no response, as over stdio
        assert status < 500, f"{where}: {payload[:500]!r}; stderr:\n{self.stderr}"
        if kind == "text/event-stream":
            messages = sse_messages(payload)
        elif kind == "application/json":
            messages = [payload]
        else:
            raise AssertionError(f"{where}: not an MCP answer: {payload[:500]!r}")
        for data in messages:
            reply = json.loads(data)
            if isinstance(reply, dict) and "result" in reply:
                assert status == 200, f"{where}: a result with status {status}"
            elif isinstance(reply, dict) and "error" in reply:
                assert status in (200, 400, 404), f"{where}: a JSON-RPC error with status {status}"
            line = data.replace(b"\n", b" ") + b"\n"  # one message per entry, as one stdout line
            self.raw_stdout.append(line)
            self.lines.put(line)

    def headers_for(self, message: Any) -> dict[str, str]:
        """What a client of the revision in use sends with this message."""
        headers = {"Content-Type": "application/json", "Accept": ACCEPT, **self._auth_headers()}
        if not isinstance(message, dict):
            return headers
        method = message.get("method")
        params = message.get("params")
        meta = params.get("_meta") if isinstance(params, dict) else None
        version = meta.get(META_VERSION) if isinstance(meta, dict) else None
        if version is None and method != "initialize":
            if self.revision in LEGACY:
                headers["MCP-Protocol-Version"] = str(self.revision)
                return headers
            if self.revision == MODERN and "id" in message:
                version = MODERN  # a request without _meta: the headers still say the revision
        if version is None:
            return headers
        # 2026-07-28: the revision, the method and the name it acts on, mirrored from the body.
        headers["MCP-Protocol-Version"] = str(version)
        if isinstance(method, str):
            headers["Mcp-Method"] = method
        key = NAME_BEARING.get(method) if isinstance(method, str) else None
        value = params.get(key) if key and isinstance(params, dict) else None
        if isinstance(value, str):
            headers["Mcp-Name"] = name_header(value)
        return headers

    def _auth_headers(self) -> dict[str, str]:
        headers = {}
        if self.token is not None:
            headers["Authorization"] = f"Bearer {self.token}"
        if self.session_id is not None:
            headers["Mcp-Session-Id"] = self.session_id
        return headers

    def _exchange(
        self, body: bytes | None, headers: dict[str, str], method: str = "POST"
    ) -> tuple[int, dict[str, str], bytes]:
        """Send on the kept-alive connection; once more on a new one if the server had closed it idle."""
        while True:
            fresh = self._conn is None
            try:
                if self._conn is None:
                    self._conn = self._connect()
                self._conn.request(method, self.path, body=body, headers=headers)
                response = self._conn.getresponse()
                payload = response.read()
            except ConnectionError as exc:
                self._drop()
                if fresh:
                    raise AssertionError(f"{method} {self.path} failed: {exc!r}; stderr:\n{self.stderr}") from exc
                continue  # an idle keep-alive connection the server closed: nothing was sent
            except TimeoutError as exc:
                self._drop()
                raise AssertionError(f"no answer within {HTTP_TIMEOUT}s; stderr:\n{self.stderr}") from exc
            except http.client.HTTPException:
                self._drop()  # a malformed answer: the next message starts on a new connection
                raise
            if response.will_close:
                self._drop()
            return response.status, {k.lower(): v for k, v in response.getheaders()}, payload

    def _connect(self) -> http.client.HTTPConnection:
        conn = http.client.HTTPConnection(self.netloc, timeout=HTTP_TIMEOUT)
        conn.connect()
        # http.client writes the headers and the body apart: without this, Nagle's algorithm holds the
        # body until the server's delayed ACK of the headers, ~40 ms a request (urllib3 sets it too).
        assert conn.sock is not None
        conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return conn

    def _drop(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    # -- ending ---------------------------------------------------------------------------

    def close(self, timeout: float = 10.0) -> int:  # noqa: ARG002 (the launcher's stop() has its own)
        """End the session (DELETE, if the server opened one) and stop the server as a service is stopped."""
        try:
            if self.session_id is not None and self.proc.poll() is None:
                headers = self._auth_headers()
                if self.revision in LEGACY:
                    headers["MCP-Protocol-Version"] = str(self.revision)
                status, _, body = self._exchange(None, headers, "DELETE")
                # 405: the spec lets a server refuse to end sessions on request; 404 would mean it lost ours.
                assert status in (200, 204, 405), f"DELETE of the session: HTTP {status} {body[:200]!r}"
        finally:
            self._drop()
            code = self.served.stop() if self.proc.poll() is None else self.proc.wait()
            self.lines.put(None)  # what a reader sees after the end, as stdout's EOF
        return code
