"""The host configuration snippets in the README start a working server.

Each ``<!-- host-config: HOST CHANNEL -->`` block is parsed the way its host
would (JSON, the ``claude mcp add`` command line, Goose's YAML), and the
command it names is started and must answer ``initialize`` and a tool call.
Paths that are placeholders in the README are replaced by this machine's:
the frozen executable (``$MAGNOTIA_MCP_BIN``) and the container image
(``$MAGNOTIA_MCP_IMAGE``) exist only in the ``freeze`` and ``docker`` sessions.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from devkit.storefactory import StoreBuilder
from tests.support.server import ServerProcess

README = Path(__file__).resolve().parents[2] / "README.md"
BLOCK = re.compile(r"<!-- host-config: (\S+) (\S+) -->\n```(\w+)\n(.*?)```", re.S)
HOSTS = ("claude-desktop", "claude-code", "vscode", "goose")
CHANNELS = ("package", "executable", "docker")


def snippets() -> dict[tuple[str, str], tuple[str, str]]:
    return {(m[1], m[2]): (m[3], m[4]) for m in BLOCK.finditer(README.read_text(encoding="utf-8"))}


def parse(host: str, lang: str, text: str) -> list[str]:
    """The argv a host would run for this snippet."""
    if host == "claude-desktop":
        entry = json.loads(text)["mcpServers"]["magnotia"]
        return [entry["command"], *entry["args"]]
    if host == "vscode":
        entry = json.loads(text)["servers"]["magnotia"]
        assert entry["type"] == "stdio"
        return [entry["command"], *entry["args"]]
    if host == "claude-code":
        words = shlex.split(text.strip())
        assert words[:4] == ["claude", "mcp", "add", "magnotia"], words
        return words[words.index("--") + 1 :]
    assert lang == "yaml"
    cmd = re.search(r"^\s+cmd: (.+)$", text, re.M)
    assert cmd is not None, text
    args = re.findall(r"^\s+- (.+)$", text, re.M)
    if re.search(r"^\s+args: \[\]$", text, re.M):
        args = []
    return [json.loads(cmd[1]), *(json.loads(a) for a in args)]


def test_the_readme_docker_commands_run_as_the_callers_user() -> None:
    """A store folder only its owner may read opens in the container only with --user (issue 11, item 7)."""
    for host in HOSTS:
        argv = parse(host, *snippets()[(host, "docker")])
        assert argv[argv.index("--user") + 1] == "1000:1000", (host, argv)


def test_the_readme_has_a_snippet_for_every_host_and_channel() -> None:
    """Every host has a snippet for each of the three channels."""
    found = snippets()
    missing = [(h, c) for h in HOSTS for c in CHANNELS if (h, c) not in found]
    assert not missing, f"README lacks host-config blocks for {missing}"


def test_every_host_names_the_same_command_within_a_channel() -> None:
    """Four hosts, one channel: the same argv, so one tested command covers all four."""
    found = snippets()
    for channel in CHANNELS:
        argvs = {tuple(parse(h, *found[(h, channel)])) for h in HOSTS if (h, channel) in found}
        assert len(argvs) == 1, (channel, argvs)


def localize(channel: str, argv: list[str], store: Path) -> tuple[list[str], dict[str, str]]:
    """Swap README placeholders for this machine's paths; skip if the channel is not built here."""
    env: dict[str, str] = {}
    if channel == "package":
        script = Path(sys.executable).parent / argv[0]
        if not script.exists() and shutil.which(argv[0]) is None:
            pytest.skip("the console script is not installed in this environment")
        argv = [str(script) if script.exists() else argv[0], *argv[1:]]
        env["MAGNOTIA_DB"] = str(store)
    elif channel == "executable":
        binary = os.environ.get("MAGNOTIA_MCP_BIN")
        if not binary:
            pytest.skip("no frozen executable in this run (nox -s freeze runs this test with one)")
        argv = [binary, *argv[1:]]
        env["MAGNOTIA_DB"] = str(store)
    else:
        image = os.environ.get("MAGNOTIA_MCP_IMAGE")
        if not image:
            pytest.skip("no container image in this run (nox -s docker runs this test with one)")
        engine = os.environ.get("MAGNOTIA_MCP_ENGINE", "podman")
        # The README's --user 1000:1000 stands for the caller's own uid:gid, as install writes it.
        user = f"{os.getuid()}:{os.getgid()}"
        swap = {"1000:1000": user}
        argv = [
            engine,
            *[f"{store.parent}:/data:ro" if a.endswith(":/data:ro") else swap.get(a, a) for a in argv[1:-1]],
            image,
        ]
    return argv, env


@pytest.mark.parametrize("channel", CHANNELS)
@pytest.mark.parametrize("host", HOSTS)
def test_the_readme_command_serves_the_store(host: str, channel: str, new_store: Callable[..., StoreBuilder]) -> None:
    """Starting what the snippet names gives a server that answers initialize and a tool call."""
    builder = new_store()
    builder.transcript(title="From the README", raw_text="hello from the readme test")
    store = builder.close()
    lang, text = snippets()[(host, channel)]
    argv, env = localize(channel, parse(host, lang, text), store)
    server = ServerProcess(argv, env=env)
    try:
        init = server.initialize("2025-06-18")
        assert init["result"]["serverInfo"]["name"] == "magnotia-mcp"
        listed = server.result("list_transcripts", {})
        assert [t["title"] for t in listed["transcripts"]] == ["From the README"]
        assert server.close() == 0
    finally:
        server.kill()
