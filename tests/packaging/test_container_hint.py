"""The --user hint a permission error gets inside the image (MAGNOTIA_MCP_IN_CONTAINER=1, set by the Dockerfile).

The end-to-end check, a private store folder mounted into the real image, is
tests/e2e/test_container_image.py; these pin the rule itself: only in the image, only
for a permission error.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from magnotia_mcp.store.opening import IN_CONTAINER_ENV, container_user_hint, store_error

pytestmark = pytest.mark.skipif(not hasattr(os, "getuid"), reason="uids are POSIX")


def test_no_hint_outside_the_image(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(IN_CONTAINER_ENV, raising=False)
    assert container_user_hint() == ""


def test_hint_names_this_uid_and_the_flag(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(IN_CONTAINER_ENV, "1")
    hint = container_user_hint()
    assert f"uid:gid {os.getuid()}:{os.getgid()}" in hint
    assert '--user "$(id -u):$(id -g)"' in hint


def test_a_readable_file_that_fails_to_open_gets_no_hint(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(IN_CONTAINER_ENV, "1")
    db = tmp_path / "magnotia.db"
    db.write_bytes(b"")
    message = str(store_error(sqlite3.OperationalError("unable to open database file"), db))
    assert "cannot open" in message
    assert "--user" not in message
