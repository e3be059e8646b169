"""Open an official-SDK client session at a chosen legacy protocol revision."""

from __future__ import annotations

import mcp_types as types
from mcp import ClientSession


async def initialize_at(session: ClientSession, version: str) -> None:
    """Send initialize asking for version, adopt the answer, send initialized (the SDK's low-level path)."""
    init = await session.send_request(
        types.InitializeRequest(
            params=types.InitializeRequestParams(
                protocol_version=version,
                capabilities=types.ClientCapabilities(),
                client_info=types.Implementation(name="magnotia-tests", version="0"),
            )
        ),
        types.InitializeResult,
    )
    session.adopt(init)
    await session.send_notification(types.InitializedNotification())
