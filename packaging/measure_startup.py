#!/usr/bin/env python3
"""Time from spawning a server to its first response line to ``initialize``.

    python packaging/measure_startup.py -n 20 -- dist/magnotia-mcp --demo
    python packaging/measure_startup.py -n 20 --argv-json "$(python packaging/container.py run-args --dir D)"

Prints one JSON object: median, min and max in milliseconds over N runs
(after one untimed warm-up run). Used to choose one-file vs one-dir and
venv vs frozen images with figures; stdlib only.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time

INITIALIZE = (
    json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "0"},
            },
        }
    )
    + "\n"
).encode()


def one_run(argv: list[str], timeout: float) -> float:
    """Seconds from spawn to the first stdout line; fails unless it is a JSON-RPC answer."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert proc.stdin is not None
    assert proc.stdout is not None
    proc.stdin.write(INITIALIZE)
    proc.stdin.flush()
    line = proc.stdout.readline()
    elapsed = time.perf_counter() - start
    proc.stdin.close()
    proc.wait(timeout=timeout)
    if json.loads(line).get("id") != 1:
        raise SystemExit(f"measure_startup.py: unexpected first line {line[:200]!r}")
    return elapsed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("-n", "--runs", type=int, default=20, help="timed runs (default: %(default)s)")
    parser.add_argument("--argv-json", help="the command as a JSON list (instead of after --)")
    parser.add_argument("--label", default="", help="name to print with the figures")
    parser.add_argument("--timeout", type=float, default=60.0)
    parser.add_argument("command", nargs="*", help="the command, after --")
    args = parser.parse_args(argv)
    command: list[str] = json.loads(args.argv_json) if args.argv_json else args.command
    if not command:
        parser.error("give the command after -- or with --argv-json")
    one_run(command, args.timeout)  # warm the page cache; not counted
    times = sorted(one_run(command, args.timeout) * 1000 for _ in range(args.runs))
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
