"""One host config file: read it, plan our entry's change in its format, show the diff, write it safely."""

from __future__ import annotations

import difflib
import json
from pathlib import Path
from typing import Any

from magnotia_mcp.install import configfile, jsonc, toml_table, yaml_block
from magnotia_mcp.install.hosts import JSON, JSONC, TOML, YAML, Host, entry_argv
from magnotia_mcp.install.jsonc import NotEditable

_BOM = "\ufeff"


def max_bytes(host: Host) -> int:
    """How much of the host's config is read at most (docs/hosts.md says why)."""
    return configfile.MAX_BYTES_CLAUDE_CODE if host.key == "claude-code" else configfile.MAX_BYTES


def load(host: Host, path: Path) -> configfile.Config:
    """The host's config at path, read safely (configfile.Refused says why it cannot be)."""
    return configfile.load(path, max_bytes(host))


def read(host: Host, path: Path) -> str | None:
    """The file's text (None if there is no file)."""
    return load(host, path).text()


def _nest(keys: tuple[str, ...], value: Any) -> Any:
    for key in reversed(keys):
        value = {key: value}
    return value


def snippet(host: Host, name: str, entry: dict[str, Any]) -> str:
    """What to add by hand, in the file's own format."""
    if host.format == TOML:
        return toml_table.render(name, entry)
    if host.format == YAML:
        return f"{yaml_block.SECTION}:\n" + yaml_block.render(name, entry, "  ", "\n")
    return json.dumps(_nest(host.servers, {name: entry}), indent=2, ensure_ascii=False) + "\n"


def _split_bom(text: str) -> tuple[str, str]:
    return (_BOM, text[1:]) if text.startswith(_BOM) else ("", text)


def _json_root(host: Host, text: str) -> jsonc.Node:
    return jsonc.parse(text, comments=host.format == JSONC)


def _same(current: Any, entry: dict[str, Any]) -> bool:
    return isinstance(current, dict) and all(current.get(k) == v for k, v in entry.items())


def current_entry(host: Host, text: str, name: str) -> Any:
    """Our entry as the file has it (parsed), or None."""
    body = _split_bom(text)[1]
    if host.format in (JSON, JSONC):
        if jsonc.is_blank_object(body):
            return None
        node = jsonc.lookup(_json_root(host, body), (*host.servers, name))
        return None if node is None else node.value
    if host.format == TOML:
        servers = toml_table.load(body).get(toml_table.TABLE)
        return servers.get(name) if isinstance(servers, dict) else None
    argv = yaml_block.read_command(body, name)
    return None if argv is None else {"cmd": argv[0], "args": argv[1:]}


def configured_argv(host: Host, text: str, name: str) -> list[str] | None:
    """The command line our entry in this file starts, or None."""
    return entry_argv(host, current_entry(host, text, name))


def with_entry(host: Host, text: str | None, name: str, entry: dict[str, Any]) -> str:
    """The file's new text with our entry set (the same text when it is already there)."""
    if text is None:
        return snippet(host, name, entry)
    bom, body = _split_bom(text)
    if host.format in (JSON, JSONC):
        if jsonc.is_blank_object(body):
            return bom + snippet(host, name, entry)
        root = _json_root(host, body)
        current = jsonc.lookup(root, (*host.servers, name))
        if current is not None and _same(current.value, entry):
            return text
        new = jsonc.set_member(body, root, host.servers, name, entry)
        _check_json(host, body, new, name, entry)
        return bom + new
    if host.format == TOML:
        servers = toml_table.load(body).get(toml_table.TABLE)
        if isinstance(servers, dict) and _same(servers.get(name), entry):
            return text
        return bom + toml_table.set_table(body, name, entry)
    return bom + yaml_block.set_block(body, name, entry)


def without_entry(host: Host, text: str | None, name: str) -> str | None:
    """The file's new text without our entry (the same text when it has none)."""
    if text is None:
        return None
    bom, body = _split_bom(text)
    if host.format in (JSON, JSONC):
        if jsonc.is_blank_object(body):
            return text
        new = jsonc.remove_member(body, _json_root(host, body), host.servers, name)
        _check_json(host, body, new, name, None)
        return bom + new
    if host.format == TOML:
        return bom + toml_table.remove_table(body, name)
    return bom + yaml_block.remove_block(body, name)


def _without(value: Any, keys: tuple[str, ...], name: str) -> Any:
    value = json.loads(json.dumps(value))
    node = value
    for key in keys:
        if not isinstance(node, dict) or key not in node:
            return value
        node = node[key]
    if isinstance(node, dict):
        node.pop(name, None)
    return value


def _check_json(host: Host, old: str, new: str, name: str, entry: dict[str, Any] | None) -> None:
    """The edit changed our entry and nothing else, as the parser sees it; else nothing is written."""
    before = _json_root(host, old).value
    try:
        after_root = _json_root(host, new)
    except NotEditable as exc:
        raise NotEditable(f"the edited file would not parse ({exc})") from None
    after = after_root.value
    node = jsonc.lookup(after_root, (*host.servers, name))
    if (entry is None) != (node is None) or (node is not None and node.value != entry):
        raise NotEditable("the edit did not land where expected")
    if _without(after, host.servers, name) != _without(before, host.servers, name) and not _created_map(
        before, after, host.servers, name
    ):
        raise NotEditable("the edit would change more than our entry")


def _created_map(before: Any, after: Any, keys: tuple[str, ...], name: str) -> bool:
    """The only other difference is the servers map the edit had to create."""
    node = before
    for key in keys:
        if not isinstance(node, dict) or key not in node:
            trimmed = _without(after, keys, name)
            parent = trimmed
            for k in keys[: keys.index(key)]:
                parent = parent[k]
            parent.pop(key, None)
            return bool(trimmed == before)
        node = node[key]
    return False


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
