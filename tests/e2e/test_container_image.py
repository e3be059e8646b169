"""The image itself (``--server container`` only): its MCP Registry label, and a store folder its user may not read.

The registry ties the image to ``server.json`` by the label
``io.modelcontextprotocol.server.name``. The image runs as uid 65532; a store folder
only its owner may enter (umask 077, a private app folder) is then unreadable, and the
server's error must say which uid:gid it runs as and that ``--user "$(id -u):$(id -g)"``
fixes it, which the last test confirms by doing so.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.support.server import Launcher, ServerProcess, check_clean_exit
from tests.support.storefactory import StoreBuilder

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
