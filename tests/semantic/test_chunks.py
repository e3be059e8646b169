"""Chunks: every word said is embedded exactly once, in order, in windows that cite their segments."""

from __future__ import annotations

import itertools

from hypothesis import given
from hypothesis import strategies as st

from magnotia_mcp.search.semantic.chunks import SPOKEN, TEXT, TITLE, WORDS, Segment, chunks, piece

words = st.text(alphabet="abcdefghij ãé\n\t", max_size=400)
segment_lists = st.lists(st.tuples(st.one_of(st.none(), st.sampled_from(["Ana", "Ben", ""])), words), max_size=30)


def as_segments(parts: list[tuple[str | None, str]]) -> list[Segment]:
    return [Segment(seq, 1000 * seq, 1000 * seq + 900, speaker, text) for seq, (speaker, text) in enumerate(parts)]


@given(title=words, text=words, parts=segment_lists)
def test_every_word_is_embedded_once_in_order(title: str, text: str, parts: list[tuple[str | None, str]]) -> None:
    segments = as_segments(parts)
    out = chunks(title, text, segments)
    titles = [c for c in out if c.kind == TITLE]
    assert [c.text for c in titles] == ([" ".join(title.split())] if title.split() else [])
    body = [c for c in out if c.kind != TITLE]
    said = [w for s in segments for w in s.text.split()]
    expected = said if said else text.split()
    assert [w for c in body for w in c.text.split()] == expected
    for c in body:
        assert 1 <= len(c.text.split()) <= WORDS
        if c.kind == TEXT:
            assert (c.first_seq, c.start_ms, c.speaker) == (None, None, None)
    spoken = [c for c in body if c.kind == SPOKEN]
    assert all(c.kind == SPOKEN for c in body) or not said
    for c in spoken:
        assert c.first_seq is not None
        assert c.last_seq is not None
        assert c.first_seq <= c.last_seq
        assert c.start_ms == 1000 * c.first_seq
        assert c.end_ms == 1000 * c.last_seq + 900
        in_window = {s.speaker for s in segments[c.first_seq : c.last_seq + 1] if s.speaker and s.text.split()}
        assert c.speaker in in_window if in_window else c.speaker is None
    for a, b in itertools.pairwise(spoken):
        assert a.last_seq is not None
        assert b.first_seq is not None
        assert a.last_seq <= b.first_seq  # in spoken order; a long segment may span two windows


def test_a_meeting_is_cut_into_windows_with_the_main_speaker() -> None:
    segments = as_segments(
        [
            ("Ana", "word " * WORDS),
            ("Ben", "other " * (WORDS // 3)),
            ("Ana", "more " * (WORDS // 2)),
            ("Ben", "b " * WORDS),
        ]
    )
    out = chunks("Weekly sync", "", segments)
    assert [(c.kind, c.first_seq, c.last_seq, c.speaker) for c in out] == [
        (TITLE, None, None, None),
        (SPOKEN, 0, 0, "Ana"),
        (SPOKEN, 1, 2, "Ana"),  # who said most in the window
        (SPOKEN, 3, 3, "Ben"),
    ]


@given(title=words, text=words)
def test_a_piece_is_the_window_chunks_cut_from_a_text(title: str, text: str) -> None:
    """A hit on a text without segments is shown by its k-th window, read back from the text by piece(text, k)."""
    pieces = [c.text for c in chunks(title, text, []) if c.kind == TEXT]
    assert [piece(text, k) for k in range(len(pieces))] == pieces
    assert piece(text, len(pieces)) == ""  # past its end (the text got shorter since it was embedded)
    assert piece(text, -1) == ""
