"""The assistant set's command-line client against both servers, over their real stdio, on a generated store.

It tests the bench's harness (devkit), not a build of the server: it lives outside tests/e2e, which the dist,
freeze and docker sessions run again against each artifact.

What the model sees is what ``ask`` prints (the result's ``content`` text); what it cost goes to the log. The
naive baseline answers the same tool names, never shows the trash and never writes to the store; ours runs
through ``clock``, so "yesterday" is the day before the store's fixed now.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from devkit.assistant import store
from devkit.assistant.planted import PLANTED
from magnotia_mcp.tokencost import estimate

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return store.build(tmp_path_factory.mktemp("assistant") / "assistant.db", len(PLANTED) + 40)


def ask(*args: str) -> str:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), str(REPO)])}
    done = subprocess.run(
        [sys.executable, "-m", "devkit.assistant.ask", *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_the_naive_server_answers_a_call_and_the_client_logs_what_was_shown(db: Path, tmp_path: Path) -> None:
    before = _digest(db)
    log = tmp_path / "q" / "calls.jsonl"
    args = {"query": "Riverside building", "limit": 5}
    out = ask("--server", "naive", "--db", str(db), "--log", str(log), "search_transcripts", json.dumps(args))
    shown = out.removesuffix("\n")
    hits = json.loads(shown)["hits"]
    assert [(h["title"], h["created_at"]) for h in hits] == [("Weekly sync", "2025-07-02T10:00:00.000Z")]
    assert "[Riverside] [building]" in hits[0]["snippet"]
    ask("--server", "naive", "--db", str(db), "--log", str(log), "search_transcripts", '{"query": "riverside"}')
    records = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    assert len(records) == 2  # appended, one line a call
    assert records[0] == {
        "server": "naive",
        "tool": "search_transcripts",
        "args": args,
        "bytes": len(shown.encode("utf-8")),
        "tokens": estimate(shown),
        "error": False,
    }
    assert records[1]["bytes"] > records[0]["bytes"]  # three Riverside meetings, not one
    assert _digest(db) == before  # opened read-only


def test_the_naive_server_never_shows_the_trash(db: Path) -> None:
    assert (
        json.loads(ask("--server", "naive", "--db", str(db), "search_transcripts", '{"query": "catamaran"}'))["hits"]
        == []
    )
    tasks: list[dict[str, Any]] = json.loads(
        ask("--server", "naive", "--db", str(db), "list_tasks", '{"status": "open", "limit": 100}')
    )["tasks"]
    titles = {t["title"] for t in tasks}
    assert "Renew passport" in titles
    assert "Submit the Oslo conference talk" not in titles  # its meeting is in the trash


def test_list_tools_shows_instructions_and_definitions_as_a_model_sees_them(db: Path) -> None:
    shown = json.loads(ask("--server", "naive", "--db", str(db), "--list-tools"))
    assert "Magnotia" in shown["instructions"]
    tools = {t["name"]: t for t in shown["tools"]}
    assert set(tools) == {"search_transcripts", "list_transcripts", "get_transcript", "list_tasks"}
    assert set(tools["search_transcripts"]["inputSchema"]["properties"]) == {"query", "limit", "since", "until"}
    assert tools["search_transcripts"]["description"]


def test_ours_reads_time_words_against_the_store_now(db: Path, tmp_path: Path) -> None:
    log = tmp_path / "ours.jsonl"
    out = ask(
        "--server",
        "ours",
        "--db",
        str(db),
        "--log",
        str(log),
        "list_transcripts",
        '{"since": "yesterday", "until": "yesterday"}',
    )
    answer = json.loads(out)
    assert answer["range"] == {"since": "2026-05-28T00:00:00.000Z", "until": "2026-05-29T00:00:00.000Z"}
    assert [t["title"] for t in answer["transcripts"]] == ["", "Garden"]
    assert json.loads(log.read_text(encoding="utf-8"))["tokens"] == estimate(out.removesuffix("\n"))
    shown = json.loads(ask("--server", "ours", "--db", str(db), "--list-tools"))
    assert {t["name"] for t in shown["tools"]} == {
        "search_transcripts",
        "list_transcripts",
        "get_transcript",
        "list_tasks",
    }
