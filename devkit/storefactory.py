"""Build real Magnotia stores for tests, from the store schema kept in this repository."""

from __future__ import annotations

import sqlite3
import uuid
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
CONTRACT_SCHEMA = REPO / "docs" / "store-schema-v1.sql"  # the app's schema, as the contract gives it
PACKAGED_SCHEMA = REPO / "src" / "magnotia_mcp" / "schema_v1.sql"  # the copy the package ships


def schema_sql() -> str:
    """The contract's schema (docs/), else the packaged copy (an sdist has no docs/)."""
    path = CONTRACT_SCHEMA if CONTRACT_SCHEMA.exists() else PACKAGED_SCHEMA
    return path.read_text(encoding="utf-8")


def no_fts_schema_sql() -> str:
    """The schema as an older app wrote it: no *_fts tables and no triggers feeding them."""
    sql = schema_sql()
    keep = []
    for statement in sql.split(";\n"):
        if "fts" in statement.lower():
            continue
        keep.append(statement)
    # Trigger bodies contain ';' too; drop every remnant of them.
    text = ";\n".join(keep)
    return "\n".join(line for line in text.splitlines() if not line.strip().startswith(("END", "INSERT INTO"))) + ";\n"


def ts(day: int, minute: int = 0, second: int = 0, ms: int = 0, month: int = 5, year: int = 2026) -> str:
    return f"{year:04d}-{month:02d}-{day:02d}T{minute // 60:02d}:{minute % 60:02d}:{second:02d}.{ms:03d}Z"


class StoreBuilder:
    """Adds rows to a new store file; ``close()`` leaves it as the app would (WAL, closed cleanly)."""

    def __init__(self, path: Path, *, fts: bool = True) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        # pytest makes its temporary directories 0700; the container runs as another user.
        path.parent.chmod(0o755)
        self.path = path
        self.conn = sqlite3.connect(path)
        self.conn.executescript(schema_sql() if fts else no_fts_schema_sql())
        if not fts:
            self.conn.execute("PRAGMA journal_mode = WAL")
            self.conn.execute("PRAGMA user_version = 1")

    def transcript(
        self,
        *,
        id: str | None = None,
        title: str = "",
        source: str = "dictation",
        language: str | None = "en",
        model: str | None = "whisper-large-v3-turbo",
        duration_ms: int | None = 1000,
        raw_text: str = "",
        formatted_text: str | None = None,
        created_at: str = "2026-05-09T14:03:12.042Z",
        updated_at: str | None = None,
        deleted_at: str | None = None,
        segments: list[tuple[str | None, str]] | None = None,
    ) -> str:
        tid = id or str(uuid.uuid4())
        self.conn.execute(
            "INSERT INTO transcripts (id, title, source, language, model, duration_ms, raw_text, formatted_text,"
            " created_at, updated_at, deleted_at) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
            (
                tid,
                title,
                source,
                language,
                model,
                duration_ms,
                raw_text,
                formatted_text,
                created_at,
                updated_at or created_at,
                deleted_at,
            ),
        )
        if segments is None:
            segments = [(None, raw_text)]
        start = 0
        for seq, (speaker, text) in enumerate(segments):
            end = start + 1000 + 50 * len(text)
            self.conn.execute(
                "INSERT INTO segments (transcript_id, seq, start_ms, end_ms, speaker, text) VALUES (?,?,?,?,?,?)",
                (tid, seq, start, end, speaker, text),
            )
            start = end
        return tid

    def task(
        self,
        *,
        id: str | None = None,
        transcript_id: str | None = None,
        title: str = "a task",
        notes: str | None = None,
        status: str = "open",
        priority: int | None = None,
        due_at: str | None = None,
        created_at: str = "2026-05-09T14:03:12.042Z",
        completed_at: str | None = None,
    ) -> str:
        kid = id or str(uuid.uuid4())
        self.conn.execute(
            "INSERT INTO tasks (id, transcript_id, title, notes, status, priority, due_at, created_at, completed_at)"
            " VALUES (?,?,?,?,?,?,?,?,?)",
            (kid, transcript_id, title, notes, status, priority, due_at, created_at, completed_at),
        )
        return kid

    def execute(self, sql: str, params: Any = ()) -> None:
        self.conn.execute(sql, params)

    def commit(self) -> None:
        self.conn.commit()

    def close(self) -> Path:
        self.conn.commit()
        self.conn.close()
        return self.path
