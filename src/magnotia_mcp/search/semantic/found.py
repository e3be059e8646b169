"""What the semantic index answers a query with: the transcripts nearest it, and the chunks of each to cite.

Plain types, no numpy: the search's plan names them without loading the semantic extra.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from magnotia_mcp.store.hits import Contents


class Chunk(NamedTuple):
    score: float
    kind: int
    first_seq: int | None  # the segments the window spans (None for a title or text without segments)
    last_seq: int | None
    piece: int | None = None  # a window of text without segments: which of its text's pieces (chunks.piece)


CITED = 3  # chunks cited per transcript, as moments
STALE = -1  # a mark no transcript has (Python's hash is never -1): a stamp the index holds but cannot read


def mark(updated_at: str, formatted: bool, segments: int) -> int:
    """What a transcript's windows were cut from, in brief: its ``updated_at``, whether it has a formatted text,
    and how many segments it has.

    The parts of the index's stamp a search can read without reading a text: a transcript edited since it was
    indexed (the app sets ``updated_at``; a new transcription renumbers segments; a dictation formatted since
    is embedded from its formatted text, whether or not the formatting set ``updated_at``) no longer has its mark.
    """
    return hash((updated_at, formatted, segments))


class Found:
    """A transcript near the query: its id, its best chunk's cosine, and its chunks that match, best first.

    The chunks may be given as a function that scores them when first asked for (``pick(n)``: the n best, or
    all for None): a search asks the index for 4 transcripts a hit and cites only the hits it shapes, each
    by its CITED best chunks; only a search restricted to a speaker looks at all of them.

    mark: the transcript's ``mark`` as it was when the index embedded it; None when it was scored just now, from
    what the store holds.
    """

    __slots__ = ("_chunks", "_pick", "_windows", "doc", "mark", "score")

    def __init__(
        self,
        doc: str,
        score: float,
        windows: list[Chunk] | Callable[[int | None], list[Chunk]],
        mark: int | None = None,
    ) -> None:
        self.doc = doc
        self.score = score
        self.mark = mark
        self._pick: Callable[[int | None], list[Chunk]] | None = windows if callable(windows) else None
        self._windows: list[Chunk] | None = None if callable(windows) else windows
        self._chunks: list[Chunk] | None = None if self._windows is None else self._windows[:CITED]

    @property
    def windows(self) -> list[Chunk]:
        """Every chunk of it that matches (at the index's floor or above), best first."""
        if self._windows is None:
            assert self._pick is not None
            self._windows = self._pick(None)
        return self._windows

    @property
    def chunks(self) -> list[Chunk]:
        """The chunks a hit cites: its CITED best."""
        if self._chunks is None:
            assert self._pick is not None
            self._chunks = self._windows[:CITED] if self._windows is not None else self._pick(CITED)
        return self._chunks

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Found):
            return NotImplemented
        return (self.doc, self.score, self.windows) == (other.doc, other.score, other.windows)

    __hash__ = None  # type: ignore[assignment]  # equal by value, and mutable (its chunks are filled in)

    def __repr__(self) -> str:
        return f"Found({self.doc!r}, {self.score!r}, {self.windows!r})"


class Near(NamedTuple):
    """What a search gets from the index: the transcripts nearest the query, and which of some texts is nearest it.

    closest(groups): for each group of texts (a window's segments), the index of the one nearest the query.
    again(doc, contents): the transcript scored as it reads now, not as the index embedded it: None when none
    of its chunks is near enough to match (a slow call: it embeds the whole transcript).
    among(ids, limit): the same query's nearest limit among those transcripts only (a worker thread's call: it
    scores their windows), for a filter that leaves too few of found.
    more: whether the index may hold more transcripts near enough to match than found (it found all it was
    asked for); when not, found is every one that matches.
    speaker: when the index was asked for a speaker's nearest and lists who spoke where, that speaker (a folded
    label): found (and among's) are then nearest by the windows they spoke in, each as near as its best of those.
    None: by all windows.
    """

    found: list[Found]
    closest: Callable[[list[list[str]]], list[int]]
    again: Callable[[str, Contents], Found | None]
    among: Callable[[Collection[str], int], Near] | None = None
    more: bool = False
    speaker: str | None = None
