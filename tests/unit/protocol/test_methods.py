"""magnotia_mcp.protocol.methods: the method table, and what each method's result has in each revision.

Requests go through ``Server.submit`` on ``new_server``, as a client's would.
Which revisions have which feature is asserted once, in test_revisions; here
each feature the method handlers act on is checked against ``has()`` in every
known revision. The static methods run on a store factory that fails the test
if called; the ones that read the user's data get a real store.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from devkit.storefactory import StoreBuilder
from magnotia_mcp.errors import INVALID_PARAMS, METHOD_NOT_FOUND
from magnotia_mcp.protocol import revisions
from magnotia_mcp.protocol.methods import METHODS, STATIC_TTL_MS
from magnotia_mcp.protocol.requests import META_SERVER_INFO, SERVER_TITLE
from magnotia_mcp.protocol.revisions import KNOWN, has
from magnotia_mcp.protocol.server import DEFERRED
from magnotia_mcp.store.pool import Store
from tests.unit.wire import Message, Outbox, Session, answer_now, error_code, exchange, frame, only, result_of

INLINE = {"initialize", "ping", "tools/list", "prompts/list", "resources/templates/list", "server/discover"}
STATIC_LISTS = ["tools/list", "prompts/list", "resources/templates/list"]
MEETING_ID = "meeting-1"


@pytest.fixture(scope="module")
def store_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store with one meeting (and a task from it) and one dictation."""
    builder = StoreBuilder(tmp_path_factory.mktemp("methods") / "magnotia.db")
    builder.transcript(
        id=MEETING_ID,
        title="Budget review",
        source="meeting",
        raw_text="we agreed on the budget",
        created_at="2026-05-09T14:03:12.042Z",
        segments=[("Ana", "We agreed on the budget.")],
    )
    builder.task(transcript_id=MEETING_ID, title="Send the budget")
    builder.transcript(id="dictation-1", title="Shopping", raw_text="milk", created_at="2026-05-10T08:00:00.000Z")
    return builder.close()


# -- which methods are answered before the event loop -------------------------------------


def test_only_the_static_methods_are_answered_inline_and_none_of_them_opens_the_store() -> None:
    """initialize, ping, discover and the static lists are answered with no loop; the rest are deferred."""
    assert {name for name, method in METHODS.items() if method.inline} == INLINE
    legacy, modern = Session.open(revisions.LATEST_LEGACY), Session.open(revisions.MODERN[0])
    for name in sorted(INLINE):
        session = modern if name == "server/discover" else legacy
        out = Outbox()
        assert session.server.submit(frame(session.request(name)), out, inline_only=True) is None, name
        result_of(only(out.messages()))
    for name in sorted(set(METHODS) - INLINE):
        out = Outbox()
        assert legacy.server.submit(frame(legacy.request(name)), out, inline_only=True) is DEFERRED, name
        assert out.lines == [], name


# -- lifecycle ---------------------------------------------------------------------------


@pytest.mark.parametrize("revision", KNOWN)
def test_initialize_and_ping_exist_only_in_revisions_with_the_handshake(revision: str) -> None:
    """Where the revision has the handshake (and ping) they are answered; elsewhere they are unknown methods."""
    session = Session.open(revision)
    init = only(answer_now(session.server, session.request("initialize", {"protocolVersion": revision})))
    if has(revision, "handshake"):
        assert result_of(init)["protocolVersion"] == revision
    else:
        assert error_code(init) == METHOD_NOT_FOUND
    ping = only(answer_now(session.server, session.request("ping")))
    if has(revision, "ping"):
        assert result_of(ping) == {}
    else:
        assert error_code(ping) == METHOD_NOT_FOUND


@pytest.mark.parametrize("revision", KNOWN)
def test_server_discover_answers_where_the_revision_has_it(revision: str) -> None:
    """server/discover lists the modern revisions and is cacheable; a legacy session is told to use _meta."""
    session = Session.open(revision)
    reply = only(answer_now(session.server, session.request("server/discover")))
    if has(revision, "discover"):
        result = result_of(reply)
        assert result["supportedVersions"] == list(revisions.MODERN)
        assert (result["ttlMs"], result["cacheScope"]) == (STATIC_TTL_MS, "public")
        assert result["instructions"]
    else:
        assert error_code(reply) == INVALID_PARAMS


def _capabilities(session: Session) -> Message:
    if has(session.revision, "handshake"):
        init = session.request("initialize", {"protocolVersion": session.revision, "capabilities": {}})
        caps = result_of(only(answer_now(session.server, init)))["capabilities"]
    else:
        caps = result_of(only(answer_now(session.server, session.request("server/discover"))))["capabilities"]
    assert isinstance(caps, dict)
    return caps


@pytest.mark.parametrize("revision", KNOWN)
def test_capabilities_offer_what_the_table_serves_and_completions_where_the_revision_has_them(revision: str) -> None:
    """tools, resources and prompts always; completions only where the revision has that capability."""
    caps = _capabilities(Session.open(revision))
    completions = {"completions"} if has(revision, "completions_capability") else set()
    assert set(caps) == {"tools", "resources", "prompts", *completions}
    assert all(value == {} for value in caps.values())


# -- titles and cache hints on the static answers ------------------------------------------


@pytest.mark.parametrize("revision", KNOWN)
def test_titles_appear_on_every_named_thing_exactly_where_the_revision_has_them(revision: str) -> None:
    """serverInfo, tools, prompts (and their arguments) and the resource template carry a title, or none."""
    titled = has(revision, "titles")
    session = Session.open(revision)
    if has(revision, "handshake"):
        init = session.request("initialize", {"protocolVersion": revision, "capabilities": {}})
        info = result_of(only(answer_now(session.server, init)))["serverInfo"]
    else:
        info = result_of(only(answer_now(session.server, session.request("tools/list"))))["_meta"][META_SERVER_INFO]
    assert info.get("title") == (SERVER_TITLE if titled else None)
    tools = result_of(only(answer_now(session.server, session.request("tools/list"))))["tools"]
    prompts = result_of(only(answer_now(session.server, session.request("prompts/list"))))["prompts"]
    arguments = [arg for prompt in prompts for arg in prompt["arguments"]]
    templates = result_of(only(answer_now(session.server, session.request("resources/templates/list"))))
    named: list[dict[str, Any]] = [*tools, *prompts, *arguments, *templates["resourceTemplates"]]
    assert tools
    assert prompts
    assert arguments
    for item in named:
        assert ("title" in item) is titled, item
        if titled:
            assert isinstance(item["title"], str)
            assert item["title"]


@pytest.mark.parametrize("revision", KNOWN)
@pytest.mark.parametrize("method", STATIC_LISTS)
def test_static_lists_may_be_cached_for_an_hour_where_the_revision_has_cache_hints(revision: str, method: str) -> None:
    """tools, prompts and templates lists say ttlMs 3600000, public, where the revision has cache hints."""
    session = Session.open(revision)
    result = result_of(only(answer_now(session.server, session.request(method))))
    hints = (result.get("ttlMs"), result.get("cacheScope"))
    assert hints == ((STATIC_TTL_MS, "public") if has(revision, "cache_hints") else (None, None))


@pytest.mark.parametrize("method", STATIC_LISTS)
def test_a_single_page_list_refuses_a_cursor_it_never_issued(method: str) -> None:
    """The static lists have one page: any cursor is invalid params."""
    session = Session.open(revisions.LATEST_LEGACY)
    assert error_code(only(answer_now(session.server, session.request(method, {"cursor": "abc"})))) == INVALID_PARAMS


# -- the user's data: cache hints and resource links ------------------------------------------


async def _read_everything(revision: str, path: Path) -> tuple[Message, Message, Message]:
    session = Session.open(revision, Store(path))
    try:
        listed = only(await exchange(session.server, session.request("resources/list")))
        uri = f"magnotia://transcripts/{MEETING_ID}"
        read = only(await exchange(session.server, session.request("resources/read", {"uri": uri})))
        review = session.request("prompts/get", {"name": "review_meetings", "arguments": {"since": "2026-05-01"}})
        prompt = only(await exchange(session.server, review))
    finally:
        await session.server.close()
    return result_of(listed), result_of(read), result_of(prompt)


@pytest.mark.parametrize("revision", KNOWN)
def test_the_users_data_is_never_cached_and_links_to_resources_where_the_revision_has_links(
    revision: str, store_path: Path
) -> None:
    """Resource lists and reads say ttlMs 0, private (with cache hints); the review prompt links each meeting."""
    listed, read, prompt = asyncio.run(_read_everything(revision, store_path))
    for result in (listed, read):
        hints = (result.get("ttlMs"), result.get("cacheScope"))
        assert hints == ((0, "private") if has(revision, "cache_hints") else (None, None))
    assert [r["uri"] for r in listed["resources"]] == [
        "magnotia://transcripts/dictation-1",
        f"magnotia://transcripts/{MEETING_ID}",
    ]
    assert "We agreed on the budget." in read["contents"][0]["text"]
    links = [m["content"] for m in prompt["messages"] if m["content"]["type"] == "resource_link"]
    if has(revision, "resource_links"):
        assert [link["uri"] for link in links] == [f"magnotia://transcripts/{MEETING_ID}"]
        assert "linked resources" in prompt["messages"][0]["content"]["text"]
    else:
        assert links == []
        assert "linked resources" not in prompt["messages"][0]["content"]["text"]
