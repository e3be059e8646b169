"""The session table's rule (sessions.py), against a model of it, over any sequence of what clients do.

tests/security/test_http_sessions.py shows the rule over real sockets for the cases that matter;
here hypothesis tries orders no one would write by hand, on a table of 4.
"""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from magnotia_mcp.transport.http.sessions import Sessions

LIMIT = 4
IDS = [f"s{n}" for n in range(8)]
# (what, which session): open a session, begin or finish one of its requests, end it (DELETE).
STEPS = st.lists(st.tuples(st.sampled_from(["open", "enter", "leave", "end"]), st.sampled_from(IDS)), max_size=60)


# The case a flood meets: a full table of used sessions whose least recently used one has a call in flight.
BUSY_IS_LRU = [
    *(("open", s) for s in IDS[:4]),
    ("enter", "s0"),
    *(step for s in IDS[1:4] for step in (("enter", s), ("leave", s))),
    ("open", "s4"),
]


@settings(max_examples=300, derandomize=True)
@given(STEPS)
@example(BUSY_IS_LRU)
def test_fresh_sessions_go_first_then_the_least_recently_used_idle_one_never_a_busy_one(
    steps: list[tuple[str, str]],
) -> None:
    table = Sessions(limit=LIMIT)
    fresh: list[str] = []  # oldest first
    used: list[str] = []  # least recently used first
    busy: dict[str, int] = {}
    for what, sid in steps:
        if what == "open":
            if sid in fresh or sid in used:
                continue  # ids are random and never reused
            if len(fresh) + len(used) >= LIMIT:
                idle = [s for s in used if not busy.get(s)]
                if fresh:
                    gone = fresh.pop(0)
                elif idle:
                    gone = idle[0]
                    used.remove(gone)
                else:
                    assert table.open(sid, "2025-11-25") is False, "a table of busy sessions opened one more"
                    continue
                assert gone not in busy or not busy[gone]
            assert table.open(sid, "2025-11-25") is True
            fresh.append(sid)
        elif what == "enter":
            live = sid in fresh or sid in used
            assert table.enter(sid) == ("2025-11-25" if live else None)
            if live:
                if sid in fresh:
                    fresh.remove(sid)
                else:
                    used.remove(sid)
                used.append(sid)
                busy[sid] = busy.get(sid, 0) + 1
        elif what == "leave":
            if busy.get(sid):
                table.leave(sid)
                busy[sid] -= 1
        else:
            live = sid in fresh or sid in used
            assert table.end(sid) is live
            fresh = [s for s in fresh if s != sid]
            used = [s for s in used if s != sid]
            busy.pop(sid, None)
        assert len(table) <= LIMIT
        assert sorted(s for s in IDS if s in table) == sorted(fresh + used)
