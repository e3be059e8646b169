#!/usr/bin/env python3
"""Build the MCP Bundle (.mcpb) of this machine's platform from the frozen executable.

    python packaging/mcpb/bundle.py --binary dist/magnotia-mcp --out dist/mcpb

Steps, each of which stops the build when it fails:

1. stage: a folder with ``manifest.json`` (this folder's, with ``version`` set to the
   package's and ``compatibility.platforms`` narrowed to this OS; on Windows the entry
   point gets its ``.exe``), ``icon.png`` and ``server/<the executable>`` (mode 0755);
2. check the staged manifest with the official CLI (``mcpb validate``) and against the
   manifest JSON Schema that CLI's package ships (``check-jsonschema``);
3. ``mcpb pack`` it to ``<out>/magnotia-mcp-<version>-<os>-<arch>.mcpb`` and show ``mcpb info``;
4. write ``<file>.sha256`` beside it (``sha256sum`` format): server.json's ``fileSha256``.

One bundle holds one OS and architecture (the executable is native code); the release
pipeline runs this script on each OS (docs/bundles.md). The CLI is the one pinned in
``packaging/mcpb/package-lock.json`` (``npm ci --prefix packaging/mcpb``). Stdlib only.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
MANIFEST = HERE / "manifest.json"
ICON = HERE / "icon.png"
CLI = HERE / "node_modules" / "@anthropic-ai" / "mcpb" / "dist" / "cli" / "cli.js"
SCHEMA = HERE / "node_modules" / "@anthropic-ai" / "mcpb" / "schemas" / "mcpb-manifest-v0.3.schema.json"

# mcpb's platform names (Node's process.platform) and the names bundle files carry.
OS_NAMES = {"linux": "linux", "darwin": "macos", "win32": "windows"}
ARCH_NAMES = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}


def package_version() -> str:
    """The version the source tree declares (src/magnotia_mcp/__init__.py): the package's one source."""
    text = (ROOT / "src" / "magnotia_mcp" / "__init__.py").read_text(encoding="utf-8")
    found = re.search(r'(?m)^__version__\s*=\s*"([^"]+)"', text)
    if not found:
        raise SystemExit("bundle.py: no __version__ in src/magnotia_mcp/__init__.py")
    return found.group(1)


def this_platform() -> tuple[str, str]:
    """(mcpb platform, arch) of this machine: ("linux", "x64"), ("darwin", "arm64"), ("win32", "x64")..."""
    plat = "win32" if sys.platform == "win32" else sys.platform
    if plat not in OS_NAMES:
        raise SystemExit(f"bundle.py: no bundle for platform {sys.platform}")
    machine = platform.machine().lower()
    if machine not in ARCH_NAMES:
        raise SystemExit(f"bundle.py: unknown architecture {platform.machine()}")
    return plat, ARCH_NAMES[machine]


def bundle_name(version: str, plat: str, arch: str) -> str:
    return f"magnotia-mcp-{version}-{OS_NAMES[plat]}-{arch}.mcpb"


def staged_manifest(source: dict[str, Any], version: str, plat: str) -> dict[str, Any]:
    """The manifest as it goes into this platform's bundle."""
    manifest: dict[str, Any] = json.loads(json.dumps(source))
    manifest["version"] = version
    manifest.setdefault("compatibility", {})["platforms"] = [plat]
    if plat == "win32":
        manifest["server"]["entry_point"] += ".exe"
    return manifest


def run(argv: list[str]) -> None:
    print("+ " + " ".join(argv), flush=True)
    subprocess.run(argv, check=True)


def node() -> str:
    found = shutil.which("node")
    if not found:
        raise SystemExit("bundle.py: needs node (the official mcpb CLI is a Node program)")
    if not CLI.exists():
        raise SystemExit(f"bundle.py: {CLI} is missing; run `npm ci --prefix {HERE.relative_to(ROOT)}` first")
    return found


def check_jsonschema() -> str:
    found = shutil.which("check-jsonschema") or shutil.which(str(Path(sys.executable).parent / "check-jsonschema"))
    if not found:
        raise SystemExit("bundle.py: needs check-jsonschema (pip install check-jsonschema)")
    return found


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def build(binary: Path, out: Path, stage: Path) -> Path:
    version = package_version()
    plat, arch = this_platform()
    source = json.loads(MANIFEST.read_text(encoding="utf-8"))
    if source.get("version") != version:
        raise SystemExit(f"bundle.py: manifest.json says version {source.get('version')}, the package {version}")
    manifest = staged_manifest(source, version, plat)
    entry = manifest["server"]["entry_point"]
    if Path(entry).name != binary.name:
        raise SystemExit(f"bundle.py: the manifest's entry point is {entry} but the executable is {binary.name}")

    if stage.exists():
        shutil.rmtree(stage)
    (stage / "server").mkdir(parents=True)
    (stage / "manifest.json").write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    shutil.copyfile(ICON, stage / "icon.png")
    shutil.copyfile(binary, stage / entry)
    os.chmod(stage / entry, 0o755)

    js = node()
    run([js, str(CLI), "validate", str(stage / "manifest.json")])
    run([check_jsonschema(), "--schemafile", str(SCHEMA), str(stage / "manifest.json")])

    out.mkdir(parents=True, exist_ok=True)
    target = out / bundle_name(version, plat, arch)
    target.unlink(missing_ok=True)
    run([js, str(CLI), "pack", str(stage), str(target)])
    run([js, str(CLI), "info", str(target)])
    digest = sha256(target)
    Path(f"{target}.sha256").write_text(f"{digest}  {target.name}\n", encoding="utf-8")
    print(f"built {target} ({target.stat().st_size / 1e6:.1f} MB, sha256 {digest})")
    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Build this platform's .mcpb from the frozen executable.")
    default_binary = ROOT / "dist" / ("magnotia-mcp.exe" if sys.platform == "win32" else "magnotia-mcp")
    parser.add_argument("--binary", type=Path, default=default_binary, help="the one-file executable (nox -s freeze)")
    parser.add_argument("--out", type=Path, default=ROOT / "dist" / "mcpb", help="where the .mcpb goes")
    parser.add_argument("--stage", type=Path, default=ROOT / "build" / "mcpb", help="the folder that is packed")
    args = parser.parse_args(argv)
    if not args.binary.is_file():
        raise SystemExit(f"bundle.py: no executable at {args.binary}; run `nox -s freeze` first")
    build(args.binary.resolve(), args.out.resolve(), args.stage.resolve())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
