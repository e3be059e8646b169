"""The built bundle, installed and started the way a host does it (needs ``nox -s mcpb``).

Each test unpacks the .mcpb built for this machine into a folder whose path has
spaces (as "Claude Extensions" does), reads its manifest.json, works out command,
args and env from ``server.mcp_config`` exactly as the reference implementation does
(tests/packaging/host.py), starts that, and talks to it over its pipes.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest

import magnotia_mcp
from devkit.storefactory import StoreBuilder
from tests.packaging.host import argv_env, mcp_config
from tests.support.server import ServerProcess, check_clean_exit

HOST_PLATFORM = "win32" if sys.platform == "win32" else sys.platform


@pytest.fixture(scope="module")
def bundle(built_bundles: Path) -> Path:
    """This machine's bundle: exactly one per OS and architecture in the output folder."""
    os_name = {"linux": "linux", "darwin": "macos", "win32": "windows"}[HOST_PLATFORM]
    found = sorted(built_bundles.glob(f"magnotia-mcp-{magnotia_mcp.__version__}-{os_name}-*.mcpb"))
    assert len(found) == 1, f"expected one {os_name} bundle of {magnotia_mcp.__version__} in {built_bundles}: {found}"
    return found[0]


def unpack_with_cli(mcpb_cli: list[str], bundle: Path, into: Path) -> Path:
    subprocess.run([*mcpb_cli, "unpack", str(bundle), str(into)], check=True, capture_output=True, timeout=60)
    return into


def read_manifest(folder: Path) -> dict[str, Any]:
    return json.loads((folder / "manifest.json").read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def store_in(folder: Path, title: str) -> Path:
    store = StoreBuilder(folder / "magnotia.db")
    tid = store.transcript(title=title, raw_text="We agreed to ship the mobile launch on Friday.")
    store.task(transcript_id=tid, title="Send the launch notes")
    return store.close()


def serve_as_host(argv: list[str], env: dict[str, str]) -> dict[str, Any]:
    """initialize, tools/list and two tool calls; what each returned."""
    proc = ServerProcess(argv, env=env)
    try:
        init = proc.initialize()
        tools = proc.request("tools/list")["result"]["tools"]
        listed = proc.result("list_transcripts")
        found = proc.result("search_transcripts", {"query": "mobile launch"})
    finally:
        check_clean_exit(proc)
    return {"init": init["result"], "tools": tools, "listed": listed, "found": found}


def test_official_cli_reads_the_bundle(mcpb_cli: list[str], bundle: Path, tmp_path: Path) -> None:
    info = subprocess.run([*mcpb_cli, "info", str(bundle)], capture_output=True, text=True, timeout=60, check=False)
    assert info.returncode == 0, info.stderr
    assert bundle.name in info.stdout
    folder = unpack_with_cli(mcpb_cli, bundle, tmp_path / "unpacked")
    valid = subprocess.run(
        [*mcpb_cli, "validate", str(folder / "manifest.json")], capture_output=True, text=True, timeout=60, check=False
    )
    assert valid.returncode == 0, valid.stdout + valid.stderr
    manifest = read_manifest(folder)
    assert manifest["version"] == magnotia_mcp.__version__
    assert manifest["compatibility"]["platforms"] == [HOST_PLATFORM]
    entry = folder / manifest["server"]["entry_point"]
    assert entry.is_file()
    assert os.access(entry, os.X_OK), "the executable lost its execute bit in the bundle"
    assert (folder / manifest["icon"]).is_file()


def test_host_starts_it_with_the_chosen_store_folder(mcpb_cli: list[str], bundle: Path, tmp_path: Path) -> None:
    install = unpack_with_cli(mcpb_cli, bundle, tmp_path / "Claude Extensions" / "local.mcpb.magnotia mcp")
    data = tmp_path / "My Documents" / "Magnotia data"
    store_in(data, "Launch review")
    manifest = read_manifest(install)
    argv, env = argv_env(mcp_config(manifest, install, {"data_dir": str(data)}, HOST_PLATFORM))
    assert argv[0].startswith(str(install))
    served = serve_as_host(argv, env)
    assert served["init"]["serverInfo"]["version"] == magnotia_mcp.__version__
    assert [{"name": t["name"], "description": t["description"]} for t in served["tools"]] == manifest["tools"]
    assert [t["title"] for t in served["listed"]["transcripts"]] == ["Launch review"]
    assert [h["title"] for h in served["found"]["hits"]] == ["Launch review"]


def test_host_starts_it_with_no_store_folder_set(
    mcpb_cli: list[str], bundle: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The setting left empty: the host leaves ``${user_config.data_dir}`` as written; the app's folder is read."""
    if HOST_PLATFORM != "linux":
        pytest.skip("the app's default folder is placed through XDG_DATA_HOME here, a Linux convention")
    install = unpack_with_cli(mcpb_cli, bundle, tmp_path / "Claude Extensions" / "magnotia")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg data"))
    store_in(tmp_path / "xdg data" / "com.magnotia.app", "In the app's own folder")
    config = mcp_config(read_manifest(install), install, {}, HOST_PLATFORM)
    assert config["env"]["MAGNOTIA_DATA_DIR"] == "${user_config.data_dir}"
    served = serve_as_host(*argv_env(config))
    assert [t["title"] for t in served["listed"]["transcripts"]] == ["In the app's own folder"]


def test_macos_override_survives_an_extraction_without_execute_bits(bundle: Path, tmp_path: Path) -> None:
    """Claude Desktop on macOS has extracted bundles without execute bits (mcpb #294).

    The darwin override starts the executable through /bin/sh, which restores the bit
    first. Extracted here with zipfile, which drops modes as that host did: the plain
    command cannot start, the override can (POSIX sh, so this runs on Linux too).
    """
    if HOST_PLATFORM == "win32":
        pytest.skip("needs /bin/sh")
    install = tmp_path / "Application Support" / "Claude" / "Claude Extensions" / "magnotia"
    with zipfile.ZipFile(bundle) as archive:
        archive.extractall(install)
    manifest = read_manifest(install)
    entry = install / manifest["server"]["entry_point"]
    assert not entry.stat().st_mode & stat.S_IXUSR
    plain, _ = argv_env(mcp_config(manifest, install, {}, "linux"))
    with pytest.raises(PermissionError):
        subprocess.run(plain, input=b"", capture_output=True, timeout=30, check=False)
    data = tmp_path / "store folder"
    store_in(data, "Started through sh")
    argv, env = argv_env(mcp_config(manifest, install, {"data_dir": str(data)}, "darwin"))
    assert argv[0] == "/bin/sh"
    served = serve_as_host(argv, env)
    assert [t["title"] for t in served["listed"]["transcripts"]] == ["Started through sh"]
    assert entry.stat().st_mode & stat.S_IXUSR
