"""lru.LRU: the order the layout cache and the HTTP session table rely on."""

from __future__ import annotations

from magnotia_mcp.lru import LRU


def test_the_least_recently_used_entry_goes_first_and_peek_leaves_the_order() -> None:
    table: LRU[str, int] = LRU(3)
    for n, key in enumerate("abc"):
        table.put(key, n)
    assert table.get("a") == 0  # a is now the most recent
    assert table.peek("b") == 1  # b stays the least recent
    table.put("d", 3)
    assert [key for key, _ in table.items()] == ["c", "a", "d"]
    assert "b" not in table
    assert table.get("b") is None
    table.put("c", 9)  # replacing an entry uses it
    assert [key for key, _ in table.items()] == ["a", "d", "c"]


def test_unbounded_pop_and_pop_oldest() -> None:
    table: LRU[int, str] = LRU()
    for n in range(100):
        table.put(n, str(n))
    assert len(table) == 100
    assert table.pop(50) == "50"
    assert table.pop(50) is None
    assert table.pop_oldest() == (0, "0")
    assert len(table) == 98
