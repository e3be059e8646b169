"""What a host record holds (hosts.py lists them) and how its fields resolve on an OS.

A config path is written as docs/hosts.md writes it, ``/`` between parts on every OS, from
one of the bases ``~`` (``$HOME``; ``%USERPROFILE%`` on Windows), ``$XDG`` (``$XDG_CONFIG_HOME`` or
``~/.config``) and ``%APPDATA%`` (or ``~/AppData/Roaming``). Paths are computed from an OS
name and an environment (not from the running OS), so every record can be checked for
macOS and Windows anywhere.
"""

from __future__ import annotations

import copy
import enum
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import PurePath, PurePosixPath, PureWindowsPath
from typing import Any

from magnotia_mcp.install import configfile
from magnotia_mcp.install.formats import ConfigFormat

SYSTEMS = ("linux", "macos", "windows")


def system_name(platform: str) -> str:
    """linux, macos or windows, from a ``sys.platform`` value."""
    if platform.startswith("win") or platform == "cygwin":
        return "windows"
    return "macos" if platform == "darwin" else "linux"


class Slot(enum.Enum):
    """A value of our entry filled in per install."""

    COMMAND = "the program the host starts"
    ARGS = "its arguments"
    NAME = "the entry's name (--name)"


@dataclass(frozen=True)
class EntryShape:
    """Our entry as the host reads it: its keys in the order written, each a Slot or a fixed value."""

    fields: tuple[tuple[str, Any], ...]

    def build(self, argv: list[str], name: str) -> dict[str, Any]:
        filled = {Slot.COMMAND: argv[0], Slot.ARGS: argv[1:], Slot.NAME: name}
        return {key: filled[v] if isinstance(v, Slot) else copy.deepcopy(v) for key, v in self.fields}

    def key_of(self, slot: Slot) -> str:
        return next(key for key, v in self.fields if v is slot)

    def argv(self, entry: Any) -> list[str] | None:
        """The command line an entry (as parsed from the host's file) starts, or None if it has none."""
        if not isinstance(entry, dict):
            return None
        command = entry.get(self.key_of(Slot.COMMAND))
        args = entry.get(self.key_of(Slot.ARGS)) or []
        if not isinstance(command, str) or not isinstance(args, list):
            return None
        return [command, *(str(a) for a in args)]


@dataclass(frozen=True)
class ConfigPath:
    """The user-level config file per OS (None: as on Linux), and the citations for it.

    folder_env: a variable that, when set, names the file's folder instead (the file keeps its
    name), and that folder is then the host's marker too.
    """

    linux: str
    macos: str | None = None
    windows: str | None = None
    folder_env: str | None = None
    sources: tuple[str, ...] = ()

    def written(self, system: str) -> str:
        """The path as written for that OS (linux, macos or windows)."""
        return {"linux": self.linux, "macos": self.macos or self.linux, "windows": self.windows or self.linux}[system]

    def resolve(self, platform: str, env: Mapping[str, str], home: str | None) -> PurePath:
        system = system_name(platform)
        path_type: type[PurePath] = PureWindowsPath if system == "windows" else PurePosixPath
        if home is None:
            home = env.get("USERPROFILE", "") if system == "windows" else env.get("HOME", "")
            home = home or os.path.expanduser("~")
        h = path_type(home)
        base, *parts = self.written(system).split("/")
        folder = self.folder_env and env.get(self.folder_env)
        if folder:
            return path_type(folder) / parts[-1]
        bases = {
            "~": h,
            "$XDG": path_type(env.get("XDG_CONFIG_HOME") or str(h / ".config")),
            "%APPDATA%": path_type(env.get("APPDATA") or str(h / "AppData" / "Roaming")),
        }
        return bases[base].joinpath(*parts)


@dataclass(frozen=True)
class Host:
    key: str  # the name on the command line
    title: str
    format: ConfigFormat
    servers: tuple[str, ...]  # the keys leading to the map of servers
    path: ConfigPath
    shape: EntryShape
    marker: str = "."  # the folder that says the host is installed, from the config file's folder
    cli: str | None = None  # the host's own CLI, used when it is on PATH
    max_bytes: int = configfile.MAX_BYTES  # how much of its config is read at most (docs/hosts.md says why)

    def entry(self, argv: list[str], name: str) -> dict[str, Any]:
        """Our entry, in the shape this host reads."""
        return self.shape.build(argv, name)

    def marker_of(self, path: PurePath, env: Mapping[str, str]) -> PurePath:
        folder = path.parent
        if self.path.folder_env and env.get(self.path.folder_env):
            return folder
        for part in self.marker.split("/"):
            folder = folder.parent if part == ".." else folder if part == "." else folder / part
        return folder
