"""File names that change with the OS: the `.exe` of Windows, and the release files of each target.

Windows cannot run here, so these pin the naming logic with ``sys.platform`` (and the machine)
monkeypatched: the venv console script the e2e suite starts (``Scripts\\magnotia-mcp.exe``), the
one-file executable PyInstaller writes (``dist/magnotia-mcp.exe``) and the names and checksums of
the files release.yml attaches to a GitHub release (.github/scripts/release_assets.py, run here
for real on files it stages).
"""

from __future__ import annotations

import hashlib
import importlib.util
import platform
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from tests.support.server import Launcher, console_script

ROOT = Path(__file__).resolve().parents[3]
SCRIPT = ROOT / ".github" / "scripts" / "release_assets.py"
BUNDLER = ROOT / "packaging" / "mcpb" / "bundle.py"


def load(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def assets() -> ModuleType:
    if not SCRIPT.exists():
        pytest.skip(".github/scripts is not in this tree (an sdist)")
    return load(SCRIPT, "release_assets")


@pytest.mark.parametrize(
    ("plat", "expected"),
    [("win32", "magnotia-mcp.exe"), ("linux", "magnotia-mcp"), ("darwin", "magnotia-mcp")],
)
def test_console_script_beside_the_interpreter(plat: str, expected: str, monkeypatch: pytest.MonkeyPatch) -> None:
    python = Path("venv", "Scripts" if plat == "win32" else "bin", "python")
    assert console_script(python, plat) == python.parent / expected
    monkeypatch.setattr(sys, "platform", plat)
    assert console_script(python) == python.parent / expected


def test_the_script_launcher_starts_the_exe_on_windows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    scripts = tmp_path / "venv" / "Scripts"
    scripts.mkdir(parents=True)
    (scripts / "magnotia-mcp.exe").touch()
    monkeypatch.setattr(sys, "platform", "win32")
    argv = Launcher("script", python=str(scripts / "python.exe")).argv(Path("C:/store/magnotia.db"))
    assert argv[0] == str(scripts / "magnotia-mcp.exe")


@pytest.mark.parametrize(
    ("plat", "machine", "target", "binary"),
    [
        ("win32", "AMD64", "windows-x64", "magnotia-mcp-1.2.3-windows-x64.exe"),
        ("linux", "x86_64", "linux-x64", "magnotia-mcp-1.2.3-linux-x64"),
        ("linux", "aarch64", "linux-arm64", "magnotia-mcp-1.2.3-linux-arm64"),
        ("darwin", "arm64", "macos-arm64", "magnotia-mcp-1.2.3-macos-arm64"),
        ("darwin", "x86_64", "macos-x64", "magnotia-mcp-1.2.3-macos-x64"),
    ],
)
def test_release_names_per_target(
    assets: ModuleType, plat: str, machine: str, target: str, binary: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "platform", plat)
    monkeypatch.setattr(platform, "machine", lambda: machine)
    assert assets.this_target() == target
    assert assets.frozen_name() == ("magnotia-mcp.exe" if plat == "win32" else "magnotia-mcp")
    assert assets.asset_name("1.2.3", target, "binary") == binary
    assert assets.asset_name("1.2.3", target, "mcpb") == f"magnotia-mcp-1.2.3-{target}.mcpb"


def test_the_release_names_are_the_bundlers_names(assets: ModuleType) -> None:
    """packaging/mcpb/bundle.py names each bundle; the release must publish it under that same name."""
    if not BUNDLER.exists():
        pytest.skip("packaging/mcpb/bundle.py is not in this tree")
    bundler = load(BUNDLER, "mcpb_bundle")
    for plat, os_name in bundler.OS_NAMES.items():
        for arch in sorted(set(bundler.ARCH_NAMES.values())):
            target = f"{os_name}-{arch}"
            if target in assets.TARGETS:
                assert bundler.bundle_name("1.2.3", plat, arch) == assets.asset_name("1.2.3", target, "mcpb")


def fake_build(dist: Path, frozen: str, bundle: str) -> None:
    (dist / "mcpb").mkdir(parents=True)
    (dist / frozen).write_bytes(b"MZ frozen executable")
    (dist / "mcpb" / bundle).write_bytes(b"PK bundle")


def test_stage_on_windows_names_the_exe_and_writes_checksums(
    assets: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "platform", "win32")
    monkeypatch.setattr(platform, "machine", lambda: "AMD64")
    dist, out = tmp_path / "dist", tmp_path / "assets"
    fake_build(dist, "magnotia-mcp.exe", "magnotia-mcp-1.2.3-windows-x64.mcpb")
    staged = assets.stage("windows-x64", dist, out, "1.2.3")
    assert [p.name for p in staged] == ["magnotia-mcp-1.2.3-windows-x64.exe", "magnotia-mcp-1.2.3-windows-x64.mcpb"]
    for path in staged:
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        assert Path(f"{path}.sha256").read_text(encoding="utf-8") == f"{digest}  {path.name}\n"

    # The release job's SHA256SUMS, by the script run as release.yml runs it.
    subprocess.run([sys.executable, str(SCRIPT), "sums", str(out)], check=True, capture_output=True, timeout=60)
    listed = (out / "SHA256SUMS").read_text(encoding="utf-8").splitlines()
    assert [line.split("  ")[1] for line in listed] == [p.name for p in staged]
    (out / staged[0].name).write_bytes(b"tampered")
    with pytest.raises(SystemExit, match="does not match"):
        assets.sums(out)


def test_stage_refuses_a_mislabelled_target_or_a_missing_bundle(
    assets: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.setattr(platform, "machine", lambda: "x86_64")
    dist = tmp_path / "dist"
    fake_build(dist, "magnotia-mcp", "magnotia-mcp-1.2.3-linux-x64.mcpb")
    with pytest.raises(SystemExit, match="this machine builds linux-x64"):
        assets.stage("linux-arm64", dist, tmp_path / "out", "1.2.3")
    with pytest.raises(SystemExit, match=re.escape("expected exactly magnotia-mcp-1.2.4-linux-x64.mcpb")):
        assets.stage("linux-x64", dist, tmp_path / "out", "1.2.4")
    (dist / "magnotia-mcp").unlink()
    with pytest.raises(SystemExit, match="no executable"):
        assets.stage("linux-x64", dist, tmp_path / "out", "1.2.3")


def test_stage_refuses_a_tag_that_is_not_the_package_version(assets: ModuleType) -> None:
    with pytest.raises(SystemExit, match=re.escape("the tag says v0.0.0-nope")):
        assets.main(["stage", "--target", "linux-x64", "--out", "unused", "--version", "v0.0.0-nope"])
