"""magnotia_mcp.protocol.revisions: which protocol revision has which feature.

This file is the one place at unit level that says which revisions have each
feature in ``revisions.FEATURES``, written per revision from the specification
rather than copied from the table's first/last form. The tests of the modules
that act on a feature (server, methods, tools) ask ``has()`` and check that
they follow it; they never restate which revisions those are.
"""

from __future__ import annotations

import pytest

from magnotia_mcp.protocol import revisions
from magnotia_mcp.protocol.revisions import FEATURES, KNOWN, LATEST_LEGACY, LEGACY, MODERN, has

_INITIALIZE_ERA = {"handshake", "ping"}
_SINCE_2025_03_26 = {"tool_annotations", "completions_capability", "progress_message"}
_SINCE_2025_06_18 = {"titles", "structured_content", "completion_context", "resource_links"}
_SINCE_2025_11_25 = {"tool_errors_as_results"}
_SINCE_2026_07_28 = {
    "discover",
    "result_type",
    "cache_hints",
    "server_info_in_meta",
    "resource_not_found_is_invalid_params",
}

# What each revision of the specification has, of the differences this server acts on.
SPEC: dict[str, set[str]] = {
    "2024-11-05": _INITIALIZE_ERA,
    "2025-03-26": _INITIALIZE_ERA | {"batches"} | _SINCE_2025_03_26,
    "2025-06-18": _INITIALIZE_ERA | _SINCE_2025_03_26 | _SINCE_2025_06_18,
    "2025-11-25": _INITIALIZE_ERA | _SINCE_2025_03_26 | _SINCE_2025_06_18 | _SINCE_2025_11_25,
    "2026-07-28": _SINCE_2025_03_26 | _SINCE_2025_06_18 | _SINCE_2025_11_25 | _SINCE_2026_07_28,
}


def test_the_revisions_are_known_oldest_first_and_split_by_how_a_session_starts() -> None:
    """Four legacy revisions open with initialize; 2026-07-28 is the one modern revision."""
    assert tuple(SPEC) == KNOWN
    assert LEGACY == ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
    assert MODERN == ("2026-07-28",)
    assert LATEST_LEGACY == "2025-11-25"


@pytest.mark.parametrize("revision", KNOWN)
def test_each_revision_has_exactly_the_features_its_specification_has(revision: str) -> None:
    """has() answers, feature by feature, what the specification of that revision says."""
    assert {feature for feature in FEATURES if has(revision, feature)} == SPEC[revision]


def test_every_feature_is_a_span_of_known_revisions() -> None:
    """Each row names known revisions, first no later than last: a feature never has a gap."""
    assert set(FEATURES) == set().union(*SPEC.values())
    for feature, (first, last) in FEATURES.items():
        assert first in KNOWN, feature
        assert last is None or KNOWN.index(first) <= KNOWN.index(last), feature
        having = [r for r in KNOWN if has(r, feature)]
        assert having == list(KNOWN[KNOWN.index(having[0]) : KNOWN.index(having[-1]) + 1]), feature


@pytest.mark.parametrize("revision", ["2099-01-01", "2025-11-26", "", "2025-11-25 "])
def test_an_unknown_revision_has_no_answer_rather_than_counting_as_newer(revision: str) -> None:
    """has() refuses a revision it does not know instead of comparing dates as strings."""
    with pytest.raises(ValueError):  # noqa: PT011 - has() lets tuple.index's own ValueError through
        has(revision, "titles")


def test_an_unknown_feature_is_a_bug_not_false() -> None:
    """Asking for a feature the table does not have fails loudly."""
    with pytest.raises(KeyError):
        revisions.has(LATEST_LEGACY, "no_such_feature")
