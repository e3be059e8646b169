"""speakers.speaker_matches: the label a user names against the labels in segments."""

from __future__ import annotations

import pytest

from magnotia_mcp.search.speakers import speaker_key, speaker_matches


@pytest.mark.parametrize(
    ("wanted", "label"),
    [
        ("Ana", "Ana"),
        ("ana", "Ana"),
        ("ANA", "ana"),
        ("Ana", "Ána"),
        ("ana", "ÁNA"),
        ("  Ana\t", "Ana"),
        ("Ana", " Ana \n"),
        ("Ana", "A\u0301na"),  # the accent as a combining mark (as macOS often writes it)
        ("A\u0301NA", "ána"),
        ("speaker 1", "Speaker 1"),
        ("Müller", "MULLER"),
        ("João", "joao"),
        ("İpek", "ipek"),  # a capital with a longer lower case
        ("ΣΟΦΊΑ", "σοφία"),  # Greek case folds; its tonos is kept on both sides
        ("李雷", "李雷"),
        ("Ana Silva", "ana silva"),
    ],
)
def test_the_same_speaker_whatever_the_case_accents_or_surrounding_spaces(wanted: str, label: str) -> None:
    assert speaker_matches(wanted, label)
    assert speaker_matches(label, wanted)  # symmetric
    assert speaker_key(wanted) == speaker_key(label)


@pytest.mark.parametrize(
    ("wanted", "label"),
    [
        ("Ana", "Ana Silva"),  # equality, not containment
        ("Ana Silva", "Ana"),
        ("Speaker 1", "Speaker 10"),
        ("Ana", "Anna"),
        ("Ana Silva", "Ana  Silva"),  # spaces inside a label count
        ("Ana", "Bo"),
        ("σοφια", "σοφία"),  # only Latin accents are folded, as the search index does
        ("", ""),  # a blank name names nobody
        ("  ", " "),
    ],
)
def test_different_speakers(wanted: str, label: str) -> None:
    assert not speaker_matches(wanted, label)


@pytest.mark.parametrize("wanted", ["Ana", "", " "])
def test_an_unlabelled_segment_matches_no_one(wanted: str) -> None:
    assert not speaker_matches(wanted, None)


def test_the_key_is_the_label_folded() -> None:
    assert speaker_key("  Ána Sílva ") == "ana silva"
    assert speaker_key("A\u0301na") == "ana"
