"""The benchmark's check that the server listed what the floor did (benchmarks/measure.py: same_listing).

The server fits pages to its token budget and hands out the rest by cursor, so its pages are shorter
than the floor's: the check compares the ids as one sequence. Here it is held to catching what it exists
for (another order, a missing or extra id, a tail dropped by a side that said it was done) and to passing
budget-fitted pages of the same listing.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
IDS = [f"t{i}" for i in range(50)]


@pytest.fixture(scope="module")
def measure() -> ModuleType:
    with pytest.MonkeyPatch.context() as patch:
        patch.syspath_prepend(str(BENCHMARKS))
        return importlib.import_module("measure")


def pages(ids: list[str], size: int) -> list[list[str]]:
    return [ids[i : i + size] for i in range(0, len(ids), size)]


def test_budget_fitted_pages_of_the_same_listing_agree(measure: ModuleType) -> None:
    # Two floor pages of 20; the server's three pages of 17 cover more of the same order.
    assert measure.same_listing(pages(IDS, 17), pages(IDS[:40], 20), server_ended=False, floor_ended=False)
    # Both listed everything there is.
    assert measure.same_listing(pages(IDS, 17), pages(IDS, 20), server_ended=True, floor_ended=True)
    # Stopped after the same number of pages, the server (shorter pages) short of the floor, with a cursor left.
    assert measure.same_listing(pages(IDS[:34], 17), pages(IDS[:40], 20), server_ended=False, floor_ended=False)
    assert measure.same_listing([[]], [[]], server_ended=True, floor_ended=True)  # an empty listing


def test_another_order_or_another_id_disagrees(measure: ModuleType) -> None:
    swapped = [IDS[1], IDS[0], *IDS[2:40]]
    assert not measure.same_listing(pages(swapped, 17), pages(IDS[:40], 20), server_ended=False, floor_ended=False)
    other = [*IDS[:10], "stranger", *IDS[11:40]]
    assert not measure.same_listing(pages(other, 17), pages(IDS[:40], 20), server_ended=False, floor_ended=False)


def test_a_side_that_said_it_was_done_must_not_have_listed_less(measure: ModuleType) -> None:
    # The server ended (no cursor) after 45 of the 50 ids the floor listed: its tail was dropped.
    assert not measure.same_listing(pages(IDS[:45], 17), pages(IDS, 20), server_ended=True, floor_ended=True)
    # The floor ended after 45 while the server listed 50: the server listed ids that are not there.
    assert not measure.same_listing(pages(IDS, 17), pages(IDS[:45], 20), server_ended=True, floor_ended=True)
    # A server page of nothing at all (None: no page key) with no cursor, against a floor that listed some.
    assert not measure.same_listing([None], pages(IDS[:20], 20), server_ended=True, floor_ended=False)


def test_an_empty_page_against_a_listing_disagrees_even_with_a_cursor_left(measure: ModuleType) -> None:
    assert not measure.same_listing([[]], pages(IDS[:20], 20), server_ended=False, floor_ended=False)
    assert not measure.same_listing(pages(IDS[:20], 17), [[]], server_ended=False, floor_ended=False)
