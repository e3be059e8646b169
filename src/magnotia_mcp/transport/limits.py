"""Bounds both transports share, so neither imports the other.

``MAX_LINE_BYTES`` bounds one message: a stdio line, an HTTP body. ``MAX_PENDING``
bounds the calls that run at once: on one stdio connection, over all HTTP requests.
"""

from __future__ import annotations

# A request is a few hundred bytes (a search query is at most 500 characters); a message
# is parsed whole, and a MiB of JSON can take 5-8 MiB parsed, so this is also a bound
# on memory (``stdio`` lets the requests in flight add up to one such line).
MAX_LINE_BYTES = 1024 * 1024

# Calls in flight at most. The store lends 2 readers: 2 calls run, and up to 6 wait
# their turn, so a reader freed by one call goes straight to the next without a
# round trip to stdin, and calls that never reach the store (a bad argument, an
# unknown tool) do not queue behind ones that do. More would not run any sooner:
# it would only hold more requests, and their answers, in memory (a pending call
# costs ~6 KB, an answer up to ~1.4 MB: 20,000 pipelined calls peak at 38 MiB,
# calls with the largest answers at 52 MiB; 45 MiB with 2 slots, 49 with 4).
MAX_PENDING = 8

__all__ = ["MAX_LINE_BYTES", "MAX_PENDING"]
