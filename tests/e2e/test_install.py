"""``magnotia-mcp install HOST`` / ``uninstall HOST`` in a throwaway home, checked the way each host reads its file.

For every host: install into a config that already holds other servers, settings and (where
the format has them) comments; parse the written file as the host would (JSON, JSONC, TOML,
YAML), start the command it names exactly as the host would, and talk MCP to it over pipes.
A second install changes no byte; uninstall gives back the old file byte for byte.

The channel follows ``--server``: the package (``python -m magnotia_mcp install``), the frozen
executable (``$MAGNOTIA_MCP_BIN install``, which installs itself) or the container
(``install --channel docker`` with ``$MAGNOTIA_MCP_IMAGE``/``$MAGNOTIA_MCP_ENGINE``).
Claude Code is also driven through its real CLI (npm ``@anthropic-ai/claude-code``,
pinned in tests/clients), which must report the server as connected.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from devkit.storefactory import StoreBuilder
from tests.support.hosts import BY_KEY, COMMENTS, EXISTING, KEYS, linux_path
from tests.support.server import Launcher, ServerProcess

ROOT = Path(__file__).resolve().parents[2]
HOSTS = KEYS  # every per-host test runs once per row of tests/support/hosts.py


def config_file(home: Path, host: str) -> Path:
    """Where each host keeps its user config on Linux (docs/hosts.md), under this test's home."""
    return linux_path(home, BY_KEY[host].linux)


def existing(host: str) -> str:
    return BY_KEY[host].existing


def marker_folder(home: Path, host: str) -> Path:
    """The folder whose presence says the host is installed (docs/hosts.md)."""
    marker = BY_KEY[host].marker
    return linux_path(home, marker) if marker else config_file(home, host).parent


def make_installed(home: Path, host: str) -> Path:
    """The host's config folder and the folder that says it is installed; its config file's path."""
    path = config_file(home, host)
    path.parent.mkdir(parents=True, exist_ok=True)
    marker_folder(home, host).mkdir(parents=True, exist_ok=True)
    return path


def _strip_jsonc(text: str) -> str:
    """JSONC to JSON the way VS Code and Zed read it: comments and trailing commas ignored."""
    out, i, n = [], 0, len(text)
    while i < n:
        if text[i] == '"':
            end = i + 1
            while text[end] != '"':
                end += 2 if text[end] == "\\" else 1
            out.append(text[i : end + 1])
            i = end + 1
        elif text.startswith("//", i):
            i = text.find("\n", i) if "\n" in text[i:] else n
        elif text.startswith("/*", i):
            i = text.index("*/", i) + 2
        else:
            out.append(text[i])
            i += 1
    return re.sub(r",(\s*[}\]])", r"\1", "".join(out))


def _goose_entry(text: str, name: str) -> dict[str, Any]:
    try:
        import yaml  # type: ignore[import-untyped]  # noqa: PLC0415  (optional: not in the test group)
    except ImportError:  # no YAML parser in this environment: read the block as the README test does
        block = re.search(rf"^  {name}:\n((?:    .*\n)+)", text, re.M)
        assert block is not None, text
        body = block.group(1)
        cmd = re.search(r"^    cmd: (.+)$", body, re.M)
        assert cmd is not None
        args = [json.loads(a) for a in re.findall(r"^      - (.+)$", body, re.M)]
        enabled = re.search(r"^    enabled: true$", body, re.M) is not None
        return {"cmd": json.loads(cmd.group(1)), "args": args, "type": "stdio", "enabled": enabled}
    entry: dict[str, Any] = yaml.safe_load(text)["extensions"][name]
    return entry


def _toml_entry(text: str, servers: str, name: str) -> dict[str, Any]:
    entry: dict[str, Any] = pytest.importorskip("tomllib").loads(text)[servers][name]
    return entry


def _json_entry(text: str, servers: str, name: str) -> dict[str, Any]:
    entry: dict[str, Any] = json.loads(text)[servers][name]
    return entry


def _jsonc_entry(text: str, servers: str, name: str) -> dict[str, Any]:
    return _json_entry(_strip_jsonc(text), servers, name)


def _yaml_entry(text: str, servers: str, name: str) -> dict[str, Any]:
    entry = _goose_entry(text, name)
    assert entry["type"] == "stdio"
    assert entry["enabled"] is True
    return {"command": entry["cmd"], "args": entry["args"]}


# Each format read as its hosts read it (the servers map under the row's key).
READERS: dict[str, Callable[[str, str, str], dict[str, Any]]] = {
    "json": _json_entry,
    "jsonc": _jsonc_entry,
    "toml": _toml_entry,
    "yaml": _yaml_entry,
}


def host_argv(host: str, path: Path, name: str = "magnotia") -> list[str]:
    """Read the file as the host does and return the command line it would start."""
    case = BY_KEY[host]
    entry = READERS[case.reads](path.read_text(encoding="utf-8"), case.servers, name)
    if case.stdio_type:
        assert entry["type"] == "stdio"
    return [entry["command"], *entry.get("args", [])]


def others_survive(host: str, path: Path) -> None:
    """The other server and settings are still there after the install."""
    text = path.read_text(encoding="utf-8")
    assert BY_KEY[host].other in text
    if BY_KEY[host].reads in COMMENTS:
        assert "#" in text or "//" in text  # comments kept


def local_command(launcher: Launcher) -> list[str]:
    """magnotia-mcp as this run ships it, run here: the executable, else this Python's package."""
    if launcher.kind == "frozen":
        return [launcher.frozen_binary()]
    return [sys.executable, "-m", "magnotia_mcp"]


def install_command(launcher: Launcher) -> list[str]:
    """magnotia-mcp as this run ships it, running install; its channel is the one running (or docker)."""
    base = local_command(launcher)
    if launcher.kind == "container":
        image = os.environ.get("MAGNOTIA_MCP_IMAGE")
        if not image:
            pytest.skip("no container image in this run (nox -s docker sets MAGNOTIA_MCP_IMAGE)")
        engine = os.environ.get("MAGNOTIA_MCP_ENGINE", "podman")
        return [*base, "--channel", "docker", "--image", image, "--engine", engine]
    return base


@pytest.fixture
def store(new_store: Callable[..., StoreBuilder]) -> Path:
    """A store in a folder whose name has a space, as on many real machines."""
    builder = new_store("Ana Maria")
    builder.transcript(title="Installed", raw_text="served through the host's own config")
    return builder.close()


def run(argv: list[str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*argv, *args], capture_output=True, text=True, encoding="utf-8", timeout=120, check=False, env=os.environ
    )


def serves(argv: list[str], title: str = "Installed") -> None:
    """Start argv as a host does and check initialize, tools/list and a tool call."""
    server = ServerProcess(argv)
    try:
        init = server.initialize("2025-06-18")
        assert init["result"]["serverInfo"]["name"] == "magnotia-mcp"
        tools = server.request("tools/list")["result"]["tools"]
        assert "search_transcripts" in {t["name"] for t in tools}
        listed = server.result("list_transcripts", {})
        assert [t["title"] for t in listed["transcripts"]] == [title]
        assert server.close() == 0
    finally:
        server.kill()


@pytest.mark.parametrize("host", HOSTS)
def test_install_writes_what_the_host_starts_and_uninstall_gives_the_file_back(
    host: str, launcher: Launcher, home: Path, store: Path
) -> None:
    if BY_KEY[host].reads == "toml" and sys.version_info < (3, 11):
        pytest.skip("TOML is edited only where tomllib (Python 3.11+) can check the edit")
    path = make_installed(home, host)
    before = existing(host).encode()
    path.write_bytes(before)
    path.chmod(0o640)
    install = install_command(launcher)

    done = run(install, "install", host, "--db", str(store))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "added to" in done.stdout
    assert ".bak" in done.stdout
    others_survive(host, path)
    assert path.stat().st_mode & 0o777 == 0o640
    assert [b.read_bytes() for b in path.parent.glob(f"{path.name}.*.bak")] == [before]
    serves(host_argv(host, path))

    written = path.read_bytes()
    again = run(install, "install", host, "--db", str(store))
    assert again.returncode == 0, again.stderr
    assert "already installed" in again.stdout
    assert path.read_bytes() == written

    gone = run(install, "uninstall", host)
    assert gone.returncode == 0, gone.stdout + gone.stderr
    assert path.read_bytes() == before


@pytest.mark.parametrize("host", HOSTS)
def test_install_into_a_host_with_no_config_file_yet(host: str, launcher: Launcher, home: Path, store: Path) -> None:
    """Only the folder that says the host is installed exists (for Cline the extension's storage, not yet
    its settings folder): the file is created with our entry alone."""
    if BY_KEY[host].reads == "toml" and sys.version_info < (3, 11):
        pytest.skip("TOML is edited only where tomllib (Python 3.11+) can check the edit")
    marker_folder(home, host).mkdir(parents=True)
    done = run(install_command(launcher), "install", host, "--db", str(store))
    assert done.returncode == 0, done.stdout + done.stderr
    serves(host_argv(host, config_file(home, host)))


@pytest.mark.parametrize("host", HOSTS)
def test_a_host_whose_folder_is_missing_is_reported_and_nothing_is_created(
    host: str, launcher: Launcher, home: Path, store: Path
) -> None:
    """No marker folder, no CLI on PATH: exit 1 naming the folder looked for, the entry to add by hand, no file."""
    done = run(install_command(launcher), "install", host, "--db", str(store))
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"does not look installed here: no {marker_folder(home, host)}." in done.stderr
    assert "magnotia" in done.stderr.split("by hand", 1)[1]
    assert list(home.iterdir()) == []


def test_a_host_that_is_not_installed_is_reported_not_created(launcher: Launcher, home: Path, store: Path) -> None:
    done = run(install_command(launcher), "install", "cursor", "--db", str(store))
    assert done.returncode == 1
    assert "does not look installed" in done.stderr
    assert "--force" in done.stderr
    assert '"mcpServers"' in done.stderr  # the entry to add by hand
    assert not (home / ".cursor").exists()
    forced = run(install_command(launcher), "install", "cursor", "--db", str(store), "--force")
    assert forced.returncode == 0, forced.stderr
    serves(host_argv("cursor", home / ".cursor" / "mcp.json"))


@pytest.mark.parametrize(
    ("host", "text"),
    [
        ("cursor", '{\n  "mcpServers": {\n    "other": {"command": "x"},\n'),  # cut short
        ("cursor", '{\n  // a comment: not JSON, and Cursor reads JSON\n  "mcpServers": {}\n}\n'),
        ("claude-desktop", '{"mcpServers": {"magnotia": {"command": "a"}, "magnotia": {"command": "b"}}}'),
        ("vscode", '{\n  "servers": [\n  ]\n}\n'),
        ("codex", "[mcp_servers\ncommand = 1\n"),
        ("codex", 'mcp_servers = { magnotia = { command = "old" } }\n'),
        ("goose", "extensions: {developer: {enabled: true}}\n"),
        ("goose", "extensions:\n\tdeveloper:\n\t\tenabled: true\n"),
    ],
)
def test_a_config_that_cannot_be_edited_safely_is_left_untouched(
    host: str, text: str, launcher: Launcher, home: Path, store: Path
) -> None:
    """Refused with exit 1, the file unchanged (no backup either), and the entry printed to add by hand."""
    path = config_file(home, host)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    done = run(install_command(launcher), "install", host, "--db", str(store))
    assert done.returncode == 1, done.stdout + done.stderr
    assert "cannot edit" in done.stderr
    assert "Nothing was changed" in done.stderr
    assert "magnotia" in done.stderr.split("by hand", 1)[1]
    assert path.read_text(encoding="utf-8") == text
    assert sorted(p.name for p in path.parent.iterdir()) == [path.name]


def test_dry_run_prints_the_diff_and_changes_nothing(launcher: Launcher, home: Path, store: Path) -> None:
    path = config_file(home, "zed")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(EXISTING["zed"], encoding="utf-8")
    done = run(install_command(launcher), "install", "zed", "--db", str(store), "--dry-run")
    assert done.returncode == 0, done.stderr
    assert f"+++ {path}" in done.stdout
    assert '+    "magnotia": {' in done.stdout
    assert "dry run" in done.stdout
    assert path.read_text(encoding="utf-8") == EXISTING["zed"]


def test_config_names_another_file_and_name_another_entry(launcher: Launcher, home: Path, store: Path) -> None:
    other = home / "my configs" / "mcp.json"
    other.parent.mkdir()
    done = run(
        install_command(launcher), "install", "cursor", "--db", str(store), "--config", str(other), "--name", "notes"
    )
    assert done.returncode == 0, done.stderr
    serves(host_argv("cursor", other, name="notes"))


def test_doctor_lists_configured_hosts_and_fails_on_a_missing_command(
    launcher: Launcher, home: Path, store: Path
) -> None:
    path = config_file(home, "cursor")
    path.parent.mkdir(parents=True, exist_ok=True)
    assert run(install_command(launcher), "install", "cursor", "--db", str(store)).returncode == 0
    doctor = [*local_command(launcher), "doctor", "--db", str(store)]  # doctor takes none of install's options
    done = run(doctor)
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(r"^  cursor: .*magnotia", done.stdout, re.M), done.stdout
    report = json.loads(run([*doctor, "--json"]).stdout)
    assert report["ok"] is True
    assert [h["host"] for h in report["hosts"]] == ["cursor"]

    broken = json.loads(path.read_text(encoding="utf-8"))
    broken["mcpServers"]["magnotia"]["command"] = str(home / "gone" / "magnotia-mcp")
    path.write_text(json.dumps(broken), encoding="utf-8")
    done = run(doctor)
    assert done.returncode == 1
    assert "PROBLEM" in done.stdout
    assert "magnotia-mcp install cursor" in done.stdout
    failed = run([*doctor, "--json"])
    assert failed.returncode == 1
    report = json.loads(failed.stdout)
    assert report["ok"] is False
    assert report["hosts"][0]["command_found"] is False


# -- Claude Code through its real CLI ------------------------------------------------------------------


def claude_binary() -> Path | None:
    modules = ROOT / "tests" / "clients" / "node_modules" / "@anthropic-ai"
    # npm ci --ignore-scripts leaves bin/claude.exe a stub; the platform package holds the real binary.
    for candidate in (
        *sorted(modules.glob("claude-code-linux-*/claude")),
        modules / "claude-code" / "bin" / "claude.exe",
    ):
        if candidate.is_file() and candidate.stat().st_size > 1_000_000:
            return candidate
    return None


@pytest.fixture
def claude(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """`claude` on PATH, kept offline and inside the throwaway home."""
    binary = claude_binary()
    if binary is None:
        pytest.skip(
            "Claude Code is not installed: nox -s test installs it when npm is here (npm ci --prefix tests/clients)"
        )
    bindir = tmp_path / "claude-bin"
    bindir.mkdir()
    (bindir / "claude").symlink_to(binary)
    monkeypatch.setenv("PATH", f"{bindir}:/usr/bin:/bin")
    for var, value in {
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    }.items():
        monkeypatch.setenv(var, value)
    return bindir / "claude"


def test_claude_code_reports_the_installed_server_connected(
    claude: Path, launcher: Launcher, home: Path, store: Path
) -> None:
    install = install_command(launcher)
    done = run(install, "install", "claude-code", "--db", str(store))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "running: claude mcp add --scope user magnotia --" in done.stdout
    listed = run([str(claude), "mcp", "list"])
    line = next((ln for ln in listed.stdout.splitlines() if ln.startswith("magnotia:")), "")
    assert "Connected" in line, listed.stdout + listed.stderr
    serves(host_argv("claude-code", home / ".claude.json"))

    written = (home / ".claude.json").read_bytes()
    again = run(install, "install", "claude-code", "--db", str(store))
    assert "already installed" in again.stdout, again.stdout + again.stderr
    assert (home / ".claude.json").read_bytes() == written

    gone = run(install, "uninstall", "claude-code")
    assert gone.returncode == 0, gone.stdout + gone.stderr
    assert "magnotia" not in json.loads((home / ".claude.json").read_text(encoding="utf-8")).get("mcpServers", {})
    assert "magnotia:" not in run([str(claude), "mcp", "list"]).stdout
