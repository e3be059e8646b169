"""The command line a host runs to start this server, per channel: package, executable or docker."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

CHANNELS = ("package", "executable", "docker")
DEFAULT_IMAGE = "magnotia-mcp"


class NoCommand(Exception):
    """The channel asked for cannot be started from here; the message says what to pass."""


def running_channel() -> str:
    """The channel of this very process: a frozen build is the executable, anything else the package."""
    return "executable" if getattr(sys, "frozen", False) else "package"


def docker_user(platform: str = sys.platform) -> list[str]:
    """``--user UID:GID`` of the caller on Linux, so that a store folder only its owner may read opens.

    The image's own user (65532) cannot read a folder made with umask 077; on macOS and
    Windows, Docker Desktop maps file access itself and needs no such flag.
    """
    if platform.startswith("linux") and hasattr(os, "getuid"):
        return ["--user", f"{os.getuid()}:{os.getgid()}"]
    return []


def _console_script() -> list[str] | None:
    name = "magnotia-mcp.exe" if sys.platform == "win32" else "magnotia-mcp"
    beside = Path(sys.executable).parent / name
    if beside.is_file():
        return [str(beside)]
    found = shutil.which("magnotia-mcp")
    return [found] if found else None


def server_argv(
    channel: str,
    db: Path | None,
    *,
    executable: str | None = None,
    image: str = DEFAULT_IMAGE,
    engine: str = "docker",
    default_db: Path | None = None,
) -> list[str]:
    """The argv a host should run. db None: the server finds the store itself (package, executable).

    default_db: the store the docker channel mounts when no db is given.
    """
    if channel == "docker":
        store = db or default_db
        if store is None:
            raise NoCommand("the docker channel mounts the store's folder: pass --db PATH")
        store = store.expanduser().absolute()
        argv = [engine, "run", "-i", "--rm", "--network", "none", *docker_user()]
        argv += ["-v", f"{store.parent}:/data:ro"]
        if store.name != "magnotia.db":
            argv += ["-e", f"MAGNOTIA_DB=/data/{store.name}"]
        return [*argv, image]
    if channel == "executable":
        if executable:
            base = [str(Path(executable).expanduser().absolute())]
        elif getattr(sys, "frozen", False):
            base = [sys.executable]
        else:
            raise NoCommand("this is the Python package, not the executable: pass --command PATH to the executable")
    elif channel == "package":
        script = _console_script()
        if script is None and getattr(sys, "frozen", False):
            raise NoCommand(
                "the magnotia-mcp console script is not on PATH: install the package, or use --channel executable"
            )
        base = script or [sys.executable, "-m", "magnotia_mcp"]
    else:
        raise NoCommand(f"unknown channel {channel!r}; one of {', '.join(CHANNELS)}")
    if db is not None:
        base += ["--db", str(db.expanduser().absolute())]
    return base
