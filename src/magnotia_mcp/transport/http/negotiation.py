"""What a request speaks and what it accepts: its protocol revision, the headers that must agree with its body,
JSON or SSE, and the HTTP status its answer gets.

2026-07-28 requests carry their revision in ``params._meta`` and mirror the body in headers
(``MCP-Protocol-Version``, ``Mcp-Method``, ``Mcp-Name``): a header that disagrees is -32020, a
400. Older revisions name theirs in ``MCP-Protocol-Version``, or get their session's (without
either: ``2025-03-26``, as the spec says).
"""

from __future__ import annotations

import base64
import re
from collections.abc import Mapping

from magnotia_mcp.errors import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    UNSUPPORTED_PROTOCOL_VERSION,
    InvalidParams,
    InvalidRequest,
    ProtocolError,
)
from magnotia_mcp.protocol import jsonrpc, revisions
from magnotia_mcp.protocol.jsonrpc import Reply
from magnotia_mcp.protocol.requests import META_VERSION

HEADER_MISMATCH = -32020  # 2026-07-28: an HTTP header disagrees with the body
# 2026-07-28: the HTTP status of a JSON-RPC error (others: 200).
MODERN_ERROR_STATUS = {
    PARSE_ERROR: 400,
    INVALID_REQUEST: 400,
    INVALID_PARAMS: 400,
    HEADER_MISMATCH: 400,
    UNSUPPORTED_PROTOCOL_VERSION: 400,
    METHOD_NOT_FOUND: 404,
}
# The body param each 2026-07-28 method mirrors in the Mcp-Name header.
NAME_BEARING = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}


class Mismatch(ProtocolError):
    code = HEADER_MISMATCH


def revision(message: object, headers: Mapping[str, str], negotiated: str | None) -> tuple[str, bool]:
    """The revision a message speaks (and whether it is 2026-07-28 or later); checks MCP-Protocol-Version.

    negotiated: what the request's session agreed on, if it names a live one.
    """
    header = headers.get("mcp-protocol-version")
    params = message.get("params") if isinstance(message, dict) else None
    meta = params.get("_meta") if isinstance(params, dict) else None
    body_version = meta.get(META_VERSION) if isinstance(meta, dict) else None
    if body_version is not None or header in revisions.MODERN:
        if body_version is None:
            raise InvalidParams(f"params._meta must carry {META_VERSION!r} (MCP-Protocol-Version is {header!r})")
        # Only what a header can carry is compared: a body value that is not a string is the
        # body's own error (-32602 from the server), not a mismatch.
        if isinstance(body_version, str) and header != body_version:
            raise Mismatch("MCP-Protocol-Version header does not match params._meta's protocol version")
        method = message.get("method") if isinstance(message, dict) else None
        if headers.get("mcp-method") != method:
            raise Mismatch("Mcp-Method header does not match the request body's method")
        key = NAME_BEARING.get(method) if isinstance(method, str) else None
        value = params.get(key) if key and isinstance(params, dict) else None
        if isinstance(value, str) and _header_value(headers.get("mcp-name")) != value:
            raise Mismatch(f"Mcp-Name header does not match the request body's {key!r}")
        return (body_version if body_version in revisions.MODERN else revisions.MODERN[-1]), True
    if header is None:
        return negotiated or "2025-03-26", False
    if header not in revisions.LEGACY:
        raise InvalidRequest(f"unsupported MCP-Protocol-Version {header!r} (supported: {', '.join(revisions.KNOWN)})")
    if negotiated is not None and header != negotiated and not is_initialize(message):
        raise InvalidRequest(f"MCP-Protocol-Version {header!r} is not {negotiated!r}, this session's revision")
    return header, False


def is_initialize(message: object) -> bool:
    return isinstance(message, dict) and message.get("method") == "initialize" and "id" in message


def accepted(headers: Mapping[str, str]) -> tuple[bool, bool]:
    """Whether the client accepts a JSON answer, and an SSE stream."""
    accept = {part.split(";")[0].strip().lower() for part in headers.get("accept", "").split(",") if part.strip()}
    return bool(accept & {"application/json", "application/*", "*/*"}), bool(
        accept & {"text/event-stream", "text/*", "*/*"}
    )


def asks_progress(message: object) -> bool:
    params = message.get("params") if isinstance(message, dict) else None
    meta = params.get("_meta") if isinstance(params, dict) else None
    return isinstance(meta, dict) and jsonrpc.is_id(meta.get("progressToken"))


def status(reply: Reply, modern: bool) -> int:
    """200, or for an error: 400 when the body was no usable request, and what 2026-07-28 names."""
    if reply.error is None:
        return 200
    if reply.null_id:
        return 400
    return MODERN_ERROR_STATUS.get(reply.error, 200) if modern else 200


def _header_value(value: str | None) -> str | None:
    """An Mcp-Name value, decoding the ``=?base64?...?=`` form used for non-ASCII names."""
    if value is None:
        return None
    match = re.fullmatch(r"=\?base64\?(.*)\?=", value)
    if match is None:
        return value
    try:
        return base64.b64decode(match.group(1), validate=True).decode("utf-8")
    except (ValueError, UnicodeDecodeError):
        return None


__all__ = ["HEADER_MISMATCH", "Mismatch", "accepted", "asks_progress", "is_initialize", "revision", "status"]
