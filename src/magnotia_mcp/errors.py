"""The exceptions the server raises, and the JSON-RPC codes they carry.

Handlers raise these deep down and keep their type; only ``server.Server`` turns
them into wire objects, so a bad argument and a broken store never collapse
into the same code.
"""

from __future__ import annotations

from typing import Any

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
NOT_FOUND = -32000
RESOURCE_NOT_FOUND = -32002
UNSUPPORTED_PROTOCOL_VERSION = -32022


QUOTED = 100  # of an argument's value, the characters an error quotes: a 900 KB argument is no 900 KB error


def quote(value: str) -> str:
    """value as an error quotes it: repr, its first QUOTED characters only, saying how long it is when cut."""
    if len(value) <= QUOTED:
        return repr(value)
    return f"{value[:QUOTED]!r}… ({len(value)} characters)"


def named(value: str) -> str:
    """value as an error names it (an id, a method, a URI): whole when short, else cut as quote cuts it."""
    if len(value) <= QUOTED:
        return value
    return f"{value[:QUOTED]}… ({len(value)} characters)"


class ProtocolError(Exception):
    """A failure that becomes a JSON-RPC error object."""

    code = INTERNAL_ERROR

    def __init__(self, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.message = message
        self.data = data


class ParseError(ProtocolError):
    """The line is not valid UTF-8 JSON."""

    code = PARSE_ERROR


class InvalidRequest(ProtocolError):
    """Valid JSON that is not a JSON-RPC 2.0 request."""

    code = INVALID_REQUEST


class MethodNotFound(ProtocolError):
    """No handler for this method."""

    code = METHOD_NOT_FOUND


class InvalidParams(ProtocolError):
    """The method's params are malformed."""

    code = INVALID_PARAMS


class UnsupportedProtocolVersion(ProtocolError):
    """The client asked for a protocol revision this server does not speak."""

    code = UNSUPPORTED_PROTOCOL_VERSION


class ToolError(ProtocolError):
    """A tool call the model can correct; a tool result with isError from 2025-11-25 on."""


class InvalidArguments(ToolError):
    """A tool argument is missing, unknown, of the wrong type or out of range."""

    code = INVALID_PARAMS

    def __init__(self, name: str | None, problem: str) -> None:
        where = f"invalid argument '{name}': " if name else "invalid arguments: "
        super().__init__(where + problem, {"argument": name} if name else None)
        self.argument = name


class NotFound(ToolError):
    """The thing asked for does not exist or is in the trash."""

    code = NOT_FOUND


class ResourceNotFound(ProtocolError):
    """A resource URI that names nothing readable."""

    code = RESOURCE_NOT_FOUND


class StoreError(ProtocolError):
    """The store cannot be read: missing, locked, corrupt or of a newer schema."""

    code = INTERNAL_ERROR


class CallTimeout(ToolError):
    """A call ran past the per-call time limit and was stopped."""

    code = INTERNAL_ERROR
