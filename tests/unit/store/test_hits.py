"""The SQL behind search hits, where it must agree with Python: what a blank segment is."""

from __future__ import annotations

import sqlite3
import sys

from hypothesis import given
from hypothesis import strategies as st

from magnotia_mcp.store.hits import BLANK


def test_blank_is_every_character_python_strips() -> None:
    spaces = "".join(c for c in map(chr, range(sys.maxunicode + 1)) if c.isspace())
    assert spaces == BLANK


@given(st.text(alphabet=st.sampled_from(BLANK + "ab\u200b\u00ad\x00é"), max_size=12))
def test_sqlite_trims_to_nothing_exactly_what_python_strips_to_nothing(text: str) -> None:
    conn = sqlite3.connect(":memory:")
    try:
        (blank,) = conn.execute("SELECT trim(?, ?) = ''", (text, BLANK)).fetchone()
    finally:
        conn.close()
    assert bool(blank) == (not text.strip())
