"""The config formats hosts use, each one object behind one interface: JSON, JSONC, TOML, YAML.

A format reads our entry from a file's text, sets or removes it, and renders the snippet a
user adds by hand. Texts come in without a byte-order mark (edit.py keeps it aside); an
unchanged text comes back as the same string. ``servers`` is where the host keeps its map
of servers: any path of keys in JSON; TOML and YAML follow only the one table or section
their editors know (``accepts`` says which).
"""

from __future__ import annotations

import json
from typing import Any, Protocol

from magnotia_mcp.install import jsonc, toml_table, yaml_block
from magnotia_mcp.install.jsonc import NotEditable

Servers = tuple[str, ...]


class ConfigFormat(Protocol):
    name: str  # as docs/hosts.md names it: json, jsonc, toml, yaml

    def accepts(self, servers: Servers) -> bool:
        """Can this format's editor follow a servers map at that place."""

    def snippet(self, servers: Servers, name: str, entry: dict[str, Any]) -> str:
        """What to add by hand: a whole file holding only our entry."""

    def current(self, servers: Servers, body: str, name: str) -> Any:
        """Our entry as the file has it (parsed), or None."""

    def set(self, servers: Servers, body: str, name: str, entry: dict[str, Any]) -> str:
        """body with our entry set (body itself when it is already there)."""

    def remove(self, servers: Servers, body: str, name: str) -> str:
        """body without our entry (body itself when it has none)."""


def _same(current: Any, entry: dict[str, Any]) -> bool:
    return isinstance(current, dict) and all(current.get(k) == v for k, v in entry.items())


def _nest(keys: Servers, value: Any) -> Any:
    for key in reversed(keys):
        value = {key: value}
    return value


class Json:
    """Strict JSON (comments=False) or JSONC as VS Code and Zed read it (comments and trailing commas)."""

    def __init__(self, name: str, *, comments: bool) -> None:
        self.name = name
        self.comments = comments

    def accepts(self, servers: Servers) -> bool:
        return bool(servers)

    def snippet(self, servers: Servers, name: str, entry: dict[str, Any]) -> str:
        return json.dumps(_nest(servers, {name: entry}), indent=2, ensure_ascii=False) + "\n"

    def _root(self, text: str) -> jsonc.Node:
        return jsonc.parse(text, comments=self.comments)

    def current(self, servers: Servers, body: str, name: str) -> Any:
        if jsonc.is_blank_object(body):
            return None
        node = jsonc.lookup(self._root(body), (*servers, name))
        return None if node is None else node.value

    def set(self, servers: Servers, body: str, name: str, entry: dict[str, Any]) -> str:
        if jsonc.is_blank_object(body):
            return self.snippet(servers, name, entry)
        root = self._root(body)
        current = jsonc.lookup(root, (*servers, name))
        if current is not None and _same(current.value, entry):
            return body
        new = jsonc.set_member(body, root, servers, name, entry)
        self._check(servers, body, new, name, entry)
        return new

    def remove(self, servers: Servers, body: str, name: str) -> str:
        if jsonc.is_blank_object(body):
            return body
        new = jsonc.remove_member(body, self._root(body), servers, name)
        self._check(servers, body, new, name, None)
        return new

    def _check(self, servers: Servers, old: str, new: str, name: str, entry: dict[str, Any] | None) -> None:
        """The edit changed our entry and nothing else, as the parser sees it; else nothing is written."""
        before = self._root(old).value
        try:
            after_root = self._root(new)
        except NotEditable as exc:
            raise NotEditable(f"the edited file would not parse ({exc})") from None
        after = after_root.value
        node = jsonc.lookup(after_root, (*servers, name))
        if (entry is None) != (node is None) or (node is not None and node.value != entry):
            raise NotEditable("the edit did not land where expected")
        if _without(after, servers, name) != _without(before, servers, name) and not _created_map(
            before, after, servers, name
        ):
            raise NotEditable("the edit would change more than our entry")


def _without(value: Any, keys: Servers, name: str) -> Any:
    value = json.loads(json.dumps(value))
    node = value
    for key in keys:
        if not isinstance(node, dict) or key not in node:
            return value
        node = node[key]
    if isinstance(node, dict):
        node.pop(name, None)
    return value


def _created_map(before: Any, after: Any, keys: Servers, name: str) -> bool:
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


class Toml:
    """Codex's config.toml: our ``[mcp_servers.NAME]`` table (toml_table.py).

    Its one place for servers is toml_table.TABLE (``accepts``), so ``servers`` goes unused.
    """

    name = "toml"

    def accepts(self, servers: Servers) -> bool:
        return servers == (toml_table.TABLE,)

    def snippet(self, servers: Servers, name: str, entry: dict[str, Any]) -> str:  # noqa: ARG002
        return toml_table.render(name, entry)

    def current(self, servers: Servers, body: str, name: str) -> Any:  # noqa: ARG002
        table = toml_table.load(body).get(toml_table.TABLE)
        return table.get(name) if isinstance(table, dict) else None

    def set(self, servers: Servers, body: str, name: str, entry: dict[str, Any]) -> str:
        if _same(self.current(servers, body, name), entry):
            return body
        return toml_table.set_table(body, name, entry)

    def remove(self, servers: Servers, body: str, name: str) -> str:  # noqa: ARG002
        return toml_table.remove_table(body, name)


class Yaml:
    """Goose's config.yaml: our child of ``extensions:`` (yaml_block.py), read back as its cmd and args.

    Its one place for servers is yaml_block.SECTION (``accepts``), so ``servers`` goes unused.
    """

    name = "yaml"

    def accepts(self, servers: Servers) -> bool:
        return servers == (yaml_block.SECTION,)

    def snippet(self, servers: Servers, name: str, entry: dict[str, Any]) -> str:  # noqa: ARG002
        return f"{yaml_block.SECTION}:\n" + yaml_block.render(name, entry, "  ", "\n")

    def current(self, servers: Servers, body: str, name: str) -> Any:  # noqa: ARG002
        argv = yaml_block.read_command(body, name)
        return None if argv is None else {"cmd": argv[0], "args": argv[1:]}

    def set(self, servers: Servers, body: str, name: str, entry: dict[str, Any]) -> str:  # noqa: ARG002
        return yaml_block.set_block(body, name, entry)

    def remove(self, servers: Servers, body: str, name: str) -> str:  # noqa: ARG002
        return yaml_block.remove_block(body, name)


JSON: ConfigFormat = Json("json", comments=False)
JSONC: ConfigFormat = Json("jsonc", comments=True)
TOML: ConfigFormat = Toml()
YAML: ConfigFormat = Yaml()
