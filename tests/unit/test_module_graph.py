"""The package's imports go one way: no module imports, even indirectly, one that imports it.

Read from the source (every import statement, type-only ones included), so a
cycle is caught even when it would only bite under a different import order.
"""

from __future__ import annotations

import ast
from pathlib import Path

import magnotia_mcp

PACKAGE = Path(magnotia_mcp.__file__).parent


def _module_name(path: Path) -> str:
    parts = ["magnotia_mcp", *path.relative_to(PACKAGE).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _graph() -> dict[str, set[str]]:
    modules = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                # "from pkg import mod" imports pkg.mod when that is a module.
                targets = [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
            for target in targets:
                if target in modules and target != name:
                    graph[name].add(target)
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_the_graph_is_read_from_every_module() -> None:
    graph = _graph()
    assert {"magnotia_mcp.protocol.server", "magnotia_mcp.store.pool", "magnotia_mcp.tools.catalog"} <= set(graph)
    assert "magnotia_mcp.protocol.server" in graph["magnotia_mcp.protocol.methods"]


def test_imports_have_no_cycle() -> None:
    assert _cycle(_graph()) is None


def test_a_cycle_is_found_when_there_is_one() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]


def test_transport_and_dispatcher_know_nothing_of_tools_or_sql() -> None:
    """server and the transports reach tools and the store only through the method table they are given."""
    graph = _graph()
    for module in (
        "magnotia_mcp.protocol.server",
        "magnotia_mcp.transport.stdio.loop",
        "magnotia_mcp.transport.stdio.prelude",
        "magnotia_mcp.protocol.jsonrpc",
    ):
        reached = {m for m in graph[module] if m.startswith(("magnotia_mcp.tools", "magnotia_mcp.protocol.methods"))}
        reached |= {m for m in graph[module] if m.startswith("magnotia_mcp.store.") and m != "magnotia_mcp.store.pool"}
        assert not reached, (module, reached)
