"""What store.worker relies on in aiosqlite's undocumented constructor (pinned in pyproject.toml).

``aiosqlite.Connection(connector, iter_chunk_size)``, awaited, must start a worker thread,
run the connector there once and serve the very sqlite3 connection it returns. If an
aiosqlite release changes that, these fail first, naming what changed.
"""

from __future__ import annotations

import asyncio
import inspect
import sqlite3
import threading

import aiosqlite

from magnotia_mcp.store.worker import on_worker_thread


def test_the_constructor_takes_a_connector_and_a_chunk_size() -> None:
    parameters = list(inspect.signature(aiosqlite.Connection).parameters)
    assert parameters[:2] == ["connector", "iter_chunk_size"], (
        f"aiosqlite {aiosqlite.__version__} changed Connection(): {parameters}; store/worker.py needs a new look"
    )


def test_the_open_connection_is_served_from_its_own_thread_and_the_thread_ends_on_close() -> None:
    conn = sqlite3.connect(":memory:", check_same_thread=False)
    conn.execute("CREATE TEMP TABLE handed (x)")  # only this very connection sees it
    conn.execute("INSERT INTO handed VALUES (42)")
    before = set(threading.enumerate())

    async def use() -> tuple[list[sqlite3.Row], int, list[threading.Thread]]:
        served = await on_worker_thread(conn)
        started = [t for t in threading.enumerate() if t not in before]
        await served.create_function("thread_id", 0, threading.get_ident, deterministic=True)
        rows = list(await served.execute_fetchall("SELECT x FROM handed"))
        ((worker,),) = await served.execute_fetchall("SELECT thread_id()")
        served.text_factory = bytes  # store.reader sets text_factory through the proxy
        assert conn.text_factory is bytes, "aiosqlite no longer passes text_factory to the sqlite3 connection"
        await served.close()
        return rows, worker, started

    rows, worker, started = asyncio.run(use())
    assert [tuple(r) for r in rows] == [(42,)], "aiosqlite did not serve the connection the connector returned"
    assert len(started) == 1, f"expected one worker thread per connection, got {started}"
    assert worker == started[0].ident != threading.get_ident(), "statements did not run on the worker thread"
    started[0].join(timeout=10)
    assert not started[0].is_alive(), "the worker thread outlived close()"
