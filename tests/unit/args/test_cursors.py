"""magnotia_mcp.args.cursors: opaque page cursors that round-trip and refuse edits and forgeries."""

from __future__ import annotations

import base64
import json

import pytest

from magnotia_mcp.args import cursors
from magnotia_mcp.errors import InvalidArguments
from magnotia_mcp.text import StoredBlob


def test_cursors_round_trip_their_key() -> None:
    """A cursor decodes to exactly the key it was made from, including non-ASCII text."""
    key = ("2026-05-09T14:03:12.042Z", "id-é-🎉")
    assert cursors.decode("transcripts", cursors.encode("transcripts", key), 2) == key


def _edits(cursor: str) -> list[str]:
    body, _, tag = cursor.partition(".")
    flipped = body[:-1] + ("A" if body[-1] != "A" else "B")
    return [
        "",
        "x",
        ".",
        cursor + "x",
        cursor[:-1],
        f"{flipped}.{tag}",
        body,
        f"{body}.{'0' * len(tag)}",
        cursor.upper(),
        "é" + cursor,
        cursor.replace(".", ".."),
    ]


def test_edited_or_forged_cursors_are_refused_naming_cursor() -> None:
    """Any change to a cursor, or one invented by the client, is an invalid 'cursor' argument."""
    good = cursors.encode("transcripts", ("2026-05-09T14:03:12.042Z", "abc"))
    for bad in _edits(good):
        with pytest.raises(InvalidArguments) as caught:
            cursors.decode("transcripts", bad, 2)
        assert caught.value.argument == "cursor", bad


def test_a_cursor_from_one_list_is_refused_by_the_other() -> None:
    """A list_tasks cursor is not accepted by list_transcripts, and vice versa."""
    tasks = cursors.encode("tasks", (0, 0, "2026-05-09", "2026-05-09T14:03:12.042Z", "t1"))
    transcripts = cursors.encode("transcripts", ("2026-05-09T14:03:12.042Z", "abc"))
    with pytest.raises(InvalidArguments):
        cursors.decode("transcripts", tasks, 2)
    with pytest.raises(InvalidArguments):
        cursors.decode("tasks", transcripts, 5)


def test_a_cursor_with_a_key_of_the_wrong_length_is_refused() -> None:
    """A genuine cursor of the right kind still has to carry as many key parts as the list expects."""
    cursor = cursors.encode("transcripts", ("2026-05-09T14:03:12.042Z", "abc"))
    with pytest.raises(InvalidArguments):
        cursors.decode("transcripts", cursor, 3)


def test_a_blob_in_a_key_round_trips_as_the_bytes_it_holds() -> None:
    """A BLOB created_at (a broken writer's) continues after as a BLOB, since SQLite sorts it after every text."""
    shown = StoredBlob(b"\xff\x00 2026")
    cursor = cursors.encode("transcripts", (shown, "abc"))
    assert cursors.decode("transcripts", cursor, 2) == (b"\xff\x00 2026", "abc")
    assert cursors.decode("transcripts", cursors.encode("transcripts", (str(shown), "abc")), 2) == (str(shown), "abc")


def test_a_key_holding_what_no_blob_encodes_to_is_refused() -> None:
    """Signed with the server's key (public, in the source), a key of another shape is still refused."""
    for value in ({"blob": "zz"}, {"blob": 1}, {"blob": "00", "more": 1}, {"other": "00"}, ["00"]):
        body = base64.urlsafe_b64encode(json.dumps(["transcripts", value, "abc"]).encode()).decode().rstrip("=")
        forged = f"{body}.{cursors._digest(body.encode())}"
        with pytest.raises(InvalidArguments):
            cursors.decode("transcripts", forged, 2)
