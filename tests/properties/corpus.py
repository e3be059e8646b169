"""The store the property tests read: a few dozen transcripts in five languages, written twice.

Written once with the app's full-text tables and once without them (scan mode),
row for row the same, so that any difference between the two servers' answers
is the server's. Fewer than 50 live transcripts (search's largest ``limit``), so
no search result is ever cut off. No word is glued to an emoji or a private-use
character: that is the one documented difference between the modes (docs/tools.md).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from devkit.storefactory import StoreBuilder, ts

SPEAKERS = ("Ana", "Ben", "Chloé", "Speaker 1", "Speaker 10", "Zoë Ångström", "Ána")

# Sentences to draw the transcripts from: inflections, apostrophes, diacritics (precomposed
# and combining), stop words, hyphens, numbers, emoji standing apart, one word many times.
SENTENCES = (
    "The budget for the mobile launch is approved.",
    "We decided to delay the launch until the privacy review passes.",
    "Hiring plans: two engineers and one designer; the hiring budget is tight.",
    "Don't forget the data-retention table for legal, it's a blocker.",
    "What did we decide about pricing? Pricing decisions wait for Friday.",
    "Budget review on Friday; the budget is the budget.",
    "Coffee with a friend, then a river walk and a long run.",
    "The roadmap and the launch plans for June and July.",
    "Lembrar de reservar o hotel em São Paulo e confirmar a reunião no café às dez.",
    "O orçamento do lançamento foi aprovado; l'orçamento está apertado.",
    "Decidimos adiar o lançamento até a revisão de privacidade.",
    "Reunión de presupuesto el viernes; mañana temprano hablamos del lanzamiento.",
    "Las decisiones sobre los precios esperan hasta el viernes.",
    "Ein schönes Café in Köln; die Straße und die Strasse sind gesperrt.",
    "Wir haben das Budget für den Start genehmigt und die Entscheidungen vertagt.",
    "L'équipe a décidé de reporter le lancement; le budget est serré.",
    "Nous avons parlé du café, de l'école et de la réunion de jeudi.",
    "Cafe\u0301 au lait and a re\u0301sume\u0301 of the nai\u0308ve plan.",
    "École normale, ecole primaire, e\u0301cole du soir.",
    "İstanbul trip notes and istanbul again, ΣΟΦΊΑ lecture and σοφια notes.",
    "Ærøskøbing harbour, naïve approach, quarterly budget review.",
    "Release planning, pre-release checks, 2026 targets and v2.1 numbers.",
    "🎉 party for the launch 🚀 and then back to work.",
    "Milk, bread, oat milk, eggs and coffee.",
    "Speaker notes: the speaker spoke about speaking speakers.",
    "Tasks: send the draft, book the room, call Ana about the budget.",
)


# The words of the store as written (punctuation around them dropped), for queries to use.
WORDS = tuple(sorted({w.strip(".,;:?!'\"") for s in SENTENCES for w in s.split()} - {""}))


@dataclass
class Corpus:
    """What the store holds, for strategies to draw from."""

    live: list[str] = field(default_factory=list)  # live transcript ids
    trashed: list[str] = field(default_factory=list)
    tasks: list[str] = field(default_factory=list)


COUNT = 36


def _tid(n: int) -> str:
    return str(uuid.UUID(int=0xA0000000_0000_4000_8000_000000000000 + n))


def _trashed(n: int) -> bool:
    return n % 11 == 10


# Known before the store is written, so strategies can use them at import time.
LIVE_IDS = [_tid(n) for n in range(COUNT) if not _trashed(n)]
TRASHED_IDS = [_tid(n) for n in range(COUNT) if _trashed(n)]


def write_store(path: Path, *, fts: bool) -> Corpus:
    """The property store at path (with or without the full-text tables); what it holds."""
    b = StoreBuilder(path, fts=fts)
    corpus = Corpus()
    sources = ("dictation", "meeting", "file")
    for n in range(COUNT):
        picks = [SENTENCES[(n * 7 + k * 5) % len(SENTENCES)] for k in range(1 + n % 4)]
        source = sources[n % 3]
        trashed = _trashed(n)
        created = ts(1 + n % 28, minute=(n * 37) % 1440, month=4 + n % 3)
        fields: dict[str, Any] = {
            "id": _tid(n),
            "title": picks[0].split(".")[0][:40] if n % 5 else f"Note {n}",
            "source": source,
            "language": ("en", "pt-BR", "es", "de", "fr", None)[n % 6],
            "created_at": created,
            "deleted_at": ts(28, month=6) if trashed else None,
        }
        if source == "meeting":
            segments: list[tuple[str | None, str]] = [
                (SPEAKERS[(n + k) % len(SPEAKERS)] if (n + k) % 6 else None, text) for k, text in enumerate(picks)
            ]
            tid = b.transcript(raw_text=" ".join(t for _, t in segments), segments=segments, **fields)
        else:
            raw = " ".join(picks).lower() if n % 2 else " ".join(picks)
            formatted = " ".join(picks) if n % 3 == 1 else None
            tid = b.transcript(raw_text=raw, formatted_text=formatted, **fields)
        (corpus.trashed if trashed else corpus.live).append(tid)
        if n % 4 == 0:
            for k in range(2):
                corpus.tasks.append(
                    b.task(
                        id=str(uuid.UUID(int=0xB0000000_0000_4000_8000_000000000000 + 2 * n + k)),
                        transcript_id=tid,
                        title=f"Follow up {n}.{k}: {picks[0][:30]}",
                        status="done" if k else "open",
                        due_at=ts(1 + (n + k) % 28, month=5) if (n + k) % 3 else None,
                        priority=(n + k) % 4 or None,
                        created_at=created,
                        completed_at=created if k else None,
                    )
                )
    corpus.tasks.append(b.task(id=str(uuid.UUID(int=0xB0000000_0000_4000_8000_0000000000FF)), title="Orphan task"))
    b.close()
    return corpus
