"""The text block of a tool result: readable JSON, one list item per line, the same data as structuredContent."""

from __future__ import annotations

import json
from typing import Any

import pytest

from magnotia_mcp.dispatch import result_text


@pytest.mark.parametrize(
    "result",
    [
        pytest.param({"transcripts": [], "next_cursor": None}, id="empty-page"),
        pytest.param(
            {"transcripts": [{"id": "a", "title": 'say "hi" é 🎉', "n": 1.5}, {"id": "b"}], "next_cursor": "c"},
            id="page",
        ),
        pytest.param({"id": "x", "text": "line one\nline two", "segments": [{"seq": 0}], "tasks": []}, id="nested"),
        pytest.param({}, id="no-fields"),
    ],
)
def test_the_text_is_json_equal_to_the_structured_result(result: dict[str, Any]) -> None:
    """Parsing the text gives back exactly the result object."""
    assert json.loads(result_text(result)) == result


def test_each_field_and_each_list_item_has_its_own_line() -> None:
    """A page of n items is n + 5 lines (braces, list brackets, next_cursor): no line per leaf value."""
    items = [{"id": str(i), "title": f"t{i}", "preview": "p"} for i in range(50)]
    text = result_text({"transcripts": items, "next_cursor": None})
    lines = text.splitlines()
    assert len(lines) == 50 + 5
    assert lines[0] == "{"
    assert lines[-1] == "}"
    assert lines[2] == '    {"id": "0", "title": "t0", "preview": "p"},'
