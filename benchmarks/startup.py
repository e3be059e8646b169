#!/usr/bin/env python3
"""Time from spawning a server to its first response line to ``initialize``.

    python benchmarks/startup.py -n 20 -- dist/magnotia-mcp --demo
    python benchmarks/startup.py -n 20 --argv-json '["podman", "run", "-i", "--rm", "magnotia-mcp", "--demo"]'

--argv-json takes the command as a JSON list, such as the argv prefix that
`container.py run-args` prints. Prints one JSON object: median, min and max in
milliseconds over N runs (after one untimed warm-up run). Used to choose
one-file vs one-dir and venv vs frozen images with figures; the benchmark
driver (run.py) times its spawn figures with the same function. Stdlib only,
and not POSIX-bound.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from typing import IO

from client import INITIALIZE_PARAMS

INITIALIZE = (
    json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INITIALIZE_PARAMS}) + "\n"
).encode()


class StartupError(Exception):
    """The server could not be started, exited, answered something else or took too long."""


def spawn_to_initialize(argv: Sequence[str], *, env: Mapping[str, str] | None = None, timeout: float = 60.0) -> float:
    """Milliseconds from spawning argv to reading its first stdout line, which must answer initialize."""
    deadline = time.monotonic() + timeout
    procs: list[subprocess.Popen[bytes]] = []
    spawned, answered = threading.Event(), threading.Event()

    def watchdog() -> None:
        # Kills a server that does not answer in time, so the blocking readline below
        # returns; select() would do it without a thread, but not on Windows pipes.
        spawned.wait()
        if not answered.wait(max(0.0, deadline - time.monotonic())) and procs:
            procs[0].kill()

    with tempfile.TemporaryFile() as stderr:
        # Started before the clock: a thread start is not part of the server's start-up.
        threading.Thread(target=watchdog, daemon=True).start()
        try:
            t0 = time.perf_counter_ns()
            try:
                proc = subprocess.Popen(
                    list(argv), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr, env=env
                )
            except OSError as e:
                raise StartupError(f"cannot start {argv[0]!r}: {e}") from e
            procs.append(proc)
            spawned.set()
            assert proc.stdin is not None
            assert proc.stdout is not None
            with contextlib.suppress(BrokenPipeError):  # the server is gone: the empty read below says so
                proc.stdin.write(INITIALIZE)
                proc.stdin.flush()
            line = proc.stdout.readline()
            t1 = time.perf_counter_ns()
        finally:
            spawned.set()
            answered.set()
        code = _close(proc, timeout)
        if not line:
            if time.monotonic() >= deadline:
                raise StartupError(f"no answer within {timeout:g}s")
            raise StartupError(f"server closed its stdout (exit code {code}; stderr: {_tail(stderr)!r})")
    if not _answers_initialize(line):
        raise StartupError(f"unexpected first line {line[:200]!r}")
    return (t1 - t0) / 1e6


def _answers_initialize(line: bytes) -> bool:
    try:
        msg = json.loads(line)
    except ValueError:
        return False
    return isinstance(msg, dict) and msg.get("id") == 1 and "result" in msg


def _close(proc: subprocess.Popen[bytes], timeout: float) -> int | None:
    """Close stdin (the server's cue to exit) and wait; the exit code, or None if it had to be killed."""
    assert proc.stdin is not None
    assert proc.stdout is not None
    with contextlib.suppress(OSError):
        proc.stdin.close()
    try:
        code: int | None = proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        code = None
    proc.stdout.close()
    return code


def _tail(f: IO[bytes], n: int = 600) -> str:
    f.seek(0, 2)
    f.seek(max(0, f.tell() - n))
    return f.read().decode(errors="replace")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python benchmarks/startup.py", description=__doc__.split("\n\n")[0] if __doc__ else None
    )
    parser.add_argument("-n", "--runs", type=int, default=20, help="timed runs (default: %(default)s)")
    parser.add_argument("--argv-json", help="the command as a JSON list (instead of after --)")
    parser.add_argument("--label", default="", help="name to print with the figures")
    parser.add_argument("--timeout", type=float, default=60.0)
    parser.add_argument("command", nargs="*", help="the command, after --")
    args = parser.parse_args(argv)
    command: list[str] = json.loads(args.argv_json) if args.argv_json else args.command
    if not command:
        parser.error("give the command after -- or with --argv-json")
    try:
        spawn_to_initialize(command, timeout=args.timeout)  # warm the page cache; not counted
        times = sorted(spawn_to_initialize(command, timeout=args.timeout) for _ in range(args.runs))
    except StartupError as e:
        raise SystemExit(f"startup.py: {e}") from None
    result = {
        "label": args.label or " ".join(command[-3:]),
        "runs": args.runs,
        "median_ms": round(statistics.median(times), 1),
        "min_ms": round(times[0], 1),
        "max_ms": round(times[-1], 1),
    }
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
