"""The small sample store the revision and client tests share."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from devkit.storefactory import StoreBuilder


@dataclass
class Sample:
    path: Path
    meeting: str
    dictation: str
    file: str
    trashed: str
    titles: dict[str, str] = field(default_factory=dict)

    @property
    def live(self) -> list[str]:
        """Live transcript ids, newest first."""
        return [self.dictation, self.meeting, self.file]


def build_sample(path: Path, *, fts: bool = True) -> Sample:
    """A small store: a meeting with speakers and tasks, a dictation, an imported file, one in the trash.

    fts=False: the same rows without the full-text index (as older app versions
    wrote it), so every search scans and reports progress.
    """
    b = StoreBuilder(path, fts=fts)
    meeting = b.transcript(
        title="Quarterly budget review",
        source="meeting",
        duration_ms=125_000,
        raw_text="we need the budget draft by friday who books the room i will",
        formatted_text="We need the budget draft by Friday. Who books the room? I will.",
        created_at="2026-05-09T14:03:12.042Z",
        segments=[
            ("Ana", "We need the budget draft by Friday."),
            ("Bo", "Who books the room?"),
            ("Ana", "I will."),
        ],
    )
    dictation = b.transcript(
        title="Shopping list",
        source="dictation",
        raw_text="buy oat milk eggs and coffee",
        formatted_text="Buy oat milk, eggs and coffee.",
        created_at="2026-05-10T08:15:00.000Z",
    )
    imported = b.transcript(
        title="Imported interview",
        source="file",
        raw_text="an interview about gardening and tomatoes",
        created_at="2026-05-08T10:00:00.000Z",
    )
    trashed = b.transcript(
        title="Secret trashed plans",
        raw_text="nobody may read this budget",
        created_at="2026-05-11T09:00:00.000Z",
        deleted_at="2026-05-11T10:00:00.000Z",
    )
    b.task(transcript_id=meeting, title="Send the budget draft", due_at="2026-05-15T17:00:00.000Z", priority=1)
    b.task(transcript_id=meeting, title="Book the room", status="done", completed_at="2026-05-09T15:00:00.000Z")
    b.close()
    titles = {
        meeting: "Quarterly budget review",
        dictation: "Shopping list",
        imported: "Imported interview",
        trashed: "Secret trashed plans",
    }
    return Sample(path, meeting, dictation, imported, trashed, titles)
