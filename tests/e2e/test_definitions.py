"""What the tools' definitions cost: a host sends every tool's name, description and input schema with every request
of a conversation, so they are held to 1,500 tokens by both real tokenizers (tests/support/tokencount.py). What they
leave out, the server's instructions say once: the forms of a time, and how to search well."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from magnotia_mcp.tools.schema import TIME_HELP
from tests.support import tokencount
from tests.support.server import ServerProcess

DEFINITIONS_TOKENS = 1_500


def test_the_definitions_cost_at_most_1500_tokens_and_the_instructions_say_the_rest(
    start_server: Callable[..., ServerProcess],
) -> None:
    if tokencount.missing() is not None:
        pytest.skip(f"real tokenizers: {tokencount.missing()}")
    server = start_server(None, "--demo")
    opened = server.open("2025-06-18")
    tools = server.request("tools/list")["result"]["tools"]
    assert {t["name"] for t in tools} == {"list_transcripts", "get_transcript", "search_transcripts", "list_tasks"}
    sent = json.dumps([{k: t[k] for k in ("name", "description", "inputSchema")} for t in tools])
    [(o200k, claude)] = tokencount.counts([sent])
    assert max(o200k, claude) <= DEFINITIONS_TOKENS, (o200k, claude)
    # The time grammar is said once, in the instructions; each time argument names its common forms.
    instructions = opened["instructions"]
    assert TIME_HELP in instructions
    for word in ("OR", "transcript_id", "speaker", "list_tasks"):
        assert word in instructions
    times = [p for t in tools for name, p in t["inputSchema"]["properties"].items() if name in ("since", "due_before")]
    assert len(times) == 3
    assert all("yesterday" in p["description"] and "RFC 3339" in p["description"] for p in times)
