"""Who was there, and for how long, end to end: search hits carry their transcript's speakers and duration_ms,
list_transcripts filters by speaker (all those named spoke) and can leave previews out.

Over a real server process, stdio and HTTP, on a store with its full-text index and on one without (the scan),
in every protocol revision: what a hit says of its transcript is what get_transcript says; the filter folds case
and accents, ignores unlabelled segments, pages exactly and never shows the trash.
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

# name: (labels of its segments in spoken order, None unlabelled; duration_ms). Newest first: day 28 down.
MEETINGS: dict[str, tuple[list[str | None], int | None]] = {
    "kickoff": (["Priya", None, "Jonas", "Priya"], 1_800_000),
    "design": (["  PRÍYA ", "Ana"], 3_600_000),  # the same Priya, typed otherwise
    "standup": (["Bo", "Ána", None, "Speaker 3"], 60_000),
    "note": ([None], None),  # a dictation: one unlabelled segment
    "retro": (["jonas", "Priya Silva"], 2_400_000),  # "Priya Silva" is someone else
    "planning": (["Jonas", "priya"], 900_000),
    "sync": (["Ana", "Priya", "Bo"], 1_200_000),
    "offsite": (["Priya", "Ana", "Jonas"], 10_800_000),  # long: read by window, its speakers from the cache
}
NEWEST_FIRST = list(MEETINGS)
TRASHED = "secret"  # Priya and Jonas spoke in it too, and it says budget: it never shows
LONG_REPEATS = 900  # the offsite's raw text: well over 64 KiB


def _id(k: int) -> str:
    return f"00000000-0000-4000-8000-{k:012d}"


IDS = {name: _id(k) for k, name in enumerate([*NEWEST_FIRST, TRASHED], 1)}
NAMES = {v: k for k, v in IDS.items()}


def _build(path: Path, fts: bool) -> Path:
    b = StoreBuilder(path, fts=fts)
    for day, (name, (labels, duration)) in zip(range(28, 0, -1), MEETINGS.items(), strict=False):
        if name == "offsite":
            said = [
                (labels[k % 3], f"part {k} of the budget offsite with plenty of words to say " * 2)
                for k in range(LONG_REPEATS)
            ]
        else:
            said = [(label, f"{name} budget item {k}") for k, label in enumerate(labels)]
        b.transcript(
            id=IDS[name],
            title=name.title(),
            source="dictation" if name == "note" else "meeting",
            raw_text=" ".join(text for _, text in said),
            # A preview's worth of minutes (most of what a list row costs), with no word searched for here.
            formatted_text=None if name == "offsite" else f"{name} minutes: " + "we talked it through at length. " * 20,
            duration_ms=duration,
            created_at=ts(day, month=11, year=2025),
            segments=said,
        )
    b.transcript(
        id=IDS[TRASHED],
        title="Secret",
        source="meeting",
        raw_text="budget secret",
        created_at=ts(29, month=11, year=2025),
        deleted_at=ts(30, month=11, year=2025),
        segments=[("Priya", "budget"), ("Jonas", "secret")],
    )
    return b.close()


@pytest.fixture(scope="module", params=["fts", "scan"])
def store(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    mode = str(request.param)
    return _build(tmp_path_factory.mktemp("who") / "magnotia.db", mode == "fts"), mode


class Session:
    """One server at one revision: tool results, validated against outputSchema where there is one."""

    def __init__(self, server: ServerProcess, revision: str) -> None:
        self.server = server
        self.revision = revision
        self.schemas = {t["name"]: t.get("outputSchema") for t in server.request("tools/list")["result"]["tools"]}
        self.texts: list[str] = []

    def result(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        result = self.server.call(tool, arguments)["result"]
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

    def listed(self, arguments: dict[str, Any]) -> list[str]:
        """Every page of list_transcripts with these arguments, concatenated: the names, in order."""
        names: list[str] = []
        page = self.result("list_transcripts", arguments)
        while True:
            names += [NAMES[t["id"]] for t in page["transcripts"]]
            if page["next_cursor"] is None:
                return names
            page = self.result("list_transcripts", {**arguments, "cursor": page["next_cursor"]})


def _spoke(name: str, *wanted: str) -> bool:
    """Whether each of wanted (already in the store's spelling: Priya, Jonas, Ana) spoke in the meeting."""
    keys = {"  PRÍYA ": "Priya", "jonas": "Jonas", "priya": "Priya", "Ána": "Ana"}
    labels = {keys.get(label, label) for label in MEETINGS[name][0] if label is not None}
    return all(w in labels for w in wanted)


@pytest.mark.parametrize("revision", REVISIONS)
def test_hits_say_who_spoke_and_for_how_long(start_server: Start, store: tuple[Path, str], revision: str) -> None:
    path, mode = store
    server = start_server(path)
    server.open(revision)
    s = Session(server, revision)
    truth = {name: s.result("get_transcript", {"id": tid}) for name, tid in IDS.items() if name != TRASHED}
    assert truth["offsite"]["speakers"] == ["Priya", "Ana", "Jonas"]
    assert truth["note"]["speakers"] == []

    searches: list[dict[str, Any]] = [
        {"query": "budget", "limit": 50},
        {"query": "budget", "limit": 50, "sort": "newest"},
        {"query": "budget item", "limit": 50, "sort": "oldest"},
        {"query": "budget", "limit": 50, "speaker": "priya"},
        {"query": "offsite", "limit": 3},
    ]
    for arguments in searches:
        found = s.result("search_transcripts", arguments)
        assert found["mode"] == mode
        assert found["hits"], arguments
        for hit in found["hits"]:
            name = NAMES[hit["transcript_id"]]
            assert hit["speakers"] == truth[name]["speakers"], (arguments, name)
            assert hit["duration_ms"] == truth[name]["duration_ms"] == MEETINGS[name][1], (arguments, name)
    everything = s.result("search_transcripts", searches[0])
    assert {NAMES[h["transcript_id"]] for h in everything["hits"]} == set(MEETINGS)
    theirs = s.result("search_transcripts", searches[3])
    assert {NAMES[h["transcript_id"]] for h in theirs["hits"]} == {n for n in MEETINGS if _spoke(n, "Priya")}
    # A page cut to the budget, and its rest by cursor: the same facts on every page.
    first = s.result("search_transcripts", {"query": "budget", "limit": 50, "max_tokens": 1000})
    assert first["next_cursor"] is not None
    rest = s.result("search_transcripts", {"query": "budget", "limit": 50, "cursor": first["next_cursor"]})
    for hit in first["hits"] + rest["hits"]:
        assert (hit["speakers"], hit["duration_ms"]) == (
            truth[NAMES[hit["transcript_id"]]]["speakers"],
            truth[NAMES[hit["transcript_id"]]]["duration_ms"],
        )
    assert not any("Secret" in text or IDS[TRASHED] in text for text in s.texts)


@pytest.mark.parametrize("revision", REVISIONS)
def test_list_by_speaker(start_server: Start, store: tuple[Path, str], revision: str) -> None:
    server = start_server(store[0])
    server.open(revision)
    s = Session(server, revision)
    priya = [n for n in NEWEST_FIRST if _spoke(n, "Priya")]
    assert priya == ["kickoff", "design", "planning", "sync", "offsite"]  # the model above, checked

    # One speaker, however typed: case, accents and surrounding spaces do not matter; "Priya Silva" is not Priya.
    for typed in ("Priya", "priya", " PRÍYA ", ["Príya"]):
        page = s.result("list_transcripts", {"speaker": typed})
        assert [NAMES[t["id"]] for t in page["transcripts"]] == priya, typed
        assert page["next_cursor"] is None
    # Several: all of them spoke.
    assert s.listed({"speaker": ["Priya", "Jonas"]}) == ["kickoff", "planning", "offsite"]
    assert s.listed({"speaker": ["priya", "ana", "JONAS"]}) == ["offsite"]
    assert s.listed({"speaker": ["Ana", "Ana "]}) == [n for n in NEWEST_FIRST if _spoke(n, "Ana")]
    assert s.listed({"speaker": ["Priya", "Nobody"]}) == []
    assert s.listed({"speaker": "Priya Silva"}) == ["retro"]
    assert s.listed({"speaker": "Speaker 3"}) == ["standup"]
    # Pages of one and of two, concatenated, are the list: exact, nothing twice, nothing skipped.
    for limit in (1, 2):
        assert s.listed({"speaker": "Priya", "limit": limit}) == priya
        assert s.listed({"speaker": ["Jonas", "Priya"], "limit": limit}) == ["kickoff", "planning", "offsite"]
    # With other filters: which meetings did Priya join in the second half of November.
    late = s.result("list_transcripts", {"speaker": "Priya", "since": "2025-11-24", "until": "2025-11"})
    assert [NAMES[t["id"]] for t in late["transcripts"]] == ["kickoff", "design"]
    assert late["range"] == {"since": "2025-11-24T00:00:00.000Z", "until": "2025-12-01T00:00:00.000Z"}
    for t in late["transcripts"]:
        assert t["speakers"][0].strip().lower() in ("priya", "príya")
        assert t["preview"]
    # A blank name names no one: an error the model can correct, not an empty list.
    for blank in ("  ", ["Priya", ""]):
        response = server.call("list_transcripts", {"speaker": blank})
        refused = response["result"]["isError"] if "result" in response else response["error"]["code"] == -32602
        assert refused, response
    assert not any("Secret" in text or IDS[TRASHED] in text for text in s.texts)


@pytest.mark.parametrize("revision", REVISIONS)
def test_a_list_without_previews(start_server: Start, store: tuple[Path, str], revision: str) -> None:
    server = start_server(store[0])
    server.open(revision)
    s = Session(server, revision)
    full = s.result("list_transcripts", {"limit": 100})
    bare = s.result("list_transcripts", {"limit": 100, "previews": False})
    assert [NAMES[t["id"]] for t in bare["transcripts"]] == NEWEST_FIRST
    assert all("preview" in t and t["preview"] for t in full["transcripts"])
    assert all("preview" not in t for t in bare["transcripts"])
    assert [{k: v for k, v in t.items() if k != "preview"} for t in full["transcripts"]] == bare["transcripts"]
    assert len(json.dumps(bare)) < len(json.dumps(full))
    # Within the same budget, a page without previews holds more.
    cut = s.result("list_transcripts", {"limit": 100, "max_tokens": 1000})
    lean = s.result("list_transcripts", {"limit": 100, "max_tokens": 1000, "previews": False})
    assert len(lean["transcripts"]) > len(cut["transcripts"])
    assert s.listed({"limit": 3, "previews": False, "speaker": "Priya"}) == [
        n for n in NEWEST_FIRST if _spoke(n, "Priya")
    ]
