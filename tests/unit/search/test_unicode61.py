"""unicode61: the separator table the scan cuts text with is the one of the SQLite in use.

If this fails after a SQLite upgrade, regenerate the table: ``python devtools/unicode61.py >
src/magnotia_mcp/search/unicode61.py`` (the scan and the index would otherwise cut text differently).
"""

from __future__ import annotations

import importlib.util
import sqlite3
from pathlib import Path

from magnotia_mcp.search.tokens import token_count
from magnotia_mcp.search.unicode61 import SEPARATORS

GENERATOR = Path(__file__).resolve().parents[3] / "devtools" / "unicode61.py"


def test_the_table_is_the_running_sqlites() -> None:
    spec = importlib.util.spec_from_file_location("unicode61_generator", GENERATOR)
    assert spec is not None
    assert spec.loader is not None
    generator = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generator)
    assert tuple(generator.separators()) == SEPARATORS, f"regenerate for SQLite {sqlite3.sqlite_version}"


def test_the_scan_counts_the_tokens_the_index_counts() -> None:
    """Tokens of a text full of edge cases, by the scan's count and by FTS5 itself."""
    text = "budget\U0001f914 today 👍🏽 e-mail x_y l'orçamento caf\u0065\u0301 \ue000x ①② ½ ™ naïve Ωμέγα"
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5 (x, tokenize = 'unicode61 remove_diacritics 2')")
    conn.execute("CREATE VIRTUAL TABLE v USING fts5vocab (t, 'instance')")
    conn.execute("INSERT INTO t (x) VALUES (?)", (text,))
    index_tokens = [row[0] for row in conn.execute("SELECT term FROM v ORDER BY offset")]
    assert token_count(text) == len(index_tokens), index_tokens
