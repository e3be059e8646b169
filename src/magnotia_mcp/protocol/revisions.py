"""The MCP protocol revisions this server speaks, and what each one has.

Revisions are compared by their position in ``KNOWN`` (oldest first), never
by string order, and an unknown string is never "newer": the only way in is
an exact match. Every difference between revisions that the server acts on
is one row of ``FEATURES``, so no handler compares versions itself.
"""

from __future__ import annotations

KNOWN = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28")
# Legacy revisions open with `initialize`; modern ones put the revision in each request's _meta.
LEGACY = KNOWN[:4]
MODERN = KNOWN[4:]
LATEST_LEGACY = LEGACY[-1]

# feature: (first revision that has it, last revision that has it or None for "still there")
FEATURES: dict[str, tuple[str, str | None]] = {
    "handshake": ("2024-11-05", "2025-11-25"),  # initialize / notifications/initialized
    "ping": ("2024-11-05", "2025-11-25"),
    "batches": ("2025-03-26", "2025-03-26"),  # JSON arrays of requests
    "tool_annotations": ("2025-03-26", None),
    "completions_capability": ("2025-03-26", None),
    "progress_message": ("2025-03-26", None),
    "titles": ("2025-06-18", None),  # title on tools, prompts, resources, serverInfo
    "structured_content": ("2025-06-18", None),  # outputSchema + structuredContent
    "completion_context": ("2025-06-18", None),
    "resource_links": ("2025-06-18", None),  # resource_link content blocks
    "tool_errors_as_results": ("2025-11-25", None),  # invalid arguments -> isError result
    "discover": ("2026-07-28", None),  # server/discover
    "result_type": ("2026-07-28", None),  # resultType on every result
    "cache_hints": ("2026-07-28", None),  # ttlMs + cacheScope on lists and reads
    "server_info_in_meta": ("2026-07-28", None),
    "resource_not_found_is_invalid_params": ("2026-07-28", None),  # -32602 instead of -32002
}


def has(revision: str, feature: str) -> bool:
    """Whether revision (one of KNOWN) has feature."""
    first, last = FEATURES[feature]
    at = KNOWN.index(revision)
    return KNOWN.index(first) <= at and (last is None or at <= KNOWN.index(last))


def negotiate(requested: object) -> str:
    """The legacy revision to answer `initialize` with: the one asked for if known, else the latest."""
    return requested if isinstance(requested, str) and requested in LEGACY else LATEST_LEGACY
