"""What the semantic index answers a query with: the transcripts nearest it, and the chunks of each to cite.

Plain types, no numpy: the search's plan names them without loading the semantic extra.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple


class Chunk(NamedTuple):
    score: float
    kind: int
    first_seq: int | None  # the segments the window spans (None for a title or text without segments)
    last_seq: int | None


class Found:
    """A transcript near the query: its id, its best chunk's cosine, and its best chunks, best first.

    The chunks may be given as a function that picks them when first asked for: a search asks the index
    for 4 transcripts a hit and cites only the hits it shapes (in-process at 10k, picking the chunks of
    all 40 took 1.5 ms of the index's part of a search, on the thread the search waits for).
    """

    __slots__ = ("_chunks", "_pick", "doc", "score")

    def __init__(self, doc: str, score: float, chunks: list[Chunk] | Callable[[], list[Chunk]]) -> None:
        self.doc = doc
        self.score = score
        self._chunks: list[Chunk] | None = None if callable(chunks) else chunks
        self._pick: Callable[[], list[Chunk]] | None = chunks if callable(chunks) else None

    @property
    def chunks(self) -> list[Chunk]:
        if self._chunks is None:
            assert self._pick is not None
            self._chunks, self._pick = self._pick(), None
        return self._chunks

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Found):
            return NotImplemented
        return (self.doc, self.score, self.chunks) == (other.doc, other.score, other.chunks)

    __hash__ = None  # type: ignore[assignment]  # equal by value, and mutable (its chunks are filled in)

    def __repr__(self) -> str:
        return f"Found({self.doc!r}, {self.score!r}, {self.chunks!r})"


class Near(NamedTuple):
    """What a search gets from the index: the transcripts nearest the query, and which of some texts is nearest it.

    closest(groups): for each group of texts (a window's segments), the index of the one nearest the query.
    """

    found: list[Found]
    closest: Callable[[list[list[str]]], list[int]]
