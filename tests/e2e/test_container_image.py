"""The image itself (``--server container`` only): its MCP Registry label, a store folder its user may not read,
and the compose example (docs/compose.yaml) run as compose would run it.

The registry ties the image to ``server.json`` by the label
``io.modelcontextprotocol.server.name``. The image runs as uid 65532; a store folder
only its owner may enter (umask 077, a private app folder) is then unreadable, and the
server's error must say which uid:gid it runs as and that ``--user "$(id -u):$(id -g)"``
fixes it, which the next test confirms by doing so.
"""

from __future__ import annotations

import hashlib
import http.client
import json
import os
import re
import secrets
import subprocess
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from devkit.storefactory import StoreBuilder
from tests.http.conftest import HttpServer, free_port
from tests.support.sample import build_sample
from tests.support.server import Launcher, ServerProcess, check_clean_exit

NAME = "app.magnotia/magnotia-mcp"
NewStore = Callable[..., StoreBuilder]


@pytest.fixture(autouse=True)
def _container_only(launcher: Launcher) -> None:
    if launcher.kind != "container":
        pytest.skip("checks the container image (--server container)")


def engine_and_image() -> tuple[str, str]:
    return os.environ.get("MAGNOTIA_MCP_ENGINE", "podman"), os.environ.get("MAGNOTIA_MCP_IMAGE", "magnotia-mcp:test")


def test_image_carries_the_registry_name() -> None:
    engine, image = engine_and_image()
    done = subprocess.run(
        [engine, "image", "inspect", "--format", "{{json .Config.Labels}}", image],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    labels = json.loads(done.stdout)
    assert labels["io.modelcontextprotocol.server.name"] == NAME


def private_store(new_store: NewStore) -> Path:
    """A store in a folder only its owner (the user running the tests) may enter: mode 0700."""
    store = new_store("private")
    store.transcript(title="kept private")
    db = store.close()
    db.parent.chmod(0o700)
    return db


def call_list(argv: list[str]) -> dict[str, Any]:
    """list_transcripts on a fresh server: the whole response."""
    proc = ServerProcess(argv)
    try:
        proc.initialize()
        return proc.call("list_transcripts")
    finally:
        check_clean_exit(proc)


def test_unreadable_store_folder_says_to_add_user(launcher: Launcher, new_store: NewStore) -> None:
    if os.geteuid() == 65532:
        pytest.skip("the tests run as the image's own user: the folder is readable to it")
    response = call_list(launcher.argv(private_store(new_store)))
    # A store that cannot be read is a JSON-RPC error (-32603) that says what to do.
    message = response["error"]["message"]
    assert "Permission denied" in message
    assert "uid:gid 65532:65532" in message
    assert '--user "$(id -u):$(id -g)"' in message


def test_with_user_the_private_folder_is_served(launcher: Launcher, new_store: NewStore) -> None:
    argv = launcher.argv(private_store(new_store))
    _, image = engine_and_image()
    at = argv.index(image)
    argv[at:at] = ["--user", f"{os.getuid()}:{os.getgid()}"]
    response = call_list(argv)
    assert "result" in response, response
    text = response["result"]["content"][0]["text"]
    assert [t["title"] for t in json.loads(text)["transcripts"]] == ["kept private"]


# -- docs/compose.yaml ---------------------------------------------------------------------------

COMPOSE = Path(__file__).resolve().parents[2] / "docs" / "compose.yaml"
INTERPOLATION = re.compile(r"\$\{(\w+)(?:(:[-?])([^}]*))?\}")


def interpolate(text: str, variables: dict[str, str]) -> str:
    """Compose's ``${NAME}``, ``${NAME:-default}`` and ``${NAME:?message}`` (an unset or empty NAME)."""

    def one(match: re.Match[str]) -> str:
        name, kind, rest = match.groups()
        value = variables.get(name, "")
        if value:
            return value
        if kind == ":-":
            return rest
        raise AssertionError(f"docs/compose.yaml needs {name}: {rest}" if kind == ":?" else f"{name} is unset")

    return INTERPOLATION.sub(one, text)


def scalar(text: str) -> Any:
    """One value of the subset docs/compose.yaml is written in: JSON flow lists and strings, booleans, plain words."""
    if text.startswith(("[", "{", '"')):
        return json.loads(text)
    if text in ("true", "false"):
        return text == "true"
    # A YAML plain scalar: no indicator first, no quotes, no ": " (a mapping) or " #" (a comment) inside.
    plain = re.fullmatch(r"[^\s#'\"\[\]{}>|&*!%@`,-][^'\"]*", text) and ": " not in text and " #" not in text
    assert plain, f"docs/compose.yaml: not a plain value: {text!r}"
    return text


def compose_services(text: str) -> dict[str, dict[str, Any]]:
    """The ``services`` of docs/compose.yaml, read strictly: any YAML form the test does not know fails it.

    (No YAML parser is a test dependency.) Services at indent 2, their keys at 4, a key's
    block at 6: ``- item`` lines (a list) or ``NAME: value`` lines (a mapping); a value
    ``>-`` folds the more-indented lines after it into one string.
    """
    services: dict[str, dict[str, Any]] = {}
    section = service = key = ""
    folding: tuple[dict[str, Any], str, int, list[str]] | None = None
    for raw in text.splitlines():
        line = raw.rstrip()
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        indent = len(line) - len(line.lstrip(" "))
        body = line.strip()
        if folding is not None:
            into, name, above, lines = folding
            if indent > above:
                lines.append(body)
                continue
            into[name] = " ".join(lines)
            folding = None
        if indent == 0:
            section = body.removesuffix(":")
        elif section != "services":
            continue
        elif indent == 2 and body.endswith(":"):
            service = body.removesuffix(":")
            services[service] = {}
        elif indent in (4, 6) and re.fullmatch(r"[\w-]+:( .*)?", body):
            name, _, value = body.partition(":")
            value = value.strip()
            if indent == 4:
                into, key = services[service], name
            else:
                if services[service][key] is None:
                    services[service][key] = {}
                into = services[service][key]
                assert isinstance(into, dict), f"{service}.{key} mixes a list and a mapping"
            if value == ">-":
                folding = (into, name, indent, [])
            else:
                into[name] = scalar(value) if value else None
        elif indent == 6 and body.startswith("- "):
            entries = services[service][key] = services[service][key] or []
            assert isinstance(entries, list), f"{service}.{key} mixes a list and a mapping"
            entries.append(scalar(body[2:]))
        else:
            raise AssertionError(f"docs/compose.yaml: a line this test cannot read: {line!r}")
    assert folding is None, "docs/compose.yaml ends inside a folded value"
    return services


def run_like_compose(
    engine: str, service: dict[str, Any], name: str, alias: str, network: str, variables: dict[str, str]
) -> tuple[list[str], dict[str, str]]:
    """``docker run`` for one compose service, and the environment its values come from (not its command line)."""
    argv = [engine, "run", "--rm", "--name", name]
    env = dict(os.environ)
    known = {"image", "command", "environment", "volumes", "read_only", "user", "cap_drop", "security_opt", "ports"}
    for key in service:
        assert key in known | {"networks"}, f"docs/compose.yaml sets {key!r}: teach run_like_compose() to apply it"
    for variable, value in service["environment"].items():
        env[variable] = interpolate(value, variables)
        argv += ["-e", variable]
    argv += [arg for volume in service["volumes"] for arg in ("-v", interpolate(volume, variables))]
    if service["read_only"]:
        argv.append("--read-only")
        if engine == "podman":
            argv.append("--read-only-tmpfs=false")  # docker compose's read_only adds no writable /tmp either
    argv += ["--user", interpolate(service["user"], variables)]
    argv += [arg for cap in service["cap_drop"] for arg in ("--cap-drop", cap)]
    argv += [arg for opt in service["security_opt"] for arg in ("--security-opt", opt)]
    argv += [arg for port in service["ports"] for arg in ("-p", interpolate(port, variables))]
    argv += ["--network", network, "--network-alias", alias]  # compose's project network; the service name
    return [*argv, interpolate(service["image"], variables), *service["command"]], env


def post_mcp(
    port: int, host: str, path: str, message: dict[str, Any], token: str | None
) -> tuple[int, dict[str, Any] | None]:
    headers = {"Host": host, "Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        conn.request("POST", path, body=json.dumps(message).encode(), headers=headers)
        response = conn.getresponse()
        body = response.read()
        return response.status, json.loads(body) if body and response.status == 200 else None
    finally:
        conn.close()


def test_compose_example_serves_open_webui_its_tools(tmp_path: Path) -> None:
    """The magnotia-mcp service of docs/compose.yaml, run as compose would, answers MCP as Open WebUI will ask it."""
    engine, image = engine_and_image()
    services = compose_services(COMPOSE.read_text())
    ours = services["magnotia-mcp"]
    assert ours["command"] == ["serve", "--http", "0.0.0.0:8765"]
    assert ours["read_only"] is True
    assert all(port.startswith("127.0.0.1:") for port in ours["ports"]), "published beyond this machine"
    assert all(volume.endswith(":/data:ro") for volume in ours["volumes"])
    sample = build_sample(tmp_path / "store" / "magnotia.db")
    before = hashlib.sha256(sample.path.read_bytes()).hexdigest()
    port = free_port()
    variables = {
        "MAGNOTIA_MCP_TOKEN": secrets.token_urlsafe(32),
        "MAGNOTIA_STORE_DIR": str(sample.path.parent),
        "MAGNOTIA_MCP_IMAGE": image,
        "MAGNOTIA_MCP_PORT": str(port),
    }
    assert interpolate(ours["user"], variables) == "65532:65532"  # not root, unless told your own ids

    # What Open WebUI is told: an MCP server at the service's name, with the same token.
    (connection,) = json.loads(interpolate(services["open-webui"]["environment"]["TOOL_SERVER_CONNECTIONS"], variables))
    assert (connection["type"], connection["auth_type"]) == ("mcp", "bearer")
    assert connection["key"] == variables["MAGNOTIA_MCP_TOKEN"]
    url = urlsplit(connection["url"])
    assert (url.scheme, url.hostname, url.port, url.path) == ("http", "magnotia-mcp", 8765, "/mcp")
    assert services["open-webui"]["networks"] == ours["networks"]

    network = f"magnotia-compose-{uuid.uuid4().hex[:12]}"
    subprocess.run([engine, "network", "create", network], capture_output=True, timeout=60, check=True)
    name = f"{network}-magnotia-mcp"
    argv, env = run_like_compose(engine, ours, name, "magnotia-mcp", network, variables)
    assert variables["MAGNOTIA_MCP_TOKEN"] not in " ".join(argv)
    server = HttpServer(argv, env, reach=f"127.0.0.1:{port}", container=(engine, name))
    try:
        token = variables["MAGNOTIA_MCP_TOKEN"]
        initialize = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "open-webui-like", "version": "0"},
            },
        }
        assert post_mcp(port, url.netloc, url.path, initialize, None)[0] == 401
        status, reply = post_mcp(port, url.netloc, url.path, initialize, token)
        assert status == 200, server.stderr
        assert reply is not None
        assert reply["result"]["serverInfo"]["name"] == "magnotia-mcp"
        notified = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        assert post_mcp(port, url.netloc, url.path, notified, token)[0] == 202
        listed = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
        status, reply = post_mcp(port, url.netloc, url.path, listed, token)
        assert reply is not None
        assert "list_transcripts" in {tool["name"] for tool in reply["result"]["tools"]}
        call = {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {"name": "list_transcripts", "arguments": {}},
        }
        status, reply = post_mcp(port, url.netloc, url.path, call, token)
        assert reply is not None
        shown = {t["title"] for t in json.loads(reply["result"]["content"][0]["text"])["transcripts"]}
        assert shown == {sample.titles[i] for i in sample.live}
    finally:
        server.stop()
        subprocess.run([engine, "network", "rm", network], capture_output=True, timeout=60, check=False)
    assert not any(variables["MAGNOTIA_MCP_TOKEN"] in line for line in server.stderr), "the token reached the log"
    assert hashlib.sha256(sample.path.read_bytes()).hexdigest() == before, "the store changed"
