"""The HTTP host configs in docs/http.md reach a running ``serve --http`` with exactly the headers each host sends.

Each ``<!-- http-host: HOST -->`` block is read the way its host reads it (JSON for VS Code,
Cursor and n8n; the few fields of Open WebUI's and LibreChat's YAML by text, since no YAML
parser is installed here; the ``claude`` command line run by the real Claude Code CLI), and
its placeholders are filled the way the host fills them (VS Code's ``${input:…}`` prompt,
Cursor's ``${env:…}``, Compose's and LibreChat's ``${…}``, n8n's Bearer Auth credential).
The documented URL becomes the running server's.

Then, over a real socket, the test sends what that host's client sends: the block's headers plus
the transport's own (``Content-Type``, ``Accept``, ``MCP-Protocol-Version``, ``Mcp-Method`` and
``Mcp-Name`` at 2026-07-28, ``Mcp-Session-Id`` when ``initialize`` issued one), in the order the
host's client sends its requests, and a tool call must list the sample store. The same requests
without the block's headers must get 401, so a block that lost its token fails here.

What each client adds comes from its source (the MCP TypeScript SDK's
``StreamableHTTPClientTransport`` for LibreChat and n8n, the Python SDK's ``streamablehttp_client``
for Open WebUI) or, for Claude Code, from its requests on the wire; VS Code and Cursor publish
neither, so their revisions are this test's choice (docs/http.md says so).
"""

from __future__ import annotations

import http.client
import json
import re
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.http.conftest import HttpServer
from tests.support.protocol import META_CLIENT_INFO, MODERN, TOOL_NAMES, modern_meta
from tests.support.sample import Sample
from tests.support.server import Launcher

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "http.md"
README = ROOT / "README.md"
BLOCK = re.compile(r"<!-- http-host: (\S+) -->\n```(\w+)\n(.*?)```", re.S)
HOSTS = ("claude-code", "vscode", "cursor", "open-webui", "librechat", "n8n")
# The URLs the blocks may name: a host on the same machine, or a container beside the server.
DOC_URLS = ("http://127.0.0.1:8765/mcp", "http://magnotia-mcp:8765/mcp")
TOKEN_ENV = "MAGNOTIA_MCP_TOKEN"
HOST_TOKEN = "host-config-token-" + "y" * 24
JSON_CT = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}

# The revision each host's client opens with (see the module docstring).
REVISION = {
    "vscode": "2025-11-25",
    "cursor": "2025-06-18",
    "open-webui": "2025-11-25",
    "librechat": "2025-11-25",
    "n8n": "2025-11-25",
}
# The TypeScript SDK tries a GET stream after notifications/initialized (405: the server has none);
# the Python SDK does too, but only once it has a session, and it ends that session with DELETE on closing.
GETS_A_STREAM = {"librechat", "n8n"}
PYTHON_SDK = {"open-webui"}


def snippets() -> dict[str, tuple[str, str]]:
    return {m[1]: (m[2], m[3]) for m in BLOCK.finditer(DOC.read_text(encoding="utf-8"))}


def substitute(text: str, pattern: str, values: dict[str, str]) -> str:
    """Fill ``pattern``'s placeholders from values; a placeholder with no value fails the test."""

    def fill(match: re.Match[str]) -> str:
        assert match[1] in values, f"{match[0]} has no value in this test"
        return values[match[1]]

    return re.sub(pattern, fill, text)


def yaml_block(text: str, key: str) -> list[str]:
    """The lines nested under ``key:`` (more indented than it), without YAML: the blocks are simple."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip().startswith(f"{key}:"))
    indent = len(lines[start]) - len(lines[start].lstrip())
    body: list[str] = []
    for line in lines[start + 1 :]:
        if line.strip() and len(line) - len(line.lstrip()) <= indent:
            break
        body.append(line)
    return body


def host_request(host: str, lang: str, text: str, token: str) -> tuple[str, dict[str, str]]:
    """The URL (as documented) and the headers the host sends for this block, its placeholders filled."""
    env = {TOKEN_ENV: token}
    if host == "vscode":
        assert lang == "json"
        config = json.loads(text)
        prompts = {i["id"]: i for i in config["inputs"]}
        entry = config["servers"]["magnotia"]
        assert entry["type"] == "http", entry
        for name in re.findall(r"\$\{input:([^}]+)\}", json.dumps(entry)):
            assert prompts[name]["type"] == "promptString", prompts[name]
            assert prompts[name]["password"] is True, "a token is a password: VS Code keeps it out of the file"
        # VS Code prompts for each input once; the user pastes the token.
        headers = {
            k: substitute(v, r"\$\{input:([^}]+)\}", dict.fromkeys(prompts, token)) for k, v in entry["headers"].items()
        }
        return entry["url"], headers
    if host == "cursor":
        assert lang == "json"
        entry = json.loads(text)["mcpServers"]["magnotia"]
        assert "command" not in entry, entry  # a url entry is a remote server to Cursor
        return entry["url"], {k: substitute(v, r"\$\{env:(\w+)\}", env) for k, v in entry["headers"].items()}
    if host == "open-webui":
        assert lang == "yaml"
        body = yaml_block(text, "TOOL_SERVER_CONNECTIONS")
        assert re.search(r"TOOL_SERVER_CONNECTIONS: >-\s*$", text, re.M), "a folded scalar: its lines join with spaces"
        value = substitute(" ".join(line.strip() for line in body), r"\$\{(\w+)\}", env)  # Compose interpolation
        (entry,) = json.loads(value)
        assert entry["type"] == "mcp", entry
        assert entry["auth_type"] == "bearer", entry
        assert entry["info"]["id"], "Open WebUI finds an MCP connection by info.id"
        # backend/open_webui/utils/middleware.py: bearer sends the key, then the entry's own headers.
        return entry["url"], {"Authorization": f"Bearer {entry['key']}", **(entry.get("headers") or {})}
    if host == "librechat":
        assert lang == "yaml"
        server = yaml_block(text, "magnotia")
        fields = {m[1]: m[2] for m in (re.match(r"\s+(type|url): (\S+)$", line) for line in server) if m}
        assert fields["type"] == "streamable-http", fields
        headers = {
            m[1]: json.loads(m[2]) if m[2].startswith('"') else m[2]
            for m in (re.match(r"\s+([\w-]+): (.+)$", line) for line in yaml_block("\n".join(server), "headers"))
            if m
        }
        allowed = [json.loads(line.strip()[2:]) for line in yaml_block(text, "allowedAddresses")]
        assert urlsplit(fields["url"]).netloc in allowed, "LibreChat refuses a private address it does not list"
        return fields["url"], {k: substitute(v, r"\$\{(\w+)\}", env) for k, v in headers.items()}
    assert host == "n8n", host
    assert lang == "json", lang
    (node,) = json.loads(text)["nodes"]
    params = node["parameters"]
    assert node["type"] == "@n8n/n8n-nodes-langchain.mcpClientTool", node
    assert params["serverTransport"] == "httpStreamable", params
    assert params["authentication"] == "bearerAuth", params
    # McpClientTool getAuthHeaders: bearerAuth sends the Bearer Auth credential's token.
    return params["endpointUrl"], {"Authorization": f"Bearer {token}"}


class Wire:
    """One host's client: the config's headers on every request, and the transport's own per request."""

    def __init__(self, server: HttpServer, headers: dict[str, str]) -> None:
        self.server = server
        self.headers = headers

    def send(
        self, method: str, message: dict[str, Any] | None, extra: dict[str, str]
    ) -> tuple[int, dict[str, str], dict[str, Any] | None]:
        sent = {**self.headers, **extra}
        body = json.dumps(message).encode() if message is not None else None
        conn = http.client.HTTPConnection(self.server.host_port, timeout=60)
        try:
            conn.request(method, "/mcp", body=body, headers=sent)
            response = conn.getresponse()
            headers = {k.lower(): v for k, v in response.getheaders()}
            raw = response.read()
        finally:
            conn.close()
        return response.status, headers, parse(headers.get("content-type", ""), raw)

    def post(self, message: dict[str, Any], extra: dict[str, str]) -> tuple[int, dict[str, str], dict[str, Any] | None]:
        return self.send("POST", message, {**JSON_CT, **extra})


def parse(content_type: str, raw: bytes) -> dict[str, Any] | None:
    """A JSON answer, or the last message of an SSE stream (the response comes last); None when empty."""
    if not raw:
        return None
    if content_type.startswith("text/event-stream"):
        data = [line[5:].strip() for line in raw.decode().splitlines() if line.startswith("data:")]
        reply: dict[str, Any] = json.loads(data[-1])
        return reply
    answer: dict[str, Any] = json.loads(raw)
    return answer


def listed_titles(reply: dict[str, Any] | None) -> list[str]:
    assert reply is not None
    assert "result" in reply, reply
    result = reply["result"]
    assert not result.get("isError"), result
    return [t["title"] for t in json.loads(result["content"][0]["text"])["transcripts"]]


def live_titles(sample: Sample) -> list[str]:
    return [sample.titles[i] for i in sample.live]


def request(method: str, rid: int, params: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "method": method, "params": params or {}}


def initialize(revision: str, client: str) -> dict[str, Any]:
    return request(
        "initialize",
        0,
        {"protocolVersion": revision, "capabilities": {}, "clientInfo": {"name": client, "version": "0"}},
    )


def served_url(documented: str, server: HttpServer) -> str:
    assert documented in DOC_URLS, f"{documented} is neither the local nor the compose URL of docs/http.md"
    return server.url


@pytest.fixture
def server(launch: Callable[..., HttpServer]) -> HttpServer:
    return launch([], {TOKEN_ENV: HOST_TOKEN})


def test_docs_have_a_block_for_every_host() -> None:
    found = snippets()
    assert [h for h in HOSTS if h not in found] == [], "docs/http.md lacks http-host blocks"


@pytest.mark.parametrize("host", [h for h in HOSTS if h != "claude-code"])
def test_host_config_calls_a_tool_with_exactly_the_hosts_headers(host: str, server: HttpServer, sample: Sample) -> None:
    """initialize, tools/list and tools/call as that host's client sends them; 401 without the config's headers."""
    token = HOST_TOKEN
    lang, text = snippets()[host]
    documented, headers = host_request(host, lang, text, token)
    assert served_url(documented, server) == server.url
    assert headers == {"Authorization": f"Bearer {token}"}, headers
    revision = REVISION[host]
    wire = Wire(server, headers)

    status, answer_headers, init = wire.post(initialize(revision, host), {})
    assert status == 200, (status, init)
    assert init is not None
    assert init["result"]["protocolVersion"] == revision, init
    assert init["result"]["serverInfo"]["name"] == "magnotia-mcp"
    session = answer_headers.get("mcp-session-id")
    later = {"MCP-Protocol-Version": revision, **({"Mcp-Session-Id": session} if session else {})}

    status, _, body = wire.post({"jsonrpc": "2.0", "method": "notifications/initialized"}, later)
    assert (status, body) == (202, None)
    if host in GETS_A_STREAM or (session and host in PYTHON_SDK):
        status, _, _ = wire.send("GET", None, {"Accept": "text/event-stream", **later})
        assert status == 405, "the SDKs take 405 as: no server-initiated stream"

    status, _, tools = wire.post(request("tools/list", 1), later)
    assert status == 200, (status, tools)
    assert tools is not None
    assert set(TOOL_NAMES) <= {t["name"] for t in tools["result"]["tools"]}
    status, _, called = wire.post(request("tools/call", 2, {"name": "list_transcripts", "arguments": {}}), later)
    assert status == 200, (status, called)
    assert listed_titles(called) == live_titles(sample)

    if session and host in PYTHON_SDK:
        status, _, _ = wire.send("DELETE", None, later)
        assert 200 <= status < 300, status
        status, _, _ = wire.post(request("tools/list", 3), later)
        assert status == 404, "an ended session is unknown: the client must initialize again"

    bare = Wire(server, {})
    for message, extra in (
        (initialize(revision, host), {}),
        (request("tools/list", 4), {"MCP-Protocol-Version": revision}),
    ):
        status, refused_headers, _ = bare.post(message, extra)
        assert status == 401, (host, message["method"], status)
        assert refused_headers["www-authenticate"].startswith("Bearer")


# -- Claude Code, through its real CLI ------------------------------------------------------------


def claude_binary() -> Path | None:
    """The Claude Code CLI that ``npm ci --prefix tests/clients`` installed (as tests/e2e/test_install.py finds it)."""
    modules = ROOT / "tests" / "clients" / "node_modules" / "@anthropic-ai"
    for candidate in (
        *sorted(modules.glob("claude-code-linux-*/claude")),
        modules / "claude-code" / "bin" / "claude.exe",
    ):
        if candidate.is_file() and candidate.stat().st_size > 1_000_000:
            return candidate
    return None


def run_claude(argv: list[str], home: Path, bindir: Path, *, shell: bool = False) -> subprocess.CompletedProcess[str]:
    env = {
        "HOME": str(home),
        "PATH": f"{bindir}:/usr/bin:/bin",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    }
    command: list[str] = ["bash", "-c", argv[0]] if shell else argv
    return subprocess.run(
        command, capture_output=True, text=True, encoding="utf-8", timeout=120, check=False, env=env, cwd=home
    )


def test_claude_code_adds_the_documented_command_and_reports_it_connected(
    launcher: Launcher, launch: Callable[..., HttpServer], sample: Sample, tmp_path: Path
) -> None:
    """Run the documented ``claude mcp add`` (token read from the file serve --http made), then use what it wrote."""
    binary = claude_binary()
    if binary is None:
        pytest.skip(
            "Claude Code is not installed: nox -s test installs it when npm is here (npm ci --prefix tests/clients)"
        )
    if not launcher.local:
        pytest.skip("the command reads the token file serve --http makes in this machine's config folder")
    home = tmp_path / "claude-home"
    (home / ".claude").mkdir(parents=True)
    bindir = tmp_path / "claude-bin"
    bindir.mkdir()
    (bindir / "claude").symlink_to(binary)
    # No $MAGNOTIA_MCP_TOKEN: the server makes its token in this home's config folder, where the command reads it.
    server = launch([], {"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config")})
    token_file = home / ".config" / "com.magnotia.mcp" / "http-token"
    token = token_file.read_text(encoding="utf-8").strip()
    assert token

    lang, text = snippets()["claude-code"]
    assert lang == "sh"
    command = text.strip()
    assert command.startswith("claude mcp add "), command
    (documented,) = [u for u in DOC_URLS if u in command]
    readme = README.read_text(encoding="utf-8")
    assert command in readme, "README's Claude Code command is not the one docs/http.md checks"
    added = run_claude([command.replace(documented, served_url(documented, server))], home, bindir, shell=True)
    assert added.returncode == 0, added.stdout + added.stderr

    entry = json.loads((home / ".claude.json").read_text(encoding="utf-8"))["mcpServers"]["magnotia"]
    assert entry == {"type": "http", "url": server.url, "headers": {"Authorization": f"Bearer {token}"}}, entry

    got = run_claude([str(bindir / "claude"), "mcp", "get", "magnotia"], home, bindir)
    assert "Connected" in got.stdout, got.stdout + got.stderr
    listed = run_claude([str(bindir / "claude"), "mcp", "list"], home, bindir)
    line = next((ln for ln in listed.stdout.splitlines() if ln.startswith("magnotia:")), "")
    assert "Connected" in line, listed.stdout + listed.stderr

    # What Claude Code 2.1.332 sends here: 2026-07-28 (server/discover first), the config's headers on each request.
    wire = Wire(server, entry["headers"])

    def modern(method: str, rid: int, params: dict[str, Any], name: str | None = None) -> dict[str, Any] | None:
        extra = {"MCP-Protocol-Version": MODERN, "Mcp-Method": method, **({"Mcp-Name": name} if name else {})}
        meta = {**modern_meta(), META_CLIENT_INFO: {"name": "claude-code", "version": "2.1.332"}}
        status, _, reply = wire.post(request(method, rid, {**params, "_meta": meta}), extra)
        assert status == 200, (method, status, reply)
        return reply

    discovered = modern("server/discover", 0, {})
    assert discovered is not None
    assert MODERN in discovered["result"]["supportedVersions"], discovered
    tools = modern("tools/list", 1, {})
    assert tools is not None
    assert set(TOOL_NAMES) <= {t["name"] for t in tools["result"]["tools"]}
    called = modern("tools/call", 2, {"name": "list_transcripts", "arguments": {}}, "list_transcripts")
    assert listed_titles(called) == live_titles(sample)

    status, refused_headers, _ = Wire(server, {}).post(
        request("server/discover", 3, {"_meta": modern_meta()}),
        {"MCP-Protocol-Version": MODERN, "Mcp-Method": "server/discover"},
    )
    assert status == 401, status
    assert refused_headers["www-authenticate"].startswith("Bearer")
    assert token_file.stat().st_mode & 0o777 == 0o600
