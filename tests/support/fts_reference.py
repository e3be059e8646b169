"""An in-memory FTS5 table tokenized as the store's: the reference for what a query means."""

from __future__ import annotations

import sqlite3

TOKENIZER = "unicode61 remove_diacritics 2"  # the store's *_fts tables (docs/store-schema-v1.sql)
DOCS = f"CREATE VIRTUAL TABLE docs USING fts5 (title, body, tokenize = '{TOKENIZER}')"


def load(conn: sqlite3.Connection, rows: list[tuple[str, str]]) -> None:
    """Replace the docs table's rows with (title, body) pairs, rowid = their index."""
    conn.execute("DELETE FROM docs")
    conn.executemany(
        "INSERT INTO docs (rowid, title, body) VALUES (?, ?, ?)", [(i, *row) for i, row in enumerate(rows)]
    )


def rowids(conn: sqlite3.Connection, expression: str) -> set[int]:
    """The rows of docs the FTS5 expression matches."""
    return {r for (r,) in conn.execute("SELECT rowid FROM docs WHERE docs MATCH ?", (expression,))}
