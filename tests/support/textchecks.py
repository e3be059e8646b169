"""What a text window must never do, shared by the unit and end-to-end window tests."""

from __future__ import annotations

import unicodedata


def breaks_cluster(text: str, cut: int) -> bool:
    """True when cutting text at cut separates a mark, joiner or modifier from what it belongs to."""
    if cut in (0, len(text)):
        return False
    after, before = text[cut], text[cut - 1]
    return (
        unicodedata.category(after) in ("Mn", "Mc", "Me")
        or after in "\u200d\ufe0f\ufe0e"
        or "\U0001f3fb" <= after <= "\U0001f3ff"
        or before == "\u200d"
    )
