"""Property of the server: every store the schema allows answers every tool, resource, prompt and completion.

Each example draws a whole store (tests/properties/shapes.py), writes it to a
real file, starts one server on it over real pipes, and at every protocol
revision asks it everything a host can: tools/list, every tool with windows,
offsets, formats, filters, sorts and cursors, resources/list (every page),
resources/templates/list, resources/read of every transcript, prompts/list,
prompts/get of every prompt, completion/complete. Every answer:

* is never -32603 (which says the store could not be read) and never leaves a
  traceback on stderr;
* is the one response to its request (``ServerProcess.request`` reads the next
  response by id; a final ping proves nothing else follows), valid against the
  revision's official wire schema (tests/support/wire_schema.py, on every read);
* for a tool, fits the outputSchema ``tools/list`` advertised (2025-06-18 on),
  and is a result for live ids and valid arguments, "not found" for trashed or
  missing ids, an argument error only where the arguments ask for what the
  transcript does not have (a time window without segments, a speaker label
  past the schema's length);
* and the pages of every paged list hold each live row exactly once.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Iterator
from itertools import count
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import event, example, given
from hypothesis import strategies as st

from tests.properties.conftest import budget
from tests.properties.shapes import WORDS, Blob, Segment, Shape, Task, Text, Transcript, shapes, write
from tests.support.protocol import PROMPT_NAMES, REVISIONS, URI_PREFIX, URI_TEMPLATE, at_least
from tests.support.server import Launcher, ServerProcess, check_clean_exit

INTERNAL_ERROR = -32603
UUID = "00000000-0000-4000-8000-{:012x}"
MISSING = UUID.format(0xFFFFFFFFFFFF)
SEARCH_TIMES = ("since", "1999-01-01"), ("until", "9999-01-01"), ("since", "last week")


class Checked:
    """One server on one drawn store: each request sent, its one answer checked."""

    def __init__(self, proc: ServerProcess, shape: Shape) -> None:
        self.proc = proc
        self.shape = shape
        self.revision = ""
        self.schemas: dict[str, jsonschema.protocols.Validator] = {}

    def ask(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        response = self.proc.request(method, params)
        shown = f"{method} {json.dumps(params, ensure_ascii=False)[:300]} at {self.revision}: {response}"
        assert response.get("error", {}).get("code") != INTERNAL_ERROR, shown
        assert "Traceback" not in self.proc.stderr, self.proc.stderr
        return response

    def ok(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        response = self.ask(method, params)
        assert "result" in response, f"{method} {params} at {self.revision}: {response}"
        return response["result"]  # type: ignore[no-any-return]

    def open(self, revision: str) -> None:
        self.revision = revision
        self.proc.open(revision)
        self.schemas = {}
        for tool in self.ok("tools/list")["tools"]:
            if "outputSchema" in tool:
                schema = tool["outputSchema"]
                self.schemas[tool["name"]] = jsonschema.validators.validator_for(schema)(schema)
        assert bool(self.schemas) == at_least(revision, "2025-06-18")

    def tool(self, name: str, arguments: dict[str, Any], expect: str = "ok") -> dict[str, Any] | None:
        """Call a tool; expect "ok" (its result), "not found", "argument" (an error) or "any" (either)."""
        response = self.ask("tools/call", {"name": name, "arguments": arguments})
        shown = f"{name} {json.dumps(arguments, ensure_ascii=False)[:300]} at {self.revision}: {response}"
        if "error" in response:
            code = response["error"]["code"]
            assert not at_least(self.revision, "2025-11-25"), f"a tool error must be a result: {shown}"
            got = {-32000: "not found", -32602: "argument"}.get(code)
        else:
            result = response["result"]
            text = result["content"][0]["text"]
            if result.get("isError"):
                got = "not found" if "not found" in text else "argument"
            else:
                parsed = json.loads(text)
                if name in self.schemas:
                    assert result["structuredContent"] == parsed, shown
                    errors = [e.message for e in self.schemas[name].iter_errors(parsed)]
                    assert not errors, f"{errors} in {shown}"
                event(f"{name}: result")
                if expect not in ("ok", "any"):
                    raise AssertionError(f"expected {expect}: {shown}")
                return parsed  # type: ignore[no-any-return]
        event(f"{name}: {got}")
        assert got is not None, shown
        assert expect in (got, "any"), f"expected {expect}: {shown}"
        return None


def pages(server: Checked, tool: str, key: str, arguments: dict[str, Any]) -> list[str]:
    """Every id on every page of a paged tool, following next_cursor."""
    ids: list[str] = []
    args = dict(arguments)
    for _ in range(len(server.shape.transcripts) + len(server.shape.tasks) + 2):
        page = server.tool(tool, args)
        assert page is not None
        ids += [row["id"] for row in page[key]]
        if page["next_cursor"] is None:
            return ids
        args["cursor"] = page["next_cursor"]
    raise AssertionError(f"{tool} {arguments}: more pages than rows")


def created_order(t: Transcript) -> tuple[bool, bytes, str]:
    """How SQLite orders created_at: every text before every BLOB, texts by their UTF-8 bytes (BINARY)."""
    created = t.created_at
    return isinstance(created, Blob), created if isinstance(created, bytes) else created.encode(), t.id


def newest_first(rows: list[Transcript]) -> list[str]:
    return [t.id for t in sorted(rows, key=created_order, reverse=True)]


def has_times(t: Transcript) -> bool:
    return bool(t.segments)


def check_lists(server: Checked) -> None:
    shape = server.shape
    live = newest_first(shape.live)
    assert pages(server, "list_transcripts", "transcripts", {}) == live
    assert pages(server, "list_transcripts", "transcripts", {"limit": 1}) == live
    for source in ("dictation", "meeting", "file"):
        got = pages(server, "list_transcripts", "transcripts", {"limit": 2, "source": source})
        assert got == [i for i in live if next(t for t in shape.live if t.id == i).source == source]
    server.tool("list_transcripts", {"since": "2026-05", "until": "2026-06"})
    trashed = {t.id for t in shape.trashed}
    shown = [k for k in shape.tasks if k.transcript_id not in trashed]  # a task of the trash is never listed
    tasks = pages(server, "list_tasks", "tasks", {"limit": 1})
    assert sorted(tasks) == sorted(k.id for k in shown)
    for status in ("open", "done"):
        got = pages(server, "list_tasks", "tasks", {"status": status, "limit": 2})
        assert sorted(got) == sorted(k.id for k in shown if k.status == status)
    server.tool("list_tasks", {"due_before": "2026-06-01"})
    linked = {k.transcript_id for k in shape.tasks if k.transcript_id is not None}
    for tid in sorted(linked):
        got = pages(server, "list_tasks", "tasks", {"transcript_id": tid})
        assert sorted(got) == sorted(k.id for k in shown if k.transcript_id == tid)
    resources: list[str] = []
    params: dict[str, Any] = {}
    while True:
        listed = server.ok("resources/list", params)
        resources += [r["uri"] for r in listed["resources"]]
        if not listed.get("nextCursor"):
            break
        params = {"cursor": listed["nextCursor"]}
    assert resources == [URI_PREFIX + i for i in live]
    (template,) = server.ok("resources/templates/list")["resourceTemplates"]
    assert template["uriTemplate"] == URI_TEMPLATE
    assert [p["name"] for p in server.ok("prompts/list")["prompts"]] == list(PROMPT_NAMES)


def time_windows(t: Transcript) -> list[dict[str, Any]]:
    """Time windows at the transcript's own segment times (clamped to the schema's minimums), and beyond."""
    starts = sorted({max(0, s.start_ms) for s in t.segments[:3]})
    ends = sorted({max(1, s.end_ms) for s in t.segments[-2:]})
    out: list[dict[str, Any]] = [{"start_ms": 0}, {"end_ms": 1}, {"start_ms": 2**62}]
    out += [{"start_ms": s} for s in starts] + [{"end_ms": e} for e in ends]
    out += [{"start_ms": s, "end_ms": s + 1, "include_segments": True} for s in starts[:1]]
    return out


def expected_text(value: Text | None) -> str | None:
    """A text as the server shows it: bytes that are not UTF-8 with U+FFFD."""
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else value


def read_all(server: Checked, t: Transcript, fmt: str, max_chars: int) -> str:
    """The whole text, window after window from offset 0 following next_offset; each starts where the last ended."""
    args: dict[str, Any] = {"id": t.id, "format": fmt, "max_chars": max_chars, "include_segments": True}
    parts: list[str] = []
    while True:
        window = server.tool("get_transcript", args)
        assert window is not None
        assert window["offset"] == sum(map(len, parts))
        parts.append(window["text"])
        if window["next_offset"] is None:
            assert window["offset"] + len(window["text"]) == window["total_chars"]
            return "".join(parts)
        assert window["next_offset"] == window["offset"] + len(window["text"]) > window["offset"]
        args["offset"] = window["next_offset"]


def check_transcript(server: Checked, t: Transcript, deep: bool) -> None:
    """Windows of one live transcript: whole and by time; deep, also by offset in both formats, read to the end."""
    whole = server.tool("get_transcript", {"id": t.id, "include_segments": True})
    assert whole is not None
    assert whole["offset"] == 0
    assert len(whole["segments"]) <= len(t.segments)
    raw, formatted = expected_text(t.raw_text), expected_text(t.formatted_text)
    assert whole["format"] == ("raw" if formatted is None else "formatted")
    windows = time_windows(t)
    for times in windows if deep else windows[:1]:
        expect = "ok" if t.segments else "argument"
        server.tool("get_transcript", {"id": t.id, "format": "formatted", **times}, expect)
    if not deep:
        return
    total = whole["total_chars"]
    for fmt in ("raw", "formatted"):
        server.tool("get_transcript", {"id": t.id, "format": fmt, "offset": total // 2, "max_chars": 1})
        server.tool("get_transcript", {"id": t.id, "format": fmt, "offset": total + 5, "include_segments": True})
    if t.workshop:
        server.tool("get_transcript", {"id": t.id, "offset": 70_000, "max_chars": 100, "include_segments": True})
    elif len(raw or "") <= 6000:
        # Read to the end in small windows: they put the whole text back together.
        assert read_all(server, t, "raw", 997) == raw
        assert read_all(server, t, "formatted", 1499) == (raw if formatted is None else formatted)


def labels(shape: Shape) -> list[str]:
    said: list[Segment] = [s for t in shape.transcripts for s in t.segments]
    return sorted({s.speaker for s in said if isinstance(s.speaker, str)})


def check_search(server: Checked, turn: int, deep: bool) -> None:
    """Keywords, a phrase, speakers, filters and each sort (deep; else one keyword); the words rotate with turn."""
    words = [WORDS[(turn * 3 + i) % len(WORDS)] for i in range(3)]
    if not deep:
        server.tool("search_transcripts", {"query": words[0]}, "any")
        return
    for i, word in enumerate(words):
        sort = ("relevance", "newest", "oldest")[(turn + i) % 3]
        server.tool("search_transcripts", {"query": word, "sort": sort, "limit": 50}, "any")
    server.tool("search_transcripts", {"query": f'"{words[0]} {words[1]}"'}, "any")
    server.tool("search_transcripts", {"query": "budget", "source": "meeting"}, "any")
    name, value = SEARCH_TIMES[turn % len(SEARCH_TIMES)]
    server.tool("search_transcripts", {"query": words[2], name: value}, "any")
    for label in labels(server.shape):
        fits = 1 <= len(label) <= 200
        server.tool("search_transcripts", {"query": words[0], "speaker": label}, "any" if fits else "argument")


CUT = "*(Cut here to keep this within "  # resources.render's note when a transcript does not fit


def check_reads(server: Checked) -> None:
    """resources/read and the prompts that embed it, for live, trashed and missing ids; completion."""
    shape = server.shape
    gone = [t.id for t in shape.trashed] + [MISSING]
    missing_code = -32602 if at_least(server.revision, "2026-07-28") else -32002
    for t in shape.live:
        (contents,) = server.ok("resources/read", {"uri": URI_PREFIX + t.id})["contents"]
        assert contents["uri"] == URI_PREFIX + t.id
        for name in ("summarize_transcript", "action_items"):
            got = server.ok("prompts/get", {"name": name, "arguments": {"transcript_id": t.id}})
            embedded = got["messages"][0]["content"]["resource"]
            # The prompt's own words take part of the budget: a transcript that fills a resource is cut
            # sooner there, so the two are equal only where the resource was not cut.
            assert (embedded["uri"], embedded["mimeType"]) == (contents["uri"], contents["mimeType"])
            if CUT not in embedded["text"]:  # what fits the prompt's share fits a resource whole
                assert embedded == contents
            else:
                assert embedded["text"].split("\n")[0] == contents["text"].split("\n")[0]
    for tid in gone:
        assert server.ask("resources/read", {"uri": URI_PREFIX + tid})["error"]["code"] == missing_code
        response = server.ask("prompts/get", {"name": "action_items", "arguments": {"transcript_id": tid}})
        assert response["error"]["code"] == -32602
        server.tool("get_transcript", {"id": tid}, "not found")
    for since in ("1999-01-01", "last week", "0001-01-01"):
        server.ok("prompts/get", {"name": "review_meetings", "arguments": {"since": since, "until": "9999-12-31"}})
    values = ["", *{t.id[:1] for t in shape.live}, *{t.title[:2] for t in shape.live if isinstance(t.title, str)}]
    for value in values:
        for ref in (
            {"type": "ref/prompt", "name": "summarize_transcript"},
            {"type": "ref/resource", "uri": URI_TEMPLATE},
        ):
            argument = {"name": "transcript_id" if ref["type"] == "ref/prompt" else "id", "value": value}
            got = server.ok("completion/complete", {"ref": ref, "argument": argument})["completion"]["values"]
            assert set(got) <= {t.id for t in shape.live}
            if value == "":
                assert sorted(got) == sorted(t.id for t in shape.live)


def silent_dictation() -> Shape:
    """Issue 18's finding 1: raw_text '', formatted_text NULL, no segments, a task on it."""
    t = Transcript(
        "00000000-0000-4000-8000-000000000000", "", "dictation", None, None, None, "", None,
        "2026-05-09T14:03:12.042Z", "2026-05-09T14:03:12.042Z", None,
    )  # fmt: skip
    task = Task("b", t.id, "t", None, "open", None, None, "2026-05-09T14:03:12.042Z", None)
    return Shape(True, [t], [task])


def odd_dates(fts: bool) -> Shape:
    """created_at and due_at as a broken writer may leave them: BLOBs (one a date's bytes), empty, words, a date."""
    odd: list[str | bytes] = [
        Blob(b"\x00\x01"),
        Blob(b"2026-05-20T10:00:00.000Z"),
        "",
        "yesterday",
        "2026-05-20T10:00:00.000Z",
    ]
    said = [Segment(0, 0, 1000, "Ana", "budget launch")]
    late = "2026-05-20T10:00:00.000Z"
    rows = [
        Transcript(UUID.format(k), f"budget {k}", "meeting", "en", None, None, "budget", None, at, late, None, said)
        for k, at in enumerate(odd)
    ]
    tasks = [
        Task(f"t{k}", rows[k % len(rows)].id, "t", None, ("open", "done")[k % 2], None, due, at, None)
        for k, (due, at) in enumerate([*zip(odd, odd[::-1], strict=True), (None, odd[0]), (None, odd[1])])
    ]
    return Shape(fts, rows, tasks)


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A new folder for each example's store and the server's home (removed after the example)."""
    root = tmp_path_factory.mktemp("shapes")
    return (root / f"store{k}" for k in count())


# A server per example, a few hundred calls each: about 20 s on a 2-core machine; the suite's 120 s
# guard against a hang would leave slower CI runners little room.
@pytest.mark.timeout(300)
@budget(12)
@given(shape=shapes(), deep=st.sampled_from(REVISIONS))
@example(shape=silent_dictation(), deep="2024-11-05").via("issue 18 finding 1: was -32603 'float division by zero'")
@example(shape=odd_dates(fts=True), deep="2025-06-18").via("BLOB created_at: was -32603, bytes are not JSON")
@example(shape=odd_dates(fts=False), deep="2025-11-25").via("the same without the full-text tables")
def test_every_store_shape_answers_everything(
    launcher: Launcher, folders: Iterator[Path], shape: Shape, deep: str
) -> None:
    """At every revision: every list, tool, resource, prompt and completion; at the revision deep, every window too."""
    folder = next(folders)
    db = write(shape, folder / "magnotia.db")
    home = folder / "home"
    env = {"HOME": str(home), "XDG_DATA_HOME": str(home / "xdg")}
    proc = ServerProcess(launcher.argv(db), env=env, cwd=Path(tempfile.gettempdir()))
    try:
        server = Checked(proc, shape)
        for turn, revision in enumerate(REVISIONS):
            server.open(revision)
            check_lists(server)
            for t in shape.live:
                check_transcript(server, t, revision == deep)
            check_search(server, turn, revision == deep)
            check_reads(server)
            proc.sync()  # every request had exactly one answer: nothing else is waiting
        event(f"{len(shape.live)} live, {len(shape.trashed)} trashed, fts {shape.fts}")
        if any(t.workshop for t in shape.transcripts):
            event("with the workshop transcript")
    except BaseException:
        proc.kill()
        raise
    else:
        check_clean_exit(proc)  # exit 0, no traceback on stderr, nothing but JSON on stdout
    finally:
        shutil.rmtree(folder, ignore_errors=True)
