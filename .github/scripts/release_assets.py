"""Name and checksum one runner's release files (release.yml's binaries job); stdlib only.

    python .github/scripts/release_assets.py stage --target linux-x64 --out assets
    python .github/scripts/release_assets.py sums assets        # SHA256SUMS over every file in assets/

``stage`` takes what ``nox -s freeze`` and ``nox -s mcpb`` left in dist/: the one-file
executable (``dist/magnotia-mcp``, ``dist/magnotia-mcp.exe`` on Windows) and this platform's
bundle (``dist/mcpb/magnotia-mcp-VERSION-TARGET.mcpb``), and copies them to
``OUT/magnotia-mcp-VERSION-TARGET[.exe]`` and ``OUT/magnotia-mcp-VERSION-TARGET.mcpb``, each with a
``.sha256`` file (``sha256sum`` format). It refuses a target that is not the machine it runs on
(a mislabelled matrix entry would publish a macOS binary as Linux), a version that is not the
package's, and a missing or second bundle.

server.json's ``fileSha256`` values come from packaging/registry/serverjson.py ``render``.
"""

from __future__ import annotations

import argparse
import hashlib
import platform
import re
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NAME = "magnotia-mcp"
TARGETS = ("linux-x64", "linux-arm64", "macos-arm64", "macos-x64", "windows-x64")
OS_OF_PLATFORM = {"linux": "linux", "darwin": "macos", "win32": "windows"}
ARCH_OF_MACHINE = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}


def exe_suffix(platform_name: str | None = None) -> str:
    """What executables end with on a platform (``sys.platform`` unless given): ``.exe`` on Windows only."""
    return ".exe" if (platform_name or sys.platform) == "win32" else ""


def frozen_name(platform_name: str | None = None) -> str:
    """The file PyInstaller writes for the spec's ``name="magnotia-mcp"``: it adds ``.exe`` on Windows."""
    return NAME + exe_suffix(platform_name)


def this_target(platform_name: str | None = None, machine: str | None = None) -> str:
    """The release target of this machine: ``linux-x64``, ``macos-arm64``, ``windows-x64``..."""
    os_name = OS_OF_PLATFORM.get(platform_name or sys.platform)
    arch = ARCH_OF_MACHINE.get((machine or platform.machine()).lower())
    if os_name is None or arch is None:
        raise SystemExit(f"release_assets: no release target for {platform_name or sys.platform}/{machine}")
    return f"{os_name}-{arch}"


def asset_name(version: str, target: str, kind: str) -> str:
    """The name a file has on the GitHub release: the executable (kind ``binary``) or the bundle (``mcpb``)."""
    if target not in TARGETS:
        raise ValueError(f"unknown target {target}; one of {TARGETS}")
    if kind == "mcpb":
        return f"{NAME}-{version}-{target}.mcpb"
    return f"{NAME}-{version}-{target}" + (".exe" if target.startswith("windows-") else "")


def package_version() -> str:
    text = (ROOT / "src" / "magnotia_mcp" / "__init__.py").read_text(encoding="utf-8")
    found = re.search(r'(?m)^__version__ = "([^"]+)"$', text)
    if not found:
        raise SystemExit("release_assets: no __version__ in src/magnotia_mcp/__init__.py")
    return found.group(1)


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def write_checksum(path: Path) -> str:
    digest = sha256(path)
    Path(f"{path}.sha256").write_text(f"{digest}  {path.name}\n", encoding="utf-8")
    return digest


def stage(target: str, dist: Path, out: Path, version: str, platform_name: str | None = None) -> list[Path]:
    """Copy this runner's executable and bundle into out under their release names; returns them."""
    here = this_target(platform_name)
    if target != here:
        raise SystemExit(f"release_assets: asked for {target} but this machine builds {here}")
    binary = dist / frozen_name(platform_name)
    if not binary.is_file():
        raise SystemExit(f"release_assets: no executable at {binary} (run nox -s freeze)")
    bundles = sorted((dist / "mcpb").glob(f"{NAME}-*.mcpb"))
    wanted = asset_name(version, target, "mcpb")
    if [b.name for b in bundles] != [wanted]:
        raise SystemExit(f"release_assets: expected exactly {wanted} in {dist / 'mcpb'}, found {bundles}")
    out.mkdir(parents=True, exist_ok=True)
    staged = []
    for source, name in ((binary, asset_name(version, target, "binary")), (bundles[0], wanted)):
        copy = out / name
        shutil.copy2(source, copy)
        print(f"{copy.name}  sha256 {write_checksum(copy)}  ({copy.stat().st_size / 1e6:.1f} MB)")
        staged.append(copy)
    return staged


def sums(folder: Path) -> Path:
    """SHA256SUMS over every release file in folder (not the .sha256 files), verified against them."""
    lines = []
    for path in sorted(p for p in folder.iterdir() if p.is_file() and p.suffix != ".sha256" and p.name != "SHA256SUMS"):
        digest = sha256(path)
        single = Path(f"{path}.sha256")
        if single.exists() and single.read_text(encoding="utf-8").split()[0] != digest:
            raise SystemExit(f"release_assets: {path.name} does not match {single.name}")
        lines.append(f"{digest}  {path.name}\n")
    target = folder / "SHA256SUMS"
    target.write_text("".join(lines), encoding="utf-8")
    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    commands = parser.add_subparsers(dest="command", required=True)
    staging = commands.add_parser("stage", help="copy this runner's executable and bundle under release names")
    staging.add_argument("--target", required=True, choices=TARGETS)
    staging.add_argument("--dist", type=Path, default=ROOT / "dist")
    staging.add_argument("--out", type=Path, required=True)
    staging.add_argument("--version", default=None, help="must equal the package's (default: the package's)")
    summing = commands.add_parser("sums", help="write SHA256SUMS for a folder of release files")
    summing.add_argument("folder", type=Path)
    args = parser.parse_args(argv)
    if args.command == "stage":
        version = package_version()
        if args.version not in (None, version, f"v{version}"):
            raise SystemExit(f"release_assets: the tag says {args.version} but the package is {version}")
        stage(args.target, args.dist, args.out, version)
    else:
        print(sums(args.folder).read_text(encoding="utf-8"), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
