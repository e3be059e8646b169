#!/usr/bin/env python3
"""Measure the walk of one tool call through the package: which areas it moves between, and how often it climbs.

    python devtools/walk.py                          # search_transcripts on a generated store (full-text index)
    python devtools/walk.py --tool get_transcript
    python devtools/walk.py --scan -v                # without the index; -v lists every move

Run from the repository root, with the package's dependencies installed (the source in src/ is what is
measured, ahead of any installed copy). One real ``tools/call`` runs in-process on a small store made with
devkit/storefactory.py, answered by the server ``protocol.methods.new_server`` builds, under
``sys.setprofile`` (and ``threading.setprofile``: SQL functions run on the reader thread).

Definitions:

* area: the first name under ``magnotia_mcp`` (``protocol``, ``tools``, ``search``, ``store``, ``args``, ...);
  every top-level module (errors, budget, text, ...) is the one area ``top``.
* move: a distinct pair (calling function, called function), both in the package, in different areas. Each
  pair counts once however often it runs (row by row, or each time a coroutine resumes), so the figure is
  the shape of the code's path, not the size of the store. The calling function is the nearest package
  frame on the stack; a package function that SQLite calls back on the reader thread (no package frame
  below it there) is called by ``store``, the area that runs the SQL.
* layers, from the client down: protocol > tools > search > store. ``args`` and ``top`` are helpers beside
  the layers: calling into a helper is never a climb.
* climb: a move whose called area is higher than its calling area (store -> search, search -> tools, ...)
  or whose caller is a helper calling into a layer: the call goes back up the stack of concerns, e.g. the
  store calling the query language for each row it reads. Returning from a call is not a move.
* entries of an area: the moves that call into it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import threading
from collections import Counter
from pathlib import Path
from types import FrameType
from typing import Any

# The source in this checkout is what is measured (ahead of any installed copy); tests/ makes the store.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
from devkit.storefactory import StoreBuilder, ts
from magnotia_mcp.protocol.methods import new_server
from magnotia_mcp.store.pool import Store

PACKAGE = "magnotia_mcp"
LAYERS = {"protocol": 4, "tools": 3, "search": 2, "store": 1}  # higher is nearer the client
HELPERS = ("args", "top")

SQLITE = f"{PACKAGE}.store.(sqlite):callback"
Move = tuple[str, str]  # (caller "module:function", callee "module:function")


def area(module: str) -> str:
    """magnotia_mcp.store.plans -> store; magnotia_mcp.budget -> top."""
    parts = module.split(".")
    return "top" if len(parts) == 2 else parts[1]


def climbs(caller: str, callee: str) -> bool:
    """True when a call from area caller into area callee goes back up (see the module's docstring)."""
    if callee in HELPERS:
        return False
    if caller in HELPERS:
        return True
    return LAYERS.get(callee, 0) > LAYERS.get(caller, 0)


class Recorder:
    """The distinct package-to-package calls seen while installed, in the order first seen."""

    def __init__(self) -> None:
        self.moves: dict[Move, None] = {}  # a dict keeps first-seen order
        self.on = False

    def profile(self, frame: FrameType, event: str, _arg: object) -> None:
        if event != "call" or not self.on:
            return
        module = frame.f_globals.get("__name__", "")
        if not module.startswith(PACKAGE + "."):
            return
        callee = f"{module}:{frame.f_code.co_name}"
        # Below the package on the main thread: the event loop or this tool, not a move.
        caller = None if threading.current_thread() is threading.main_thread() else SQLITE
        back = frame.f_back
        while back is not None:
            name = back.f_globals.get("__name__", "")
            if name.startswith(PACKAGE + "."):
                caller = f"{name}:{back.f_code.co_name}"
                break
            back = back.f_back
        if caller is not None:
            self.moves.setdefault((caller, callee), None)

    def cross(self) -> list[Move]:
        """The moves between areas, in first-seen order."""
        return [(a, b) for a, b in self.moves if area(a.split(":")[0]) != area(b.split(":")[0])]


def build_store(path: Path, *, fts: bool) -> str:
    """A small store with meetings (diarized), dictations and one in the trash; returns a meeting's id."""
    b = StoreBuilder(path, fts=fts)
    meeting = b.transcript(
        title="Quarterly budget review",
        source="meeting",
        raw_text="we need the budget draft by friday the hiring plans wait for the budget",
        formatted_text="We need the budget draft by Friday. The hiring plans wait for the budget.",
        created_at=ts(9),
        segments=[("Ana", "We need the budget draft by Friday."), ("Bo", "The hiring plans wait for the budget.")],
    )
    b.transcript(title="Shopping list", raw_text="buy oat milk eggs and coffee", created_at=ts(10))
    b.transcript(title="Budget notes", raw_text="budget for the offsite and travel plans", created_at=ts(11))
    b.transcript(title="Old plans", raw_text="plans for the garden", created_at=ts(3))
    b.transcript(title="Trashed", raw_text="budget secrets", created_at=ts(4), deleted_at=ts(5))
    b.close()
    return meeting


async def call(path: Path, tool: str, arguments: dict[str, Any], recorder: Recorder) -> dict[str, Any]:
    """One tools/call answered by a real server on the store at path, recorded from request to answer.

    The same call runs once before, unrecorded, so that imports and opening the store are not measured.
    """
    server = new_server(Store(path))
    answers: list[bytes] = []
    # Installed before the first call: the store's reader thread starts then, and keeps the profile it found.
    threading.setprofile(recorder.profile)
    sys.setprofile(recorder.profile)
    try:
        for request_id in (1, 2):
            params = {"name": tool, "arguments": arguments}
            message = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}
            recorder.on = request_id == 2
            task = server.submit(json.dumps(message).encode(), lambda line, _reply: answers.append(line))
            if isinstance(task, asyncio.Task):
                await task
            recorder.on = False
    finally:
        sys.setprofile(None)
        threading.setprofile(None)
    await server.close()
    answer: dict[str, Any] = json.loads(answers[-1]) if len(answers) == 2 else {}
    return answer


def report(recorder: Recorder, verbose: bool) -> str:
    moves = recorder.cross()
    areas = {area(m.split(":")[0]) for pair in moves for m in pair}
    up = [(a, b) for a, b in moves if climbs(area(a.split(":")[0]), area(b.split(":")[0]))]
    entries = Counter(area(b.split(":")[0]) for _, b in moves)
    lines = [
        f"moves between areas: {len(moves)}",
        f"areas: {len(areas)} ({', '.join(sorted(areas))})",
        f"climbs: {len(up)}",
        "entries: " + ", ".join(f"{name} {n}" for name, n in entries.most_common()),
    ]
    if verbose:
        for a, b in moves:
            mark = " ^" if (a, b) in up else ""
            lines.append(f"  {a.removeprefix(PACKAGE + '.')} -> {b.removeprefix(PACKAGE + '.')}{mark}")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--tool", choices=("search_transcripts", "get_transcript"), default="search_transcripts")
    parser.add_argument("--query", default="budget plans", help="the search's query")
    parser.add_argument("--scan", action="store_true", help="a store without the full-text index")
    parser.add_argument("-v", "--verbose", action="store_true", help="list every move (^ marks a climb)")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "magnotia.db"
        meeting = build_store(path, fts=not options.scan)
        if options.tool == "search_transcripts":
            arguments: dict[str, Any] = {"query": options.query}
        else:
            arguments = {"id": meeting}
        recorder = Recorder()
        answer = asyncio.run(call(path, options.tool, arguments, recorder))
    if "result" not in answer or answer["result"].get("isError"):
        print(f"the call failed: {answer}", file=sys.stderr)
        return 1
    print(report(recorder, options.verbose))
    return 0


if __name__ == "__main__":
    sys.exit(main())
