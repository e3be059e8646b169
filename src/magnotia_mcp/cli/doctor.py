"""``magnotia-mcp doctor``: is the store usable, which hosts start this server, and how would a host start it?

Exits 1 when anything is wrong: the store cannot be read, or a host is configured
with a command that no longer exists. ``--json`` prints the same facts as one object.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sqlite3
import stat
import sys
from pathlib import Path
from typing import Any

from magnotia_mcp import __version__
from magnotia_mcp.errors import StoreError
from magnotia_mcp.filemodes import read_capped, trusted_file_problem
from magnotia_mcp.install import edit
from magnotia_mcp.install.hosts import HOSTS, config_path
from magnotia_mcp.install.jsonc import NotEditable
from magnotia_mcp.install.launch import DEFAULT_IMAGE, running_channel, server_argv
from magnotia_mcp.paths import resolve_db_path
from magnotia_mcp.store.opening import describe
from magnotia_mcp.transport.http.bearer import ENV_VAR as TOKEN_ENV_VAR
from magnotia_mcp.transport.http.bearer import inspect_token, saved_token_path

NAME = "magnotia"


def server_command(db_flag: str | None) -> list[str]:
    """The command a host should run to start this same installation."""
    return server_argv(running_channel(), Path(db_flag) if db_flag else None)


def docker_command(store: Path) -> list[str]:
    """The container's command for this store (with --user on Linux)."""
    return server_argv("docker", store, image=DEFAULT_IMAGE)


def host_configs(command: list[str], docker: list[str] | None = None) -> str:
    """Ready-to-paste configuration for the common MCP hosts."""
    exe, args = command[0], command[1:]
    desktop = {"mcpServers": {NAME: {"command": exe, "args": args}}}
    vscode = {"servers": {NAME: {"type": "stdio", "command": exe, "args": args}}}
    goose_args = "".join(f"\n      - {json.dumps(a)}" for a in args) or " []"
    quoted = shlex.join(command)
    text = f"""\
Claude Desktop (claude_desktop_config.json) and Cursor (~/.cursor/mcp.json):
{json.dumps(desktop, indent=2)}

Claude Code:
  claude mcp add {NAME} -- {quoted}

VS Code (.vscode/mcp.json):
{json.dumps(vscode, indent=2)}

Goose (~/.config/goose/config.yaml):
extensions:
  {NAME}:
    name: {NAME}
    type: stdio
    enabled: true
    cmd: {json.dumps(exe)}
    args:{goose_args}
    timeout: 300

Or let magnotia-mcp write it: magnotia-mcp install HOST (hosts: {", ".join(HOSTS)})
"""
    if docker:
        text += f"\nIn the container instead (any host, as its command):\n  {shlex.join(docker)}\n"
    return text


def command_exists(command: str) -> bool:
    """Can a host start this command: an executable file at that path, or a name found on PATH."""
    if os.path.isabs(command):
        return os.path.isfile(command) and os.access(command, os.X_OK)
    return shutil.which(command) is not None


def configured_hosts() -> list[dict[str, Any]]:
    """Every known host whose config file names our server, with its command and whether that exists."""
    found: list[dict[str, Any]] = []
    for host in HOSTS.values():
        path = Path(config_path(host))
        try:
            text = edit.read(host, path)
            argv = None if text is None else edit.configured_argv(host, text, NAME)
        except (NotEditable, OSError) as exc:
            found.append({"host": host.key, "config": str(path), "error": f"cannot read: {exc}"})
            continue
        if argv is not None:
            found.append(
                {"host": host.key, "config": str(path), "command": argv, "command_found": command_exists(argv[0])}
            )
    return found


def http_token() -> dict[str, Any]:
    """Which bearer token ``serve --http`` would use, or why it would refuse it; makes none (doctor changes nothing)."""
    found = inspect_token()
    return {"env": TOKEN_ENV_VAR, "file": str(saved_token_path()), **found}


def semantic_index(store: Path, live: int | None) -> dict[str, Any]:
    """The state of the store's semantic index (magnotia-mcp index) and whether the extra that uses it is installed."""
    import importlib.util

    extra = all(importlib.util.find_spec(name) is not None for name in ("numpy", "tokenizers", "marisa_trie"))
    simd = importlib.util.find_spec("simsimd") is not None  # the extra's where it has a wheel; numpy scores without
    return {**index_state(store, live), "extra_installed": extra, "simd_scoring": simd}


def index_state(store: Path, live: int | None) -> dict[str, Any]:
    """Where the index is, whether it can be used (as a search would judge it: the same checks, and the width of
    its vectors against its model's), and how much of the store it covers.

    live: how many transcripts (not in the trash) the store holds, when it could be read.
    """
    from magnotia_mcp.search.semantic import indexfile

    path = indexfile.location(store)
    out: dict[str, Any] = {"path": str(path)}
    rebuild = "run `magnotia-mcp index` to rebuild it"
    try:
        found = indexfile.open_existing(store)
    except OSError as exc:
        return {**out, "state": "unusable", "why": f"it cannot be read ({exc.strerror})"}
    except indexfile.Unsafe as exc:  # its fix is the message's, not a rebuild
        return {**out, "state": "unusable", "why": str(exc)}
    except indexfile.Unusable as exc:
        return {**out, "state": "unusable", "why": f"{exc}; {rebuild}"}
    if found is None:
        return {**out, "state": "absent"}
    conn, meta = found
    try:
        docs, pieces = conn.execute("SELECT count(*), coalesce(sum(chunks), 0) FROM docs").fetchone()
    finally:
        conn.close()
    width = model_width(Path(meta.get("model_path", "")))
    if width is not None and str(width) != meta["dims"]:
        why = f"it holds vectors of {meta['dims']} dimensions where its model gives {width}; {rebuild}"
        return {**out, "state": "unusable", "why": why}
    complete = live is not None and docs >= live and meta.get("complete") == "1"
    return {
        **out,
        "state": "ready" if complete else "partial",
        "transcripts": docs,
        "of": live,
        "chunks": pieces,
        "model": meta.get("model_name", ""),
        "model_path": meta.get("model_path", ""),
        "speakers_listed": meta.get("speakers") == "1",
        "bytes": sum(os.path.getsize(p) for p in (path, Path(f"{path}-wal")) if os.path.exists(p)),
    }


HEADER = 1 << 20  # bytes of a model file read for its header: a Model2Vec model's is a few hundred


def model_width(folder: Path) -> int | None:
    """The width of the model's table, from its safetensors header alone (doctor loads no model); None when it
    cannot be read here (a search then says why it cannot load it)."""

    path = folder / "model.safetensors"

    def regular(st: os.stat_result) -> None:  # as the model's loader takes it: a regular file only we and root change
        if not stat.S_ISREG(st.st_mode) or trusted_file_problem(path, st, "") is not None:
            raise ValueError("not a model's file")

    try:
        raw, _ = read_capped(path, HEADER, regular)
        size = int.from_bytes(raw[:8], "little")
        shape = json.loads(raw[8 : 8 + size])["embeddings"]["shape"] if 8 + size <= len(raw) else None
    except (OSError, ValueError, KeyError, TypeError):
        return None
    valid = isinstance(shape, list) and len(shape) == 2 and all(type(n) is int and n > 0 for n in shape)
    return shape[1] if valid else None  # type: ignore[index]


def semantic_line(index: dict[str, Any]) -> str:
    if index["state"] == "absent":
        return "none; search finds by words (magnotia-mcp index builds one: docs/search.md)"
    if index["state"] == "unusable":
        return f"PROBLEM: {index['why']} ({index['path']}); search finds by words until then"
    covered = f"{index['transcripts']} of {index['of']} transcripts" if index["of"] is not None else "?"
    line = f"{index['state']}, {covered}, {index['chunks']} chunks, model {index['model_path']}, in {index['path']}"
    if index["state"] == "partial":
        line += "; run magnotia-mcp index to finish it"
    elif not index["speakers_listed"]:
        line += (
            "; it does not yet list who spoke where, so a speaker's search by meaning sees less: run magnotia-mcp index"
        )
    if not index["extra_installed"]:
        line += (
            "; PROBLEM: the semantic extra is not installed, so search ignores it: pip install 'magnotia-mcp[semantic]'"
        )
    elif not index["simd_scoring"]:
        line += "; scored by numpy, 1.5-3x slower (simsimd, the extra's SIMD scoring, has no wheel for this Python)"
    return line


def run_doctor(db_flag: str | None, *, demo: bool = False, as_json: bool = False) -> int:
    out = sys.stdout
    if demo:
        print("doctor checks a real store; --demo needs none. Try: magnotia-mcp --demo", file=out)
        return 0
    path, origin = resolve_db_path(db_flag)
    report: dict[str, Any] = {
        "version": __version__,
        "python": sys.version.split()[0],
        "sqlite": sqlite3.sqlite_version,
        "store": {"path": str(path), "from": origin},
    }
    try:
        facts = describe(path)
    except StoreError as exc:
        report["store"].update(ok=False, problem=exc.message)
    else:
        report["store"].update(ok=True, **facts)
    report["semantic_index"] = semantic_index(path, facts["transcripts"] if report["store"]["ok"] else None)
    hosts = configured_hosts()
    report["hosts"] = hosts
    missing = [h for h in hosts if h.get("command_found") is False]
    report["http"] = http_token()
    # A token problem is one once a token is set up; before, it only matters to a first serve --http.
    token_problem = report["http"]["problem"] and report["http"]["from"] != "none"
    report["ok"] = bool(report["store"]["ok"]) and not missing and not token_problem
    if as_json:
        print(json.dumps(report, indent=2, default=str), file=out)
        return 0 if report["ok"] else 1
    print(f"magnotia-mcp {__version__} (Python {report['python']}, SQLite {report['sqlite']})", file=out)
    print(f"store: {path}  (from {origin})", file=out)
    if not report["store"]["ok"]:
        print(f"  PROBLEM: {report['store']['problem']}", file=out)
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
    print(f"  semantic index: {semantic_line(report['semantic_index'])}", file=out)
    print("\nhosts configured to start this server:", file=out)
    if not hosts:
        print("  none yet (magnotia-mcp install HOST adds it)", file=out)
    for h in hosts:
        if "error" in h:
            print(f"  {h['host']}: {h['config']}: {h['error']}", file=out)
        elif h["command_found"]:
            print(f"  {h['host']}: {shlex.join(h['command'])}  ({h['config']})", file=out)
        else:
            print(
                f"  {h['host']}: PROBLEM: its command {h['command'][0]} does not exist ({h['config']}); "
                f"run: magnotia-mcp install {h['host']}",
                file=out,
            )
    token = report["http"]
    print("\nserve --http (opt-in; docs/http.md):", file=out)
    if token["problem"]:
        print(f"  PROBLEM: serve --http would refuse its token: {token['problem']}", file=out)
    elif token["from"] == "env":
        print(f"  bearer token: from ${token['env']} (not shown)", file=out)
    elif token["token"]:
        print(f"  bearer token: {token['token']}  (saved in {token['file']})", file=out)
    else:
        print(f"  bearer token: made at the first serve --http and saved in {token['file']}", file=out)
    print("\nHost configuration (the command below starts this installation):\n", file=out)
    print(host_configs(server_command(db_flag), docker_command(path)), file=out)
    return 0 if report["ok"] else 1
