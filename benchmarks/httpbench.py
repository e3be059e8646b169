"""The HTTP transport (`serve --http`, issue 12) measured next to stdio, on one store in one run.

  per tool   the workload's calls (run.py's mix, cursor chains followed) and single
             `ping` round trips, each made on a stdio server and on an HTTP server
             over one keep-alive connection, one after the other (the order swapped
             every call), so noise hits both alike; both answers must agree
  pings/s    the HTTP server's throughput: `ping` POSTs over --http-connections
             keep-alive connections, one request in flight on each, from a separate
             client process (asyncio, raw HTTP/1.1); the server's and the client's CPU
             time during the burst say which side was the bottleneck
  peak RSS   VmHWM of a fresh HTTP server with 50 keep-alive connections open, each
             having made a tools/call (the 50 sent at once) and answering a ping after
             (still open); the same again on the long-lived server after all the above
  spawn      spawn -> the "listening on http://.../mcp" line on stderr, and spawn ->
             the first answered `ping` (connecting every 2 ms meanwhile), fresh
             processes

The client side is a few lines of raw HTTP/1.1 over a blocking socket (TCP_NODELAY),
as the stdio client is raw JSON lines over pipes: no client library's time in a figure.
Requests speak protocol revision 2025-06-18 (MCP-Protocol-Version header), with the
bearer token the server is given in $MAGNOTIA_MCP_TOKEN. POSIX only (/proc, select()).

Run as a script, this module is the load client of the pings/s figure:
    python benchmarks/httpbench.py load --port PORT --connections 4 --requests 6000
(token in $MAGNOTIA_MCP_TOKEN); it prints one JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import os
import re
import secrets
import select
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from client import PROTOCOL_VERSION, TOOLS, Json, Server, ServerError, _descendants, tool_result
from workload import Scenario

TOKEN_ENV = "MAGNOTIA_MCP_TOKEN"
LISTENING = re.compile(rb"listening on http://(\S+?):(\d+)/mcp")
PING_TOOL = "ping"  # the row of single ping round trips in the per-tool table
CONNECTIONS_FOR_RSS = 50
CLK_TCK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


class HttpError(ServerError):
    """The HTTP server refused, closed the connection, or answered something unexpected."""


def http_argv(cmd: Sequence[str], db: Path, bind: str) -> list[str]:
    return [*cmd, "serve", "--http", bind, "--db", str(db)]


def free_port() -> int:
    """A port free right now on 127.0.0.1 (for the spawn timing, which connects before the line is printed)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def request_bytes(host: str, port: int, token: str, body: bytes) -> bytes:
    """One POST /mcp, every header a real client sends."""
    head = (
        f"POST /mcp HTTP/1.1\r\nHost: {host}:{port}\r\nAuthorization: Bearer {token}\r\n"
        "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
        f"MCP-Protocol-Version: {PROTOCOL_VERSION}\r\nContent-Length: {len(body)}\r\n\r\n"
    )
    return head.encode("ascii") + body


def json_body(rid: int, method: str, params: Json | None) -> bytes:
    msg: Json = {"jsonrpc": "2.0", "id": rid, "method": method}
    if params is not None:
        msg["params"] = params
    return json.dumps(msg, ensure_ascii=False, separators=(",", ":")).encode()


class HttpConn:
    """One keep-alive connection: raw HTTP/1.1 over a blocking socket."""

    def __init__(self, host: str, port: int, token: str, timeout: float) -> None:
        self.host, self.port, self.token = host, port, token
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = bytearray()
        self.next_id = 1

    def send(self, data: bytes) -> None:
        try:
            self.sock.sendall(data)
        except OSError as e:
            raise HttpError(f"sending: {e}") from e

    def _fill(self) -> None:
        try:
            chunk = self.sock.recv(1 << 20)
        except OSError as e:  # includes the timeout
            raise HttpError(f"reading: {e}") from e
        if not chunk:
            raise HttpError("the server closed the connection")
        self.buf += chunk

    def read_response(self) -> tuple[int, bytes]:
        """(status, body) of the next response; Content-Length or chunked framing."""
        while (end := self.buf.find(b"\r\n\r\n")) < 0:
            self._fill()
        head = bytes(self.buf[:end]).decode("latin-1").split("\r\n")
        del self.buf[: end + 4]
        parts = head[0].split(" ", 2)
        if len(parts) < 2 or not parts[0].startswith("HTTP/1.") or not parts[1].isdigit():
            raise HttpError(f"not an HTTP response: {head[0][:100]!r}")
        status = int(parts[1])
        headers = {k.strip().lower(): v.strip() for k, _, v in (h.partition(":") for h in head[1:])}
        if status in (204, 304) or status < 200:
            return status, b""
        if "content-length" in headers:
            n = int(headers["content-length"])
            while len(self.buf) < n:
                self._fill()
            body = bytes(self.buf[:n])
            del self.buf[:n]
            return status, body
        if headers.get("transfer-encoding", "").lower() == "chunked":
            return status, self._chunked()
        raise HttpError(f"no Content-Length nor chunked framing (status {status})")

    def _chunked(self) -> bytes:
        out = bytearray()
        while True:
            while (eol := self.buf.find(b"\r\n")) < 0:
                self._fill()
            size = int(bytes(self.buf[:eol]).split(b";")[0], 16)
            del self.buf[: eol + 2]
            while len(self.buf) < size + 2:
                self._fill()
            out += self.buf[:size]
            del self.buf[: size + 2]
            if size == 0:
                return bytes(out)

    def request(self, method: str, params: Json | None = None) -> tuple[int, Json]:
        """Send one request; return (round trip in ns, response): the interface of client.Server.request."""
        rid = self.next_id
        self.next_id += 1
        data = request_bytes(self.host, self.port, self.token, json_body(rid, method, params))
        t0 = time.perf_counter_ns()
        self.send(data)
        status, body = self.read_response()
        t1 = time.perf_counter_ns()
        if status != 200:
            raise HttpError(f"HTTP {status}: {body[:200]!r}")
        try:
            resp = json.loads(body)
        except ValueError as e:
            raise HttpError(f"not JSON: {body[:200]!r}") from e
        if not isinstance(resp, dict) or resp.get("id") != rid:
            raise HttpError(f"unexpected answer: {body[:200]!r}")
        return t1 - t0, resp

    def close(self) -> None:
        self.sock.close()


class HttpServer:
    """One `serve --http 127.0.0.1:0` process; ready once its listening line is read; stopped with SIGTERM."""

    def __init__(self, cmd: Sequence[str], db: Path, env: dict[str, str], timeout: float) -> None:
        self.timeout = timeout
        self.token = env.get(TOKEN_ENV) or secrets.token_urlsafe(32)
        self.proc = subprocess.Popen(
            http_argv(cmd, db, "127.0.0.1:0"),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env={**env, TOKEN_ENV: self.token},
        )
        self.tail: deque[bytes] = deque(maxlen=20)
        assert self.proc.stderr is not None
        fd = self.proc.stderr.fileno()
        deadline = time.monotonic() + timeout
        seen = b""
        # os.read, not readline: a buffered reader could hold the line while select() waits on the pipe.
        while (m := LISTENING.search(seen)) is None:
            if not select.select([fd], [], [], max(0.0, deadline - time.monotonic()))[0]:
                self.stop()
                raise HttpError(f"no listening line within {timeout:g}s: {seen[-600:]!r}")
            chunk = os.read(fd, 65536)
            if not chunk:
                self.stop()
                raise HttpError(f"exited before listening: {seen[-600:]!r}")
            seen += chunk
        self.tail.append(seen)
        self.host, self.port = m.group(1).decode().strip("[]"), int(m.group(2))
        # Drained from now on, so that the server never blocks on a full stderr pipe.
        self.drain = threading.Thread(target=self._drain, daemon=True)
        self.drain.start()

    def _drain(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.tail.append(line)

    def connect(self) -> HttpConn:
        return HttpConn(self.host, self.port, self.token, self.timeout)

    def stderr_tail(self) -> str:
        return b"".join(self.tail).decode(errors="replace")[-600:]

    def status_kib(self, field_name: str) -> int | None:
        """VmHWM or VmRSS of the server and its descendants, in KiB."""
        total, found = 0, False
        for pid in [self.proc.pid, *_descendants(self.proc.pid)]:
            try:
                text = Path(f"/proc/{pid}/status").read_text()
            except OSError:
                continue
            if m := re.search(rf"^{field_name}:\s+(\d+) kB", text, re.M):
                total += int(m.group(1))
                found = True
        return total if found else None

    def cpu_seconds(self) -> float:
        """utime + stime of the server process so far."""
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / CLK_TCK

    def stop(self) -> int | None:
        """SIGTERM and wait: the exit code (uvicorn re-raises the signal: -15 is a clean stop), None if killed."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            code: int | None = self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            code = None
        return code


# -- per tool, next to stdio ----------------------------------------------------------


@dataclass
class Paired:
    """Round trips of the same calls over stdio and HTTP, by tool."""

    stdio: dict[str, list[float]] = field(default_factory=dict)
    http: dict[str, list[float]] = field(default_factory=dict)
    diffs: dict[str, list[float]] = field(default_factory=dict)  # http - stdio, call by call
    mismatches: int = 0
    failures: list[str] = field(default_factory=list)


Transport = Server | HttpConn


def _pages(t: Transport, tool: str, args: Json, pages: int) -> list[tuple[float, Json | None, str | None]]:
    """One scenario on one transport: (ms, result, error) per page, following cursors."""
    out: list[tuple[float, Json | None, str | None]] = []
    a = dict(args)
    for _ in range(pages):
        ns, resp = t.request("tools/call", {"name": tool, "arguments": a})
        res, err = tool_result(resp)
        out.append((ns / 1e6, res, err))
        cursor = res.get("next_cursor") if res is not None else None
        if not isinstance(cursor, str):
            break
        a = {**args, "cursor": cursor}
    return out


def paired_calls(stdio: Server, conn: HttpConn, scenarios: Sequence[Scenario], pings: int, warm: int) -> Paired:
    """Each scenario (then `pings` pings) on both transports, the order swapped every time."""
    p = Paired()
    for sc in scenarios[:warm]:  # untimed: first calls pay for imports and a cold page cache
        _pages(stdio, sc.tool, sc.args, sc.pages)
        _pages(conn, sc.tool, sc.args, sc.pages)
    gc.collect()
    gc.disable()
    try:
        for i, sc in enumerate(scenarios):
            first, second = (stdio, conn) if i % 2 == 0 else (conn, stdio)
            runs = {id(first): _pages(first, sc.tool, sc.args, sc.pages)}
            runs[id(second)] = _pages(second, sc.tool, sc.args, sc.pages)
            s, h = runs[id(stdio)], runs[id(conn)]
            for (sm, sres, serr), (hm, hres, herr) in zip(s, h, strict=False):
                if serr or herr:
                    if len(p.failures) < 8:
                        p.failures.append(f"{sc.tool}: stdio {serr}, http {herr} <- {json.dumps(sc.args)[:120]}")
                    continue
                p.stdio.setdefault(sc.tool, []).append(sm)
                p.http.setdefault(sc.tool, []).append(hm)
                p.diffs.setdefault(sc.tool, []).append(hm - sm)
                if sres != hres:
                    p.mismatches += 1
            if len(s) != len(h):
                p.mismatches += 1
            if i % 50 == 49:
                gc.collect()
        for i in range(pings):
            first, second = (stdio, conn) if i % 2 == 0 else (conn, stdio)
            times = {id(first): first.request("ping")[0] / 1e6}
            times[id(second)] = second.request("ping")[0] / 1e6
            p.stdio.setdefault(PING_TOOL, []).append(times[id(stdio)])
            p.http.setdefault(PING_TOOL, []).append(times[id(conn)])
            p.diffs.setdefault(PING_TOOL, []).append(times[id(conn)] - times[id(stdio)])
    finally:
        gc.enable()
    return p


# -- pings/s: a separate client process -------------------------------------------------


def measure_throughput(server: HttpServer, connections: int, requests: int, timeout: float) -> Json:
    """One burst of `requests` pings (at most 10 s of them) over `connections` connections from a client
    process; CPU of both sides."""
    env = {**os.environ, TOKEN_ENV: server.token}
    argv = [
        sys.executable,
        str(Path(__file__).resolve()),
        "load",
        "--host",
        server.host,
        "--port",
        str(server.port),
        "--connections",
        str(connections),
        "--requests",
        str(requests),
    ]
    cpu0 = server.cpu_seconds()
    done = subprocess.run(argv, env=env, capture_output=True, timeout=timeout + 30, check=False)
    cpu1 = server.cpu_seconds()
    if done.returncode != 0:
        raise HttpError(f"load client failed ({done.returncode}): {done.stderr.decode(errors='replace')[-400:]}")
    out: Json = json.loads(done.stdout)
    out["server_cpu_s"] = round(cpu1 - cpu0, 3)
    out["per_s"] = out["ok"] / out["seconds"]
    out["server_cpu_share"] = (cpu1 - cpu0) / out["seconds"]
    out["client_cpu_share"] = out["client_cpu_s"] / out["seconds"]
    return out


async def _load(host: str, port: int, token: str, connections: int, requests: int, max_seconds: float) -> Json:
    per = [requests // connections + (1 if i < requests % connections else 0) for i in range(connections)]
    streams = [await asyncio.open_connection(host, port) for _ in range(connections)]
    for _, w in streams:
        sock = w.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    bad = done = 0
    stop_at = time.perf_counter() + max_seconds

    async def one(idx: int, n: int) -> None:
        nonlocal bad, done
        r, w = streams[idx]
        for i in range(n):
            if time.perf_counter() > stop_at:  # a slow server: the burst ends early, the rate stays honest
                return
            # A fixed-width id (seven digits), so each request is built by a format, no JSON encoder.
            w.write(request_bytes(host, port, token, b'{"jsonrpc":"2.0","id":%d,"method":"ping"}' % (1_000_000 + i)))
            head = await r.readuntil(b"\r\n\r\n")
            m = re.search(rb"(?i)\r\ncontent-length:\s*(\d+)", head)
            if m is None or not head.startswith(b"HTTP/1.1 200"):
                raise HttpError(f"unexpected answer head: {head[:200]!r}")
            body = await r.readexactly(int(m.group(1)))
            done += 1
            if b'"result"' not in body:
                bad += 1

    c0 = time.process_time()
    t0 = time.perf_counter()
    await asyncio.gather(*(one(i, n) for i, n in enumerate(per)))
    t1 = time.perf_counter()
    c1 = time.process_time()
    for _, w in streams:
        w.close()
    return {
        "connections": connections,
        "requests": done,
        "ok": done - bad,
        "bad": bad,
        "seconds": t1 - t0,
        "client_cpu_s": c1 - c0,
    }


# -- peak RSS with many connections ----------------------------------------------------------


def rss_with_connections(server: HttpServer, calls: Sequence[tuple[str, Json]], n: int) -> Json:
    """n connections, each sends a tools/call (all n sent before any answer is read); VmHWM; then a ping on each."""
    conns = [server.connect() for _ in range(n)]
    ok = 0
    try:
        for i, c in enumerate(conns):
            tool, args = calls[i % len(calls)]
            c.send(
                request_bytes(c.host, c.port, c.token, json_body(1, "tools/call", {"name": tool, "arguments": args}))
            )
        for c in conns:
            status, body = c.read_response()
            if status == 200 and tool_result(json.loads(body))[0] is not None:
                ok += 1
        hwm = server.status_kib("VmHWM")
        rss = server.status_kib("VmRSS")
        still_open = 0
        ping = json_body(2, "ping", None)
        for c in conns:  # each connection is still open: a ping on it is answered (all sent, then read)
            c.send(request_bytes(c.host, c.port, c.token, ping))
        for c in conns:
            with contextlib.suppress(HttpError):
                status, body = c.read_response()
                still_open += status == 200 and b'"result"' in body
        hwm2 = server.status_kib("VmHWM")
    finally:
        for c in conns:
            c.close()
    peak = max(x for x in (hwm, hwm2) if x is not None) if hwm or hwm2 else None
    return {
        "connections": n,
        "calls_ok": ok,
        "still_open": still_open,
        "peak_rss_mib": peak / 1024 if peak is not None else None,
        "rss_mib": rss / 1024 if rss is not None else None,
    }


# -- spawn to ready ---------------------------------------------------------------------------


def spawn_to_ready(cmd: Sequence[str], db: Path, env: dict[str, str], timeout: float) -> tuple[float, float]:
    """ms from spawn to the listening line, and to the first answered ping (a connection tried every 2 ms).

    A thread reads stderr and stamps the listening line as it comes, while this one polls
    the port (chosen free beforehand) with a fresh connection and a ping until one is answered.
    """
    token = secrets.token_urlsafe(32)
    port = free_port()
    ping = request_bytes("127.0.0.1", port, token, b'{"jsonrpc":"2.0","id":1,"method":"ping"}')
    err = bytearray()
    stamps: list[int] = []
    t0 = time.perf_counter_ns()
    proc = subprocess.Popen(
        http_argv(cmd, db, f"127.0.0.1:{port}"),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env={**env, TOKEN_ENV: token},
    )
    assert proc.stderr is not None
    stderr = proc.stderr

    def read_stderr() -> None:
        for line in stderr:
            if not stamps and LISTENING.search(line):
                stamps.append(time.perf_counter_ns())
            err.extend(line)

    reader = threading.Thread(target=read_stderr, daemon=True)
    reader.start()
    answered: int | None = None
    deadline = time.monotonic() + timeout
    try:
        while answered is None:
            if time.monotonic() > deadline:
                raise HttpError(f"not ready within {timeout:g}s: {bytes(err[-400:])!r}")
            if proc.poll() is not None:
                reader.join(1)
                raise HttpError(f"exited ({proc.returncode}): {bytes(err[-400:])!r}")
            try:
                conn = HttpConn("127.0.0.1", port, token, timeout)
            except OSError:
                time.sleep(0.002)
                continue
            try:
                conn.send(ping)
                status, body = conn.read_response()
                answered = time.perf_counter_ns()
                if status != 200 or b'"result"' not in body:
                    raise HttpError(f"first ping: HTTP {status} {body[:200]!r}")
            finally:
                conn.close()
        while not stamps and time.monotonic() < deadline and reader.is_alive():
            time.sleep(0.001)
        if not stamps:
            raise HttpError(f"answered, but no listening line: {bytes(err[-400:])!r}")
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        reader.join(5)
        stderr.close()
    return (stamps[0] - t0) / 1e6, (answered - t0) / 1e6


# -- the whole HTTP part ----------------------------------------------------------------------


def measure_http(
    cmd: list[str],
    db: Path,
    workload: Sequence[Scenario],
    env: dict[str, str],
    *,
    spawn_runs: int,
    pings: int,
    throughput_requests: int,
    throughput_bursts: int,
    connections: int,
    timeout: float,
    log: Callable[[str], None],
    quick: bool = False,
) -> Json:
    """Everything above for one server command on one store; figures as JSON (report.http_figures reads it)."""
    say = log
    out: Json = {"cmd": http_argv(cmd, db, "127.0.0.1:0"), "failures": []}
    say(f"  [http] spawn-to-ready x{spawn_runs}" + ("" if quick else " (+1 untimed)"))
    spawns: list[list[float]] = []
    try:
        if not quick:
            spawn_to_ready(cmd, db, env, timeout)
        for _ in range(spawn_runs):
            listening, ready = spawn_to_ready(cmd, db, env, timeout)
            spawns.append([listening, ready])
    except (HttpError, OSError) as e:
        out["failures"].append(f"spawn: {e}")
    out["spawn"] = spawns
    calls = [(sc.tool, sc.args) for sc in workload]
    if not quick:  # smoke: the 50 connections on the long-lived server only (below)
        say(f"  [http] a fresh server: peak RSS with {CONNECTIONS_FOR_RSS} keep-alive connections")
        try:
            fresh = HttpServer(cmd, db, env, timeout)
            try:
                out["rss_fresh"] = rss_with_connections(fresh, calls, CONNECTIONS_FOR_RSS)
            finally:
                fresh.stop()
        except (HttpError, OSError) as e:
            out["failures"].append(f"fresh server: {e}")
    stdio = Server([*cmd, "--db", str(db)], env, timeout)
    http: HttpServer | None = None
    try:
        stdio.initialize()
        http = HttpServer(cmd, db, env, timeout)
        conn = http.connect()
        n = len(workload)
        say(f"  [http] per tool: {n} scenarios and {pings} pings, each over stdio and over HTTP (keep-alive)")
        t0 = time.perf_counter()
        paired = paired_calls(stdio, conn, workload, pings, warm=max(4, n // 20))
        out["paired_seconds"] = round(time.perf_counter() - t0, 1)
        out["stdio"], out["http"], out["diffs"] = paired.stdio, paired.http, paired.diffs
        out["mismatches"] = paired.mismatches
        out["failures"] += paired.failures
        conn.close()
        out["stdio_peak_rss_mib"] = (stdio.peak_rss_kib() or 0) / 1024
        out["http_rss_after_workload_mib"] = (http.status_kib("VmHWM") or 0) / 1024
        say(f"  [http] pings/s: {throughput_bursts} x {throughput_requests} pings over {connections} connections")
        out["throughput"] = [
            measure_throughput(http, connections, throughput_requests, timeout) for _ in range(throughput_bursts)
        ]
        if throughput_bursts > 1:  # one connection: a round trip at a time, latency-bound (full runs only)
            out["throughput_1"] = measure_throughput(http, 1, max(200, throughput_requests // 4), timeout)
        say(f"  [http] peak RSS with {CONNECTIONS_FOR_RSS} keep-alive connections, after all the above")
        out["rss"] = rss_with_connections(http, calls, CONNECTIONS_FOR_RSS)
    except (ServerError, OSError, subprocess.TimeoutExpired) as e:
        out["failures"].append(f"server: {e}")
        if http is not None:
            out["failures"].append(f"http stderr: {http.stderr_tail()!r}")
    finally:
        stdio.close()
        if http is not None:
            code = http.stop()
            out["exit_code"] = code
            if code not in (0, -signal.SIGTERM):
                out["failures"].append(f"http exit code {code}: {http.stderr_tail()!r}")
    return out


def tools_measured() -> tuple[str, ...]:
    return (*TOOLS, PING_TOOL)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python benchmarks/httpbench.py", description=__doc__)
    sub = ap.add_subparsers(dest="what", required=True)
    load = sub.add_parser("load", help="the pings/s client: prints one JSON object")
    load.add_argument("--host", default="127.0.0.1")
    load.add_argument("--port", type=int, required=True)
    load.add_argument("--connections", type=int, default=4)
    load.add_argument("--requests", type=int, default=6000)
    load.add_argument("--max-seconds", type=float, default=10.0, help="stop sending after this long (default: 10)")
    args = ap.parse_args(argv)
    token = os.environ.get(TOKEN_ENV)
    if not token:
        ap.error(f"${TOKEN_ENV} must hold the server's token")
    result = asyncio.run(_load(args.host, args.port, token, args.connections, args.requests, args.max_seconds))
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
