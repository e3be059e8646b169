"""packaging/mcpb/manifest.json against the server it describes, and its icon.

The manifest's tools must be the server's (a host shows them before it ever starts
the server), its version the package's, and the file valid for the official CLI.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

import magnotia_mcp
from tests.packaging.conftest import MCPB_DIR, MCPB_SCHEMA, ROOT
from tests.support.server import Launcher, ServerProcess, check_clean_exit

MANIFEST = MCPB_DIR / "manifest.json"


def manifest() -> dict[str, Any]:
    return json.loads(MANIFEST.read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def served_tools(launcher: Launcher, tmp_path: Path) -> list[dict[str, Any]]:
    """tools/list of the running server (no store needed: the list does not depend on it)."""
    db = tmp_path / "none" / "magnotia.db"
    db.parent.mkdir()
    proc = ServerProcess(launcher.argv(db))
    try:
        proc.initialize()
        response = proc.request("tools/list")
    finally:
        check_clean_exit(proc)
    return response["result"]["tools"]  # type: ignore[no-any-return]


def test_tools_are_the_servers(launcher: Launcher, tmp_path: Path) -> None:
    expected = [{"name": t["name"], "description": t["description"]} for t in served_tools(launcher, tmp_path)]
    assert manifest()["tools"] == expected, (
        "packaging/mcpb/manifest.json's tools differ from the server's tools/list; set them to:\n"
        + json.dumps(expected, indent=2, ensure_ascii=False)
    )


def test_version_is_the_packages() -> None:
    assert manifest()["version"] == magnotia_mcp.__version__


def test_store_folder_reaches_the_server_through_the_environment() -> None:
    data = manifest()
    option = data["user_config"]["data_dir"]
    assert option["type"] == "directory"
    assert option.get("required") is False
    assert "default" not in option  # empty means the app's own folder, which only the server knows
    config = data["server"]["mcp_config"]
    assert config["env"] == {"MAGNOTIA_DATA_DIR": "${user_config.data_dir}"}
    # Paths go through env, never args: hosts that spawn through `cmd /C` split arguments at spaces.
    for variant in [config, *config["platform_overrides"].values()]:
        assert not any("user_config" in arg for arg in variant.get("args", []))


def test_manifest_matches_the_schema_the_cli_ships() -> None:
    if not MCPB_SCHEMA.exists():
        pytest.skip("needs the pinned mcpb package: npm ci --prefix packaging/mcpb")
    schema = json.loads(MCPB_SCHEMA.read_text(encoding="utf-8"))
    jsonschema.Draft7Validator(schema).validate(manifest())


def test_icon_is_what_the_script_draws() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "devtools" / "icon.py"), "--check"], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    data = (MCPB_DIR / "icon.png").read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n")
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    assert (width, height) == (512, 512)
    assert manifest()["icon"] == "icon.png"
