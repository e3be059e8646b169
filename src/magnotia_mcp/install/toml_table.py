"""Codex CLI's config.toml: our ``[mcp_servers.NAME]`` table added, replaced or removed as text.

Only the lines of our own table (and its sub-tables such as ``[mcp_servers.NAME.env]``)
change; everything else, comments included, stays byte for byte. Every edit is checked
by parsing the result with the standard library's TOML parser: the new document must
equal the old one with only our entry changed, or nothing is written.
"""

from __future__ import annotations

import copy
import importlib
import re
from collections.abc import Callable
from typing import Any, cast

from magnotia_mcp.install.jsonc import NotEditable

_HEADER = re.compile(r"[ \t]*\[(?!\[)([^\[\]\r\n]+)\][ \t]*(?:#.*)?\r?\n?")
_BARE = re.compile(r"[A-Za-z0-9_-]+")
TABLE = "mcp_servers"


def _loads() -> Callable[[str], dict[str, Any]]:
    try:
        tomllib = importlib.import_module("tomllib")
    except ImportError:  # Python 3.10
        raise NotEditable("editing TOML safely needs Python 3.11 or later (its tomllib checks every edit)") from None
    return cast(Callable[[str], dict[str, Any]], tomllib.loads)


def load(text: str) -> dict[str, Any]:
    loads = _loads()
    try:
        return loads(text)
    except Exception as exc:  # tomllib.TOMLDecodeError
        raise NotEditable(f"not valid TOML ({exc})") from None


def toml_string(value: str) -> str:
    """A TOML basic string: quotes, backslashes and control characters escaped."""
    out = []
    for ch in value:
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch in "\b\t\n\f\r":
            out.append({"\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}[ch])
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04X}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def _key(name: str) -> str:
    return name if _BARE.fullmatch(name) else toml_string(name)


def render(name: str, entry: dict[str, Any], newline: str = "\n") -> str:
    """Our table: ``[mcp_servers.NAME]`` then one line per key (strings and lists of strings)."""
    lines = [f"[{TABLE}.{_key(name)}]"]
    for key, value in entry.items():
        if isinstance(value, list):
            rendered = "[" + ", ".join(toml_string(str(v)) for v in value) + "]"
        elif isinstance(value, bool):
            rendered = "true" if value else "false"
        else:
            rendered = toml_string(str(value))
        lines.append(f"{_key(key)} = {rendered}")
    return newline.join(lines) + newline


def _header_path(inner: str) -> list[str] | None:
    try:
        parsed = _loads()(f"[{inner}]\n")
    except Exception:
        return None
    path: list[str] = []
    node: Any = parsed
    while isinstance(node, dict) and len(node) == 1:
        key = next(iter(node))
        path.append(key)
        node = node[key]
    return path


def _our_sections(lines: list[str], name: str) -> list[tuple[int, int]]:
    """[start, end) line ranges of our table and its sub-tables, trailing blanks and comments left out."""
    headers: list[tuple[int, list[str] | None]] = []
    for i, line in enumerate(lines):
        match = _HEADER.fullmatch(line)
        if match:
            headers.append((i, _header_path(match.group(1))))
        elif line.lstrip().startswith("[["):
            headers.append((i, None))
    ranges = []
    for n, (start, path) in enumerate(headers):
        if path is None or path[:2] != [TABLE, name]:
            continue
        end = headers[n + 1][0] if n + 1 < len(headers) else len(lines)
        while end > start + 1 and (not lines[end - 1].strip() or lines[end - 1].lstrip().startswith("#")):
            end -= 1
        ranges.append((start, end))
    return ranges


def _without(doc: dict[str, Any], name: str) -> dict[str, Any]:
    doc = copy.deepcopy(doc)
    servers = doc.get(TABLE)
    if isinstance(servers, dict):
        servers.pop(name, None)
        if not servers:
            del doc[TABLE]
    return doc


def _newline(text: str) -> str:
    return "\r\n" if "\r\n" in text else "\n"


def _remove_ranges(text: str, name: str) -> tuple[list[str], int | None]:
    lines = text.splitlines(keepends=True)
    ranges = _our_sections(lines, name)
    first = ranges[0][0] if ranges else None
    for start, end in reversed(ranges):
        del lines[start:end]
        # A blank line left doubled where a table in the middle went: drop one.
        if 0 < start < len(lines) and not lines[start].strip() and not lines[start - 1].strip():
            del lines[start]
    return lines, first


def set_table(text: str, name: str, entry: dict[str, Any]) -> str:
    """text with [mcp_servers.NAME] = entry; the result is checked by parsing it."""
    old = load(text)
    newline = _newline(text)
    block = render(name, entry, newline)
    lines, first = _remove_ranges(text, name)
    if first is not None:
        lines.insert(min(first, len(lines)), block)
        new = "".join(lines)
    else:
        new = text + ("" if not text else newline if text.endswith("\n") else newline * 2) + block
    expected = _without(old, name)
    expected.setdefault(TABLE, {})
    if not isinstance(expected[TABLE], dict):
        raise NotEditable(f'"{TABLE}" is not a table')
    expected[TABLE][name] = entry
    if _parses_to(new) != expected:
        raise NotEditable(f"{TABLE}.{name} is defined in a way this edit cannot follow (inline or dotted keys)")
    return new


def _parses_to(text: str) -> dict[str, Any] | None:
    try:
        return load(text)
    except NotEditable:
        return None


def remove_table(text: str, name: str) -> str:
    """text without [mcp_servers.NAME] (and its sub-tables); checked by parsing the result."""
    old = load(text)
    servers = old.get(TABLE)
    if not isinstance(servers, dict) or name not in servers:
        return text
    lines, first = _remove_ranges(text, name)
    new = "".join(lines)
    if first is not None and first >= len(lines) and new.endswith("\n\n"):
        new = new[: -len(_newline(text))]  # the blank line an install put before a table at the end
    parsed = _parses_to(new)
    if parsed is None or name in parsed.get(TABLE, {}) or _without(parsed, name) != _without(old, name):
        raise NotEditable(f"{TABLE}.{name} is defined in a way this edit cannot follow (inline or dotted keys)")
    return new
