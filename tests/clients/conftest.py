"""Real clients (the official Python and TypeScript SDKs, the MCP Inspector) against the server.

Everything under tests/clients/ is marked ``clients``. These run in ``nox -s test``
only; the Node clients are installed with
``npm ci --ignore-scripts --no-audit --no-fund --prefix tests/clients``.
"""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.hookimpl(tryfirst=True)  # before -m selects by marker
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test under this folder ``clients``: the kind of a test is where it lives."""
    here = Path(__file__).parent
    for item in items:
        if item.path.is_relative_to(here):
            item.add_marker(pytest.mark.clients)
