"""The app's default store location on each OS, from the environment that OS sets (platformdirs' own classes)."""

from __future__ import annotations

import ntpath
import posixpath

import platformdirs.windows
import pytest
from platformdirs.macos import MacOS
from platformdirs.unix import Unix
from platformdirs.windows import Windows

from magnotia_mcp.paths import default_db_path


def test_linux_follows_xdg_data_home_else_the_home_folder(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", "/home/ana maria")
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    assert str(default_db_path(Unix)) == posixpath.join("/home/ana maria/.local/share/com.magnotia.app/magnotia.db")
    monkeypatch.setenv("XDG_DATA_HOME", "/data/xdg")
    assert str(default_db_path(Unix)) == "/data/xdg/com.magnotia.app/magnotia.db"


def test_macos_uses_application_support(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", "/Users/ana")
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)  # platformdirs honours it on macOS too
    assert str(default_db_path(MacOS)) == "/Users/ana/Library/Application Support/com.magnotia.app/magnotia.db"


def test_windows_uses_the_roaming_appdata_folder(monkeypatch: pytest.MonkeyPatch) -> None:
    """Roaming (%APPDATA%), with spaces and backslashes kept as they are.

    On Windows platformdirs asks the shell (ctypes); here it reads the variables Windows sets for it.
    """
    monkeypatch.setattr(platformdirs.windows, "_RESOLVE_WIN_FOLDER", platformdirs.windows.get_win_folder_from_env_vars)
    monkeypatch.setenv("APPDATA", r"C:\Users\Ana Maria\AppData\Roaming")
    monkeypatch.setenv("LOCALAPPDATA", r"C:\Users\Ana Maria\AppData\Local")
    found = str(default_db_path(Windows)).replace("/", "\\")
    assert found == ntpath.join(r"C:\Users\Ana Maria\AppData\Roaming", "com.magnotia.app", "magnotia.db")
