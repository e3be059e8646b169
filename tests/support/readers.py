"""A real store's reader for unit tests that call the store package directly, on an event loop of their own."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

from magnotia_mcp.store.pool import Store
from magnotia_mcp.store.reader import Reader


def open_reader(path: Path, loop: asyncio.AbstractEventLoop) -> Iterator[Reader]:
    """Yield one reader of the store at path; close it and the store afterwards (a fixture body)."""
    store = Store(path)
    context = store.reader()
    reader = loop.run_until_complete(context.__aenter__())
    yield reader
    loop.run_until_complete(context.__aexit__(None, None, None))
    loop.run_until_complete(store.close())
