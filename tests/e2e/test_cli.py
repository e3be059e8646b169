"""The command line a person types: --help, --version, doctor, --demo and bad flags."""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.support.server import Launcher, ServerProcess
from tests.support.storefactory import StoreBuilder


def run(launcher: Launcher, db: Path | None, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        launcher.argv(db, list(args)), capture_output=True, text=True, encoding="utf-8", timeout=60, check=False
    )


def test_version_prints_the_name_and_version(launcher: Launcher) -> None:
    """--version answers on stdout and exits 0."""
    done = run(launcher, None, "--version")
    assert done.returncode == 0, done.stderr
    assert re.fullmatch(r"magnotia-mcp \d+\.\d+\.\d+\S*\n", done.stdout)


def test_help_names_every_command_flag_and_the_store_lookup(launcher: Launcher) -> None:
    """--help is complete: both commands, every flag, where the store is looked for."""
    done = run(launcher, None, "--help")
    assert done.returncode == 0, done.stderr
    for word in (
        *("serve", "doctor", "--db", "--demo", "--log-level", "--call-timeout", "--timezone", "--version"),
        *("install", "uninstall", "--channel", "--name", "--dry-run", "--config", "--force", "--json"),
        *("claude-desktop", "claude-code", "cursor", "vscode", "windsurf", "cline", "gemini-cli", "codex", "goose"),
        *("lm-studio", "zed", "docs/hosts.md"),
        *("MAGNOTIA_DB", "MAGNOTIA_TZ"),
    ):
        assert word in done.stdout, word
    assert "com.magnotia.app" in done.stdout


def test_doctor_reports_a_ready_store_and_prints_host_configuration(
    launcher: Launcher, new_store: Callable[..., StoreBuilder]
) -> None:
    """doctor: schema, counts (trash counted apart), the index, and JSON a host config can take."""
    b = new_store()
    b.transcript(title="Kept", raw_text="hello")
    b.transcript(title="Binned", raw_text="gone", deleted_at="2026-05-10T00:00:00.000Z")
    b.task(title="a task")
    db = b.close()
    done = run(launcher, db, "doctor")
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert "schema version 1" in out
    assert "1 transcripts (1 more in the trash, never shown), 1 tasks" in out
    assert "full-text index: present" in out
    desktop = re.search(r"^\{\n  \"mcpServers\".*?^\}$", out, re.M | re.S)
    assert desktop is not None, out
    assert json.loads(desktop.group(0))["mcpServers"]["magnotia"]["command"]
    assert "claude mcp add magnotia -- " in out


def test_doctor_says_what_to_do_about_a_missing_store(launcher: Launcher, tmp_path: Path) -> None:
    """doctor on a missing store exits 1 and tells the user how to fix it."""
    (tmp_path / "empty").mkdir(mode=0o755)
    done = run(launcher, tmp_path / "empty" / "magnotia.db", "doctor")
    assert done.returncode == 1
    assert "no Magnotia database at" in done.stdout
    assert "--db" in done.stdout


@pytest.mark.parametrize("value", ["0", "-1"])
def test_a_call_timeout_that_is_not_positive_is_refused(launcher: Launcher, value: str) -> None:
    """A bad --call-timeout stops at start-up with one line on stderr and exit 2."""
    done = run(launcher, None, "--call-timeout", value)
    assert done.returncode == 2
    assert "--call-timeout" in done.stderr
    assert done.stdout == ""


def test_an_unknown_command_is_a_usage_error(launcher: Launcher) -> None:
    """A typo in the command is exit 2 with argparse's message, not a server start."""
    done = run(launcher, None, "serv")
    assert done.returncode == 2
    assert "invalid choice" in done.stderr


def test_demo_serves_a_sample_store_and_removes_it_at_exit(launcher: Launcher) -> None:
    """--demo needs no store: it answers like a real one, hides its trash, and cleans up."""
    server = ServerProcess(launcher.argv(None, ["--demo"]))
    try:
        server.initialize("2025-11-25")
        titles = [t["title"] for t in server.result("list_transcripts", {})["transcripts"]]
        assert "Mobile launch sync" in titles
        assert not any("salary" in t.lower() for t in titles)
        hits = server.result("search_transcripts", {"query": "privacy review"})["hits"]
        assert hits
        assert server.close() == 0
    finally:
        server.kill()
    logged = re.search(r"sample store (\S+) \(removed at exit\)", server.stderr)
    assert logged is not None, server.stderr
    if launcher.kind != "container":  # the container's /tmp is its own
        assert not Path(logged.group(1)).exists()
