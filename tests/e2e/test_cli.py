"""The command line a person types: --help (each command's own), --version, doctor, --demo and bad flags."""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from devkit.storefactory import StoreBuilder
from tests.support.server import Launcher, ServerProcess

# What each command takes, as its --help must name it: the options a person may give it, and no other.
EVERY = ("--db", "--log-level")
SERVE_STDIO = ("--demo", "--call-timeout", "--timezone")
SERVE_HTTP = ("--http", "--token-file", "--no-auth", "--allow-origin", "--allow-host", "--request-timeout")
SERVE_HTTP_2 = ("--max-connections",)
INSTALL = ("--channel", "--name", "--dry-run", "--config", "--force", "--command", "--image", "--engine")
TAKES = {
    "serve": (*EVERY, *SERVE_STDIO, *SERVE_HTTP, *SERVE_HTTP_2),
    "doctor": (*EVERY, "--demo", "--json"),
    "index": (*EVERY, "--model", "--download-model", "--model-mirror", "--drop"),
    "install": (*EVERY, *INSTALL),
    "uninstall": (*EVERY, *INSTALL),
}
ALL_OPTIONS = {flag for flags in TAKES.values() for flag in flags}


def run(launcher: Launcher, db: Path | None, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        launcher.argv(db, list(args)),
        stdin=subprocess.DEVNULL,  # a command line that serves by mistake ends at once
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=60,
        check=False,
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


def _usage_flags(help_text: str) -> set[str]:
    """The options the help's usage block names (from "usage:" to the first blank line)."""
    usage = help_text.split("\n\n", 1)[0]
    assert usage.startswith("usage: "), help_text
    return set(re.findall(r"\[(--[a-z-]+)", usage))


@pytest.mark.parametrize("command", list(TAKES))
def test_each_command_has_its_own_complete_help(launcher: Launcher, command: str) -> None:
    """COMMAND --help names every option COMMAND takes, each with its help line, and no option it does not take."""
    done = run(launcher, None, command, "--help")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert out.startswith(f"usage: magnotia-mcp {command} "), out
    assert _usage_flags(out) == set(TAKES[command]), out
    for flag in TAKES[command]:
        assert re.search(rf"^  {re.escape(flag)}\b", out, re.M), (flag, out)  # listed with its help
    for flag in ALL_OPTIONS - set(TAKES[command]):
        assert not re.search(rf"^  {re.escape(flag)}\b", out, re.M), (flag, out)
    if command in ("install", "uninstall"):
        assert re.search(r"^  HOST +one of: claude-desktop, .*zed", out, re.M | re.S), out


@pytest.mark.parametrize(
    ("args", "flag", "taker"),
    [
        pytest.param(("doctor", "--http", "8765"), "--http", "serve", id="doctor-http"),
        pytest.param(("--http", "8765", "doctor"), "--http", "serve", id="http-before-doctor"),
        pytest.param(("--json",), "--json", "doctor", id="no-command-json"),
        pytest.param(("serve", "--dry-run"), "--dry-run", "install", id="serve-dry-run"),
        pytest.param(("install", "cursor", "--call-timeout", "5"), "--call-timeout", "serve", id="install-timeout"),
        pytest.param(("uninstall", "cursor", "--json"), "--json", "doctor", id="uninstall-json"),
        pytest.param(("doctor", "--channel", "docker"), "--channel", "install", id="doctor-channel"),
        pytest.param(("install", "cursor", "--demo"), "--demo", "serve and doctor", id="install-demo"),
    ],
)
def test_an_option_given_to_a_command_that_does_not_take_it_is_refused(
    launcher: Launcher, args: tuple[str, ...], flag: str, taker: str
) -> None:
    """Exit 2 before anything runs (nothing on stdout), naming the option and the command that takes it."""
    done = run(launcher, None, *args)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stdout == ""
    assert f"error: {flag} is an option of {taker}" in done.stderr, done.stderr
    assert f"(see: magnotia-mcp {taker.split(maxsplit=1)[0]} --help)" in done.stderr


def test_options_mean_the_same_before_and_after_the_command(
    launcher: Launcher, new_store: Callable[..., StoreBuilder]
) -> None:
    """--db before doctor (how scripts and hosts have always written it) and after it: the same store checked."""
    db = new_store().close()
    before = run(launcher, db, "doctor", "--json")  # launcher.argv puts --db PATH first
    assert before.returncode == 0, before.stdout + before.stderr
    # launcher.argv(None, ...) adds no --db; the container still needs the store's folder mounted.
    where = db if launcher.kind == "container" else None
    after = run(launcher, where, "doctor", "--json", "--db", launcher.served_path(db))
    assert after.returncode == 0, after.stdout + after.stderr
    checked, again = json.loads(before.stdout)["store"], json.loads(after.stdout)["store"]
    # Where the path came from may differ (the image sets $MAGNOTIA_DB); the store checked may not.
    assert again.pop("from") == "--db"
    checked.pop("from")
    assert checked == again


def test_serve_with_options_on_both_sides_of_the_command_serves_the_store(
    launcher: Launcher, new_store: Callable[..., StoreBuilder]
) -> None:
    """--db PATH serve --call-timeout 5: the spelling of the HTTP tests and scripts, here on stdio."""
    b = new_store()
    b.transcript(title="Served", raw_text="hello")
    server = ServerProcess(launcher.argv(b.close(), ["serve", "--call-timeout", "5"]))
    try:
        server.initialize("2025-11-25")
        assert [t["title"] for t in server.result("list_transcripts", {})["transcripts"]] == ["Served"]
        assert server.close() == 0
    finally:
        server.kill()


def test_install_finds_its_host_after_its_options(launcher: Launcher, tmp_path: Path) -> None:
    """install --dry-run --config PATH cursor: HOST may follow the options; a dry run writes nothing."""
    if launcher.kind == "container":
        pytest.skip("the container has its own file system: tests/e2e/test_install.py installs its image from here")
    config = tmp_path / "mcp.json"
    done = run(launcher, None, "install", "--dry-run", "--config", str(config), "cursor")
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"(dry run: {config} not changed)" in done.stdout
    assert not config.exists()
