"""A least-recently-used table: the store's layout cache and the HTTP session table keep their entries in one."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable, Iterator
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class LRU(Generic[K, V]):
    """Entries least recently used first; over ``size`` of them (None: no bound), the least recent goes."""

    __slots__ = ("_entries", "size")

    def __init__(self, size: int | None = None) -> None:
        self.size = size
        self._entries: OrderedDict[K, V] = OrderedDict()

    def get(self, key: K) -> V | None:
        """The value under key, now the most recently used; None if there is none."""
        if key not in self._entries:
            return None
        self._entries.move_to_end(key)
        return self._entries[key]

    def peek(self, key: K) -> V | None:
        """The value under key, leaving the order as it is; None if there is none."""
        return self._entries.get(key)

    def put(self, key: K, value: V) -> None:
        """Store value under key as the most recently used, dropping the least recent ones over size."""
        self._entries[key] = value
        self._entries.move_to_end(key)
        if self.size is not None:
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)

    def pop(self, key: K) -> V | None:
        """Remove key and return its value; None if there is none."""
        return self._entries.pop(key, None)

    def pop_oldest(self) -> tuple[K, V]:
        """Remove and return the least recently used entry (KeyError if empty)."""
        return self._entries.popitem(last=False)

    def items(self) -> Iterator[tuple[K, V]]:
        """The entries, least recently used first."""
        return iter(self._entries.items())

    def __contains__(self, key: object) -> bool:
        return key in self._entries

    def __len__(self) -> int:
        return len(self._entries)
