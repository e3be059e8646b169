"""Properties of the dispatcher: whatever one line holds, it gets exactly what JSON-RPC 2.0 asks for.

For any JSON value as a message (and any line of bytes at all): exactly one
well-formed response for a request, carrying its id (an error with id null when
the id cannot be read, -32700 for what is not UTF-8 JSON, -32600 for JSON that
is not a request); nothing at all for a notification; for a batch, nothing but
one -32600 in the revisions without batches, and one array of one response per
request in 2025-03-26; never -32603 on a healthy store; every message valid for
the revision in use (``ServerProcess`` checks each one against the official
schema); strict JSON on stdout; and the server alive and in step afterwards.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import assume, example, given
from hypothesis import strategies as st

from tests.properties.conftest import Servers, Stores, budget
from tests.properties.corpus import LIVE_IDS, TRASHED_IDS
from tests.properties.exchange import Conversation
from tests.properties.strategies import encoded, json_values, lines, messages, requests, unique_ids, weighted
from tests.support.protocol import LEGACY

IDS = [*LIVE_IDS, *TRASHED_IDS, "no-such-id"]
LEGACY_REVISIONS = st.sampled_from(LEGACY)


@pytest.fixture(scope="module")
def conversation(servers: Servers, stores: Stores) -> Conversation:
    return Conversation(servers.start(stores.fts))


@budget(150)
@given(message=messages(IDS).flatmap(encoded), revision=LEGACY_REVISIONS)
def test_any_json_message_gets_exactly_what_json_rpc_asks_for(
    conversation: Conversation, message: bytes, revision: str
) -> None:
    conversation.reset(revision)
    conversation.exchange(message)


@budget(100)
@given(line=lines(IDS), revision=LEGACY_REVISIONS)
@example(
    line=b'[{"jsonrpc":"2.0","id":1,"method":"tools/list"},{"jsonrpc":"2.0","method":"notifications/initialized"}]',
    revision="2025-03-26",
).via("a batch of a request and a notification")
def test_any_line_gets_exactly_what_json_rpc_asks_for(conversation: Conversation, line: bytes, revision: str) -> None:
    conversation.reset(revision)
    conversation.exchange(line)


@budget(100)
@given(batch=st.lists(weighted((5, requests(IDS)), (1, json_values)), min_size=1, max_size=6))
def test_a_batch_in_2025_03_26_gets_one_answer_per_request(conversation: Conversation, batch: list[Any]) -> None:
    assume(unique_ids(batch))
    conversation.reset("2025-03-26")
    conversation.exchange(json.dumps(batch).encode())
