"""The running server keeps a store's semantic index current, on a thread of its own, never on a call's path.

A search that used the index looks at the store's stamp (store.opening.stamp: a few stats and the
WAL index header). When the store moved since the index was last brought up to date, one thread
per store runs the same ``build.update`` as ``magnotia-mcp index``, with the model already loaded:
new and edited transcripts are embedded, trashed and purged ones forgotten, and the search after
the next reload finds them. It never starts an index afresh (an absent, untrusted or other model's
index is the command's to rebuild), and an index it cannot write (a read-only cache folder) is
left as it is and said once per store change on stderr. Searches meanwhile use the index loaded
before (not reloading it after each batch the run commits), and say it is not complete while the store is
known to have moved past it.
"""

from __future__ import annotations

import threading
from pathlib import Path

from magnotia_mcp import log
from magnotia_mcp.search.semantic import build, indexfile, nearest
from magnotia_mcp.search.semantic.nearest import Searcher
from magnotia_mcp.store.opening import stamp as store_stamp


class _State:
    """One store's refresh: the store stamp last asked about, whether a run is under way, and what it left."""

    def __init__(self) -> None:
        self.asked: tuple[object, ...] | None = None  # the store's stamp when the last run started
        self.running: threading.Thread | None = None
        # (store stamp, index stamp) when the last run ended with the index current: equal stamps now,
        # and the searcher loaded from that index file, mean nothing new is missing from it.
        self.current: tuple[tuple[object, ...], tuple[object, ...]] | None = None


_lock = threading.Lock()
_states: dict[str, _State] = {}


def behind(store: Path, found: Searcher) -> bool:
    """Whether the store is known to hold what the loaded index does not (yet): its answer is not complete."""
    with _lock:
        state = _states.get(str(store))
        current = state.current if state is not None else None
    if current is None:
        return False  # no run has ended yet: nothing is known beyond the index's own word (its meta's complete)
    return current != (store_stamp(store), found.index.stamp)


def after_search(store: Path, found: Searcher) -> threading.Thread | None:
    """Start bringing the index up to date if the store moved since the last run; the run's thread, if one is on."""
    now = store_stamp(store)
    with _lock:
        state = _states.setdefault(str(store), _State())
        if state.running is not None:
            return state.running
        if state.asked == now:
            return None
        if state.asked is None and indexfile.was_current(store, now, found.index.stamp):
            # The last run, here or in an earlier process (`index`, another server), left the index current with
            # the store as it is now: nothing to check.
            state.asked, state.current = now, (now, found.index.stamp)
            return None
        state.asked = now
        run = state.running = threading.Thread(
            target=_run, args=(store, found, now, state), name="magnotia-index-refresh", daemon=True
        )
        nearest.refreshing.add(str(store))
    run.start()
    return run


def _run(store: Path, found: Searcher, asked: tuple[object, ...], state: _State) -> None:
    meta = {k: found.index.meta.get(k, "") for k in ("model_name", "model_path", "model_sha256", "dims")}
    current = state.current  # kept when this run fails: the store may have moved past the index, and behind() says so
    try:
        report = build.update(store, found.model, meta, rebuild=False)
        if report.listed is not None:
            log.info(f"semantic index of {store}: who spoke where listed in {report.listed} transcripts")
        if report.embedded or report.removed or report.moved:
            log.info(
                f"semantic index of {store}: {report.embedded} transcripts embedded, {report.removed} removed, "
                f"{report.moved} given a new date or source, in {report.seconds:.1f} s"
            )
        current = (asked, indexfile.stamp(indexfile.location(store)))
    except indexfile.Unusable as exc:
        log.warning(f"the semantic index of {store} was not brought up to date: {exc}; run `magnotia-mcp index`")
    except Exception as exc:  # a read-only cache folder, a locked or full disk: searches go on with what is there
        log.warning(f"the semantic index of {store} could not be brought up to date ({exc}); searches use it as it is")
    finally:
        with _lock:
            state.current = current
            state.running = None
            nearest.refreshing.discard(str(store))
