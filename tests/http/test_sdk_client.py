"""The official Python SDK's Streamable HTTP client, with the bearer token, against ``serve --http``.

The same walk as tests/clients/test_python_sdk.py (every tool, a resource, templates, every
prompt, completions), here over HTTP: with ``initialize`` (2025-11-25), probing
``server/discover`` (2026-07-28, stateless) and pinned to 2026-07-28. The SDK validates every
result against the revision's models and every structuredContent against the tool's outputSchema.
"""

from __future__ import annotations

import asyncio

import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from tests.clients.test_python_sdk import TIMEOUT, exercise
from tests.http.conftest import TOKEN, HttpServer
from tests.support.protocol import MODERN
from tests.support.sample import Sample


def client(server: HttpServer, mode: str, token: str = TOKEN) -> Client:
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    return Client(streamable_http_client(server.url, http_client=http), mode=mode, read_timeout_seconds=TIMEOUT)


@pytest.mark.parametrize(("mode", "revision"), [("legacy", "2025-11-25"), ("auto", MODERN), (MODERN, MODERN)])
def test_python_sdk_over_http(mode: str, revision: str, served: HttpServer, sample: Sample) -> None:
    async def session() -> str | None:
        async with client(served, mode) as api:
            await exercise(api, sample)
            return api.protocol_version

    assert asyncio.run(asyncio.wait_for(session(), TIMEOUT)) == revision


def test_python_sdk_without_the_token_is_refused(served: HttpServer) -> None:
    async def session() -> None:
        async with client(served, "legacy", token="wrong") as api:
            await api.list_tools()

    with pytest.raises(BaseException):  # noqa: B017, PT011  the SDK surfaces the 401 in its own way
        asyncio.run(asyncio.wait_for(session(), TIMEOUT))
    assert not any(TOKEN in line or "wrong" in line for line in served.stderr), "a token reached the log"
