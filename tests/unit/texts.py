"""Texts that are hard to cut or fold: emoji sequences, combining marks, skin tones, scripts."""

from __future__ import annotations

FAMILY = "\U0001f468\u200d\U0001f469\u200d\U0001f467\u200d\U0001f466"  # one ZWJ sequence, 7 code points
THUMBS = "\U0001f44d\U0001f3fd"  # emoji + skin tone modifier
WINDOW_TEXTS = {
    "ascii": "The quick brown fox jumps over the lazy dog. " * 7,
    "emoji": "ok 🎉 go 😀😀 end " * 9,
    "combining": ("cafe\u0301 re\u0301sume\u0301 nai\u0308ve " * 9) + "e\u0301\u0301\u0301",
    "zwj": (f"{FAMILY} and {FAMILY}{FAMILY} " * 6),
    "skin-tone": (f"{THUMBS} yes {THUMBS}{THUMBS} " * 7),
    "variation": ("\u2764\ufe0f love \u263a\ufe0f " * 8),
    "mixed": "Olá, coração! 日本語のテキスト " + FAMILY + " e\u0301 " + THUMBS + " done",
}
