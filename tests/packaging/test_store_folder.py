"""MAGNOTIA_DATA_DIR: the store folder a bundle's folder picker gives, resolved and served.

The bundle passes its ``data_dir`` setting through this variable. Unset, empty or left
as the host's unsubstituted placeholder, it means the app's default location.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from devkit.storefactory import StoreBuilder
from magnotia_mcp.paths import DB_FILE_NAME, DIR_ENV_VAR, ENV_VAR, default_db_path, resolve_db_path
from tests.support.server import Launcher, ServerProcess, check_clean_exit

NewStore = Callable[..., StoreBuilder]


def test_folder_names_the_store_inside_it(tmp_path: Path) -> None:
    folder = tmp_path / "My Magnotia"
    assert resolve_db_path(None, {DIR_ENV_VAR: str(folder)}) == (folder / DB_FILE_NAME, DIR_ENV_VAR)


def test_folder_comes_after_db_flag_and_db_file() -> None:
    env = {DIR_ENV_VAR: "/folder", ENV_VAR: "/file.db"}
    assert resolve_db_path("/flag.db", env) == (Path("/flag.db"), "--db")
    assert resolve_db_path(None, env) == (Path("/file.db"), ENV_VAR)


@pytest.mark.parametrize("value", ["", "   ", "${user_config.data_dir}", "${anything}"])
def test_unset_blank_or_placeholder_means_the_default(value: str) -> None:
    assert resolve_db_path(None, {DIR_ENV_VAR: value}) == (default_db_path(), "default")
    assert resolve_db_path(None, {ENV_VAR: value}) == (default_db_path(), "default")


def test_home_is_expanded(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    assert resolve_db_path(None, {DIR_ENV_VAR: "~/Magnotia"})[0] == tmp_path / "Magnotia" / DB_FILE_NAME


def _serve(argv: list[str], env: dict[str, str]) -> list[str]:
    """Start the server, initialize, list the transcripts' titles; the server must exit cleanly."""
    proc = ServerProcess(argv, env=env)
    try:
        proc.initialize()
        titles = [t["title"] for t in proc.result("list_transcripts")["transcripts"]]
    finally:
        check_clean_exit(proc)
    return titles


def test_server_serves_the_store_in_the_folder(launcher: Launcher, new_store: NewStore) -> None:
    if not launcher.local:
        pytest.skip("the container is given its store by a mount, not by this variable")
    store = new_store("a folder with spaces")
    store.transcript(title="from the folder")
    db = store.close()
    assert _serve(launcher.argv(None), {DIR_ENV_VAR: str(db.parent)}) == ["from the folder"]


def test_placeholder_left_by_the_host_serves_the_default_store(launcher: Launcher, tmp_path: Path) -> None:
    if not launcher.local:
        pytest.skip("the container's store is its mount")
    # conftest points XDG_DATA_HOME into tmp_path: the app's default location on Linux.
    store = StoreBuilder(tmp_path / "xdg-data" / "com.magnotia.app" / DB_FILE_NAME)
    store.transcript(title="from the default place")
    store.close()
    env = {DIR_ENV_VAR: "${user_config.data_dir}", "XDG_DATA_HOME": str(tmp_path / "xdg-data")}
    if default_db_path() != store.path:
        pytest.skip(f"the default location here is {default_db_path()}, not under XDG_DATA_HOME")
    assert _serve(launcher.argv(None), env) == ["from the default place"]
