"""Run magnotia-mcp with its time words ("yesterday", "last week", "7d") read against the store's fixed "now".

The server has no setting for "now": it reads the clock where arguments are checked (``args.checks``) and where
time words are resolved (``args.timewords``). This launcher gives both modules a ``datetime`` whose ``now()`` is
``planted.NOW``, then runs the server's own command line unchanged; everything else is the real server.
tests/unit/test_assistant_tools.py checks that "yesterday" means the day before ``NOW`` through it.

    python -m devkit.assistant.clock --db STORE      # the arguments of `magnotia-mcp`
"""

from __future__ import annotations

import sys
from datetime import datetime, tzinfo

from devkit.assistant.planted import NOW
from magnotia_mcp.args import checks, timewords
from magnotia_mcp.cli import main as serve


class FixedClock(datetime):
    """datetime whose now() is the store's now."""

    @classmethod
    def now(cls, tz: tzinfo | None = None) -> FixedClock:
        moment = NOW.astimezone(tz) if tz is not None else NOW.replace(tzinfo=None)
        return cls.fromtimestamp(moment.timestamp(), tz) if tz is not None else cls.fromisoformat(moment.isoformat())


def main(argv: list[str] | None = None) -> int:
    for module in (checks, timewords):
        setattr(module, "datetime", FixedClock)  # noqa: B010  (mypy: the modules do not export the name)
    return serve(argv if argv is not None else sys.argv[1:])


if __name__ == "__main__":
    raise SystemExit(main())
