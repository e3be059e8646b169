"""serve --http, 2026-07-28: a request without ``_meta``'s protocol version is invalid params (-32602, 400).

The conformance suite's server-stateless checks sep-2575-request-meta-invalid-missing-meta and
-missing-protocol-version ask for this; this test needs no Node.
"""

from __future__ import annotations

import http.client
import json
import os
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from tests.http.conftest import HttpServer
from tests.support.protocol import MODERN, modern_meta
from tests.support.sample import build_sample

META_VERSION = "io.modelcontextprotocol/protocolVersion"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    store = build_sample(tmp_path_factory.mktemp("meta") / "magnotia.db").path
    env = dict(os.environ)
    env.pop("MAGNOTIA_MCP_TOKEN", None)
    argv = [sys.executable, "-m", "magnotia_mcp", "--db", str(store), "serve", "--http", "127.0.0.1:0", "--no-auth"]
    running = HttpServer(argv, env)
    yield running
    running.stop()


def post(server: HttpServer, message: dict[str, Any]) -> tuple[int, Any]:
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": MODERN,
        "Mcp-Method": str(message["method"]),
    }
    conn = http.client.HTTPConnection(server.host_port, timeout=60)
    try:
        conn.request("POST", "/mcp", body=json.dumps(message).encode(), headers=headers)
        response = conn.getresponse()
        return response.status, json.loads(response.read())
    finally:
        conn.close()


@pytest.mark.parametrize(
    "params",
    [{}, {"_meta": {}}, {"_meta": {k: v for k, v in modern_meta().items() if k != META_VERSION}}],
    ids=["no-meta", "empty-meta", "meta-without-version"],
)
def test_missing_protocol_version_in_meta_is_invalid_params(served: HttpServer, params: dict[str, Any]) -> None:
    status, body = post(served, {"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": params})
    assert status == 400
    assert body["id"] == 3
    assert body["error"]["code"] == -32602


def test_with_the_version_in_meta_the_request_is_answered(served: HttpServer) -> None:
    status, body = post(served, {"jsonrpc": "2.0", "id": 4, "method": "tools/list", "params": {"_meta": modern_meta()}})
    assert status == 200, body
    assert body["result"]["tools"]
