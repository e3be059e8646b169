"""doctor shows the bearer token serve --http uses (issue 12), and never makes one."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from devkit.storefactory import StoreBuilder

TOKEN_FILE = Path("com.magnotia.mcp") / "http-token"
SAVED_TOKEN = "s3cret-token-value-" + "v" * 24


def doctor(config: Path, db: Path, *args: str, token: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "MAGNOTIA_MCP_TOKEN"}
    env["XDG_CONFIG_HOME"] = str(config)
    if token is not None:
        env["MAGNOTIA_MCP_TOKEN"] = token
    argv = [sys.executable, "-m", "magnotia_mcp", "--db", str(db), "doctor", *args]
    return subprocess.run(argv, capture_output=True, text=True, encoding="utf-8", timeout=60, check=False, env=env)


def store(tmp_path: Path) -> Path:
    b = StoreBuilder(tmp_path / "store" / "magnotia.db")
    b.transcript(title="Kept", raw_text="hello")
    return b.close()


def test_doctor_says_where_the_token_will_be_and_makes_none(tmp_path: Path) -> None:
    db = store(tmp_path)
    done = doctor(tmp_path / "config", db)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"made at the first serve --http and saved in {tmp_path / 'config' / TOKEN_FILE}" in done.stdout
    assert not (tmp_path / "config" / TOKEN_FILE).exists()


def test_doctor_shows_the_saved_token(tmp_path: Path) -> None:
    db = store(tmp_path)
    saved = tmp_path / "config" / TOKEN_FILE
    saved.parent.mkdir(parents=True, mode=0o700)
    saved.write_text(SAVED_TOKEN + "\n", encoding="utf-8")
    saved.chmod(0o600)  # serve --http refuses a token others may read (tests/security/test_tokens.py)
    done = doctor(tmp_path / "config", db)
    assert f"bearer token: {SAVED_TOKEN}  (saved in {saved})" in done.stdout
    report = json.loads(doctor(tmp_path / "config", db, "--json").stdout)
    assert report["http"] == {
        "from": "file",
        "env": "MAGNOTIA_MCP_TOKEN",
        "file": str(saved),
        "token": SAVED_TOKEN,
        "problem": None,
    }


def test_doctor_does_not_print_a_token_from_the_environment(tmp_path: Path) -> None:
    db = store(tmp_path)
    token = "from-the-environment-" + "e" * 24
    done = doctor(tmp_path / "config", db, token=token)
    assert "bearer token: from $MAGNOTIA_MCP_TOKEN (not shown)" in done.stdout
    assert token not in done.stdout + done.stderr
