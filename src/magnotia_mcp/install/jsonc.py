"""JSON and JSONC (comments, trailing commas) edited in place: one member added, replaced or removed.

The file is parsed into values that remember where they sit in the text, and
every change is a splice of the text: the bytes outside our one entry never
change, so comments, key order, indentation and line endings stay as the
user (or the host) left them, and removing what an install added gives the
old file back byte for byte.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?")
_LITERALS = {"true": True, "false": False, "null": None}
# A string literal: to the first quote no backslash escapes. json.loads then decodes (and checks) it
# exactly as JSON says.
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)


def _string_at(text: str, start: int) -> tuple[str, int]:
    """The string literal whose quote is at text[start], and where it ends; ValueError says what is wrong where."""
    literal = _STRING.match(text, start)
    try:
        # Unterminated: decoding the rest says what comes first, a bad character or the end.
        value: str = json.loads(literal.group(0) if literal else text[start:])
    except json.JSONDecodeError as exc:
        raise json.JSONDecodeError(exc.msg, text, start + exc.pos) from None  # where in the whole text
    if literal is None:  # not reached: without a closing quote the rest cannot decode as one string
        raise json.JSONDecodeError("Unterminated string starting at", text, start)
    return value, literal.end()


class NotEditable(Exception):
    """The text cannot be parsed, or not edited safely; the message says why."""


@dataclass
class Node:
    """A value and its span [start, end) in the text."""

    start: int
    end: int
    value: Any
    members: list[Member] = field(default_factory=list)  # objects only, in text order

    @property
    def is_object(self) -> bool:
        return isinstance(self.value, dict)

    def member(self, key: str) -> Member | None:
        found = [m for m in self.members if m.key == key]
        if len(found) > 1:
            raise NotEditable(f'the key "{key}" appears {len(found)} times in the same object')
        return found[0] if found else None


@dataclass
class Member:
    key: str
    key_start: int
    value: Node


class _Parser:
    def __init__(self, text: str, comments: bool) -> None:
        self.text = text
        self.comments = comments
        self.pos = 0

    def fail(self, what: str) -> NotEditable:
        line = self.text.count("\n", 0, self.pos) + 1
        column = self.pos - (self.text.rfind("\n", 0, self.pos) + 1) + 1
        return NotEditable(f"{what} at line {line}, column {column}")

    def skip(self) -> None:
        text, n = self.text, len(self.text)
        while self.pos < n:
            ch = text[self.pos]
            if ch in " \t\r\n":
                self.pos += 1
            elif self.comments and text.startswith("//", self.pos):
                end = text.find("\n", self.pos)
                self.pos = n if end < 0 else end
            elif self.comments and text.startswith("/*", self.pos):
                end = text.find("*/", self.pos + 2)
                if end < 0:
                    raise self.fail("unterminated comment")
                self.pos = end + 2
            else:
                return

    def document(self) -> Node:
        self.skip()
        node = self.value()
        self.skip()
        if self.pos != len(self.text):
            raise self.fail("unexpected text after the end of the document")
        return node

    def value(self) -> Node:
        text, start = self.text, self.pos
        if start >= len(text):
            raise self.fail("unexpected end of file")
        ch = text[start]
        if ch == "{":
            return self.object()
        if ch == "[":
            return self.array()
        if ch == '"':
            return Node(start, self.pos, self.string())
        for word, literal in _LITERALS.items():
            if text.startswith(word, start):
                self.pos = start + len(word)
                return Node(start, self.pos, literal)
        number = _NUMBER.match(text, start)
        if number:
            self.pos = number.end()
            return Node(start, self.pos, json.loads(number.group(0)))
        raise self.fail(f"unexpected character {ch!r}")

    def string(self) -> str:
        try:
            value, self.pos = _string_at(self.text, self.pos)
        except ValueError as exc:
            raise self.fail(f"bad string ({exc})") from None
        return value

    def object(self) -> Node:
        node = Node(self.pos, self.pos, {})
        self.pos += 1
        self.skip()
        while self.text[self.pos : self.pos + 1] != "}":
            if self.text[self.pos : self.pos + 1] != '"':
                raise self.fail("expected a key in double quotes")
            key_start = self.pos
            key = self.string()
            self.skip()
            if self.text[self.pos : self.pos + 1] != ":":
                raise self.fail("expected ':'")
            self.pos += 1
            self.skip()
            child = self.value()
            node.members.append(Member(key, key_start, child))
            node.value[key] = child.value
            self.skip()
            if self.text[self.pos : self.pos + 1] == ",":
                self.pos += 1
                self.skip()
                if self.text[self.pos : self.pos + 1] == "}" and not self.comments:
                    raise self.fail("trailing comma")
            elif self.text[self.pos : self.pos + 1] != "}":
                raise self.fail("expected ',' or '}'")
        self.pos += 1
        node.end = self.pos
        return node

    def array(self) -> Node:
        node = Node(self.pos, self.pos, [])
        self.pos += 1
        self.skip()
        while self.text[self.pos : self.pos + 1] != "]":
            child = self.value()
            node.value.append(child.value)
            self.skip()
            if self.text[self.pos : self.pos + 1] == ",":
                self.pos += 1
                self.skip()
                if self.text[self.pos : self.pos + 1] == "]" and not self.comments:
                    raise self.fail("trailing comma")
            elif self.text[self.pos : self.pos + 1] != "]":
                raise self.fail("expected ',' or ']'")
        self.pos += 1
        node.end = self.pos
        return node


def is_blank_object(text: str) -> bool:
    """Nothing in the file but an empty object (or nothing at all): safe to write from scratch."""
    return text.strip() in ("", "{}")


def parse(text: str, *, comments: bool) -> Node:
    """The document's root, with spans; comments and trailing commas only if comments is true."""
    if not comments:
        try:  # the reference parser decides what strict JSON is
            json.loads(text)
        except ValueError as exc:
            raise NotEditable(str(exc)) from None
    return _Parser(text, comments).document()


def _line_indent(text: str, pos: int) -> str:
    start = text.rfind("\n", 0, pos) + 1
    match = re.match(r"[ \t]*", text[start:pos])
    return match.group(0) if match else ""


def _indent_unit(text: str, root: Node) -> str:
    """The file's indentation step, from its first indented member (two spaces if none)."""
    for member in root.members:
        between = text[root.start + 1 : member.key_start]
        if "\n" in between:
            unit = _line_indent(text, member.key_start)
            return unit or "  "
        break
    return "  "


def _render(value: Any, indent: str, unit: str, newline: str, inline: bool) -> str:
    if inline:
        return json.dumps(value, ensure_ascii=False)
    rendered = json.dumps(value, indent=unit, ensure_ascii=False)
    return rendered.replace("\n", newline + indent)


def _newline(text: str) -> str:
    return "\r\n" if "\r\n" in text else "\n"


def _is_inline(text: str, container: Node) -> bool:
    """A container written on one line (a minified file): insert on that line too."""
    if container.members:
        return "\n" not in text[container.start : container.members[0].key_start]
    return "\n" not in text.strip()


def lookup(root: Node, path: tuple[str, ...]) -> Node | None:
    """The node at path (object keys), or None where a key is missing."""
    node = root
    for key in path:
        if not node.is_object:
            raise NotEditable(f'"{key}" is expected in an object, but its parent is not one')
        member = node.member(key)
        if member is None:
            return None
        node = member.value
    return node


def set_member(text: str, root: Node, path: tuple[str, ...], name: str, value: Any) -> str:
    """text with path[name] = value: the old value's text replaced, or a new member inserted last."""
    if not root.is_object:
        raise NotEditable("the file's top level is not an object")
    newline = _newline(text)
    unit = _indent_unit(text, root)
    # Walk down as far as the path exists; what is missing is created with our entry inside.
    container, missing = root, list(path)
    while missing:
        member = container.member(missing[0])
        if member is None:
            break
        if not member.value.is_object:
            raise NotEditable(f'"{missing[0]}" is not an object')
        container = member.value
        missing.pop(0)
    key, new_value = name, value
    if missing:
        key, new_value = missing[0], _nest(missing[1:], name, value)
    existing = container.member(key)
    if existing is not None:
        indent = _line_indent(text, existing.key_start)
        inline = "\n" not in text[container.start : existing.key_start] and bool(container.members)
        rendered = _render(new_value, indent, unit, newline, inline)
        return text[: existing.value.start] + rendered + text[existing.value.end :]
    inline = _is_inline(text, container)
    if container.members:
        indent = _line_indent(text, container.members[-1].key_start)
    else:
        indent = _line_indent(text, container.start) + unit
    rendered = _render(new_value, indent, unit, newline, inline)
    member_text = f"{json.dumps(key, ensure_ascii=False)}: {rendered}"
    if container.members:
        after = container.members[-1].value.end
        glue = ", " if inline else "," + newline + indent
        return text[:after] + glue + member_text + text[after:]
    if inline:
        return text[: container.start + 1] + member_text + text[container.end - 1 :]
    # An empty object, maybe holding comments: our member goes after the last of them.
    inside = text[container.start + 1 : container.end - 1]
    at = container.start + 1 + len(inside.rstrip())
    body = newline + indent + member_text
    if "\n" not in inside[len(inside.rstrip()) :]:
        body += newline + _line_indent(text, container.start)
    return text[:at] + body + text[at:]


def _nest(path: list[str], name: str, value: Any) -> Any:
    nested: Any = {name: value}
    for part in reversed(path):
        nested = {part: nested}
    return nested


def remove_member(text: str, root: Node, path: tuple[str, ...], name: str) -> str:
    """text without path[name]; the exact inverse of set_member inserting it last."""
    container = lookup(root, path)
    if container is None or not container.is_object:
        return text
    member = container.member(name)
    if member is None:
        return text
    index = container.members.index(member)
    if index > 0:
        # From the end of the previous value to the end of ours: the comma and our member go.
        start = container.members[index - 1].value.end
        return text[:start] + text[member.value.end :]
    if len(container.members) > 1:
        # The first of several: ours and everything up to the next key go.
        nxt = container.members[1].key_start
        return text[: member.key_start] + text[nxt:]
    # The only member: from the end of what precedes it (a brace or a comment) to its end, and
    # a trailing comma; an object left with nothing but blanks becomes {}.
    before = text[container.start + 1 : member.key_start]
    cut = container.start + 1 + len(before.rstrip())
    end = member.value.end
    rest = text[end : container.end - 1]
    if rest.lstrip().startswith(","):
        end += len(rest) - len(rest.lstrip()) + 1
    result = text[:cut] + text[end:]
    close = container.end - (end - cut)
    if not result[container.start + 1 : close - 1].strip():
        result = result[: container.start + 1] + result[close - 1 :]
    return result
