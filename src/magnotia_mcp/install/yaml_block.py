"""Goose's config.yaml: our entry under the top-level ``extensions:`` mapping added, replaced or removed as text.

No YAML library is needed: the edit recognises only the plain block style Goose itself
writes (``extensions:`` at column 0, one key per child at a single indentation, each
child's lines indented deeper) and refuses anything else (flow style, anchors, tags,
tabs, several documents), so it never guesses. Lines outside our entry never change.
Strings are written as JSON strings, which YAML reads as double-quoted scalars.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from magnotia_mcp.install.jsonc import NotEditable

SECTION = "extensions"
_TOP_KEY = re.compile(r'(?:"((?:[^"\\]|\\.)*)"|([A-Za-z_][\w.-]*))[ \t]*:(?:[ \t]+(.*?))?[ \t]*\r?\n?')
_CHILD_KEY = re.compile(r'([ ]+)(?:"((?:[^"\\]|\\.)*)"|([A-Za-z0-9_][\w.-]*))[ \t]*:(?:[ \t]+(.*?))?[ \t]*\r?\n?')
_PLAIN = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_-]*")
# Any key YAML allows at column 0 of a block mapping: quoted, or plain (not starting with an
# indicator), then a colon followed by a space or the end of the line.
_ANY_KEY = re.compile(
    r"""(?:"(?:[^"\\]|\\.)*"|'(?:[^']|'')*'|[^\s\-?:,\[\]{}#&*!|>'"%@`].*?)[ \t]*:(?:[ \t].*)?\r?\n?"""
)
_DASH = re.compile(r"-(?:[ \t].*)?\r?\n?")


@dataclass
class Section:
    header: int  # the line of "extensions:"
    end: int  # the first line after its block
    indent: str  # the children's indentation ("" when it has none)
    children: dict[str, tuple[int, int]]  # name -> [start, end) lines, trailing blanks and comments left out
    empty_flow: bool  # written "extensions: {}"


def _is_blank_or_comment(line: str) -> bool:
    stripped = line.strip()
    return not stripped or stripped.startswith("#")


def _key_name(quoted: str | None, plain: str | None) -> str:
    if quoted is not None:
        return str(json.loads(f'"{quoted}"'))
    return plain or ""


def _check_mapping(lines: list[str]) -> None:
    """The file is a block mapping at its top level, as Goose writes it; anything else is refused.

    Without this, a file that is not YAML at all (a link to /etc/passwd, say) has no
    "extensions:" line and would get one appended. Lines at column 0 must be keys (or,
    after a key, the "- " items of a list Goose writes unindented); indented lines must
    follow a key.
    """
    key_seen = False
    for i, line in enumerate(lines):
        if _is_blank_or_comment(line) or line.startswith(("---", "...")):  # markers: _find decides
            continue
        if line[:1] in (" ", "\t"):
            if not key_seen:
                raise NotEditable(f"line {i + 1} is indented but follows no key: this is not the YAML Goose writes")
            continue
        if _ANY_KEY.fullmatch(line):
            key_seen = True
        elif not (key_seen and _DASH.fullmatch(line)):
            raise NotEditable(
                f"line {i + 1} is not a YAML key: this file is not the mapping of settings Goose writes "
                "(is the path or its link pointing at the right file?)"
            )


def _find(lines: list[str]) -> Section | None:
    _check_mapping(lines)
    header = None
    for i, line in enumerate(lines):
        if line.startswith(("---", "...")) and i > 0:
            raise NotEditable("the file holds several YAML documents")
        if "\t" in line[: len(line) - len(line.lstrip())]:
            raise NotEditable(f"line {i + 1} is indented with a tab")
        if line[:1] not in (" ", "#", "\r", "\n", "") and not line.startswith("---"):
            match = _TOP_KEY.fullmatch(line)
            if match is None:
                if header is not None and i > header:
                    break
                continue
            if _key_name(match.group(1), match.group(2)) == SECTION:
                if header is not None:
                    raise NotEditable(f'"{SECTION}" appears twice')
                header = i
    if header is None:
        return None
    top = _TOP_KEY.fullmatch(lines[header])
    value = ((top.group(3) if top else None) or "").split(" #")[0].strip()
    end = header + 1
    while end < len(lines) and (lines[end][:1] in (" ", "\r", "\n") or lines[end].startswith("#")):
        end += 1
    # Trailing blank lines and comments at column 0 belong to what follows.
    while end > header + 1 and (not lines[end - 1].strip() or lines[end - 1].startswith("#")):
        end -= 1
    if value == "{}":
        if end > header + 1:
            raise NotEditable(f'"{SECTION}: {{}}" is followed by indented lines')
        return Section(header, end, "", {}, True)
    if value:
        raise NotEditable(f'"{SECTION}" is not written as a block mapping (found "{value}")')
    indent = ""
    children: dict[str, tuple[int, int]] = {}
    current: str | None = None
    for i in range(header + 1, end):
        line = lines[i]
        if _is_blank_or_comment(line):
            continue
        width = len(line) - len(line.lstrip(" "))
        if not indent:
            indent = line[:width]
        if width == len(indent):
            match = _CHILD_KEY.fullmatch(line)
            if match is None or match.group(1) != indent:
                raise NotEditable(f"line {i + 1} is not a key of {SECTION}")
            if match.group(4) and match.group(4).strip()[:1] in ("&", "*", "!", "{", "["):
                raise NotEditable(f"line {i + 1} uses YAML features this edit does not follow")
            current = _key_name(match.group(2), match.group(3))
            if current in children:
                raise NotEditable(f'"{current}" appears twice under {SECTION}')
            children[current] = (i, i + 1)
        elif width > len(indent) and current is not None:
            children[current] = (children[current][0], i + 1)
        else:
            raise NotEditable(f"line {i + 1} is indented less than the other keys of {SECTION}")
    return Section(header, end, indent, children, False)


def render(name: str, entry: dict[str, Any], indent: str, newline: str) -> str:
    """Our child of extensions:, every string a JSON (double-quoted YAML) string."""
    inner = indent + (indent or "  ")
    key = name if _PLAIN.fullmatch(name) else json.dumps(name, ensure_ascii=False)
    out = [f"{indent}{key}:"]
    for field, value in entry.items():
        if isinstance(value, list):
            if not value:
                out.append(f"{inner}{field}: []")
                continue
            out.append(f"{inner}{field}:")
            out += [f"{inner}  - {json.dumps(str(v), ensure_ascii=False)}" for v in value]
        else:
            out.append(f"{inner}{field}: {json.dumps(value, ensure_ascii=False)}")
    return newline.join(out) + newline


def _newline(text: str) -> str:
    return "\r\n" if "\r\n" in text else "\n"


def read_entry(text: str, name: str) -> list[str] | None:
    """Our entry's lines (as written), or None."""
    lines = text.splitlines(keepends=True)
    section = _find(lines)
    if section is None or name not in section.children:
        return None
    start, end = section.children[name]
    return lines[start:end]


def read_command(text: str, name: str) -> list[str] | None:
    """The argv of our entry (cmd and args as this module writes them), or None."""
    block = read_entry(text, name)
    if block is None:
        return None
    cmd: str | None = None
    args: list[str] = []
    for line in block[1:]:
        stripped = line.strip()
        if stripped.startswith("cmd:"):
            cmd = json.loads(stripped[4:].strip()) if stripped[4:].strip().startswith('"') else stripped[4:].strip()
        elif stripped.startswith("- ") and cmd is not None:
            value = stripped[2:].strip()
            args.append(json.loads(value) if value.startswith('"') else value)
    return [cmd, *args] if cmd else None


def set_block(text: str, name: str, entry: dict[str, Any]) -> str:
    newline = _newline(text)
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += newline
    section = _find(lines)
    if section is None:
        block = f"{SECTION}:{newline}" + render(name, entry, "  ", newline)
        return text + ("" if not text else newline if text.endswith("\n") else newline * 2) + block
    indent = section.indent or "  "
    block = render(name, entry, indent, newline)
    if section.empty_flow:
        lines[section.header] = f"{SECTION}:{newline}" + block
    elif name in section.children:
        start, end = section.children[name]
        lines[start:end] = [block]
    else:
        last = max((end for _, end in section.children.values()), default=section.header + 1)
        lines.insert(last, block)
    return "".join(lines)


def remove_block(text: str, name: str) -> str:
    lines = text.splitlines(keepends=True)
    section = _find(lines)
    if section is None or name not in section.children:
        return text
    start, end = section.children[name]
    del lines[start:end]
    if len(section.children) == 1:
        newline = _newline(text)
        lines[section.header] = f"{SECTION}: {{}}{newline}"
    return "".join(lines)
