"""``magnotia-mcp doctor``: is the store usable, and how does a host start this server?"""

from __future__ import annotations

import json
import shlex
import shutil
import sqlite3
import sys
from pathlib import Path

from magnotia_mcp import __version__
from magnotia_mcp.errors import StoreError
from magnotia_mcp.paths import resolve_db_path
from magnotia_mcp.store.opening import describe


def server_command(db_flag: str | None) -> list[str]:
    """The command a host should run to start this same installation."""
    if getattr(sys, "frozen", False):
        command = [sys.executable]
    else:
        script = shutil.which("magnotia-mcp")
        command = [script] if script else [sys.executable, "-m", "magnotia_mcp"]
    if db_flag:
        command += ["--db", str(Path(db_flag).expanduser().absolute())]
    return command


def host_configs(command: list[str]) -> str:
    """Ready-to-paste configuration for the common MCP hosts."""
    exe, args = command[0], command[1:]
    desktop = {"mcpServers": {"magnotia": {"command": exe, "args": args}}}
    vscode = {"servers": {"magnotia": {"type": "stdio", "command": exe, "args": args}}}
    goose_args = "".join(f"\n      - {json.dumps(a)}" for a in args) or " []"
    quoted = " ".join(_shell_quote(p) for p in command)
    return f"""\
Claude Desktop (claude_desktop_config.json) and Cursor (~/.cursor/mcp.json):
{json.dumps(desktop, indent=2)}

Claude Code:
  claude mcp add magnotia -- {quoted}

VS Code (.vscode/mcp.json):
{json.dumps(vscode, indent=2)}

Goose (~/.config/goose/config.yaml):
extensions:
  magnotia:
    name: magnotia
    type: stdio
    enabled: true
    cmd: {json.dumps(exe)}
    args:{goose_args}
    timeout: 300
"""


def _shell_quote(part: str) -> str:

    return shlex.quote(part)


def run_doctor(db_flag: str | None, *, demo: bool = False) -> int:
    out = sys.stdout
    if demo:
        print("doctor checks a real store; --demo needs none. Try: magnotia-mcp --demo", file=out)
        return 0
    path, origin = resolve_db_path(db_flag)
    print(f"magnotia-mcp {__version__} (Python {sys.version.split()[0]}, SQLite {_sqlite_version()})", file=out)
    print(f"store: {path}  (from {origin})", file=out)
    ok = True
    try:
        facts = describe(path)
    except StoreError as exc:
        ok = False
        print(f"  PROBLEM: {exc.message}", file=out)
    else:
        print(f"  schema version {facts['schema_version']}, opened {facts['open_mode']}", file=out)
        print(
            f"  {facts['transcripts']} transcripts ({facts['in_trash']} more in the trash, never shown), "
            f"{facts['tasks']} tasks",
            file=out,
        )
        fts = "present" if facts["full_text_index"] else "absent (older app version): search scans the text"
        print(f"  full-text index: {fts}", file=out)
        print("  ready.", file=out)
    print("\nHost configuration (the command below starts this installation):\n", file=out)
    print(host_configs(server_command(db_flag)), file=out)
    return 0 if ok else 1


def _sqlite_version() -> str:
    return sqlite3.sqlite_version
