"""magnotia_mcp.demo and the store schema it ships: the package's schema is the contract's.

The contract's schema lives in this repository (docs/store-schema-v1.sql), so
this runs in any clone, with nothing beside it.
"""

from __future__ import annotations

import sqlite3
from importlib.resources import files
from pathlib import Path

from magnotia_mcp import demo

CONTRACT = Path(__file__).resolve().parents[2] / "docs" / "store-schema-v1.sql"


def test_schema_file_in_the_package_matches_the_contract() -> None:
    """The packaged schema copy is the contract's schema, byte for byte, and it is what the demo builds from."""
    packaged = files("magnotia_mcp").joinpath(demo.SCHEMA_RESOURCE).read_bytes()
    assert packaged == CONTRACT.read_bytes()
    assert demo.schema_sql() == CONTRACT.read_text(encoding="utf-8")


def test_the_demo_store_is_a_version_1_store_with_live_and_trashed_rows(tmp_path: Path) -> None:
    """build_sample_store writes a store of the contract's schema, with something to list, search and read."""
    path = demo.build_sample_store(tmp_path / "demo.db")
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA user_version").fetchone() == (1,)
        live = conn.execute("SELECT count(*) FROM transcripts WHERE deleted_at IS NULL").fetchone()[0]
        assert live >= 3
        assert conn.execute("SELECT count(*) FROM tasks").fetchone()[0] >= 1
        assert conn.execute("SELECT count(*) FROM transcripts_fts").fetchone()[0] >= live
    finally:
        conn.close()
