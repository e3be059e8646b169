"""``magnotia-mcp index``: build, update or drop the store's semantic index (the ``semantic`` extra).

Progress goes to stderr (a bar redrawn in place on a terminal, a line per tenth otherwise); the
summary goes to stdout. Exit 0 when the index is complete, 1 on an error that says what to do,
130 when interrupted (what was finished is kept: run it again to go on).
"""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path
from typing import TextIO

from magnotia_mcp.errors import StoreError
from magnotia_mcp.paths import resolve_db_path

EXTRA = "pip install 'magnotia-mcp[semantic]'"


class Bar:
    """A progress bar on stream: redrawn in place on a terminal, one line per tenth of the work elsewhere."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.tty = stream.isatty()
        self.shown = -1

    def __call__(self, done: int, total: int) -> None:
        if total == 0:
            return
        if self.tty:
            filled = 30 * done // total
            self.stream.write(f"\rindexing [{'#' * filled}{'.' * (30 - filled)}] {done}/{total} transcripts")
            if done == total:
                self.stream.write("\n")
        else:
            tenth = 10 * done // total
            if tenth == self.shown:
                return
            self.shown = tenth
            self.stream.write(f"indexing: {done}/{total} transcripts\n")
        self.stream.flush()


def _fail(message: str) -> int:
    print(f"magnotia-mcp index: {message}", file=sys.stderr)
    return 1


class Download:
    """A download's progress on stream: redrawn in place on a terminal, one line per tenth of a file elsewhere."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.tty = stream.isatty()
        self.shown: tuple[str, int] = ("", -1)

    def __call__(self, name: str, done: int, total: int) -> None:
        mib = 1 << 20
        line = f"downloading {name}: {done / mib:.1f}/{total / mib:.1f} MiB"
        if self.tty:
            self.stream.write(f"\r{line}" + ("\n" if done == total else ""))
        else:
            step = (name, 10 * done // total)
            if step == self.shown:
                return
            self.shown = step
            self.stream.write(line + "\n")
        self.stream.flush()


def run_index(db: str | None, *, model: str | None, drop: bool, download: bool = False, mirror: str = "") -> int:
    store, _ = resolve_db_path(db)
    from magnotia_mcp.search.semantic import indexfile

    if indexfile.beside(store):
        return _fail(
            f"the index would go into the store's folder ({indexfile.location(store)}); the store's folder is the "
            f"app's: set ${indexfile.CACHE_ENV} to a folder outside it, or unset it"
        )
    if drop:
        where = indexfile.location(store)
        if indexfile.remove(store):
            print(f"removed the semantic index of {store} ({where}); search finds by words only")
        else:
            print(f"{store} has no semantic index (none at {where}); nothing to remove")
        return 0
    try:  # before anything is downloaded or written: where others could read or replace the index (the fix said)
        indexfile.check_private(store)
    except indexfile.Unsafe as exc:
        return _fail(str(exc))
    try:
        import marisa_trie  # noqa: F401
        import numpy  # noqa: F401
        import tokenizers  # noqa: F401
    except ImportError as exc:
        return _fail(f"the semantic index needs the semantic extra ({exc.name} is missing): {EXTRA}")
    from magnotia_mcp.search.semantic.build import describe, update
    from magnotia_mcp.search.semantic.model import ModelError, StaticModel

    if download and model:
        return _fail("--download-model fetches the model to use: pass it or --model DIR, not both")
    if download:
        from magnotia_mcp.search.semantic.download import DownloadError

        try:
            folder: Path | None = _downloaded(mirror)
        except DownloadError as exc:
            return _fail(str(exc))
        except OSError as exc:  # the cache folder: not writable, full
            return _fail(f"cannot write the model ({exc}); set ${indexfile.CACHE_ENV} to a folder you may write")
        except KeyboardInterrupt:
            print("\ninterrupted: what came is kept; run the command again to go on", file=sys.stderr)
            return 130
    else:
        folder = _model_folder(store, model)
    if folder is None:
        return _fail(
            "which model? run it with --download-model (minishlab/potion-multilingual-128M, ~530 MB, fetched once "
            "at a pinned revision), or pass --model DIR, a Model2Vec model folder (config.json, model.safetensors, "
            "tokenizer.json); docs/search.md says more"
        )
    try:
        loaded = StaticModel.load(folder)
        meta = describe(folder, loaded)
    except (ModelError, OSError) as exc:
        return _fail(str(exc))
    print(f"indexing {store} with the model {folder} into {indexfile.location(store)}", file=sys.stderr)
    try:
        report = update(store, loaded, meta, Bar(sys.stderr))
    except (StoreError, indexfile.Unsafe) as exc:
        return _fail(str(exc))
    except (OSError, sqlite3.Error) as exc:  # the cache folder: not writable, full, not a folder
        return _fail(
            f"cannot write the index at {indexfile.location(store)} ({exc}); set ${indexfile.CACHE_ENV} to a folder "
            "you may write"
        )
    except KeyboardInterrupt:
        print("\ninterrupted: what was finished is kept; run `magnotia-mcp index` again to go on", file=sys.stderr)
        return 130
    if report.rebuilt:
        print(f"started afresh: {report.rebuilt}")
    if report.listed is not None:
        print(f"listed who spoke where in {report.listed} transcripts (an index from an earlier version; no embedding)")
    if report.restamped:
        print(
            f"counted the sizes of {report.restamped} transcripts in bytes"
            " (an index from an earlier version; no embedding)"
        )
    if report.moved:
        print(f"brought the date or source of {report.moved} transcripts up to date (no embedding)")
    print(
        f"semantic index of {store}: {report.live} transcripts ({report.embedded} embedded, {report.kept} "
        f"already up to date, {report.removed} removed as trashed or deleted), {report.chunks} chunks in "
        f"{report.seconds:.1f} s"
    )
    return 0


def _model_folder(store: Path, given: str | None) -> Path | None:
    """--model's folder, else the one the existing index was built with."""
    if given:
        return Path(given).expanduser().absolute()
    from magnotia_mcp.search.semantic import indexfile

    try:
        found = indexfile.open_existing(store)
    except (indexfile.Unusable, OSError):
        return None
    if found is None:
        return None
    conn, meta = found
    conn.close()
    return Path(meta["model_path"]) if meta.get("model_path") else None


def _downloaded(mirror: str) -> Path:
    """The pinned model's folder in the cache folder, fetched (or finished) first."""
    from magnotia_mcp.search.semantic import download, indexfile

    pinned = download.POTION_MULTILINGUAL
    folder = download.folder_for(pinned, indexfile.cache_folder())
    print(f"the model {pinned.repo} at revision {pinned.revision[:12]}, in {folder}", file=sys.stderr)
    return download.fetch(pinned, folder, mirror=mirror or download.HUB, progress=Download(sys.stderr))
