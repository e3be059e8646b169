"""`nox -s demo`'s script, as a newcomer runs it: its last exchange finds a Portuguese dictation by meaning."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_demo_finds_by_meaning_and_cites_the_moment(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "demo_exchange.py")],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=300,
        cwd=tmp_path,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "semantic index of" in done.stdout  # the index command's summary
    found = [line for line in done.stdout.splitlines() if line.startswith("   found by ")]
    assert found, done.stdout[-2000:]
    assert found[0].startswith("   found by meaning: 'Notas de viagem'"), found
    assert "at 00:00" in found[0]
    assert "reunião no café" in found[0]
