"""Where the Magnotia store lives: --db, else MAGNOTIA_DB, else MAGNOTIA_DATA_DIR, else the app's data dir.

MAGNOTIA_DB names the store file; MAGNOTIA_DATA_DIR names the folder that holds it
(``magnotia.db`` inside), which is what a folder picker gives: the MCP Bundle's
"store folder" setting reaches the server this way (packaging/mcpb/manifest.json).
An empty value counts as unset, and so does a host's placeholder left as it was
(``${user_config.data_dir}``): hosts leave an optional setting the user did not fill
in unsubstituted, and that must mean "the app's default location", not a folder
literally named so.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from platformdirs.api import PlatformDirsABC

APP_ID = "com.magnotia.app"
DB_FILE_NAME = "magnotia.db"
ENV_VAR = "MAGNOTIA_DB"
DIR_ENV_VAR = "MAGNOTIA_DATA_DIR"


def default_db_path(dirs: type[PlatformDirsABC] | None = None) -> Path:
    """The path the desktop app uses: platformdirs' user data dir, roaming on Windows.

    dirs: platformdirs' class for another OS (tests); this OS's by default.
    """
    # Imported here: platformdirs costs start-up time and is only needed without --db.
    from platformdirs import PlatformDirs

    found = (dirs or PlatformDirs)(APP_ID, appauthor=False, roaming=True).user_data_dir
    return Path(found) / DB_FILE_NAME


def _setting(environ: Mapping[str, str], name: str) -> str | None:
    """An environment variable's value, or None when it is unset, blank or an unsubstituted ``${...}``."""
    value = environ.get(name, "").strip()
    if not value or (value.startswith("${") and value.endswith("}")):
        return None
    return value


def resolve_db_path(flag: str | None, environ: Mapping[str, str] = os.environ) -> tuple[Path, str]:
    """The store path and where it came from ("--db", "MAGNOTIA_DB", "MAGNOTIA_DATA_DIR" or "default")."""
    if flag:
        return Path(flag).expanduser(), "--db"
    env = _setting(environ, ENV_VAR)
    if env:
        return Path(env).expanduser(), ENV_VAR
    folder = _setting(environ, DIR_ENV_VAR)
    if folder:
        return Path(folder).expanduser() / DB_FILE_NAME, DIR_ENV_VAR
    return default_db_path(), "default"
