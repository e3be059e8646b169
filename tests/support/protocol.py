"""The protocol revisions the server speaks, and the names and fields the tests expect from it."""

from __future__ import annotations

from typing import Any

LEGACY = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
MODERN = "2026-07-28"
REVISIONS = (*LEGACY, MODERN)
LATEST_LEGACY = LEGACY[-1]

META_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
META_CLIENT_INFO = "io.modelcontextprotocol/clientInfo"
META_SERVER_INFO = "io.modelcontextprotocol/serverInfo"

TOOL_NAMES = ("list_transcripts", "get_transcript", "search_transcripts", "list_tasks")
PROMPT_NAMES = ("summarize_transcript", "action_items", "review_meetings")
URI_PREFIX = "magnotia://transcripts/"
URI_TEMPLATE = URI_PREFIX + "{id}"


def at_least(revision: str, first: str) -> bool:
    """Whether revision is first or newer (by position, never by string order)."""
    return REVISIONS.index(revision) >= REVISIONS.index(first)


def modern_meta(version: str = MODERN, **extra: Any) -> dict[str, Any]:
    """The per-request _meta of the 2026-07-28 revision."""
    return {
        META_VERSION: version,
        META_CAPABILITIES: {},
        META_CLIENT_INFO: {"name": "magnotia-tests", "version": "0"},
        **extra,
    }
