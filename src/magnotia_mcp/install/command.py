"""The install and uninstall commands: our entry in a host's own config file.

Imported by the command line only for install, uninstall and doctor; nothing on the
path that serves a host imports it. Claude Code is configured through its own CLI
(``claude mcp add --scope user``) when that is on PATH; every other host, and Claude
Code without its CLI, through its file: opened only if it is a regular file (or a link to one),
parsed, our entry merged, checked, backed up and written atomically (edit.py,
configfile.py). Whatever is refused for the file is refused before the CLI runs too.
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from magnotia_mcp.install import configfile, edit
from magnotia_mcp.install.hosts import HOSTS, Host, config_path, marker
from magnotia_mcp.install.jsonc import NotEditable
from magnotia_mcp.install.launch import DEFAULT_IMAGE, NoCommand, running_channel, server_argv
from magnotia_mcp.paths import resolve_db_path

__all__ = ["HOSTS", "Options", "run"]


@dataclass
class Options:
    action: str  # install or uninstall
    host: str | None
    channel: str | None = None
    db: str | None = None
    name: str = "magnotia"
    dry_run: bool = False
    config: str | None = None
    force: bool = False
    command: str | None = None
    image: str = DEFAULT_IMAGE
    engine: str = "docker"


def _host_list() -> str:
    return ", ".join(HOSTS)


def present(host: Host, path: Path) -> bool:
    """Does the host look installed: its config file or folder exists, or its CLI is on PATH."""
    if path.exists() or Path(marker(host, path)).is_dir():
        return True
    return bool(host.cli and shutil.which(host.cli))


def run(opts: Options, out: TextIO = sys.stdout, err: TextIO = sys.stderr) -> int:
    if not opts.host or opts.host not in HOSTS:
        what = f"unknown host {opts.host!r}" if opts.host else "which host?"
        print(f"magnotia-mcp {opts.action}: {what}; one of: {_host_list()}", file=err)
        return 2
    host = HOSTS[opts.host]
    path = Path(opts.config).expanduser() if opts.config else Path(config_path(host))
    if opts.action == "uninstall":
        return _uninstall(host, path, opts, out, err)
    channel = opts.channel or running_channel()
    try:
        default_db = resolve_db_path(None)[0] if channel == "docker" and not opts.db else None
        db = Path(opts.db) if opts.db else None
        argv = server_argv(
            channel, db, executable=opts.command, image=opts.image, engine=opts.engine, default_db=default_db
        )
    except NoCommand as exc:
        print(f"magnotia-mcp install: {exc}", file=err)
        return 2
    entry = host.entry(argv, opts.name)
    if not opts.config and not present(host, path) and not opts.force:
        print(
            f"{host.title} does not look installed here: no {marker(host, path)}. Install and open it once, "
            f"then run this again; or pass --force to create {path}, or --config PATH for another file.\n"
            f"The entry to add by hand:\n{edit.snippet(host, opts.name, entry)}",
            file=err,
        )
        return 1
    if host.cli and not opts.config and shutil.which(host.cli):
        return _install_with_cli(host, path, opts, argv, entry, out, err)
    return _apply(host, path, opts, lambda text: edit.with_entry(host, text, opts.name, entry), entry, out, err)


def _refuse(host: Host, path: Path, opts: Options, entry: dict[str, object] | None, exc: Exception, err: TextIO) -> int:
    hint = ""
    if entry is not None:
        hint = f" Add this entry by hand:\n{edit.snippet(host, opts.name, entry)}"
    elif opts.action == "uninstall":
        hint = f' Remove the "{opts.name}" entry by hand.'
    print(f"cannot edit {path} safely: {exc}. Nothing was changed.{hint}", file=err)
    return 1


def _apply(
    host: Host,
    path: Path,
    opts: Options,
    change: object,
    entry: dict[str, object] | None,
    out: TextIO,
    err: TextIO,
) -> int:
    assert callable(change)
    try:
        config = edit.load(host, path)
        old = config.text()
        new = change(old)
    except NotEditable as exc:
        return _refuse(host, path, opts, entry, exc, err)
    if new is None or new == old:
        if opts.action == "install":
            print(f"{host.title}: already installed in {path} (nothing changed)", file=out)
        else:
            print(f"{host.title}: no {opts.name!r} entry in {path} (nothing changed)", file=out)
        return 0
    if opts.dry_run:
        try:
            if old is None:
                configfile.check_creatable(path)
        except NotEditable as exc:
            return _refuse(host, path, opts, entry, exc, err)
        print(edit.diff(path, old, new), end="", file=out)
        print(f"(dry run: {path} not changed)", file=out)
        return 0
    try:
        backup = edit.write(config, new)
    except NotEditable as exc:
        return _refuse(host, path, opts, entry, exc, err)
    saved = f"; the old file is saved as {backup}" if backup else ""
    verb = "added to" if opts.action == "install" else "removed from"
    print(f"{host.title}: {opts.name!r} {verb} {path}{saved}", file=out)
    if opts.action == "install":
        print(f"Restart {host.title} (or reload its MCP servers) to start it.", file=out)
    return 0


def _uninstall(host: Host, path: Path, opts: Options, out: TextIO, err: TextIO) -> int:
    if host.cli and not opts.config and shutil.which(host.cli):
        # The CLI would write this same file: what is refused for the file edit is refused here too.
        try:
            text = edit.read(host, path)
            present_entry = text is not None and edit.current_entry(host, text, opts.name) is not None
        except NotEditable as exc:
            return _refuse(host, path, opts, None, exc, err)
        if not present_entry:
            print(f"{host.title}: no {opts.name!r} entry (nothing changed)", file=out)
            return 0
        return _cli(host, [[host.cli, "mcp", "remove", "--scope", "user", opts.name]], opts, out, err)
    return _apply(host, path, opts, lambda text: edit.without_entry(host, text, opts.name), None, out, err)


def _install_with_cli(
    host: Host, path: Path, opts: Options, argv: list[str], entry: dict[str, object], out: TextIO, err: TextIO
) -> int:
    # The CLI would write this same file: what is refused for the file edit is refused here too.
    try:
        text = edit.read(host, path)
        current = None if text is None else edit.current_entry(host, text, opts.name)
    except NotEditable as exc:
        return _refuse(host, path, opts, entry, exc, err)
    if current is not None and all(current.get(k) == v for k, v in entry.items()):
        print(f"{host.title}: already installed in {path} (nothing changed)", file=out)
        return 0
    commands = []
    if current is not None:
        commands.append([host.cli or "", "mcp", "remove", "--scope", "user", opts.name])
    commands.append([host.cli or "", "mcp", "add", "--scope", "user", opts.name, "--", *argv])
    return _cli(host, commands, opts, out, err)


def _cli(host: Host, commands: list[list[str]], opts: Options, out: TextIO, err: TextIO) -> int:
    for command in commands:
        shown = shlex.join(command)
        if opts.dry_run:
            print(f"would run: {shown}", file=out)
            continue
        print(f"running: {shown}", file=out)
        out.flush()
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.stdout:
            print(done.stdout.rstrip("\n"), file=out)
        if done.returncode != 0:
            print(f"{shown} failed (exit {done.returncode}): {done.stderr.strip()}", file=err)
            return 1
    if opts.dry_run:
        print(f"(dry run: {host.title} not changed)", file=out)
    return 0
