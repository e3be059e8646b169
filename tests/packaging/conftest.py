"""Packaging checks: the MCP Bundle, server.json for the MCP Registry, and what they rely on.

Tests that need built artifacts skip unless the ``mcpb`` session says where they are:
``MAGNOTIA_MCPB_DIR`` (the folder of the built .mcpb files and the rendered server.json)
and ``MAGNOTIA_WHEEL_DIR`` (a folder holding the built wheel). Everything else runs in
``nox -s test`` too.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MCPB_DIR = ROOT / "packaging" / "mcpb"
MCPB_CLI = MCPB_DIR / "node_modules" / "@anthropic-ai" / "mcpb" / "dist" / "cli" / "cli.js"
MCPB_SCHEMA = MCPB_DIR / "node_modules" / "@anthropic-ai" / "mcpb" / "schemas" / "mcpb-manifest-v0.3.schema.json"


@pytest.fixture(autouse=True)
def _no_store_folder(monkeypatch: pytest.MonkeyPatch) -> None:
    """A store folder set in the developer's environment must not leak into these servers."""
    monkeypatch.delenv("MAGNOTIA_DATA_DIR", raising=False)


def artifact_dir(variable: str, what: str) -> Path:
    value = os.environ.get(variable)
    if not value:
        pytest.skip(f"needs {what}: run `nox -s mcpb` (or set {variable})")
    path = Path(value)
    assert path.is_dir(), f"{variable}={value} is not a folder"
    return path


@pytest.fixture(scope="session")
def built_bundles() -> Path:
    return artifact_dir("MAGNOTIA_MCPB_DIR", "the built bundles")


@pytest.fixture(scope="session")
def built_wheels() -> Path:
    return artifact_dir("MAGNOTIA_WHEEL_DIR", "the built wheel")


@pytest.fixture(scope="session")
def mcpb_cli() -> list[str]:
    """The pinned official CLI (npm ci --prefix packaging/mcpb), as an argv prefix."""
    node = shutil.which("node")
    if node is None or not MCPB_CLI.exists():
        pytest.skip("needs node and the pinned mcpb CLI: npm ci --prefix packaging/mcpb")
    return [node, str(MCPB_CLI)]
