"""Where the Magnotia store lives: --db, else MAGNOTIA_DB, else the app's data dir."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

APP_ID = "com.magnotia.app"
DB_FILE_NAME = "magnotia.db"
ENV_VAR = "MAGNOTIA_DB"


def default_db_path() -> Path:
    """The path the desktop app uses: platformdirs' user data dir, roaming on Windows."""
    # Imported here: platformdirs costs start-up time and is only needed without --db.
    from platformdirs import user_data_dir

    return Path(user_data_dir(APP_ID, appauthor=False, roaming=True)) / DB_FILE_NAME


def resolve_db_path(flag: str | None, environ: Mapping[str, str] = os.environ) -> tuple[Path, str]:
    """The store path and where it came from ("--db", "MAGNOTIA_DB" or "default")."""
    if flag:
        return Path(flag).expanduser(), "--db"
    env = environ.get(ENV_VAR, "").strip()
    if env:
        return Path(env).expanduser(), ENV_VAR
    return default_db_path(), "default"
