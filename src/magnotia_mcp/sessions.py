"""Streamable HTTP sessions (revisions up to 2025-11-25): an id per ``initialize``, its revision, bounded.

A session here holds only what ``initialize`` negotiated: the revision, which then applies to
requests that carry the id without an ``MCP-Protocol-Version`` header. Requests are answered
the same with or without one (a client that ignores the header is served statelessly); what a
session adds is that the client can end it (DELETE) and that an ended or unknown id gets 404,
which tells a client to initialize again.

Memory only, lost on restart (clients re-initialize on 404). At most ``MAX_SESSIONS``; past
that the least recently used is dropped, so a client that never sends DELETE cannot grow the
server. The id is random (not derived from anything) but it is not a credential: the bearer
token is, and it is checked before a session is looked at.
"""

from __future__ import annotations

import secrets
from collections import OrderedDict

MAX_SESSIONS = 1024


class Sessions:
    """Live session ids and the revision each negotiated, least recently used first."""

    def __init__(self, limit: int = MAX_SESSIONS) -> None:
        self.limit = limit
        self.live: OrderedDict[str, str] = OrderedDict()

    @staticmethod
    def new_id() -> str:
        """A fresh id: 32 URL-safe characters (visible ASCII, as the transport spec requires)."""
        return secrets.token_urlsafe(24)

    def open(self, session_id: str, revision: str) -> None:
        self.live[session_id] = revision
        self.live.move_to_end(session_id)
        while len(self.live) > self.limit:
            self.live.popitem(last=False)

    def revision(self, session_id: str) -> str | None:
        """The session's revision (marking it used), or None if it is unknown or ended."""
        revision = self.live.get(session_id)
        if revision is not None:
            self.live.move_to_end(session_id)
        return revision

    def end(self, session_id: str) -> bool:
        return self.live.pop(session_id, None) is not None

    def __len__(self) -> int:
        return len(self.live)


__all__ = ["MAX_SESSIONS", "Sessions"]
