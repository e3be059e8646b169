"""A transparent stdio proxy that records an MCP conversation: ``python tap.py LOGDIR SERVER ARGV...``.

Real clients (the Python and TypeScript SDKs, the Inspector) spawn this instead
of the server. It starts the server, passes stdin and stdout through untouched,
line by line, and appends every line to ``LOGDIR/<pid>.jsonl`` as
``{"dir": "c2s" | "s2c", "line": "<the line>"}``, one file per server process
(a client may start more than one, e.g. a disposable discover probe). The
server's stderr goes straight to ours. When the client closes stdin, the
server's stdin is closed; SIGTERM is passed on; the proxy exits with the
server's exit code. Standard library only. (No ``--`` before the server command:
the Inspector CLI drops it from the command it is given.)
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import IO


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print("usage: tap.py LOGDIR SERVER ARGV...", file=sys.stderr)
        return 2
    log_dir = Path(argv[0])
    log_dir.mkdir(parents=True, exist_ok=True)
    child = subprocess.Popen(argv[1:], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=None)
    log = (log_dir / f"{child.pid}.jsonl").open("a", encoding="utf-8")
    lock = threading.Lock()

    def record(direction: str, line: bytes) -> None:
        text = line.decode("utf-8", "replace").rstrip("\r\n")
        if not text.strip():
            return
        with lock:
            log.write(json.dumps({"dir": direction, "line": text}) + "\n")
            log.flush()

    def pump(source: IO[bytes], sink: IO[bytes], direction: str) -> None:
        try:
            for line in iter(source.readline, b""):
                record(direction, line)
                sink.write(line)
                sink.flush()
        except (BrokenPipeError, ValueError, OSError):
            pass
        finally:
            with contextlib.suppress(OSError):
                sink.close()

    def forward(signum: int, _frame: object) -> None:
        if child.poll() is None:
            child.send_signal(signum)

    signal.signal(signal.SIGTERM, forward)
    signal.signal(signal.SIGINT, forward)
    assert child.stdin is not None
    assert child.stdout is not None
    stdin = os.fdopen(sys.stdin.fileno(), "rb", closefd=False)
    stdout = os.fdopen(sys.stdout.fileno(), "wb", closefd=False)
    threading.Thread(target=pump, args=(stdin, child.stdin, "c2s"), daemon=True).start()
    out = threading.Thread(target=pump, args=(child.stdout, stdout, "s2c"), daemon=True)
    out.start()
    code = child.wait()
    out.join(5)
    log.close()
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
