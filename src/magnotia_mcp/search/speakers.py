"""Speaker labels: how a label the user names is compared with the labels in segments.

Diarization writes labels such as ``Speaker 1`` or ``Ana``; a user (or a model)
types them back however they like. Two labels are the same speaker when they
are equal once folded:

* case and Latin accents do not matter (the same folding as search, so
  ``"ana"`` and ``"Ána"`` are ``"Ana"``), whether the accents are written
  precomposed or as combining marks (NFC first);
* whitespace around the label does not matter; whitespace inside it does;
* it is equality, not containment: ``"Ana"`` is not ``"Ana Silva"``, nor
  ``"Speaker 1"`` ``"Speaker 10"``;
* a segment with no label (NULL) matches nothing, and neither does a blank name.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable
from functools import lru_cache

from magnotia_mcp.errors import InvalidArguments
from magnotia_mcp.search.folding import fold


def speaker_key(label: str) -> str:
    """The form two labels are compared in: NFC, stripped, case and accents folded."""
    return fold(unicodedata.normalize("NFC", label).strip())


def speaker_matches(wanted: str, label: str | None) -> bool:
    """True when the segment label ``label`` names the speaker ``wanted`` (see the module docstring)."""
    if label is None:
        return False
    key = speaker_key(wanted)
    return key != "" and key == speaker_key(label)


@lru_cache(maxsize=4096)  # called for every labelled segment a filter walks: a store has few distinct labels
def fold_label(label: str | None) -> str | None:
    """``magnotia_fold`` for SQLite: a segment's label in the form labels are compared in (``speaker_key``)."""
    key = speaker_key(label) if label else ""
    return key or None


def spoke(given: str | list[str]) -> tuple[list[str], Callable[[str | None], str | None]]:
    """A speaker filter's names (list_transcripts'), each once, in the form labels are compared in; and fold_label."""
    names = [given] if isinstance(given, str) else given
    if not names or any(not name.strip() or len(name) > 200 for name in names):
        raise InvalidArguments("speaker", "must name each speaker (their label, e.g. Ana), 1-200 characters")
    return list(dict.fromkeys(speaker_key(name) for name in names)), fold_label
