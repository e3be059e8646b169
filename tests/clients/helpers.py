"""What the real-client tests share: the tap that records a client's conversation, and the Node clients.

tests/clients/tap.py sits between a real client and the server; every server
message it recorded is validated again here for its revision.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import Iterable
from pathlib import Path

import pytest

from tests.support.wire_schema import WireTracker

CLIENTS = Path(__file__).resolve().parent
TAP = CLIENTS / "tap.py"


# -- following a conversation and validating every server message ---------------------------


def follow_lines(lines: Iterable[tuple[str, str]]) -> WireTracker:
    """A tracker fed one process's lines as (direction, text), direction "c2s" or "s2c"."""
    tracker = WireTracker()
    for direction, text in lines:
        message = json.loads(text)
        if direction == "c2s":
            tracker.client_sent(message)
        else:
            tracker.server_sent(message)
    return tracker


def tapped(argv: list[str], log_dir: Path) -> list[str]:
    """argv wrapped in the tap proxy, which records the conversation under log_dir."""
    return [sys.executable, str(TAP), str(log_dir), *argv]


def validate_tap_dir(log_dir: Path) -> list[WireTracker]:
    """Validate every server message recorded under log_dir; one tracker per server process."""
    trackers = []
    for path in sorted(log_dir.glob("*.jsonl")):
        entries = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        trackers.append(follow_lines((e["dir"], e["line"]) for e in entries))
    assert trackers, f"no conversation was recorded under {log_dir}"
    return trackers


# -- Node ----------------------------------------------------------------------------------


NODE = shutil.which("node")
NODE_MODULES = CLIENTS / "node_modules"
NPM_CI = "npm ci --ignore-scripts --no-audit --no-fund --prefix tests/clients"


def node_skip_reason() -> str | None:
    """Why the Node clients cannot run here, or None."""
    if NODE is None:
        return "node is not on PATH (the TypeScript SDK and Inspector tests need Node.js >= 20)"
    if not (NODE_MODULES / "@modelcontextprotocol").is_dir():
        return f"tests/clients/node_modules is missing: nox -s test installs the pinned clients (or: {NPM_CI})"
    return None


def require_node() -> None:
    """Skip when the Node clients cannot run here; under CI=true (.ci/run) fail instead, so they never skip silently."""
    reason = node_skip_reason()
    if reason is None:
        return
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason} (CI=true: the real-client tests must run in CI)", pytrace=False)
    pytest.skip(reason)


def node_env() -> dict[str, str]:
    """The environment for node: ours, without anything that would make npm or node chatty."""
    env = dict(os.environ)
    env.setdefault("NO_COLOR", "1")
    env["NODE_NO_WARNINGS"] = "1"
    return env
