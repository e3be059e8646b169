"""Streamable HTTP sessions (revisions up to 2025-11-25): an id per ``initialize``, its revision, bounded.

A session here holds only what ``initialize`` negotiated: the revision, which then applies to
requests that carry the id without an ``MCP-Protocol-Version`` header. Requests are answered
the same with or without one (a client that ignores the header is served statelessly); what a
session adds is that the client can end it (DELETE), that its calls can be cancelled from it
(``notifications/cancelled``), and that an ended or unknown id gets 404, which tells a client
to initialize again.

Memory only, lost on restart (clients re-initialize on 404). At most ``MAX_SESSIONS``, so a
client that never sends DELETE cannot grow the server. When ``initialize`` finds the table
full, one session makes way, chosen so that a flood of sessions costs the flooder first:

1. the oldest session that has made no request since its ``initialize`` (fresh);
2. else the least recently used session with no request in flight (idle);
3. never a session with a request in flight: if every one has, the new session is not opened
   (its ``initialize`` is answered without a session id, and the client goes on statelessly).

So a client that has sent even ``notifications/initialized`` survives any number of fresh
``initialize`` calls, and one whose call is running survives anything. The id is random (not
derived from anything) but it is not a credential: the bearer token is, and it is checked
before a session is looked at.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass

from magnotia_mcp.lru import LRU

MAX_SESSIONS = 1024


@dataclass
class _Session:
    revision: str
    busy: int = 0  # requests of this session being answered now


class Sessions:
    """Live session ids and what each holds: fresh ones oldest first, used ones least recently used first."""

    def __init__(self, limit: int = MAX_SESSIONS) -> None:
        self.limit = limit
        self.fresh: LRU[str, _Session] = LRU()  # no request since initialize; never touched: oldest first
        self.used: LRU[str, _Session] = LRU()

    @staticmethod
    def new_id() -> str:
        """A fresh id: 32 URL-safe characters (visible ASCII, as the transport spec requires)."""
        return secrets.token_urlsafe(24)

    def open(self, session_id: str, revision: str) -> bool:
        """Open a session, ending another if the table is full; False (nothing opened) if all are busy."""
        if len(self) >= self.limit and not self._make_way():
            return False
        self.fresh.put(session_id, _Session(revision))
        return True

    def _make_way(self) -> bool:
        if self.fresh:
            self.fresh.pop_oldest()
            return True
        idle = next((sid for sid, session in self.used.items() if not session.busy), None)
        if idle is None:
            return False
        self.used.pop(idle)
        return True

    def enter(self, session_id: str) -> str | None:
        """A request of the session begins: its revision (None if unknown or ended); call ``leave`` after it."""
        session = self.fresh.pop(session_id) or self.used.peek(session_id)
        if session is None:
            return None
        self.used.put(session_id, session)
        session.busy += 1
        return session.revision

    def leave(self, session_id: str) -> None:
        """The request ``enter`` began is answered (a session ended meanwhile is not brought back)."""
        session = self.used.peek(session_id)
        if session is not None and session.busy:
            session.busy -= 1

    def end(self, session_id: str) -> bool:
        return (self.fresh.pop(session_id) or self.used.pop(session_id)) is not None

    def __contains__(self, session_id: object) -> bool:
        return session_id in self.fresh or session_id in self.used

    def __len__(self) -> int:
        return len(self.fresh) + len(self.used)


__all__ = ["MAX_SESSIONS", "Sessions"]
