"""server.json for the MCP Registry: the vendored schema, the rules it does not enforce, and the ownership marks.

The registry checks that the publisher owns each package: the PyPI description (the
README) must contain ``mcp-name: <name>``, the image must carry the label
``io.modelcontextprotocol.server.name``, and each bundle must match its ``fileSha256``.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import jsonschema
import pytest

import magnotia_mcp
from tests.packaging.conftest import ROOT

SERVER_JSON = ROOT / "server.json"
SCHEMA = ROOT / "packaging" / "registry" / "server.schema.json"
LINT = ROOT / "packaging" / "registry" / "serverjson.py"
NAME = "app.magnotia/magnotia-mcp"
# sha256 of docs/reference/server-json/server.schema.json in modelcontextprotocol/registry, the 2025-12-11 schema.
SCHEMA_SHA256 = "3fba09590c99f61735d234822279f4223fab9e300c0a81e81c91ab62a4114de0"


def load(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def lint(path: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(LINT), "check", str(path), *extra], capture_output=True, text=True, check=False
    )


def test_vendored_schema_is_the_published_one() -> None:
    assert hashlib.sha256(SCHEMA.read_bytes()).hexdigest() == SCHEMA_SHA256
    schema = load(SCHEMA)
    assert schema["$id"] == "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json"
    assert load(SERVER_JSON)["$schema"] == schema["$id"]


def test_server_json_matches_the_schema() -> None:
    jsonschema.Draft7Validator(load(SCHEMA)).validate(load(SERVER_JSON))


def test_server_json_keeps_the_registry_rules() -> None:
    done = lint(SERVER_JSON)
    assert done.returncode == 0, done.stderr
    doc = load(SERVER_JSON)
    assert doc["name"] == NAME
    assert doc["version"] == magnotia_mcp.__version__
    assert {p["registryType"] for p in doc["packages"]} == {"pypi", "oci", "mcpb"}


def _broken(tmp_path: Path, change: Any) -> subprocess.CompletedProcess[str]:
    doc = load(SERVER_JSON)
    change(doc)
    path = tmp_path / "server.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return lint(path)


def _package(doc: dict[str, Any], kind: str) -> dict[str, Any]:
    found: dict[str, Any] = next(p for p in doc["packages"] if p["registryType"] == kind)
    return found


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d.update(description="x" * 101), "description must be 1 to 100 characters"),
        (lambda d: d.update(version="9.9.9"), "not the package's"),
        (lambda d: d.update(name="io.github.someone/magnotia-mcp"), "name is"),
        (lambda d: _package(d, "pypi").update(version="0.0.1"), "PyPI package version"),
        (lambda d: _package(d, "oci").update(identifier="ghcr.io/Magnotia/magnotia-mcp:0.1.0"), "lower-case"),
        (lambda d: _package(d, "oci").update(identifier="ghcr.io/magnotia/magnotia-mcp"), "has no tag"),
        (lambda d: _package(d, "oci").update(identifier="ghcr.io/magnotia/magnotia-mcp:latest"), "is tagged latest"),
        (lambda d: _package(d, "oci").update(version=magnotia_mcp.__version__), "must not have a version field"),
        (lambda d: _package(d, "mcpb").update(fileSha256="ABC"), "is not 64 lower-case hex digits"),
        (
            lambda d: _package(d, "mcpb").update(identifier=_package(d, "mcpb")["identifier"].replace("v0.", "v9.")),
            "is not a release asset",
        ),
    ],
)
def test_lint_finds_each_broken_rule(tmp_path: Path, change: Any, message: str) -> None:
    done = _broken(tmp_path, change)
    assert done.returncode == 1
    assert message in done.stderr


def test_rendered_hashes_are_the_files(tmp_path: Path) -> None:
    """render fills each built bundle's fileSha256; check compares them with the files."""
    doc = load(SERVER_JSON)
    name = _package(doc, "mcpb")["identifier"].rsplit("/", 1)[-1]
    bundles = tmp_path / "bundles"
    bundles.mkdir()
    (bundles / name).write_bytes(b"a stand-in for a bundle")
    out = tmp_path / "server.json"
    subprocess.run(
        [sys.executable, str(LINT), "render", "--bundles", str(bundles), "--out", str(out)],
        check=True,
        capture_output=True,
    )
    rendered = load(out)
    assert [p["identifier"].rsplit("/", 1)[-1] for p in rendered["packages"] if p["registryType"] == "mcpb"] == [name]
    assert _package(rendered, "mcpb")["fileSha256"] == hashlib.sha256(b"a stand-in for a bundle").hexdigest()
    jsonschema.Draft7Validator(load(SCHEMA)).validate(rendered)
    assert lint(out, "--bundles", str(bundles), "--require-sha").returncode == 0
    (bundles / name).write_bytes(b"another file")
    done = lint(out, "--bundles", str(bundles))
    assert done.returncode == 1
    assert "is not the sha256 of" in done.stderr
    # The template itself has no hashes: a release must render it.
    assert "has no fileSha256" in lint(SERVER_JSON, "--require-sha").stderr


def test_readme_carries_the_pypi_ownership_mark() -> None:
    assert f"mcp-name: {NAME}" in (ROOT / "README.md").read_text(encoding="utf-8")


def test_dockerfile_labels_each_image_with_the_name() -> None:
    text = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    final_stages = [s for s in text.split("\nFROM ") if s.split()[2:3] in (["venv"], ["frozen"])]
    assert len(final_stages) == 2
    for stage in final_stages:
        assert f'io.modelcontextprotocol.server.name="{NAME}"' in stage


def test_built_wheel_metadata_has_the_mark(built_wheels: Path) -> None:
    wheels = sorted(built_wheels.glob("magnotia_mcp-*.whl"))
    assert wheels, f"no wheel in {built_wheels}"
    with zipfile.ZipFile(wheels[-1]) as wheel:
        metadata = next(n for n in wheel.namelist() if n.endswith(".dist-info/METADATA"))
        text = wheel.read(metadata).decode("utf-8")
    assert f"Version: {magnotia_mcp.__version__}" in text
    assert f"mcp-name: {NAME}" in text


def test_built_server_json(built_bundles: Path) -> None:
    """The server.json the mcpb session rendered: schema, rules, and a hash for every bundle built."""
    rendered = built_bundles / "server.json"
    jsonschema.Draft7Validator(load(SCHEMA)).validate(load(rendered))
    done = lint(rendered, "--bundles", str(built_bundles), "--require-sha")
    assert done.returncode == 0, done.stderr
    names = {p["identifier"].rsplit("/", 1)[-1] for p in load(rendered)["packages"] if p["registryType"] == "mcpb"}
    assert names == {p.name for p in built_bundles.glob("*.mcpb")}
