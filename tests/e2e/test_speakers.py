"""Speakers end to end: list_transcripts and get_transcript name each transcript's speakers.

In every protocol revision, over a real server process: the labels come in
order of first appearance, each once, unlabelled segments add nothing, the
trash never shows, and where the revision has structured output it validates
against the tool's outputSchema (every message is also checked against the
revision's official schema by the support code).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from devkit.storefactory import StoreBuilder, ts
from tests.support.protocol import REVISIONS, at_least
from tests.support.server import ServerProcess

Start = Callable[..., ServerProcess]

pytestmark = pytest.mark.transports("stdio", "http")
IDS = {
    "standup": "00000000-0000-4000-8000-000000000001",
    "note": "00000000-0000-4000-8000-000000000002",
    "interview": "00000000-0000-4000-8000-000000000003",
    "secret": "00000000-0000-4000-8000-000000000004",
    "one-voice": "00000000-0000-4000-8000-000000000005",
}
SPEAKERS = {
    "standup": ["Bo", "Ána", "Speaker 3"],
    "note": [],
    "interview": [],
    "one-voice": ["Chen"],
}
NEWEST_FIRST = ["standup", "note", "interview", "one-voice"]  # "secret" is newer, and in the trash


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    b = StoreBuilder(tmp_path_factory.mktemp("speakers") / "magnotia.db")
    b.transcript(
        id=IDS["standup"],
        title="Standup",
        source="meeting",
        raw_text="morning all hi yes blocked on review thanks next",
        created_at=ts(20),
        segments=[
            ("Bo", "morning all"),
            (None, "hi"),
            ("Ána", "yes"),
            ("Bo", "blocked on review"),
            ("Speaker 3", "thanks"),
            ("Ána", "next"),
        ],
    )
    b.transcript(id=IDS["note"], title="Note", raw_text="buy milk", created_at=ts(19))  # one unlabelled segment
    b.transcript(
        id=IDS["interview"], title="Interview", source="file", raw_text="imported", created_at=ts(18), segments=[]
    )
    b.transcript(
        id=IDS["one-voice"],
        title="Monologue",
        source="meeting",
        raw_text="one two three",
        created_at=ts(17),
        segments=[("Chen", "one"), ("Chen", "two"), ("Chen", "three")],
    )
    b.transcript(
        id=IDS["secret"],
        title="Secret",
        source="meeting",
        raw_text="trashed words",
        created_at=ts(21),
        deleted_at=ts(22),
        segments=[("Mallory", "trashed"), ("Bo", "words")],
    )
    return b.close()


class Session:
    """One server at one revision: tool results, validated against outputSchema where there is one."""

    def __init__(self, server: ServerProcess, revision: str) -> None:
        self.server = server
        self.revision = revision
        listed = server.request("tools/list")["result"]["tools"]
        self.schemas = {t["name"]: t.get("outputSchema") for t in listed}
        self.texts: list[str] = []

    def result(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        response = self.server.call(tool, arguments)
        result = response["result"]
        assert result["isError"] is False, result
        text = result["content"][0]["text"]
        self.texts.append(text)
        payload: dict[str, Any] = json.loads(text)
        if at_least(self.revision, "2025-06-18"):
            assert result["structuredContent"] == payload
            jsonschema.validate(payload, self.schemas[tool])
        else:
            assert "structuredContent" not in result
        return payload


@pytest.mark.parametrize("revision", REVISIONS)
def test_speakers_in_every_revision(start_server: Start, store: Path, revision: str) -> None:
    server = start_server(store)
    server.open(revision)
    s = Session(server, revision)
    if at_least(revision, "2025-06-18"):
        for tool, schema in (
            ("list_transcripts", s.schemas["list_transcripts"]["properties"]["transcripts"]["items"]),
            ("get_transcript", s.schemas["get_transcript"]),
        ):
            assert "speakers" in schema["required"], tool
            assert schema["properties"]["speakers"]["type"] == "array", tool
            assert schema["properties"]["speakers"]["items"] == {"type": "string"}, tool

    # One page: each transcript's own speakers, first appearance first, each once, no nulls.
    page = s.result("list_transcripts", {})
    by_name = {v: k for k, v in IDS.items()}
    assert [by_name[t["id"]] for t in page["transcripts"]] == NEWEST_FIRST
    assert {by_name[t["id"]]: t["speakers"] for t in page["transcripts"]} == SPEAKERS

    # Pages of one, and a filter: the same speakers for the same rows.
    seen: dict[str, list[str]] = {}
    arguments: dict[str, Any] = {"limit": 1}
    while True:
        one = s.result("list_transcripts", arguments)
        seen.update({by_name[t["id"]]: t["speakers"] for t in one["transcripts"]})
        if one["next_cursor"] is None:
            break
        arguments = {"limit": 1, "cursor": one["next_cursor"]}
    assert seen == SPEAKERS
    meetings = s.result("list_transcripts", {"source": "meeting"})
    assert [t["speakers"] for t in meetings["transcripts"]] == [SPEAKERS["standup"], SPEAKERS["one-voice"]]

    # get_transcript: the whole transcript's speakers, with or without segments, whatever the window.
    for name, speakers in SPEAKERS.items():
        for arguments in ({}, {"include_segments": True}, {"include_segments": True, "offset": 3, "max_chars": 2}):
            got = s.result("get_transcript", {"id": IDS[name], **arguments})
            assert got["speakers"] == speakers, (name, arguments)
    segments = s.result("get_transcript", {"id": IDS["standup"], "include_segments": True})["segments"]
    assert [seg["speaker"] for seg in segments] == ["Bo", None, "Ána", "Bo", "Speaker 3", "Ána"]

    # The trash: not found, and its only speaker never appears in anything returned.
    missing = server.call("get_transcript", {"id": IDS["secret"]})
    if at_least(revision, "2025-11-25"):
        assert missing["result"]["isError"] is True
    else:
        assert missing["error"]["code"] == -32000
    assert not any("Mallory" in text for text in s.texts)
