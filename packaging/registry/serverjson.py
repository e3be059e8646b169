#!/usr/bin/env python3
"""server.json for the MCP Registry: the rules its JSON Schema does not enforce, and the bundle hashes.

    python packaging/registry/serverjson.py check server.json
    python packaging/registry/serverjson.py render --bundles dist/mcpb --out dist/mcpb/server.json
    python packaging/registry/serverjson.py check dist/mcpb/server.json --bundles dist/mcpb --require-sha

The repository's ``server.json`` is the template: every field but the bundles'
``fileSha256``, which only a built file has. ``render`` copies it with the
``fileSha256`` of each bundle found in ``--bundles`` (entries whose file is not
there are left out, or refused with ``--all``, as a release must have them all).
The schema itself (packaging/registry/server.schema.json, 2025-12-11) is checked
with ``check-jsonschema``; ``check`` adds what the official registry requires
beyond it:

* ``name`` is the project's registry name, and ``description`` at most 100 characters;
* ``version`` and every package's ``version`` equal the package's (src/magnotia_mcp/__init__.py);
* the PyPI package is this project, with its version;
* the OCI image reference is lower-case and tagged with that version, and has no ``version`` field;
* each bundle URL is a GitHub release asset of that version; a ``fileSha256`` is 64 lower-case
  hex digits and, with ``--bundles``, the sha256 of the built file of that name.

Exit status 1 with one line per broken rule. Stdlib only.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent.parent
TEMPLATE = ROOT / "server.json"
NAME = "app.magnotia/magnotia-mcp"
PYPI_NAME = "magnotia-mcp"
RELEASES = "https://github.com/magnotia/magnotia-mcp/releases/download/"
SHA256 = re.compile(r"[0-9a-f]{64}")


def package_version() -> str:
    text = (ROOT / "src" / "magnotia_mcp" / "__init__.py").read_text(encoding="utf-8")
    found = re.search(r'(?m)^__version__\s*=\s*"([^"]+)"', text)
    if not found:
        raise SystemExit("serverjson.py: no __version__ in src/magnotia_mcp/__init__.py")
    return found.group(1)


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _oci_problems(package: dict[str, Any], version: str) -> list[str]:
    ref = str(package.get("identifier", ""))
    problems = []
    if ref != ref.lower():
        problems.append(f"OCI reference {ref} must be lower-case")
    name, _, _digest = ref.partition("@")
    last = name.rsplit("/", 1)[-1]
    tag = last.partition(":")[2]
    if not tag:
        problems.append(f"OCI reference {ref} has no tag")
    elif tag != version:
        problems.append(f"OCI reference {ref} is tagged {tag}, not the package's version {version}")
    if "version" in package:
        problems.append(f"OCI package {ref} must not have a version field (the tag is its version)")
    return problems


def _mcpb_problems(package: dict[str, Any], version: str, bundles: Path | None, require_sha: bool) -> list[str]:
    url = str(package.get("identifier", ""))
    problems = []
    prefix = f"{RELEASES}v{version}/"
    file_name = url.rsplit("/", 1)[-1]
    if not url.startswith(prefix) or "/" in url[len(prefix) :]:
        problems.append(f"bundle {url} is not a release asset under {prefix}")
    if not re.fullmatch(rf"magnotia-mcp-{re.escape(version)}-(linux|macos|windows)-(x64|arm64)\.mcpb", file_name):
        problems.append(f"bundle file name {file_name} is not magnotia-mcp-{version}-<os>-<arch>.mcpb")
    if "version" in package and package["version"] != version:
        problems.append(f"bundle {file_name} has version {package['version']}, not {version}")
    sha = package.get("fileSha256")
    if sha is None:
        if require_sha:
            problems.append(f"bundle {file_name} has no fileSha256")
        return problems
    if not isinstance(sha, str) or not SHA256.fullmatch(sha):
        problems.append(f"bundle {file_name} fileSha256 {sha!r} is not 64 lower-case hex digits")
    elif bundles is not None:
        built = bundles / file_name
        if not built.is_file():
            problems.append(f"bundle {file_name} is not in {bundles}")
        elif file_sha256(built) != sha:
            problems.append(f"bundle {file_name} fileSha256 {sha} is not the sha256 of {built}")
    return problems


def problems(doc: dict[str, Any], version: str, bundles: Path | None = None, require_sha: bool = False) -> list[str]:
    """Every rule the document breaks, one line each."""
    found: list[str] = []
    if doc.get("name") != NAME:
        found.append(f"name is {doc.get('name')!r}, not {NAME!r}")
    description = doc.get("description")
    if not isinstance(description, str) or not 0 < len(description) <= 100:
        found.append(f"description must be 1 to 100 characters (has {len(str(description or ''))})")
    if doc.get("version") != version:
        found.append(f"version is {doc.get('version')!r}, not the package's {version!r}")
    packages = doc.get("packages") or []
    kinds = [p.get("registryType") for p in packages]
    for kind in ("pypi", "oci", "mcpb"):
        if kind not in kinds:
            found.append(f"no {kind} package")
    for package in packages:
        kind = package.get("registryType")
        if kind == "pypi":
            if package.get("identifier") != PYPI_NAME:
                found.append(f"PyPI package is {package.get('identifier')!r}, not {PYPI_NAME!r}")
            if package.get("version") != version:
                found.append(f"PyPI package version is {package.get('version')!r}, not {version!r}")
        elif kind == "oci":
            found += _oci_problems(package, version)
        elif kind == "mcpb":
            found += _mcpb_problems(package, version, bundles, require_sha)
        else:
            found.append(f"unexpected package type {kind!r}")
    return found


def render(template: dict[str, Any], bundles: Path, require_all: bool) -> dict[str, Any]:
    """The template with each built bundle's fileSha256 (bundles not built are left out, or refused)."""
    doc: dict[str, Any] = json.loads(json.dumps(template))
    packages = []
    for package in doc.get("packages", []):
        if package.get("registryType") == "mcpb":
            built = bundles / str(package["identifier"]).rsplit("/", 1)[-1]
            if not built.is_file():
                if require_all:
                    raise SystemExit(f"serverjson.py: {built} is missing (--all)")
                print(f"serverjson.py: leaving out {built.name} (not built here)", file=sys.stderr)
                continue
            package["fileSha256"] = file_sha256(built)
        packages.append(package)
    doc["packages"] = packages
    return doc


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Check server.json's registry rules; fill in the bundles' hashes.")
    sub = parser.add_subparsers(dest="command", required=True)
    check = sub.add_parser("check", help="the rules the schema does not enforce")
    check.add_argument("file", type=Path)
    check.add_argument("--bundles", type=Path, help="folder of the built .mcpb files: compare their sha256")
    check.add_argument("--require-sha", action="store_true", help="every bundle entry must have its fileSha256")
    out = sub.add_parser("render", help="server.json with the built bundles' fileSha256")
    out.add_argument("--template", type=Path, default=TEMPLATE)
    out.add_argument("--bundles", type=Path, required=True)
    out.add_argument("--out", type=Path, required=True)
    out.add_argument("--all", action="store_true", help="every bundle the template names must be built")
    args = parser.parse_args(argv)
    version = package_version()
    if args.command == "render":
        doc = render(json.loads(args.template.read_text(encoding="utf-8")), args.bundles, args.all)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"wrote {args.out}")
        return 0
    broken = problems(json.loads(args.file.read_text(encoding="utf-8")), version, args.bundles, args.require_sha)
    for line in broken:
        print(f"{args.file}: {line}", file=sys.stderr)
    if not broken:
        print(f"{args.file}: registry rules hold (version {version})")
    return 1 if broken else 0


if __name__ == "__main__":
    raise SystemExit(main())
