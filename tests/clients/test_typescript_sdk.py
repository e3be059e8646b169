"""The official TypeScript SDK clients against the real server, run with the machine's Node.js.

tests/clients/ pins ``@modelcontextprotocol/sdk`` (v1: legacy handshake only) and
``@modelcontextprotocol/client`` (v2: legacy, auto = discover first, and pinned
2026-07-28) in package.json + package-lock.json; install them with
``npm ci --ignore-scripts --no-audit --no-fund --prefix tests/clients``. Each
script lists and calls every tool (the SDKs check structuredContent against the
outputSchema), reads a resource, gets every prompt and completes a transcript id,
then prints a JSON summary. The server runs behind tests/clients/tap.py, and every
message it wrote is validated for its revision.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.clients.helpers import CLIENTS, NODE, node_env, require_node, tapped, validate_tap_dir
from tests.support.protocol import MODERN, PROMPT_NAMES, TOOL_NAMES, URI_PREFIX, URI_TEMPLATE
from tests.support.sample import Sample, build_sample
from tests.support.server import Launcher


@pytest.fixture(scope="module", autouse=True)
def _node_clients() -> None:
    require_node()


TIMEOUT = 90


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Sample:
    return build_sample(tmp_path_factory.mktemp("node") / "magnotia.db")


def run_script(script: list[str], server: list[str]) -> subprocess.CompletedProcess[str]:
    assert NODE is not None
    return subprocess.run(
        [NODE, *script, "--", *server],
        cwd=CLIENTS,
        env=node_env(),
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )


def summary_of(done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    assert done.returncode == 0, f"exit {done.returncode}\nstdout:\n{done.stdout}\nstderr:\n{done.stderr}"
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    assert len(lines) == 1, done.stdout
    return json.loads(lines[0])  # type: ignore[no-any-return]


def check_summary(summary: dict[str, Any], sample: Sample, revision: str) -> None:
    assert summary["protocolVersion"] == revision
    assert summary["serverInfo"]["name"] == "magnotia-mcp"
    assert set(summary["capabilities"]) == {"tools", "resources", "prompts", "completions"}
    assert tuple(summary["tools"]) == TOOL_NAMES
    calls = summary["calls"]
    assert set(calls) == set(TOOL_NAMES)
    assert all(c["isError"] is False for c in calls.values())
    assert all(c["structuredContent"] == c["parsed"] for c in calls.values())  # outputSchema checked by the SDK
    assert [t["id"] for t in calls["list_transcripts"]["parsed"]["transcripts"]] == sample.live
    assert summary["chosen"] == sample.meeting
    assert calls["get_transcript"]["parsed"]["title"] == "Quarterly budget review"
    assert [h["transcript_id"] for h in calls["search_transcripts"]["parsed"]["hits"]] == [sample.meeting]
    assert len(calls["list_tasks"]["parsed"]["tasks"]) == 2
    assert summary["resources"] == [URI_PREFIX + i for i in sample.live]
    assert summary["templates"] == [URI_TEMPLATE]
    assert summary["read"]["uri"] == URI_PREFIX + sample.meeting
    assert summary["read"]["mimeType"] == "text/markdown"
    assert summary["read"]["text"].startswith("# Quarterly budget review")
    assert tuple(summary["prompts"]) == PROMPT_NAMES
    assert summary["prompts"]["summarize_transcript"] == ["resource", "text"]
    assert summary["prompts"]["review_meetings"] == ["text", "resource_link"]
    assert summary["completions"]["prompt"] == [sample.meeting]
    assert sample.meeting in summary["completions"]["template"]


def check_wire(log_dir: Path, revision: str) -> None:
    """Every server message passed validation; the session (the largest conversation) spoke revision."""
    trackers = validate_tap_dir(log_dir)
    session = max(trackers, key=lambda t: len(t.validated))
    assert session.revisions == {revision}
    methods = session.methods_at(revision)
    assert {"tools/list", "tools/call", "resources/read", "prompts/get", "completion/complete"} <= methods
    for probe in trackers:
        if probe is not session:  # a disposable server/discover probe (v2 auto and pin modes)
            assert probe.methods_at(MODERN) <= {"server/discover"}


@pytest.mark.parametrize(
    ("script", "revision"),
    [
        (["sdk-v1.mjs"], "2025-11-25"),
        (["client-v2.mjs", "legacy"], "2025-11-25"),
        (["client-v2.mjs", "auto"], MODERN),
        (["client-v2.mjs", "pin"], MODERN),
    ],
    ids=["sdk-v1", "client-v2-legacy", "client-v2-auto", "client-v2-pin"],
)
def test_typescript_client(
    script: list[str], revision: str, launcher: Launcher, sample: Sample, tmp_path: Path
) -> None:
    log_dir = tmp_path / "wire"
    summary = summary_of(run_script(script, tapped(launcher.argv(sample.path), log_dir)))
    check_summary(summary, sample, revision)
    check_wire(log_dir, revision)


def test_client_scripts_fail_loudly() -> None:
    """A server that is not there must make the scripts exit non-zero, not print a summary."""
    for script in (["sdk-v1.mjs"], ["client-v2.mjs", "legacy"]):
        done = run_script(script, ["/nonexistent/magnotia-mcp"])
        assert done.returncode != 0, (script, done.stdout, done.stderr)
        assert not done.stdout.strip(), (script, done.stdout)


def test_lockfile_pins_exact_versions_from_the_registry_only() -> None:
    package = json.loads((CLIENTS / "package.json").read_text(encoding="utf-8"))
    for name, spec in package["dependencies"].items():
        assert set(spec) <= set("0123456789."), f"{name} is not pinned exactly: {spec}"
    lock = json.loads((CLIENTS / "package-lock.json").read_text(encoding="utf-8"))
    for path, entry in lock["packages"].items():
        if not path:
            continue
        resolved = entry.get("resolved")
        assert resolved is None or resolved.startswith("https://registry.npmjs.org/"), (path, resolved)
        assert "link" not in entry, path
        assert entry.get("integrity", "").startswith("sha512-"), path
    installed = {
        name: json.loads((CLIENTS / "node_modules" / name / "package.json").read_text(encoding="utf-8"))["version"]
        for name in package["dependencies"]
    }
    assert installed == package["dependencies"], "node_modules is not what the lockfile pins: run npm ci"
