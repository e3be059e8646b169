"""Measuring one server command on one store: spawns, the workload next to the floor, pings, RSS."""

from __future__ import annotations

import argparse
import gc
import json
import math
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import generate
from answer_tokens import Tally
from client import TOOLS, Json, Server, ServerError, tool_result
from floor import Cursor, Floor
from startup import StartupError, spawn_to_initialize
from workload import Scenario


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


@dataclass
class Sample:
    """One measured call: the server's round trip and the floor's time for the same page."""

    tool: str
    kind: str  # scenario kind; pages after the first of a chain are "deep"
    server_ms: float | None
    floor_ms: float
    args: Json = field(default_factory=dict)
    page: int = 0
    ranked_among: int | None = None  # search: how many transcripts the server compared


@dataclass
class VariantResult:
    """Everything measured for one server command on one store."""

    label: str
    kind: str
    cmd: list[str]
    spawn_ms: list[float] = field(default_factory=list)
    samples: list[Sample] = field(default_factory=list)
    failures: dict[str, int] = field(default_factory=dict)
    failure_examples: list[str] = field(default_factory=list)
    disagreements: int = 0
    pings_per_s: list[float] = field(default_factory=list)
    peak_rss_kib: int | None = None
    exit_code: int | None = None
    fatal: str | None = None
    server_info: Json = field(default_factory=dict)
    answers: Tally = field(default_factory=Tally)  # what each answer costs a model (answer_tokens.py)

    def fail(self, what: str, text: str) -> None:
        self.failures[what] = self.failures.get(what, 0) + 1
        if len(self.failure_examples) < 8:
            self.failure_examples.append(f"{what}: {text}")


def page_key(tool: str, items: Json) -> list[str] | None:
    """The ids of a list page, in order, to compare with the floor's."""
    key = {"list_transcripts": "transcripts", "list_tasks": "tasks"}.get(tool)
    if key is None or not isinstance(items.get(key), list):
        return None
    return [str(x.get("id")) for x in items[key] if isinstance(x, dict)]


def run_scenario(server: Server, floor: Floor, sc: Scenario, vr: VariantResult, record: bool) -> None:
    """Run one scenario on the server, then on the floor, page by page."""
    fn: Callable[[Json, Cursor], tuple[list[Any], Cursor]] = getattr(floor, sc.tool)
    server_ms: list[float | None] = []
    server_ids: list[list[str] | None] = []
    server_ended = False  # the server's last page read had no cursor
    ranked_among: int | None = None
    args = dict(sc.args)
    for _ in range(sc.pages):
        ns, resp = server.request("tools/call", {"name": sc.tool, "arguments": args})
        res, err = tool_result(resp)
        if res is None:
            if record:
                vr.fail(sc.tool, f"{err} <- {json.dumps(args, ensure_ascii=False)[:160]}")
            server_ms.append(None)
            break
        server_ms.append(ns / 1e6)
        if record:
            vr.answers.add(sc.tool, resp["result"])
        if sc.tool == "search_transcripts":
            ranked_among = check_search(res, args, vr, record)
        server_ids.append(page_key(sc.tool, res))
        cursor = res.get("next_cursor")
        server_ended = not isinstance(cursor, str)
        if server_ended:
            break
        args = {**sc.args, "cursor": cursor}
    floor_ms: list[float] = []
    floor_ids: list[list[str]] = []
    pos: Cursor = None
    floor.prepare(sc.tool, sc.args)
    for _ in range(sc.pages):
        t0 = time.perf_counter_ns()
        rows, pos = fn(sc.args, pos)
        floor_ms.append((time.perf_counter_ns() - t0) / 1e6)
        if sc.tool in ("list_transcripts", "list_tasks"):
            floor_ids.append([str(r[0]) for r in rows])
        if pos is None:
            break
    if not record:
        return
    for i, fm in enumerate(floor_ms):
        sm = server_ms[i] if i < len(server_ms) else None
        vr.samples.append(Sample(sc.tool, sc.kind if i == 0 else "deep", sm, fm, sc.args, i, ranked_among))
    for i, sm in enumerate(server_ms[len(floor_ms) :], start=len(floor_ms)):
        if sm is not None:  # the server paged further than the floor
            vr.samples.append(Sample(sc.tool, sc.kind if i == 0 else "deep", sm, math.nan, sc.args, i))
    listing = sc.tool in ("list_transcripts", "list_tasks")
    if listing and not same_listing(server_ids, floor_ids, server_ended, pos is None):
        vr.disagreements += 1


def same_listing(
    server_pages: Sequence[Sequence[str] | None],
    floor_pages: Sequence[Sequence[str]],
    server_ended: bool,
    floor_ended: bool,
) -> bool:
    """Whether the server listed what the floor did, in the same order.

    The server fits a page to its token budget (max_tokens) and hands out the rest behind a cursor, so its
    pages may be shorter than the floor's: the ids are compared as one sequence, and the shorter one (the
    scenario stops after the same number of pages) must begin the longer. A side that said it had listed
    everything (no cursor left) must not have listed less than the other: that is a dropped tail.
    """
    server = [i for page in server_pages for i in (page or ())]
    floor = [i for page in floor_pages for i in page]
    n = min(len(server), len(floor))
    if server[:n] != floor[:n] or (n == 0 and len(server) != len(floor)):  # nothing in common at all
        return False
    return not (server_ended and len(server) < len(floor)) and not (floor_ended and len(floor) < len(server))


def check_search(res: Json, args: Json, vr: VariantResult, record: bool) -> int | None:
    """A search answer's mode (the generated stores have the full-text index) and order; its ranked_among."""
    what = json.dumps(args, ensure_ascii=False)[:160]
    sort = args.get("sort", "relevance")
    if record and res.get("mode") != "fts":
        vr.fail("mode", f"searched in {res.get('mode')!r} mode, expected 'fts' <- {what}")
    if record and res.get("sort") != sort:
        vr.fail("sort", f"answered sort {res.get('sort')!r}, asked {sort!r} <- {what}")
    ranked = res.get("ranked_among")
    if not isinstance(ranked, int):
        if record:
            vr.fail("ranked_among", f"ranked_among is {ranked!r} <- {what}")
        return None
    return ranked


def measure_spawn(cmd: list[str], env: dict[str, str], runs: int, timeout: float, vr: VariantResult) -> None:
    """Fresh processes, spawn to the answer to initialize (the same timing as `python benchmarks/startup.py`)."""
    for _ in range(runs):
        try:
            vr.spawn_ms.append(spawn_to_initialize(cmd, env=env, timeout=timeout))
        except StartupError as e:
            vr.fail("spawn", str(e))


def measure_pings(server: Server, n: int, vr: VariantResult) -> None:
    """n pings written by a thread while this one reads: throughput, not round trips."""
    base = server.next_id
    server.next_id += n
    payload = b"".join(b'{"jsonrpc":"2.0","id":%d,"method":"ping"}\n' % (base + i) for i in range(n))
    errors: list[BaseException] = []

    def writer() -> None:
        try:
            server.write(payload)
        except BaseException as e:  # reported by the reader below
            errors.append(e)

    deadline = time.monotonic() + server.timeout + n / 1000
    t0 = time.perf_counter_ns()
    th = threading.Thread(target=writer, daemon=True)
    th.start()
    bad = 0
    for _ in range(n):
        line = server.read_line(deadline)
        if b'"result"' not in line:
            bad += 1
    t1 = time.perf_counter_ns()
    th.join()
    if errors:
        raise ServerError(f"writing pings: {errors[0]}")
    if bad:
        vr.fail("ping", f"{bad} of {n} pings had no result")
    vr.pings_per_s.append(n / ((t1 - t0) / 1e9))


def run_variants(
    servers: Sequence[tuple[str, str, list[str]]],
    store: generate.StoreInfo,
    workload: list[Scenario],
    args: argparse.Namespace,
    env_of: Callable[[list[str]], dict[str, str]],
) -> list[VariantResult]:
    """Spawn timings, then one long-lived process of each server for the workload, pings and peak RSS.

    The servers take turns, scenario by scenario (each first as often as the others), and so do their
    spawns and rounds of pings: this machine's speed drifts by as much as twofold within a run, and one
    server measured after the other would carry that drift into their comparison.
    """
    results = [VariantResult(label, kind, [*cmd, "--db", str(store.path)]) for label, kind, cmd in servers]
    envs = [env_of(cmd) for _, _, cmd in servers]
    names = ", ".join(vr.label for vr in results)
    log(f"  [{names}] spawn-to-initialize x{args.spawn_runs}, in turn")
    for _ in range(args.spawn_runs):
        for vr, env in zip(results, envs, strict=True):
            measure_spawn(vr.cmd, env, 1, args.timeout, vr)
    running: list[tuple[VariantResult, Server, Floor]] = []
    try:
        for vr, env in zip(results, envs, strict=True):
            running.append((vr, Server(vr.cmd, env, args.timeout), Floor(store.path)))
        alive = [r for r in running if _survived(r[0], partial(_start, r[0], r[1]))]

        def in_turn(step: Callable[[VariantResult, Server, Floor], object], first: int = 0) -> None:
            """step for each live server, from the first-th on; one that breaks takes no further part."""
            nonlocal alive
            k = first % len(alive) if alive else 0
            gone = [r for r in alive[k:] + alive[:k] if not _survived(r[0], partial(step, *r))]
            alive = [r for r in alive if r not in gone]

        # A few untimed scenarios first: the first calls pay for imports and a cold page cache.
        warm = workload[: max(4, len(workload) // 20)]
        log(f"  [{names}] warm-up {len(warm)} scenarios, then {len(workload)} scenarios, in turn")
        for sc in warm:
            in_turn(partial(_scenario, sc, False))
        # Collections at chosen moments only: a pause would otherwise land in some call's latency.
        gc.collect()
        gc.disable()
        last_log = time.monotonic()
        try:
            for i, sc in enumerate(workload):
                in_turn(partial(_scenario, sc, True), first=i)
                if i % 50 == 49:
                    gc.collect()
                if time.monotonic() - last_log > 30:
                    last_log = time.monotonic()
                    log(f"  [{names}] {i + 1}/{len(workload)} scenarios")
        finally:
            gc.enable()
        log(f"  [{names}] pipelined pings 3 x {args.pings}, in turn")
        for k in range(3):
            in_turn(lambda vr, server, _: measure_pings(server, args.pings, vr), first=k)
        for vr, server, _ in alive:
            vr.peak_rss_kib = server.peak_rss_kib()
    finally:
        for vr, server, floor in running:
            floor.close()
            vr.exit_code = server.close()
            if vr.exit_code not in (0, None) and vr.fatal is None:
                vr.fail("exit", f"exit code {vr.exit_code}: {server.stderr_tail()!r}")
    return results


def _scenario(sc: Scenario, record: bool, vr: VariantResult, server: Server, floor: Floor) -> None:
    run_scenario(server, floor, sc, vr, record)


def _start(vr: VariantResult, server: Server) -> None:
    """Initialize the server and check that it lists every tool."""
    info = server.initialize()
    vr.server_info = {"protocolVersion": info.get("protocolVersion"), "serverInfo": info.get("serverInfo")}
    _, tl = server.request("tools/list", {})
    names = {t.get("name") for t in tl.get("result", {}).get("tools", [])}
    if missing := [t for t in TOOLS if t not in names]:
        vr.fail("tools/list", f"missing tools: {missing}")


def _survived(vr: VariantResult, step: Callable[[], object]) -> bool:
    """Run step; a server that broke (ServerError) is recorded as fatal and takes no further part."""
    try:
        step()
    except ServerError as e:
        vr.fatal = str(e)
        vr.fail("server", str(e))
        return False
    return True
