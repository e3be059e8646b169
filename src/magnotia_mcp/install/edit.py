"""One host config file: read it, plan our entry's change in its format (formats.py), show the diff, write it safely."""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any

from magnotia_mcp.install import configfile
from magnotia_mcp.install.hosts import Host, entry_argv

_BOM = "\ufeff"


def max_bytes(host: Host) -> int:
    """How much of the host's config is read at most (docs/hosts.md says why)."""
    return host.max_bytes


def load(host: Host, path: Path) -> configfile.Config:
    """The host's config at path, read safely (configfile.Refused says why it cannot be)."""
    return configfile.load(path, max_bytes(host))


def read(host: Host, path: Path) -> str | None:
    """The file's text (None if there is no file)."""
    return load(host, path).text()


def snippet(host: Host, name: str, entry: dict[str, Any]) -> str:
    """What to add by hand, in the file's own format."""
    return host.format.snippet(host.servers, name, entry)


def _split_bom(text: str) -> tuple[str, str]:
    return (_BOM, text[1:]) if text.startswith(_BOM) else ("", text)


def current_entry(host: Host, text: str, name: str) -> Any:
    """Our entry as the file has it (parsed), or None."""
    return host.format.current(host.servers, _split_bom(text)[1], name)


def configured_argv(host: Host, text: str, name: str) -> list[str] | None:
    """The command line our entry in this file starts, or None."""
    return entry_argv(host, current_entry(host, text, name))


def with_entry(host: Host, text: str | None, name: str, entry: dict[str, Any]) -> str:
    """The file's new text with our entry set (the same text when it is already there)."""
    if text is None:
        return snippet(host, name, entry)
    bom, body = _split_bom(text)
    return bom + host.format.set(host.servers, body, name, entry)


def without_entry(host: Host, text: str | None, name: str) -> str | None:
    """The file's new text without our entry (the same text when it has none)."""
    if text is None:
        return None
    bom, body = _split_bom(text)
    return bom + host.format.remove(host.servers, body, name)


def diff(path: Path, old: str | None, new: str) -> str:
    lines = difflib.unified_diff(
        (old or "").splitlines(keepends=True),
        new.splitlines(keepends=True),
        fromfile=str(path) if old is not None else "/dev/null",
        tofile=str(path),
    )
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)


def write(config: configfile.Config, text: str) -> Path | None:
    """Replace the file's contents with text atomically; the backup of the old file, if there was one.

    A symlink stays a link: the regular file it leads to is replaced in its own folder, its backup
    beside it (configfile.py).
    """
    return configfile.write(config, text)
