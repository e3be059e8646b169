"""The MCP Inspector's CLI mode (``@modelcontextprotocol/inspector`` 2.12.0, pinned in tests/clients)
listing the tools, calling each one, reading a resource and getting prompts.

Each invocation is ``mcp-inspector --cli <server command> -q --format json --method ...``;
it prints ``{"result": ...}`` on stdout and exits 0 (5 for a tool result with isError).
The invocations run in parallel once per module; the server runs behind
tests/clients/tap.py and every message it wrote is validated for its revision.
The Inspector wants Node >= 22.19 in its package.json but its CLI works on Node 20.
"""

from __future__ import annotations

import json
import subprocess
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.clients.helpers import CLIENTS, NODE, NODE_MODULES, node_env, require_node, tapped, validate_tap_dir
from tests.support.protocol import MODERN, TOOL_NAMES, URI_PREFIX, URI_TEMPLATE
from tests.support.sample import Sample, build_sample
from tests.support.server import Launcher


@pytest.fixture(scope="module", autouse=True)
def _node_clients() -> None:
    require_node()


INSPECTOR = NODE_MODULES / "@modelcontextprotocol" / "inspector"
TIMEOUT = 90
TOOL_ARGS = {
    "list_transcripts": ["--tool-arg", "limit=2"],
    "get_transcript": None,  # needs the sample's id: filled in below
    "search_transcripts": ["--tool-arg", "query=budget"],
    "list_tasks": ["--tool-arg", "status=open"],
}


@dataclass
class Run:
    argv: list[str]
    code: int
    stdout: str
    stderr: str
    log_dir: Path

    @property
    def result(self) -> dict[str, Any]:
        assert self.code == 0, f"exit {self.code}: {self.argv}\nstdout:\n{self.stdout}\nstderr:\n{self.stderr[-3000:]}"
        return self.output["result"]  # type: ignore[no-any-return]

    @property
    def output(self) -> dict[str, Any]:
        lines = [line for line in self.stdout.splitlines() if line.strip()]
        assert len(lines) == 1, f"{self.argv}\nstdout:\n{self.stdout}\nstderr:\n{self.stderr[-3000:]}"
        return json.loads(lines[0])  # type: ignore[no-any-return]


def inspector_bin() -> Path:
    package = json.loads((INSPECTOR / "package.json").read_text(encoding="utf-8"))
    bins = package["bin"]
    relative = bins if isinstance(bins, str) else bins.get("mcp-inspector") or next(iter(bins.values()))
    return INSPECTOR / relative


def invocations(sample: Sample) -> dict[str, list[str]]:
    tool_args = {
        **TOOL_ARGS,
        "get_transcript": ["--tool-arg", f"id={sample.meeting}", "--tool-arg", "include_segments=true"],
    }
    runs = {
        "initialize": ["--method", "initialize"],
        "initialize-auto": ["--protocol-era", "auto", "--method", "initialize"],
        "tools/list": ["--method", "tools/list"],
        "tools/list-strict": ["--method", "tools/list", "--strict"],
        "tools/list-auto": ["--protocol-era", "auto", "--method", "tools/list"],
        "resources/read": ["--method", "resources/read", "--uri", URI_PREFIX + sample.meeting],
        "resources/templates/list": ["--method", "resources/templates/list"],
        "prompts/get": [
            "--method",
            "prompts/get",
            "--prompt-name",
            "summarize_transcript",
            "--prompt-args",
            f"transcript_id={sample.meeting}",
        ],
        "prompts/get-review": [
            "--method",
            "prompts/get",
            "--prompt-name",
            "review_meetings",
            "--prompt-args",
            "since=2026-05-01",
        ],
        "tools/call-not-found": [
            "--method",
            "tools/call",
            "--tool-name",
            "get_transcript",
            "--tool-arg",
            "id=no-such-id",
        ],
    }
    for name, args in tool_args.items():
        assert args is not None
        runs[f"tools/call {name}"] = ["--method", "tools/call", "--tool-name", name, *args]
    runs["tools/call-auto get_transcript"] = ["--protocol-era", "auto", *runs["tools/call get_transcript"]]
    return runs


@pytest.fixture(scope="module")
def runs(launcher: Launcher, tmp_path_factory: pytest.TempPathFactory) -> tuple[Sample, dict[str, Run]]:
    base = tmp_path_factory.mktemp("inspector")
    sample = build_sample(base / "store" / "magnotia.db")
    binary = inspector_bin()

    def run(item: tuple[int, str, list[str]]) -> tuple[str, Run]:
        index, key, args = item
        log_dir = base / f"wire{index}"
        server = tapped(launcher.argv(sample.path), log_dir)
        assert NODE is not None
        argv = [NODE, str(binary), "--cli", *server, "-q", "--format", "json", *args]
        done = subprocess.run(
            argv, cwd=CLIENTS, env=node_env(), capture_output=True, text=True, timeout=TIMEOUT, check=False
        )
        return key, Run(argv, done.returncode, done.stdout, done.stderr, log_dir)

    items = [(i, key, args) for i, (key, args) in enumerate(invocations(sample).items())]
    with ThreadPoolExecutor(max_workers=6) as pool:
        return sample, dict(pool.map(run, items))


def session_revision(run: Run) -> str:
    """Validate everything the server wrote in this run; the revision the session spoke."""
    trackers = validate_tap_dir(run.log_dir)
    session = max(trackers, key=lambda t: len(t.validated))
    (revision,) = session.revisions
    return revision


def test_initialize_legacy_and_auto(runs: tuple[Sample, dict[str, Run]]) -> None:
    _, by = runs
    legacy = by["initialize"].result
    assert legacy["protocolVersion"] == "2025-11-25"
    assert legacy["serverInfo"]["name"] == "magnotia-mcp"
    assert set(legacy["capabilities"]) == {"tools", "resources", "prompts", "completions"}
    assert by["initialize-auto"].result["protocolVersion"] == MODERN
    assert session_revision(by["initialize"]) == "2025-11-25"
    assert session_revision(by["initialize-auto"]) == MODERN


def test_tools_list(runs: tuple[Sample, dict[str, Run]]) -> None:
    _, by = runs
    for key in ("tools/list", "tools/list-auto"):
        tools = by[key].result["tools"]
        assert tuple(t["name"] for t in tools) == TOOL_NAMES
        assert all(t["annotations"]["readOnlyHint"] is True for t in tools)
    assert session_revision(by["tools/list"]) == "2025-11-25"
    assert session_revision(by["tools/list-auto"]) == MODERN
    # --strict: the tool schemas are portable (warnings only, e.g. nullable "type" arrays; no errors).
    strict = by["tools/list-strict"]
    assert strict.code == 0, strict.stderr[-3000:]
    assert "0 errors" in strict.stderr


def test_tools_call_each_tool(runs: tuple[Sample, dict[str, Run]]) -> None:
    sample, by = runs
    payloads = {}
    for name in TOOL_NAMES:
        result = by[f"tools/call {name}"].result
        assert result.get("isError") is not True, result
        payloads[name] = json.loads(result["content"][0]["text"])
        assert result["structuredContent"] == payloads[name]
        assert session_revision(by[f"tools/call {name}"]) == "2025-11-25"
    assert [t["id"] for t in payloads["list_transcripts"]["transcripts"]] == sample.live[:2]
    assert payloads["get_transcript"]["id"] == sample.meeting
    assert [s["speaker"] for s in payloads["get_transcript"]["segments"]] == ["Ana", "Bo", "Ana"]
    assert [h["transcript_id"] for h in payloads["search_transcripts"]["hits"]] == [sample.meeting]
    assert [t["title"] for t in payloads["list_tasks"]["tasks"]] == ["Send the budget draft"]

    modern = by["tools/call-auto get_transcript"]
    assert json.loads(modern.result["content"][0]["text"])["id"] == sample.meeting
    assert session_revision(modern) == MODERN

    # A tool result with isError: printed, and exit code 5 (TOOL_ERROR).
    missing = by["tools/call-not-found"]
    assert missing.code == 5, (missing.code, missing.stdout, missing.stderr[-2000:])
    session_revision(missing)


def test_resources_and_prompts(runs: tuple[Sample, dict[str, Run]]) -> None:
    sample, by = runs
    (contents,) = by["resources/read"].result["contents"]
    assert contents["uri"] == URI_PREFIX + sample.meeting
    assert contents["mimeType"] == "text/markdown"
    assert contents["text"].startswith("# Quarterly budget review")
    assert "[00:00] Ana: We need the budget draft by Friday." in contents["text"]
    (template,) = by["resources/templates/list"].result["resourceTemplates"]
    assert template["uriTemplate"] == URI_TEMPLATE

    summary = by["prompts/get"].result["messages"]
    assert summary[0]["content"]["type"] == "resource"
    assert summary[0]["content"]["resource"]["uri"] == URI_PREFIX + sample.meeting
    review = by["prompts/get-review"].result["messages"]
    assert [m["content"]["type"] for m in review] == ["text", "resource_link"]
    for key in ("resources/read", "resources/templates/list", "prompts/get", "prompts/get-review"):
        assert session_revision(by[key]) == "2025-11-25"
