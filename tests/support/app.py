"""The Magnotia app, played by another process on a store, one command at a time.

Run as ``python tests/support/app.py STORE``: the process opens the store the
way the app does (WAL mode, one read-write connection kept open, so ``-wal``
and ``-shm`` sit beside it while it runs) and then reads one JSON command per
line on stdin. Each command is done and committed before its acknowledgement
line (JSON, ``{"ok": true, "result": ...}``) is written, so a test that waits
for the ack knows the change is there for any reader: no sleeps, no timing.

``App`` is the test side: ``App.start(path)`` returns once the process has the
store open; ``app.insert(...)``, ``app.trash(id)``, ... each return after their
ack; ``app.close()`` closes the connection as the app does on quit (the last
connection to close checkpoints the WAL and deletes ``-wal``/``-shm``).
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: the repository's root holds the tests package
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from devkit.storefactory import schema_sql

ACK_TIMEOUT = 60.0  # seconds: only so that a stuck app fails the test instead of hanging it
FTS_TABLES = ("transcripts_fts", "segments_fts")


def fts_statements() -> list[str]:
    """The schema's statements that make the full-text tables and the triggers feeding them."""
    out: list[str] = []
    current: list[str] = []
    for line in schema_sql().splitlines():
        if line.startswith("--") or (not current and not line.strip()):
            continue
        current.append(line)
        # A trigger ends with "END;"; any other statement with its first ";".
        if line.rstrip().endswith(";") and (not current[0].startswith("CREATE TRIGGER") or line.strip() == "END;"):
            statement = "\n".join(current)
            if "_fts" in statement:
                out.append(statement)
            current = []
    return out


def _created_name(statement: str) -> str:
    """x in CREATE VIRTUAL TABLE x ... or CREATE TRIGGER x ..."""
    words = statement.split()
    return words[3] if words[1] == "VIRTUAL" else words[2]


# -- the app's side: commands on its one connection ----------------------------------------------


class Player:
    """What the app does to its store, each step committed before it returns."""

    def __init__(self, path: Path) -> None:
        self.conn = sqlite3.connect(path, isolation_level=None)
        self.conn.execute("PRAGMA journal_mode = WAL")
        self.conn.execute("SELECT count(*) FROM transcripts").fetchone()  # the app reads at start: -wal, -shm

    def insert(
        self,
        title: str,
        raw_text: str,
        created_at: str,
        id: str | None = None,
        source: str = "dictation",
        segments: list[list[str | None]] | None = None,
    ) -> str:
        tid = id or str(uuid.uuid4())
        with self.conn:
            self.conn.execute("BEGIN IMMEDIATE")
            self.conn.execute(
                "INSERT INTO transcripts (id, title, source, raw_text, created_at, updated_at)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                (tid, title, source, raw_text, created_at, created_at),
            )
            for seq, (speaker, text) in enumerate(segments or [[None, raw_text]]):
                self.conn.execute(
                    "INSERT INTO segments (transcript_id, seq, start_ms, end_ms, speaker, text) VALUES (?,?,?,?,?,?)",
                    (tid, seq, seq * 1000, seq * 1000 + 900, speaker, text),
                )
        return tid

    def task(self, title: str, created_at: str, transcript_id: str | None = None, due_at: str | None = None) -> str:
        kid = str(uuid.uuid4())
        self.conn.execute(
            "INSERT INTO tasks (id, transcript_id, title, due_at, created_at) VALUES (?, ?, ?, ?, ?)",
            (kid, transcript_id, title, due_at, created_at),
        )
        return kid

    def trash(self, id: str, at: str = "2026-12-01T00:00:00.000Z") -> None:
        changed = self.conn.execute("UPDATE transcripts SET deleted_at = ? WHERE id = ?", (at, id)).rowcount
        if changed != 1:
            raise ValueError(f"no transcript {id} to move to the trash")

    def drop_fts(self) -> None:
        """What an older app's migration back would leave: no *_fts tables, no triggers feeding them."""
        with self.conn:
            self.conn.execute("BEGIN IMMEDIATE")
            for (name,) in self.conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE '%fts%'"
            ).fetchall():
                self.conn.execute(f'DROP TRIGGER "{name}"')
            for table in FTS_TABLES:
                self.conn.execute(f"DROP TABLE IF EXISTS {table}")

    def rebuild_fts(self) -> None:
        """The schema's full-text tables and triggers (made if missing), then FTS5's 'rebuild' of both."""
        with self.conn:
            self.conn.execute("BEGIN IMMEDIATE")
            have = {r[0] for r in self.conn.execute("SELECT name FROM sqlite_master WHERE name LIKE '%fts%'")}
            for statement in fts_statements():
                if _created_name(statement) not in have:
                    self.conn.execute(statement)
            for table in FTS_TABLES:
                self.conn.execute(f"INSERT INTO {table} ({table}) VALUES ('rebuild')")

    def vacuum_renumbered(self) -> dict[str, int]:
        """Every transcript and segment written again under another rowid, then VACUUM, then the index rebuilt.

        The rowids are reversed, so a rowid that named one transcript now names another:
        anything still keyed by the old rowids would point at the wrong text.
        """
        with self.conn:
            self.conn.execute("BEGIN IMMEDIATE")
            for table, key in (("transcripts", "rowid"), ("segments", "id")):
                cursor = self.conn.execute(f"SELECT {key} AS key, * FROM {table} ORDER BY {key}")
                columns = ", ".join([key] + [d[0] for d in cursor.description[1:]])
                rows = cursor.fetchall()
                self.conn.execute(f"DELETE FROM {table}")
                marks = ", ".join("?" * len(rows[0])) if rows else ""
                for new_key, row in zip([r[0] for r in rows][::-1], rows, strict=True):
                    self.conn.execute(f"INSERT INTO {table} ({columns}) VALUES ({marks})", (new_key, *row[1:]))
        self.conn.execute("VACUUM")
        if self.conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'transcripts_fts'").fetchone():
            self.rebuild_fts()
        return {str(r[1]): int(r[0]) for r in self.conn.execute("SELECT rowid, id FROM transcripts")}

    def user_version(self, version: int) -> None:
        self.conn.execute(f"PRAGMA user_version = {int(version)}")

    def close(self) -> None:
        self.conn.close()


def serve(path: Path) -> None:
    """Open the store, say so, then do each command line and acknowledge it."""
    player = Player(path)
    _ack({"ok": True, "result": "open"})
    for line in sys.stdin:
        command = json.loads(line)
        name, args = command["command"], command.get("args", {})
        try:
            result = getattr(player, name)(**args)
        except Exception as exc:  # said to the test, which fails with it
            _ack({"ok": False, "error": f"{type(exc).__name__}: {exc}"})
            continue
        _ack({"ok": True, "result": result})
        if name == "close":
            return
    player.close()  # stdin closed without a close command: quit all the same


def _ack(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


# -- the test's side ------------------------------------------------------------------------------


class App:
    """The app process, driven by the test: each method returns after the app acknowledged it."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        self.proc = proc

    @classmethod
    def start(cls, path: Path) -> App:
        """Start the app on the store at path; returns once it has the store open."""
        proc = subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve()), str(path)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        app = cls(proc)
        app._read_ack("open")
        return app

    def _read_ack(self, what: str) -> Any:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            self.proc.wait(ACK_TIMEOUT)
            stderr = self.proc.stderr.read() if self.proc.stderr else ""
            raise AssertionError(f"the app ended before acknowledging {what} (exit {self.proc.returncode}): {stderr}")
        ack = json.loads(line)
        if not ack["ok"]:
            raise AssertionError(f"the app failed to {what}: {ack['error']}")
        return ack["result"]

    def do(self, command: str, **args: Any) -> Any:
        """Send one command and return its result once acknowledged."""
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps({"command": command, "args": args}) + "\n")
        self.proc.stdin.flush()
        return self._read_ack(command)

    def insert(self, title: str, raw_text: str, created_at: str, **more: Any) -> str:
        return str(self.do("insert", title=title, raw_text=raw_text, created_at=created_at, **more))

    def task(self, title: str, created_at: str, **more: Any) -> str:
        return str(self.do("task", title=title, created_at=created_at, **more))

    def trash(self, id: str) -> None:
        self.do("trash", id=id)

    def drop_fts(self) -> None:
        self.do("drop_fts")

    def rebuild_fts(self) -> None:
        self.do("rebuild_fts")

    def vacuum_renumbered(self) -> dict[str, int]:
        """Returns the new rowid of each transcript id."""
        result: dict[str, int] = self.do("vacuum_renumbered")
        return result

    def user_version(self, version: int) -> None:
        self.do("user_version", version=version)

    def close(self) -> None:
        """Quit as the app does: close the connection, then exit."""
        if self.proc.poll() is None:
            self.do("close")
            assert self.proc.stdin is not None
            self.proc.stdin.close()
            assert self.proc.wait(ACK_TIMEOUT) == 0

    def kill(self) -> None:
        """For teardown after a failure: end the process whatever it is doing."""
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(ACK_TIMEOUT)
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()


if __name__ == "__main__":
    serve(Path(sys.argv[1]))
