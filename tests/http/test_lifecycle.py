"""How ``serve --http`` ends: SIGTERM (how hosts and container engines stop it) and SIGINT exit 0, as stdio does.

uvicorn on its own re-raises the signal it caught once it has shut down, so the process died of
it (status 143) instead of exiting; hosts and ``docker stop`` read that as a crash.
"""

from __future__ import annotations

import signal
from collections.abc import Callable

import pytest

from tests.http.conftest import TOKEN, HttpServer
from tests.http.test_security import LIST_TASKS, post


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_ends_the_server_with_status_0(sig: signal.Signals, launch: Callable[..., HttpServer]) -> None:
    """For the container, the signal goes to the engine's client, which passes it on (sig-proxy)."""
    server = launch([], {"MAGNOTIA_MCP_TOKEN": TOKEN})
    assert post(server, LIST_TASKS)[0] == 200
    server.proc.send_signal(sig)
    assert server.proc.wait(60) == 0, "".join(server.stderr)
    assert not any("Traceback" in line for line in server.stderr), "".join(server.stderr)
