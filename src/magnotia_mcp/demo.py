"""A small sample store, so the server can be tried with no Magnotia app installed.

Built from the schema the app uses (``schema_v1.sql``, a copy of the contract)
into a temporary directory that ``--demo`` removes at exit.
"""

from __future__ import annotations

import sqlite3
from importlib.resources import files
from pathlib import Path

SCHEMA_RESOURCE = "schema_v1.sql"

_MEETING = [
    ("Ana", "Morning everyone, let's go through the launch checklist for the mobile release."),
    ("Ben", "The crash on older Android phones is fixed; the build went to beta testers last night."),
    ("Ana", "Great. What about the onboarding copy? Marketing wanted a friendlier first screen."),
    ("Chloé", "I rewrote it yesterday. I'll send the draft to Ana before Thursday."),
    ("Ben", "We still need the privacy review signed off. Legal asked for the data-retention table."),
    ("Ana", "Let's make that the blocker. Ben, can you own the retention table by Wednesday?"),
    ("Ben", "Yes. I'll also double-check that transcripts never leave the device."),
    ("Chloé", "One more thing: the café in São Paulo wants a demo for their staff next month."),
    ("Ana", "Put it on the list. Decision: we ship on the 14th if the privacy review passes."),
]

_TRANSCRIPTS = [
    # id, title, source, language, model, duration_ms, raw_text, formatted_text, created_at, deleted_at
    (
        "7d1f3c2a-0b5e-4a8e-9a51-3f0c6d2b9e01",
        "Mobile launch sync",
        "meeting",
        "en",
        "whisper-large-v3-turbo",
        1_260_000,
        None,
        "# Mobile launch sync\n\n**Decisions**\n- Ship on the 14th if the privacy review passes.\n\n"
        "**Discussion**\nThe crash on older Android phones is fixed and the beta is out. Chloé rewrote the "
        "onboarding copy; legal needs the data-retention table before the privacy review.",
        "2026-05-11T09:00:04.120Z",
        None,
    ),
    (
        "2b8e6f10-4c3d-4e7a-8f2b-5a9c1d7e3f02",
        "Idea: offline summaries",
        "dictation",
        "en",
        "whisper-large-v3-turbo",
        48_000,
        "idea for later summaries could run fully offline with a small local model so nothing leaves the laptop "
        "worth testing on the old thinkpad first",
        "Idea for later: summaries could run fully offline with a small local model, so nothing leaves the "
        "laptop. Worth testing on the old ThinkPad first.",
        "2026-05-09T14:03:12.042Z",
        None,
    ),
    (
        "c4a9e2d7-6b1f-4d3c-a8e5-7f2b9c0d1e03",
        "Notas de viagem",
        "dictation",
        "pt-BR",
        "whisper-large-v3-turbo",
        35_500,
        "lembrar de reservar o hotel em São Paulo e confirmar a reunião no café às dez",
        None,
        "2026-05-08T18:22:47.900Z",
        None,
    ),
    (
        "e9d2b7c1-3a4f-4b8e-9c6d-1f0a2e3b4c04",
        "Customer interview — Priya",
        "file",
        "en",
        "whisper-large-v3-turbo",
        1_812_000,
        "so the main thing for me is search I record every stand-up and I never find the decision later "
        "if I could just ask what did we decide about pricing that would be worth paying for",
        "The main thing for Priya is search: she records every stand-up and never finds the decision later. "
        '"If I could just ask what we decided about pricing, that would be worth paying for."',
        "2026-05-06T16:45:00.000Z",
        None,
    ),
    (
        "0f1e2d3c-4b5a-4968-8776-a5b4c3d2e105",
        "Private: salary thoughts",
        "dictation",
        "en",
        "whisper-large-v3-turbo",
        20_000,
        "this one is in the trash and must never be shown",
        None,
        "2026-05-05T08:00:00.000Z",
        "2026-05-05T08:05:00.000Z",
    ),
]

_TASKS = [
    # id, transcript_id, title, notes, status, priority, due_at, created_at, completed_at
    (
        "a1000000-0000-4000-8000-000000000001",
        "7d1f3c2a-0b5e-4a8e-9a51-3f0c6d2b9e01",
        "Own the data-retention table for legal",
        "Blocker for the privacy review.",
        "open",
        1,
        "2026-05-13T17:00:00.000Z",
        "2026-05-11T09:25:00.000Z",
        None,
    ),
    (
        "a1000000-0000-4000-8000-000000000002",
        "7d1f3c2a-0b5e-4a8e-9a51-3f0c6d2b9e01",
        "Send onboarding copy draft to Ana",
        None,
        "done",
        2,
        "2026-05-14T12:00:00.000Z",
        "2026-05-11T09:25:00.000Z",
        "2026-05-12T10:00:00.000Z",
    ),
    (
        "a1000000-0000-4000-8000-000000000003",
        "7d1f3c2a-0b5e-4a8e-9a51-3f0c6d2b9e01",
        "Schedule the São Paulo café demo",
        None,
        "open",
        3,
        None,
        "2026-05-11T09:25:00.000Z",
        None,
    ),
    (
        "a1000000-0000-4000-8000-000000000004",
        "2b8e6f10-4c3d-4e7a-8f2b-5a9c1d7e3f02",
        "Test offline summaries on the old ThinkPad",
        None,
        "open",
        None,
        None,
        "2026-05-09T14:04:00.000Z",
        None,
    ),
    (
        "a1000000-0000-4000-8000-000000000005",
        "0f1e2d3c-4b5a-4968-8776-a5b4c3d2e105",
        "Decide on the offsite venue",
        None,
        "open",
        2,
        "2026-05-20T09:00:00.000Z",
        "2026-05-05T08:01:00.000Z",
        None,
    ),
]


def schema_sql() -> str:
    """The store schema shipped with the package (the contract's store-schema-v1.sql)."""
    return files("magnotia_mcp").joinpath(SCHEMA_RESOURCE).read_text(encoding="utf-8")


def build_sample_store(path: Path) -> Path:
    """Write the sample store to path (which must not exist yet) and return it."""
    conn = sqlite3.connect(path)
    try:
        conn.executescript(schema_sql())
        for row in _TRANSCRIPTS:
            tid, title, source, language, model, duration, raw, formatted, created, deleted = row
            if raw is None:  # the meeting's raw text is its segments, spoken in order
                raw = " ".join(text for _, text in _MEETING)
            conn.execute(
                "INSERT INTO transcripts (id, title, source, language, model, duration_ms, raw_text,"
                " formatted_text, created_at, updated_at, deleted_at) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                (tid, title, source, language, model, duration, raw, formatted, created, created, deleted),
            )
            if source == "meeting":
                start = 0
                for seq, (speaker, text) in enumerate(_MEETING):
                    end = start + 4_000 + 90 * len(text)
                    conn.execute(
                        "INSERT INTO segments (transcript_id, seq, start_ms, end_ms, speaker, text)"
                        " VALUES (?,?,?,?,?,?)",
                        (tid, seq, start, end, speaker, text),
                    )
                    start = end
            else:
                conn.execute(
                    "INSERT INTO segments (transcript_id, seq, start_ms, end_ms, speaker, text)"
                    " VALUES (?,0,0,?,NULL,?)",
                    (tid, duration, raw),
                )
        conn.executemany(
            "INSERT INTO tasks (id, transcript_id, title, notes, status, priority, due_at, created_at,"
            " completed_at) VALUES (?,?,?,?,?,?,?,?,?)",
            _TASKS,
        )
        conn.commit()
    finally:
        conn.close()
    return path
