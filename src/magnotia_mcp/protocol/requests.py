"""One request: what it carries, the revision it speaks, and how its result and its failure look on the wire.

``Server`` decides each message with these; nothing here tracks what is in flight.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from magnotia_mcp import __version__, log
from magnotia_mcp.errors import InvalidParams, ProtocolError, ResourceNotFound, UnsupportedProtocolVersion
from magnotia_mcp.protocol import jsonrpc, revisions
from magnotia_mcp.protocol.jsonrpc import JSON, NOTIFICATION, Reply, RequestId
from magnotia_mcp.protocol.revisions import has

Send = Callable[[bytes, Reply], None]
Progress = Callable[[int, int | None, str], None]

META_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
META_SERVER_INFO = "io.modelcontextprotocol/serverInfo"
SERVER_NAME = "magnotia-mcp"
SERVER_TITLE = "Magnotia"


def server_info(revision: str) -> JSON:
    """serverInfo as revision has it."""
    info: JSON = {"name": SERVER_NAME, "version": __version__}
    if has(revision, "titles"):
        info["title"] = SERVER_TITLE
    return info


class Request(NamedTuple):
    """One request being handled: its params, the revision it speaks, and where its messages go."""

    id: RequestId
    method: str
    params: JSON
    revision: str
    send: Send

    def progress_sink(self) -> Progress | None:
        """A callback sending notifications/progress, if the client asked for progress."""
        meta = self.params.get("_meta")
        token = meta.get("progressToken") if isinstance(meta, dict) else None
        if not jsonrpc.is_id(token):
            return None
        send, with_message = self.send, has(self.revision, "progress_message")
        sent = 0  # progress MUST increase: a repeated or smaller value is not sent

        def report(progress: int, total: int | None, message: str) -> None:
            nonlocal sent
            if progress <= sent:
                return
            sent = progress
            params: JSON = {"progressToken": token, "progress": progress}
            if total is not None:
                params["total"] = total
            if with_message:
                params["message"] = message
            send(jsonrpc.encode(jsonrpc.notification("notifications/progress", params)), NOTIFICATION)

        return report


def failure(request_id: RequestId, method: str, revision: str, exc: Exception) -> JSON:
    """The one place where an exception becomes a JSON-RPC error."""
    if isinstance(exc, ResourceNotFound) and has(revision, "resource_not_found_is_invalid_params"):
        return jsonrpc.error(request_id, InvalidParams(exc.message, exc.data))
    if isinstance(exc, ProtocolError):
        return jsonrpc.error(request_id, exc)
    # A bug must cost one response, never the connection.
    log.error(f"internal error in {method}: {exc!r}")
    return jsonrpc.error(request_id, ProtocolError(f"internal error: {exc}"))


def revision_for(method: str, params: JSON, legacy_revision: str | None) -> str:
    """The revision a request speaks: its _meta's, what initialize negotiates, or the one agreed (legacy)."""
    meta = params.get("_meta")
    if isinstance(meta, dict) and META_VERSION in meta:
        version = meta[META_VERSION]
        if META_CAPABILITIES not in meta:
            raise InvalidParams(f"invalid params: _meta needs {META_CAPABILITIES} (an object, {{}} for none)")
        if not isinstance(version, str):
            raise InvalidParams(f"invalid params: _meta {META_VERSION} must be a string")
        if version not in revisions.MODERN:
            raise UnsupportedProtocolVersion(
                "Unsupported protocol version", {"supported": list(revisions.MODERN), "requested": version}
            )
        return version
    if method == "server/discover":
        raise InvalidParams(
            f"invalid params: server/discover needs params._meta with {META_VERSION} "
            f"(supported: {', '.join(revisions.MODERN)}); legacy clients start with initialize"
        )
    if method == "initialize":
        return revisions.negotiate(params.get("protocolVersion"))
    # Before initialize, be lenient and speak the newest legacy revision.
    return legacy_revision or revisions.LATEST_LEGACY


def finish(result: JSON, revision: str) -> JSON:
    """Add what the revision requires on every result."""
    if has(revision, "result_type"):
        result.setdefault("resultType", "complete")
    if has(revision, "server_info_in_meta"):
        result.setdefault("_meta", {})[META_SERVER_INFO] = server_info(revision)
    return result


__all__ = [
    "META_CAPABILITIES",
    "META_SERVER_INFO",
    "META_VERSION",
    "SERVER_NAME",
    "SERVER_TITLE",
    "Progress",
    "Request",
    "Send",
    "failure",
    "finish",
    "revision_for",
    "server_info",
]
