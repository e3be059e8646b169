"""The stores the semantic tests index: meetings and dictations in five languages, written as the app writes them."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from devkit.storefactory import StoreBuilder, ts

BUDGET = "b0000000-0000-4000-8000-000000000001"
LEAD = "b0000000-0000-4000-8000-000000000002"
BUDGET_PT = "b0000000-0000-4000-8000-000000000003"
LEAD_DE = "b0000000-0000-4000-8000-000000000004"
EXPORT = "b0000000-0000-4000-8000-000000000005"
TRASHED = "b0000000-0000-4000-8000-000000000006"
NEW = "b0000000-0000-4000-8000-0000000000aa"  # a meeting added to a store already indexed (add_meeting)


def write(path: Path, *, fts: bool = True) -> Path:
    """Six transcripts: a paraphrase target and a cross-language target per question, one in the trash."""
    b = StoreBuilder(path, fts=fts)
    b.transcript(
        id=BUDGET,
        title="Quarterly planning",
        source="meeting",
        created_at=ts(3),
        segments=[
            ("Ana", "Morning everyone. First the hiring plan, then the office move."),
            ("Ben", "The office move slips to March because the lease is not signed."),
            ("Ana", "On marketing: we'll put less money into campaigns next quarter."),
            ("Ben", "Fine by me, the last campaigns brought few customers."),
        ],
    )
    b.transcript(
        id=LEAD,
        title="Team update",
        source="meeting",
        created_at=ts(4),
        segments=[("Chloé", "Jonas takes over as engineering lead in January."), ("Ana", "Congratulations, Jonas!")],
    )
    b.transcript(
        id=BUDGET_PT,
        title="Conversa com Beatriz",
        language="pt-BR",
        source="meeting",
        created_at=ts(5),
        segments=[("Beatriz", "Vamos colocar menos dinheiro nas campanhas no próximo trimestre.")],
    )
    b.transcript(
        id=LEAD_DE,
        title="Jour fixe",
        language="de",
        source="meeting",
        created_at=ts(6),
        segments=[("Jonas", "Ich übernehme im Januar die Leitung der Entwicklung.")],
    )
    b.transcript(id=EXPORT, title="Standup", raw_text="Yesterday I fixed the export bug.", created_at=ts(7))
    b.transcript(
        id=TRASHED,
        title="Notes",
        raw_text="We cut the advertising money in half; nobody may know yet.",
        created_at=ts(8),
        deleted_at=ts(9),
    )
    return b.close()


def add_meeting(db: Path) -> None:
    """A new meeting in German, written into the store as the app writes one: the transcript, then its segment."""
    conn = sqlite3.connect(db)
    with conn:
        conn.execute(
            "INSERT INTO transcripts (id, title, source, language, raw_text, created_at, updated_at)"
            " VALUES (?, 'Weekly', 'meeting', 'de', '', ?, ?)",
            (NEW, ts(30), ts(30)),
        )
        conn.execute(
            "INSERT INTO segments (transcript_id, seq, start_ms, end_ms, speaker, text)"
            " VALUES (?, 0, 0, 4000, 'Mara', ?)",
            (NEW, "Ab März übernehme ich die Leitung der Entwicklung."),
        )
    conn.close()
