"""Search by meaning through the real server: the index built by `magnotia-mcp index`, fused with words.

The model is the small one the test dependency tokenlearn-static-model ships (tests/semantic/conftest.py),
so the queries are ones it gets right; what is checked is what the server does with it: hits found by
meaning say so and cite the segment nearest the query (time and speaker), words still rank first where
they match, filters and the trash hold for meaning too (a transcript trashed after the index was built
never surfaces), a search restricted to a speaker counts only where they spoke, and an index the server
cannot use makes it say why and search by words. Against the one-file executable (built without the
semantic extra) the same store gets words only, and says why.
"""

from __future__ import annotations

import os
import random
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import static_model

from devkit.storefactory import StoreBuilder, ts
from magnotia_mcp.search.semantic import indexfile, loaded, nearest, scoring
from magnotia_mcp.store.opening import stamp as store_stamp
from tests.semantic import stores
from tests.support.checked import checked_result
from tests.support.mappings import mapped_kib
from tests.support.protocol import MODERN
from tests.support.server import Launcher, ServerProcess

Start = Callable[..., ServerProcess]
# Said with none of the words of the query "advertising spending cuts", which finds it by meaning.
PASSAGE = "On marketing: we'll put less money into campaigns next quarter. Fine by me, the last campaigns brought few."

pytestmark = pytest.mark.transports("stdio", "http")
# Words the generated meetings of test_a_scan_shared_between_threads_answers_as_one_thread_does are drawn from.
TOPIC_WORDS = """budget campaign customer export bug hiring plan office lease march engineering lead january release
design review invoice supplier shipping delay roadmap quarter marketing sales team onboarding training server outage
database migration security audit contract renewal travel conference feedback survey"""
TOPICS = TOPIC_WORDS.split()


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, launcher: Launcher) -> Path:
    if launcher.kind == "container":
        pytest.skip("the image has no semantic extra and no index folder of this machine (docs/search.md)")
    folder = tmp_path / "cache"
    monkeypatch.setenv(indexfile.CACHE_ENV, str(folder))  # the server processes inherit it
    return folder


def build_index(db: Path) -> None:
    model = Path(static_model.__file__).parent / "model"
    done = subprocess.run(
        [sys.executable, "-m", "magnotia_mcp", "index", "--db", str(db), "--model", str(model)],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr


@pytest.fixture(params=["fts", "scan"])
def store(request: pytest.FixtureRequest, tmp_path: Path, cache: Path) -> Path:
    db = stores.write(tmp_path / "store" / "magnotia.db", fts=request.param == "fts")
    build_index(db)
    return db


def nearest_200(db: Path, query: str) -> tuple[nearest.Searcher, set[str]]:
    """The store's index, built and loaded in-process, and the 200 transcripts nearest query overall (what a filtered
    search asks the index for first): a test's preconditions on where its transcripts fall."""
    build_index(db)
    found = nearest.searcher(db, wait=60)
    first = {f.doc for f in found.near(query, 200).found}
    assert len(first) == 200
    return found, first


def search(server: ServerProcess, **arguments: Any) -> dict[str, Any]:
    return checked_result(server, "search_transcripts", arguments)


def started(start_server: Start, db: Path) -> ServerProcess:
    proc = start_server(db)
    proc.open(MODERN)
    return proc


def ids(result: dict[str, Any]) -> list[str]:
    return [hit["transcript_id"] for hit in result["hits"]]


def eventually(
    server: ServerProcess, query: str, done: Callable[[dict[str, Any]], bool], **filters: Any
) -> dict[str, Any]:
    """Search until done(answer): the server refreshes its index on a thread of its own, so this waits on an event."""
    deadline = time.monotonic() + 120  # a bound for a broken server, not a speed: it is never asserted on
    while True:
        result = search(server, query=query, **filters)
        if done(result):
            return result
        assert time.monotonic() < deadline, f"the server never got there; its last answer: {result}"
        time.sleep(0.05)


def test_paraphrase_and_other_languages_are_found_by_meaning(
    store: Path, start_server: Start, launcher: Launcher
) -> None:
    server = started(start_server, store)
    if launcher.kind == "frozen":
        result = search(server, query="new head of development")
        assert result["semantic"]["used"] is False
        assert "semantic extra is not installed" in result["semantic"]["why"]
        assert result["hits"] == []  # by words, nothing: and the hint says there is no usable index
        return
    # An English question, the meeting in German: no word shared.
    result = search(server, query="new head of development")
    assert result["semantic"] == {"used": True, "transcripts": 5, "complete": True}
    assert ids(result)[0] == stores.LEAD_DE
    hit = result["hits"][0]
    assert hit["matched_by"] == "meaning"
    assert hit["matched_terms"] == []
    assert hit["similarity"] > 0.3
    moment = hit["moments"][0]  # the segment to cite: when, and who said it
    assert (moment["seq"], moment["speaker"], moment["start_ms"]) == (0, "Jonas", 0)
    assert moment["snippet"].startswith("Ich übernehme im Januar")
    assert "snippet" not in hit  # the moment quotes it
    # Who spoke there and how long it ran, as get_transcript says, on every hit whatever found it.
    for found in result["hits"]:
        whole = checked_result(server, "get_transcript", {"id": found["transcript_id"]})
        assert (found["speakers"], found["duration_ms"]) == (whole["speakers"], whole["duration_ms"])
    assert "Jonas" in hit["speakers"]
    # The same budget cut said in English and in Portuguese, asked with other words.
    result = search(server, query="advertising spending cuts")
    assert {stores.BUDGET, stores.BUDGET_PT} <= set(ids(result)[:3])
    budget = next(h for h in result["hits"] if h["transcript_id"] == stores.BUDGET)
    assert budget["matched_by"] == "meaning"
    assert any(m["speaker"] == "Ana" and "less money into campaigns" in m["snippet"] for m in budget["moments"])
    assert stores.TRASHED not in ids(result)  # its words say it best, and it is in the trash


def test_words_still_rank_first_and_say_so(store: Path, start_server: Start, launcher: Launcher) -> None:
    if launcher.kind == "frozen":
        pytest.skip("the one-file build has no semantic extra: covered by the test above")
    server = started(start_server, store)
    result = search(server, query="export bug")
    assert ids(result)[0] == stores.EXPORT
    assert result["hits"][0]["matched_by"] in ("words", "both")
    assert result["hits"][0]["matched_terms"] == ["export", "bug"]
    for hit in result["hits"]:
        assert hit["matched_by"] in ("words", "meaning", "both")
    ordered = search(server, query="export bug", sort="newest")  # time order is by words only
    assert "semantic" not in ordered
    assert all("matched_by" not in hit for hit in ordered["hits"])
    spoken = search(server, query="campaigns", speaker="Ana")  # what she said matches: by words first
    assert ids(spoken)[0] == stores.BUDGET
    assert spoken["hits"][0]["matched_by"] in ("words", "both")
    assert spoken["hits"][0]["matched_terms"] == ["campaigns"]
    # "fixed": the standup has the word, and the German "Jour fixe" is nearer in meaning. Asked for one hit, the
    # fusion counts meaning's first one only: the standup is a hit by words alone, and carries no similarity.
    (alone,) = search(server, query="fixed", limit=1)["hits"]
    assert (alone["transcript_id"], alone["matched_by"], "similarity" in alone) == (stores.EXPORT, "words", False)
    both = search(server, query="fixed", limit=2)["hits"]
    assert [(h["transcript_id"], h["matched_by"]) for h in both] == [
        (stores.EXPORT, "both"),
        (stores.LEAD_DE, "meaning"),
    ]
    assert all(h["similarity"] > 0.3 for h in both)


def test_a_speaker_is_found_by_what_they_meant(store: Path, start_server: Start, launcher: Launcher) -> None:
    """Restricted to a speaker, meaning counts only where they spoke: the windows they spoke in, their segments
    cited. A meeting about Jonas is no hit for Jonas; one where he said it, in German, is."""
    if launcher.kind == "frozen":
        pytest.skip("the one-file build has no semantic extra")
    server = started(start_server, store)
    said = search(server, query="new head of development", speaker="Jonas")
    assert said["semantic"]["used"] is True
    assert ids(said) == [stores.LEAD_DE]  # LEAD is about him, but Chloé and Ana speak there, not Jonas
    hit = said["hits"][0]
    assert hit["matched_by"] == "meaning"
    assert [(m["speaker"], m["seq"]) for m in hit["moments"]] == [("Jonas", 0)]
    assert hit["moments"][0]["snippet"].startswith("Ich übernehme im Januar")
    # Labels match without case or accents; Jonas's own meeting is no hit for Chloé.
    about = search(server, query="who takes over as engineering lead", speaker="chloe")
    assert stores.LEAD in ids(about)
    assert stores.LEAD_DE in ids(search(server, query="who takes over as engineering lead"))  # by meaning
    assert stores.LEAD_DE not in ids(about)
    lead = next(h for h in about["hits"] if h["transcript_id"] == stores.LEAD)
    assert lead["moments"][0]["speaker"] == "Chloé"
    assert lead["moments"][0]["snippet"].startswith("Jonas **takes** over")  # words found it too: its words bold
    # Ana's planning meeting, found by meaning and cited at her words, never Ben's; Beatriz says it in Portuguese.
    ana = search(server, query="advertising spending cuts", speaker="Ana")
    assert stores.BUDGET in ids(ana)
    assert stores.BUDGET_PT not in ids(ana)
    budget = next(h for h in ana["hits"] if h["transcript_id"] == stores.BUDGET)
    assert budget["matched_by"] == "meaning"
    assert {m["speaker"] for m in budget["moments"]} == {"Ana"}
    assert any("less money into campaigns" in m["snippet"] for m in budget["moments"])
    assert ids(search(server, query="advertising spending cuts", speaker="Beatriz")) == [stores.BUDGET_PT]
    # Ben answers Ana in the same window (windows are ~30 words, embedded whole): found by it, cited at his words.
    ben = search(server, query="advertising spending cuts", speaker="Ben")
    assert ids(ben) == [stores.BUDGET]
    assert [(m["speaker"], m["seq"]) for m in ben["hits"][0]["moments"]] == [("Ben", 3)]
    assert ben["hits"][0]["speakers"] == checked_result(server, "get_transcript", {"id": stores.BUDGET})["speakers"]
    for hit in (*ana["hits"], *about["hits"], *said["hits"]):
        assert hit["moments"]  # every hit cites a moment of the speaker's
    # Filters and the trash hold: after the meeting's day, or once it is trashed, Jonas said nothing near.
    assert ids(search(server, query="new head of development", speaker="Jonas", since=ts(7))) == []
    assert ids(search(server, query="new head of development", speaker="Nobody")) == []
    conn = sqlite3.connect(store)
    with conn:
        conn.execute("UPDATE transcripts SET deleted_at = ? WHERE id = ?", (ts(20), stores.LEAD_DE))
    conn.close()
    gone = search(server, query="new head of development", speaker="Jonas")
    assert gone["semantic"]["used"] is True
    assert ids(gone) == []


def test_a_speaker_who_said_nothing_in_a_window_is_not_found_by_it(
    tmp_path: Path, cache: Path, start_server: Start, launcher: Launcher
) -> None:
    """A blank segment of theirs (diarization leaves them: a cough, a pause) between two of someone else's holds no
    word of the window that spans it: restricted to them, the window is not theirs, and nothing empty is cited."""
    if launcher.kind == "frozen":
        pytest.skip("the one-file build has no semantic extra")
    b = StoreBuilder(tmp_path / "store" / "magnotia.db")
    said: list[tuple[str | None, str]] = [("Ben", "We'll put less money into campaigns next quarter.")]
    said += [("Ana", "\u3000 "), ("Ben", "Agreed.")]
    meeting = b.transcript(title="Sync", source="meeting", segments=said)
    db = b.close()
    build_index(db)
    server = started(start_server, db)
    assert ids(search(server, query="advertising spending cuts", speaker="Ana")) == []
    ben = search(server, query="advertising spending cuts", speaker="Ben")
    assert ids(ben) == [meeting]
    assert [(m["speaker"], m["seq"]) for m in ben["hits"][0]["moments"]] == [("Ben", 0)]


def test_a_question_near_nothing_in_the_store_is_answered(
    tmp_path: Path, cache: Path, start_server: Start, launcher: Launcher
) -> None:
    """When no transcript is near enough in meaning (every cosine under the floor), the index answers nothing and the
    search goes on: no internal error, no hit (none shares a word either), and it says the index took part."""
    if launcher.kind == "frozen":
        pytest.skip("the one-file build has no semantic extra")
    b = StoreBuilder(tmp_path / "store" / "magnotia.db")
    b.transcript(title="Sync", source="meeting", segments=[("Ben", PASSAGE), ("Ana", "Agreed.")])
    db = b.close()
    build_index(db)
    server = started(start_server, db)
    for query in ("Jupiter moons", "xylophone"):
        for limit in (1, 10):  # under and over the store's one transcript: both ways of cutting the ranking
            result = search(server, query=query, limit=limit)
            assert result["semantic"]["used"] is True, result
            assert result["hits"] == [], result
    assert ids(search(server, query="advertising spending cuts", limit=1))  # the same index finds by meaning


@pytest.mark.transports("stdio")  # what is checked is the index's scan: the same over HTTP
@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="holds a server to one CPU: Linux's affinity")
def test_a_scan_shared_between_threads_answers_as_one_thread_does(
    tmp_path: Path, cache: Path, start_server: Start, launcher: Launcher
) -> None:
    """An index of more windows than a block (71,500, over scoring.ROWS) is scored by a thread per CPU, up to
    scoring.MOST; a server held to one CPU scores it alone, its rows held in its memory, where the other's are
    mapped from a file (on Linux: $MAGNOTIA_MCP_INDEX_MEMORY_MIB is 0 there) and handed back after each search. Both
    answer every search the same, to the byte."""
    if launcher.kind == "frozen":
        pytest.skip("the one-file build has no semantic extra")
    cpus = os.sched_getaffinity(0)
    if len(cpus) < 2:
        pytest.skip("one CPU: the scan has no second thread to share it with")
    draw = random.Random(0)
    b = StoreBuilder(tmp_path / "store" / "magnotia.db")
    for n in range(1_100):
        b.transcript(
            title=f"Meeting {n}",
            source="meeting",
            created_at=ts(n % 300),
            segments=[(draw.choice(("Ana", "Ben")), " ".join(draw.choices(TOPICS, k=30))) for _ in range(65)],
        )
    db = b.close()
    build_index(db)
    index = nearest.searcher(db, wait=60).index
    assert index is not None
    # More than one block, so the server cuts shares (one per CPU, up to MOST) where transcripts start.
    assert len(index.vectors) > scoring.ROWS
    assert len(scoring._parts(index.starts, len(index.vectors), scoring.ROWS)) == min(scoring.MOST, len(cpus))
    with pytest.MonkeyPatch.context() as env:  # its 4.6 MB of rows mapped from a file (loaded._RowFile)
        env.setenv(loaded.IN_MEMORY_ENV, "0")
        shared = started(start_server, db)
    os.sched_setaffinity(0, {min(cpus)})  # the server started now inherits it: scoring.PARTS is 1 there
    try:
        alone = started(start_server, db)
    finally:
        os.sched_setaffinity(0, cpus)
    assert os.sched_getaffinity(alone.proc.pid) == {min(cpus)}
    assert os.sched_getaffinity(shared.proc.pid) == cpus
    for query in ("who takes over as engineering lead", "delays from our suppliers", "a cheaper trip to the event"):
        answers = [eventually(server, query, lambda r: r["semantic"]["used"]) for server in (shared, alone)]
        assert answers[0] == answers[1], query
        assert any(hit["matched_by"] != "words" for hit in answers[0]["hits"]), answers[0]
    # One server maps its rows from a file no name reaches (on Linux), and holds at most the pages of rows a hit cited
    # after its search handed back the rest; the other holds them, as every index up to 128 MiB of rows is held.
    assert mapped_kib(cache, alone.proc.pid) == (0, 0)
    if hasattr(os, "posix_fallocate"):
        mappings, resident = mapped_kib(cache, shared.proc.pid)
        assert mappings == 1
        assert resident < (index.vectors.nbytes >> 10) // 4, (resident, index.vectors.nbytes)
    own = indexfile.location(db).name
    assert [p.name for p in (cache / "index").iterdir() if not p.name.startswith(own)] == []  # no file of rows


def test_filters_and_the_trash_hold_for_meaning(store: Path, start_server: Start, launcher: Launcher) -> None:
    if launcher.kind == "frozen":
        pytest.skip("the one-file build has no semantic extra")
    server = started(start_server, store)
    assert stores.LEAD_DE not in ids(search(server, query="new head of development", source="dictation"))
    assert stores.LEAD_DE not in ids(search(server, query="new head of development", until=ts(6)))
    assert stores.LEAD_DE in ids(search(server, query="new head of development", since=ts(6)))
    nearest = ids(search(server, query="advertising spending cuts"))
    assert {stores.BUDGET, stores.BUDGET_PT} <= set(nearest), nearest
    # Trashed after the index was built (before the server catches up with it): the store's word wins.
    conn = sqlite3.connect(store)
    with conn:
        for trashed in (stores.LEAD_DE, nearest[0]):
            conn.execute("UPDATE transcripts SET deleted_at = ? WHERE id = ?", (ts(20), trashed))
    conn.close()
    # The first search since, on the index as it was: one hit asked for, the nearest is in the trash, and the
    # next nearest takes its place (read back after the first, which did not pass).
    assert ids(search(server, query="advertising spending cuts", limit=1)) == nearest[1:2]
    after = search(server, query="new head of development")
    assert stores.LEAD_DE not in ids(after)
    assert after["semantic"]["used"] is True


def test_a_filter_finds_by_meaning_past_the_nearest_overall(
    tmp_path: Path, cache: Path, start_server: Start, launcher: Launcher
) -> None:
    """A month of a year's meetings, or one source: of the nearest overall (the 200 a filtered search asks for
    first), fewer than a page may pass. Then the nearest among what passes are asked for (plan._within): all of the
    month's, in order, those past the first 200 too."""
    if launcher.kind == "frozen":
        pytest.skip("the one-file build has no semantic extra")
    b = StoreBuilder(tmp_path / "store" / "magnotia.db")

    def meeting(when: str, said: str, title: str = "June") -> str:
        return b.transcript(title=title, source="meeting", created_at=when, segments=[("Ben", said)])

    for n in range(210):  # last year's meetings: nearer the question than two of June's
        meeting(
            ts(1 + n % 28, month=1 + n % 12, year=2025), "We'll put less money into campaigns next quarter.", "Sync"
        )
    # June's, nearest first (cosines with the question, test model: 0.62, 0.42, 0.41; last year's are 0.44).
    june = [
        meeting(ts(10, month=6), "We reduce the marketing budget and the campaigns."),
        meeting(ts(11, month=6), "Fewer campaigns next quarter: marketing money goes down."),
        meeting(ts(12, month=6), "Marketing gets a smaller budget next quarter, fewer campaigns."),
    ]
    trashed = meeting(ts(13, month=6), "Less money into campaigns, less money for marketing.")  # 0.57: trashed below
    dictated = b.transcript(
        title="Note",
        source="dictation",
        created_at=ts(3, month=3, year=2025),
        segments=[("Ben", "Budget for campaigns is reduced next quarter.")],  # 0.37
    )
    db = b.close()
    query = "advertising spending cuts"  # none of its words is said anywhere: only meaning finds
    found, first = nearest_200(db, query)
    assert found.near(query, 200).more  # more than 200 reach the floor
    # One of June's is among the nearest 200, and so is the one trashed below; the rest are past them.
    assert (june[0] in first, trashed in first) == (True, True)
    assert not {*june[1:], dictated} & first
    # Trashed after the index embedded it: the store's word wins, whatever the index holds.
    conn = sqlite3.connect(db)
    with conn:
        conn.execute("UPDATE transcripts SET deleted_at = ? WHERE id = ?", (ts(14, month=6), trashed))
    conn.close()
    server = started(start_server, db)
    in_june = search(server, query=query, since=ts(1, month=6))
    assert ids(in_june) == june
    assert all(hit["matched_by"] == "meaning" for hit in in_june["hits"])
    assert in_june["hits"][1]["moments"][0]["speaker"] == "Ben"
    assert ids(search(server, query=query, since=ts(1, month=6), limit=2)) == june[:2]
    assert ids(search(server, query=query, source="dictation")) == [dictated]
    assert ids(search(server, query=query, since=ts(1, month=6), source="dictation")) == []
    unfiltered = ids(search(server, query=query))  # the nearest overall
    assert len(unfiltered) == 10
    assert unfiltered[0] == june[0]
    assert not {*june[1:], trashed, dictated} & set(unfiltered)


def test_a_speakers_search_finds_by_meaning_past_the_nearest_overall(
    tmp_path: Path, cache: Path, start_server: Start, launcher: Launcher
) -> None:
    """Of the nearest overall (the 200 a speaker's search asks for first), fewer than a page may be where they said
    it. Then the nearest among the transcripts the index says they spoke in are asked for (plan._spoken): all of
    Ana's, in order, those past the first 200 too; with a filter, those that pass. An index written before it listed
    speakers finds only those among the first 200, until `magnotia-mcp index` lists them."""
    if launcher.kind == "frozen":
        pytest.skip("the one-file build has no semantic extra")
    b = StoreBuilder(tmp_path / "store" / "magnotia.db")

    def meeting(when: str, who: str, said: str) -> str:
        return b.transcript(title="Sync", source="meeting", created_at=when, segments=[(who, said)])

    for n in range(210):  # Ben's meetings: nearer the question than two of Ana's
        meeting(ts(1 + n % 28, month=1 + n % 12, year=2025), "Ben", "We'll put less money into campaigns next quarter.")
    # Ana's, nearest first (cosines with the question, test model: 0.62, 0.42, 0.41; Ben's are 0.44).
    ana = [
        meeting(ts(10, month=6), "Ana", "We reduce the marketing budget and the campaigns."),
        meeting(ts(11, month=6), "Ána", "Fewer campaigns next quarter: marketing money goes down."),
        meeting(ts(12, month=5), "ANA", "Marketing gets a smaller budget next quarter, fewer campaigns."),
    ]
    db = b.close()
    query = "advertising spending cuts"  # none of its words is said anywhere: only meaning finds
    found, first = nearest_200(db, query)
    assert (ana[0] in first, ana[1] in first, ana[2] in first) == (True, False, False)
    # Ana's windows alone are scored; Ben's are most of the index's, and his search takes the nearest overall.
    assert (found.near(query, 200, "ana").speaker, found.near(query, 200, "ben").speaker) == ("ana", None)
    server = started(start_server, db)
    theirs = search(server, query=query, speaker="ana")
    assert ids(theirs) == ana
    assert all(hit["matched_by"] == "meaning" for hit in theirs["hits"])
    assert [hit["moments"][0]["speaker"] for hit in theirs["hits"]] == ["Ana", "Ána", "ANA"]
    assert ids(search(server, query=query, speaker="Ana", limit=2)) == ana[:2]
    assert ids(search(server, query=query, speaker="ana", since=ts(1, month=6))) == ana[:2]
    assert ids(search(server, query=query, speaker="ana", until=ts(1, month=6))) == ana[2:]
    assert ids(search(server, query=query, speaker="Cleo")) == []  # nobody by that name
    bens = search(server, query=query, speaker="Ben")
    assert len(ids(bens)) == 10
    assert not set(ana) & set(ids(bens))
    assert {m["speaker"] for hit in bens["hits"] for m in hit["moments"]} == {"Ben"}
    server.close()
    # As an index written before it listed speakers: only what the nearest 200 hold.
    conn = sqlite3.connect(indexfile.location(db))
    with conn:
        conn.execute("DROP TABLE speakers")
        conn.execute("DELETE FROM meta WHERE key = 'speakers'")
    conn.close()
    # And left current with the store by the run that wrote it: a server then brings nothing up to date, and a
    # speaker's search asks the index for no more than the nearest 200.
    written = indexfile.stamp(indexfile.location(db))
    indexfile.mark_current(db, store_stamp(db), written)
    older = started(start_server, db)
    assert ids(search(older, query=query, speaker="ana")) == ana[:1]
    older.close()
    assert indexfile.stamp(indexfile.location(db)) == written  # the server wrote nothing to it
    build_index(db)  # lists them, embedding nothing again
    listed = started(start_server, db)
    assert ids(search(listed, query=query, speaker="ana")) == ana
    listed.close()
    # Her first meeting's label renamed in place (its stamp unmoved, so the index still lists it as hers): the store
    # decides, and the next of hers are read in its place.
    conn = sqlite3.connect(db)
    with conn:
        conn.execute("UPDATE segments SET speaker = 'Zoe' WHERE transcript_id = ?", (ana[0],))
    conn.close()
    assert ids(search(started(start_server, db), query=query, speaker="ana", limit=2)) == ana[1:]


def test_a_segment_is_cited_once_however_many_windows_it_fills(
    tmp_path: Path, cache: Path, start_server: Start, launcher: Launcher
) -> None:
    """A segment longer than a window is cut into several, each matching: the hit cites it once, with a speaker
    or without."""
    if launcher.kind == "frozen":
        pytest.skip("the one-file build has no semantic extra")
    b = StoreBuilder(tmp_path / "store" / "magnotia.db")
    said = "we'll put less money into campaigns next quarter, the marketing budget shrinks by a third. "
    long_id = b.transcript(title="Plans", source="meeting", segments=[("Ana", said * 6), ("Ben", "Agreed.")])
    db = b.close()
    build_index(db)
    server = started(start_server, db)
    for extra in ({}, {"speaker": "Ana"}):
        result = search(server, query="advertising spending cuts", **extra)
        assert ids(result) == [long_id]
        hit = result["hits"][0]
        assert hit["matched_by"] == "meaning"
        assert [(m["speaker"], m["seq"]) for m in hit["moments"]] == [("Ana", 0)]


def test_a_text_without_segments_is_shown_by_the_passage_that_matched(
    tmp_path: Path, cache: Path, start_server: Start, launcher: Launcher
) -> None:
    """A dictation kept as text only (or an imported file) has no moment with a time to cite: its snippet is the
    window of its text that matched (the formatted text where there is one, as it was embedded), not its title and
    not its first words."""
    if launcher.kind == "frozen":
        pytest.skip("the one-file build has no semantic extra")
    b = StoreBuilder(tmp_path / "store" / "magnotia.db")
    # 30 words: the first window. The passage is the second, as the index cut it.
    first = (
        "Remember to water the tomatoes and check the basil on the balcony before the weekend trip,"
        " and pack the blue tent and two sleeping bags into the car early tonight."
    )
    passage = (
        "On marketing: we'll put less money into campaigns next quarter. Fine by me, the last campaigns brought few."
    )
    assert len(first.split()) == 30
    untitled = b.transcript(title="", raw_text=f"{first} {passage}", segments=[], created_at=ts(3))
    formatted = b.transcript(
        title="Note", raw_text=first, formatted_text=f"{first}\n\n{passage}", segments=[], created_at=ts(4)
    )
    db = b.close()
    build_index(db)
    server = started(start_server, db)
    result = search(server, query="advertising spending cuts")
    assert sorted(ids(result)) == sorted([untitled, formatted])
    for hit in result["hits"]:
        assert hit["matched_by"] == "meaning"
        assert hit["snippet"] == passage, hit
        assert hit["moments"] == []  # no time to cite: none is made up


def test_what_was_edited_since_the_index_is_cited_as_it_reads_now(
    tmp_path: Path, cache: Path, start_server: Start, launcher: Launcher
) -> None:
    """The index is behind a transcript edited since it was built, until the server brings it up to date (after a
    search, on a thread of its own). The first search since answers from what the store says now: a meeting
    transcribed again cites the segment that holds the passage now, a dictation formatted since shows the
    passage where its formatted text has it, and a meeting whose passage was cut is no longer found by meaning.
    (By the index's windows, each would cite what now says something else.)"""
    if launcher.kind == "frozen":
        pytest.skip("the one-file build has no semantic extra")
    passage = PASSAGE
    plants = ("Ana", "Remember to water the tomatoes and check the basil on the balcony before the weekend trip.")
    tent = ("Ben", "Pack the blue tent and two sleeping bags into the car early tonight.")
    b = StoreBuilder(tmp_path / "store" / "magnotia.db")
    # Each segment here is a window of its own at index time: the passage is seq 1 of both meetings.
    moved = b.transcript(title="Weekly sync", source="meeting", segments=[plants, ("Ana", passage), tent])
    formatted = b.transcript(title="Note", raw_text=passage, segments=[])
    cut = b.transcript(title="Planning", source="meeting", segments=[plants, ("Ben", passage)])
    db = b.close()
    build_index(db)
    preface = f"{plants[1]} {tent[1]} Thanks."
    assert len(preface.split()) == 30  # the formatted text's first window: the passage is its second
    conn = sqlite3.connect(db)
    with conn:  # as the app edits
        conn.execute("DELETE FROM segments WHERE transcript_id = ?", (moved,))
        for seq, (speaker, text) in enumerate([plants, tent, ("Ben", "Sounds good."), ("Ana", passage)]):
            conn.execute(
                "INSERT INTO segments (transcript_id, seq, start_ms, end_ms, speaker, text) VALUES (?, ?, ?, ?, ?, ?)",
                (moved, seq, 5000 * seq, 5000 * seq + 4000, speaker, text),
            )
        conn.execute("UPDATE transcripts SET formatted_text = ? WHERE id = ?", (f"{preface}\n\n{passage}", formatted))
        conn.execute("UPDATE segments SET text = 'Fine, see you then.' WHERE transcript_id = ? AND seq = 1", (cut,))
        # The formatting pass may leave updated_at as it was: a formatted text is seen all the same.
        conn.execute("UPDATE transcripts SET updated_at = ? WHERE id IN (?, ?)", (ts(20), moved, cut))
    conn.close()
    server = started(start_server, db)
    result = search(server, query="advertising spending cuts")
    hits = {hit["transcript_id"]: hit for hit in result["hits"]}
    assert sorted(hits) == sorted([moved, formatted]), result
    assert hits[moved]["matched_by"] == "meaning"
    cited = hits[moved]["moments"][0]
    assert cited == {"seq": 3, "start_ms": 15000, "end_ms": 19000, "speaker": "Ana", "snippet": passage}
    assert (hits[formatted]["matched_by"], hits[formatted]["snippet"]) == ("meaning", passage)
    assert all(hit["similarity"] >= 0.3 for hit in hits.values())  # scored on what they say now


def test_segments_numbered_as_no_app_numbers_them_are_indexed_and_cited(
    tmp_path: Path, cache: Path, start_server: Start, launcher: Launcher
) -> None:
    """seq is any integer to SQLite. A negative one is cited like any other (the index once took -1 for "no
    segment", and cited nothing below 0); one past what the index's int32 pairs hold no longer stops `index` (it
    raised OverflowError): that transcript is still found by meaning, and cites no segment rather than a wrong one."""
    if launcher.kind == "frozen":
        pytest.skip("the one-file build has no semantic extra")
    passage = PASSAGE
    b = StoreBuilder(tmp_path / "store" / "magnotia.db")
    below = b.transcript(title="Sync", source="meeting", segments=[("Ana", passage), ("Ben", "Sounds good.")])
    beyond = b.transcript(title="Plans", source="meeting", segments=[("Ana", passage)])
    b.execute("UPDATE segments SET seq = seq - 3 WHERE transcript_id = ?", (below,))
    b.execute("UPDATE segments SET seq = ? WHERE transcript_id = ?", (2**40, beyond))
    db = b.close()
    build_index(db)
    server = started(start_server, db)
    result = search(server, query="advertising spending cuts")
    hits = {hit["transcript_id"]: hit for hit in result["hits"]}
    assert sorted(hits) == sorted([below, beyond]), result
    assert all(hit["matched_by"] == "meaning" for hit in hits.values())
    assert [(m["seq"], m["snippet"]) for m in hits[below]["moments"]] == [(-3, passage)]
    # No segment to cite, and no text but its segments' (raw_text is empty): its title is all there is to show.
    assert (hits[beyond]["moments"], hits[beyond]["snippet"]) == ([], "Plans")


def test_an_unusable_index_is_said_and_words_still_answer(store: Path, start_server: Start, launcher: Launcher) -> None:
    if launcher.kind == "frozen":
        pytest.skip("the one-file build has no semantic extra")
    indexfile.location(store).write_bytes(b"not an index at all" * 100)
    server = started(start_server, store)
    result = search(server, query="export bug")
    assert ids(result)[0] == stores.EXPORT
    assert result["semantic"]["used"] is False
    assert "run `magnotia-mcp index`" in result["semantic"]["why"]
    assert all("matched_by" not in hit for hit in result["hits"])


def test_a_partial_index_says_how_much_it_covers(
    tmp_path: Path, cache: Path, start_server: Start, launcher: Launcher
) -> None:
    if launcher.kind == "frozen":
        pytest.skip("the one-file build has no semantic extra")
    db = stores.write(tmp_path / "store" / "magnotia.db")
    build_index(db)
    conn = sqlite3.connect(indexfile.location(db))
    with conn:  # as an interrupted build leaves it: some transcripts done, not complete
        conn.execute("DELETE FROM docs WHERE id IN (?, ?)", (stores.BUDGET, stores.LEAD))
        conn.execute("UPDATE meta SET value = '0' WHERE key = 'complete'")
    conn.close()
    server = started(start_server, db)
    result = search(server, query="new head of development")
    assert result["semantic"] == {"used": True, "transcripts": 3, "complete": False}
    assert ids(result)[0] == stores.LEAD_DE
    # The server finishes the index by itself, on a thread of its own; later answers say so.
    done = eventually(server, "new head of development", lambda r: r["semantic"]["complete"])
    assert done["semantic"] == {"used": True, "transcripts": 5, "complete": True}


def test_the_server_keeps_its_index_current(store: Path, start_server: Start, launcher: Launcher) -> None:
    """A meeting recorded while the server runs is found by meaning without `index`; a trashed one is forgotten."""
    if launcher.kind == "frozen":
        pytest.skip("the one-file build has no semantic extra")
    server = started(start_server, store)
    assert search(server, query="new head of development")["semantic"]["complete"] is True
    stores.add_meeting(store)  # as the app writes a new meeting, and trashes an old one
    conn = sqlite3.connect(store)
    with conn:
        conn.execute("UPDATE transcripts SET deleted_at = ? WHERE id = ?", (ts(31), stores.LEAD_DE))
    conn.close()
    found = eventually(
        server, "new head of development", lambda r: bool(r["hits"]) and r["hits"][0]["transcript_id"] == stores.NEW
    )
    hit = found["hits"][0]
    assert hit["matched_by"] == "meaning"
    assert (hit["moments"][0]["speaker"], hit["moments"][0]["seq"]) == ("Mara", 0)
    assert stores.LEAD_DE not in ids(found)
    current = eventually(server, "new head of development", lambda r: r["semantic"]["complete"])
    assert current["semantic"]["transcripts"] == 5  # one new, one trashed
    index = sqlite3.connect(indexfile.location(store))
    try:
        assert {row[0] for row in index.execute("SELECT id FROM docs")} == {
            stores.BUDGET,
            stores.LEAD,
            stores.BUDGET_PT,
            stores.EXPORT,
            stores.NEW,
        }  # the trashed meeting's vectors are gone from our file too
    finally:
        index.close()


def test_a_transcript_redated_or_refiled_in_place_is_found_by_its_new_date_and_source(
    store: Path, start_server: Start, launcher: Launcher
) -> None:
    """created_at and source are in no stamp (updated_at and the sizes of what is embedded): a meeting redated and
    given another source in place keeps its vectors. The index scores only the transcripts it holds as passing a
    search's filters, so the server's refresh writes the new date and source into it, without embedding anything,
    and a search by meaning restricted to them finds the meeting there, by meaning, and no longer where it was."""
    if launcher.kind == "frozen":
        pytest.skip("the one-file build has no semantic extra")
    query = "new head of development"
    server = started(start_server, store)
    assert stores.LEAD_DE in ids(search(server, query=query, source="meeting", since=ts(6)))
    vectors = dict(_docs(store))
    conn = sqlite3.connect(store)
    with conn:
        conn.execute(
            "UPDATE transcripts SET created_at = ?, source = 'dictation' WHERE id = ?",
            (ts(2, year=2024), stores.LEAD_DE),
        )
    conn.close()
    moved = eventually(server, query, lambda r: stores.LEAD_DE in ids(r), source="dictation", until=ts(1, year=2025))
    assert ids(moved) == [stores.LEAD_DE]  # the only dictation of 2024
    assert moved["hits"][0]["matched_by"] == "meaning"
    assert moved["semantic"]["complete"] is True
    assert stores.LEAD_DE not in ids(search(server, query=query, source="meeting"))
    assert stores.LEAD_DE not in ids(search(server, query=query, since=ts(6)))
    index = sqlite3.connect(indexfile.location(store))
    try:
        held = index.execute(
            "SELECT d.created_at, s.source FROM docs d JOIN sources s ON s.doc = d.id WHERE d.id = ?", (stores.LEAD_DE,)
        ).fetchone()
    finally:
        index.close()
    assert held == (ts(2, year=2024), "dictation")
    assert dict(_docs(store)) == vectors  # nothing embedded again


def _docs(store: Path) -> list[tuple[str, bytes]]:
    """Each transcript the index holds, and its vectors' bytes."""
    index = sqlite3.connect(indexfile.location(store))
    try:
        return index.execute("SELECT id, vectors FROM docs").fetchall()
    finally:
        index.close()
