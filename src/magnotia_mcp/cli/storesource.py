"""The one store a server process serves, for stdio and HTTP alike.

``served_store`` works out where the store is (or builds the sample one for
``--demo`` in a temporary folder removed at exit) and says on stderr what is
served; the ``StoreSource`` it yields is the store factory every ``Server`` of
the process is given: it opens the store the first time a call needs it (not
before: sqlite3 and asyncio wait until then) and hands out that same store after.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from magnotia_mcp import __version__, log
from magnotia_mcp.paths import resolve_db_path

if TYPE_CHECKING:
    from magnotia_mcp.store.pool import Store


class NoStoreLocation(Exception):
    """Where the store is cannot be worked out: the message says what to pass instead."""


class StoreSource:
    """The store at path: opened by the first call, then shared by every Server of this process."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._store: Store | None = None

    def __call__(self) -> Store:
        if self._store is None:
            from magnotia_mcp.store.pool import Store

            self._store = Store(self.path)
        return self._store

    async def close(self) -> None:
        """Close the store if a call opened it (HTTP: once, at exit; stdio's one Server closes it itself)."""
        store, self._store = self._store, None
        if store is not None:
            await store.close()


@contextmanager
def served_store(db: str | None, *, demo: bool) -> Iterator[StoreSource]:
    """The store to serve: the sample one with demo, else --db's or the one the environment names.

    Raises NoStoreLocation before anything is served when the location cannot be worked out.
    """
    if demo:
        import tempfile

        from magnotia_mcp.demo import build_sample_store

        with tempfile.TemporaryDirectory(prefix="magnotia-demo-") as tmp:
            path = build_sample_store(Path(tmp) / "magnotia.db")
            log.info(f"magnotia-mcp {__version__} serving the sample store {path} (removed at exit)")
            yield StoreSource(path)
        return
    try:
        path, origin = resolve_db_path(db)
    except Exception as exc:  # platformdirs failing on an odd platform
        raise NoStoreLocation(f"cannot work out where the Magnotia store is ({exc}); pass --db PATH") from exc
    log.info(f"magnotia-mcp {__version__} serving {path} (from {origin}), read-only")
    _warn_if_absent(path)
    yield StoreSource(path)


def _warn_if_absent(path: Path) -> None:
    """A missing store is no reason to stop: calls say what is wrong until it exists."""
    try:
        present = path.exists()
    except OSError as exc:  # e.g. a directory on the way this user may not enter
        log.warning(f"cannot look at {path} ({exc.strerror}); tool calls will say what is wrong")
    else:
        if not present:
            log.warning(f"no store at {path} yet; tool calls will say so until it exists (see: magnotia-mcp doctor)")
