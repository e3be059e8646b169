"""The package's imports go one way: no module imports, even indirectly, one that imports it.

Read from the source (every import statement, type-only ones included), so a
cycle is caught even when it would only bite under a different import order.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

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


# The layers of docs/architecture.md, top to bottom: a module imports only from its own layer or below.
# A module belongs to the layer of the longest prefix that names it.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("entry", ("magnotia_mcp.__main__", "magnotia_mcp.cli", "magnotia_mcp.install")),
    ("transport", ("magnotia_mcp.transport",)),
    ("protocol", ("magnotia_mcp.protocol",)),
    ("results", ("magnotia_mcp.tools", "magnotia_mcp.resources", "magnotia_mcp.prompts", "magnotia_mcp.budget")),
    ("search", ("magnotia_mcp.search", "magnotia_mcp.args")),
    ("store", ("magnotia_mcp.store",)),
    # revisions is a leaf table (what each protocol revision has): tools read it to shape results by revision.
    ("base", ("magnotia_mcp", "magnotia_mcp.protocol.revisions")),
)


def _layer(module: str) -> int:
    best: tuple[int, int] | None = None
    for rank, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and (best is None or len(prefix) > best[1]):
                best = (rank, len(prefix))
    assert best is not None, module
    return best[0]


def _upward(graph: dict[str, set[str]]) -> list[tuple[str, str]]:
    return sorted((a, b) for a, targets in graph.items() for b in targets if _layer(b) < _layer(a))


def test_every_module_has_a_layer_and_every_layer_a_module() -> None:
    graph = _graph()
    ranks = {_layer(m) for m in graph}
    assert ranks == set(range(len(LAYERS)))
    assert _layer("magnotia_mcp.transport.http.app") == 1
    assert _layer("magnotia_mcp.protocol.revisions") == len(LAYERS) - 1


def test_imports_go_down_the_layers() -> None:
    assert _upward(_graph()) == []


def test_an_import_up_the_layers_is_found() -> None:
    graph = {"magnotia_mcp.store.pool": {"magnotia_mcp.tools.base"}, "magnotia_mcp.tools.base": {"magnotia_mcp.errors"}}
    assert _upward(graph) == [("magnotia_mcp.store.pool", "magnotia_mcp.tools.base")]


def test_transports_reach_the_server_only() -> None:
    """A transport frames bytes for Server: no tools, no method table, no SQL, and no other transport."""
    graph = _graph()
    transports = [m for m in graph if m.startswith("magnotia_mcp.transport.")]
    assert {"magnotia_mcp.transport.stdio.loop", "magnotia_mcp.transport.http.app"} <= set(transports)
    for module in transports:
        kind = module.split(".")[2]  # stdio or http
        for target in graph[module]:
            if target.startswith("magnotia_mcp.transport."):
                assert target.split(".")[2] in (kind, "limits"), (module, target)
            assert not target.startswith(("magnotia_mcp.tools", "magnotia_mcp.protocol.methods")), (module, target)
            assert not target.startswith(("magnotia_mcp.resources", "magnotia_mcp.prompts")), (module, target)
            assert not target.startswith("magnotia_mcp.store.") or target == "magnotia_mcp.store.pool", (module, target)


def test_the_dispatcher_knows_nothing_of_tools_or_sql() -> None:
    """Server reaches tools and the store only through the method table it is given."""
    graph = _graph()
    for module in ("magnotia_mcp.protocol.server", "magnotia_mcp.protocol.jsonrpc"):
        reached = {m for m in graph[module] if m.startswith(("magnotia_mcp.tools", "magnotia_mcp.protocol.methods"))}
        reached |= {m for m in graph[module] if m.startswith("magnotia_mcp.store.") and m != "magnotia_mcp.store.pool"}
        assert not reached, (module, reached)


REPO = Path(__file__).resolve().parents[2]


def _documented_layers(path: Path) -> dict[str, str]:
    """The layer table of a document: each backticked name in a row's modules cell, with the row's layer."""
    names: dict[str, str] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.split("|")]
        if len(cells) >= 4 and cells[1] in {name for name, _ in LAYERS}:
            for name in re.findall(r"`([\w/]+)`", cells[2]):
                names[name.rstrip("/")] = cells[1]
    return names


@pytest.mark.parametrize("doc", ["docs/architecture.md", "README.md"])
def test_the_documented_layers_are_the_code(doc: str) -> None:
    """Every module is named in the row of its layer; a package's modules may be listed after it in brackets."""
    documented = _documented_layers(REPO / doc)
    assert len(documented) > 40, documented
    missing: list[str] = []
    graph = _graph()
    for module in graph:
        if any(other.startswith(module + ".") for other in graph):
            continue  # a package: its modules are named
        parts = module.split(".")[1:]
        layer = LAYERS[_layer(module)][0]
        # "store/" then "reader", or "transport/limits", or "errors": any of these names it.
        candidates = {"/".join(parts), parts[-1]} if len(parts) > 1 else {parts[0]}
        if not any(documented.get(c) == layer for c in candidates) and not (
            len(parts) > 1 and documented.get(parts[0]) == layer and parts[-1] in documented
        ):
            missing.append(f"{module} ({layer})")
    assert missing == []
