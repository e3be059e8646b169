"""What transport/http/connections.py relies on in uvicorn's H11Protocol (pinned in pyproject.toml).

uvicorn does not document its protocol classes. connections.Counted overrides these hooks and
reads these attributes; if an uvicorn release renames or reshapes one, this fails first, naming
it, and the http extra's upper bound should stay until connections.py follows.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable

import h11
import pytest

uvicorn = pytest.importorskip("uvicorn", reason="the http extra is not installed")
from uvicorn.protocols.http.h11_impl import H11Protocol  # noqa: E402
from uvicorn.server import ServerState  # noqa: E402

from magnotia_mcp.transport.http.connections import BoundedHead, Registry, protocol_class  # noqa: E402
from magnotia_mcp.transport.http.throttle import Throttle  # noqa: E402

# Each hook Counted overrides, and the parameters it is called with.
HOOKS = {
    "connection_made": ["self", "transport"],
    "connection_lost": ["self", "exc"],
    "on_response_complete": ["self"],
    "handle_events": ["self"],
    "pause_writing": ["self"],
    "resume_writing": ["self"],
}


def _where() -> str:
    return f"uvicorn {uvicorn.__version__} changed H11Protocol; transport/http/connections.py relies on it"


@pytest.mark.parametrize(("hook", "parameters"), HOOKS.items())
def test_each_overridden_hook_is_there_with_its_parameters(hook: str, parameters: list[str]) -> None:
    method = getattr(H11Protocol, hook, None)
    assert callable(method), f"{_where()}: no {hook}()"
    assert list(inspect.signature(method).parameters) == parameters, f"{_where()}: {hook}{inspect.signature(method)}"


def _waiting(registry: Registry) -> int:
    return sum(len(queue) for queue in registry.waiting.values())


async def _settle(done: Callable[[], object]) -> None:
    """Let the loop run until done() holds (or give up after a while: the assertions then say what differs)."""
    for _ in range(1000):
        if done():
            return
        await asyncio.sleep(0.01)


def test_the_attributes_read_and_the_head_hook_behave_as_relied_on() -> None:
    """conn (replaced before connection_made), client, loop, transport; cycle moving when a head arrives
    (the connection is busy while the app runs), on_response_complete (waiting again after the answer)."""
    seen: list[str] = []

    async def exchange() -> None:
        async def app(scope: dict[str, object], receive: object, send: object) -> None:
            assert callable(send)
            seen.append(f"waiting while answering:{_waiting(registry)}")
            await send({"type": "http.response.start", "status": 204, "headers": []})
            await send({"type": "http.response.body", "body": b""})

        loop = asyncio.get_running_loop()
        config = uvicorn.Config(app, http="h11", lifespan="off", log_level="warning")
        config.load()
        registry = Registry(limit=8, throttle=Throttle())
        counted = protocol_class(30.0, registry)
        made: list[H11Protocol] = []

        def factory() -> H11Protocol:
            protocol = counted(config=config, server_state=ServerState(), app_state={}, _loop=loop)
            made.append(protocol)
            return protocol

        fresh = H11Protocol(config=config, server_state=ServerState(), app_state={}, _loop=loop)
        seen.append(f"conn:{isinstance(fresh.conn, h11.Connection)}")
        seen.append(f"cycle:{fresh.cycle is None}")
        seen.append(f"loop:{fresh.loop is loop}")
        server = await loop.create_server(factory, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        await _settle(lambda: made and made[0].transport is not None)
        (protocol,) = made
        seen.append(f"bounded:{isinstance(protocol.conn, BoundedHead)}")
        seen.append(f"client:{protocol.client is not None and protocol.client[0] == '127.0.0.1'}")
        seen.append(f"waiting when open:{_waiting(registry)}")
        writer.write(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        await writer.drain()
        status = await reader.readline()
        seen.append(status.decode().strip())
        await _settle(lambda: _waiting(registry) == 1)
        seen.append(f"waiting after the answer:{_waiting(registry)}")
        writer.close()
        await writer.wait_closed()
        server.close()
        await server.wait_closed()
        await _settle(lambda: not registry.peers)
        seen.append(f"open after close:{len(registry)}")

    asyncio.run(exchange())
    assert seen == [
        "conn:True",
        "cycle:True",
        "loop:True",
        "bounded:True",
        "client:True",
        "waiting when open:1",
        "waiting while answering:0",
        "HTTP/1.1 204 No Content",
        "waiting after the answer:1",
        "open after close:0",
    ], _where()
