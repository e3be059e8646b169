"""The one-file executable itself (``--server frozen`` only): how its archive is stored.

A one-file build unpacks its binaries into a temporary folder at every start. Deflated, they
cost about a third of the CPU from spawn to the ``initialize`` answer, so the spec stores every
entry as is (``cdict`` in packaging/magnotia-mcp.spec, a PyInstaller knob outside its manual).
This reads the archive back with PyInstaller's own viewer (``pyi-archive_viewer --list``,
installed beside pytest by ``nox -s freeze``) so a PyInstaller upgrade that drops the knob fails here.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.server import Launcher


@pytest.fixture(autouse=True)
def _frozen_only(launcher: Launcher) -> None:
    if launcher.kind != "frozen":
        pytest.skip("checks the one-file executable (--server frozen)")


def _viewer() -> str:
    beside = Path(sys.executable).with_name("pyi-archive_viewer")
    found = str(beside) if beside.exists() else shutil.which("pyi-archive_viewer")
    if found is None:
        pytest.fail("pyi-archive_viewer is not installed beside pytest: run this under `nox -s freeze`")
    return found


def _entries(binary: str) -> list[tuple[int, int, bool, str]]:
    """(stored length, unpacked length, deflated?, name) of each entry of the executable's outer archive."""
    listing = subprocess.run([_viewer(), "--list", binary], capture_output=True, text=True, check=True).stdout
    entries = []
    for line in listing.splitlines():
        # position, length, uncompressed_length, is_compressed, typecode, name
        fields = [f.strip() for f in line.split(",", 5)]
        if len(fields) == 6 and fields[0].isdigit():
            entries.append((int(fields[1]), int(fields[2]), fields[3] == "1", fields[5].strip("'\"")))
    return entries


def test_the_one_file_archive_stores_every_entry_as_is(launcher: Launcher) -> None:
    entries = _entries(launcher.frozen_binary())
    names = [name for _, _, _, name in entries]
    # The listing was read: the interpreter's library and the module archive are in it.
    assert any(name.startswith("libpython") for name in names), names
    assert "PYZ.pyz" in names, names
    deflated = [name for _, _, flag, name in entries if flag]
    assert deflated == [], f"entries still deflated: {deflated}"
    assert all(stored == unpacked for stored, unpacked, _, _ in entries)
