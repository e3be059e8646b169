"""The package stays easy to see: small modules, small classes, folders a reader takes in at a glance.

The bounds of docs/architecture.md, read from the source: a module over MAX_MODULE_LINES lines, a class
over MAX_CLASS_LINES or a folder of more than MAX_FOLDER_MODULES modules is a sign that it holds two jobs.
"""

from __future__ import annotations

import ast
from pathlib import Path

import magnotia_mcp

PACKAGE = Path(magnotia_mcp.__file__).parent
MAX_MODULE_LINES = 350
MAX_CLASS_LINES = 150
MAX_FOLDER_MODULES = 12  # not counting __init__.py


def _modules() -> list[Path]:
    modules = sorted(PACKAGE.rglob("*.py"))
    assert len(modules) > 40, modules  # read from the installed package, every module
    return modules


def _name(path: Path) -> str:
    return str(path.relative_to(PACKAGE))


def test_no_module_is_over_the_bound() -> None:
    sizes = {_name(p): len(p.read_text(encoding="utf-8").splitlines()) for p in _modules()}
    assert max(sizes.values()) > 100  # the count is of lines, not of something always small
    assert {name: n for name, n in sizes.items() if n > MAX_MODULE_LINES} == {}


def test_no_class_is_over_the_bound() -> None:
    classes: dict[str, int] = {}
    for path in _modules():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                assert node.end_lineno is not None
                classes[f"{_name(path)}:{node.name}"] = node.end_lineno - node.lineno + 1
    assert len(classes) > 20
    assert {name: n for name, n in classes.items() if n > MAX_CLASS_LINES} == {}


def test_no_folder_holds_more_than_a_glance() -> None:
    folders: dict[str, int] = {}
    for path in _modules():
        if path.name != "__init__.py":
            key = _name(path.parent) if path.parent != PACKAGE else "."
            folders[key] = folders.get(key, 0) + 1
    assert {"store", "tools", "install", "."} <= set(folders)
    assert {name: n for name, n in folders.items() if n > MAX_FOLDER_MODULES} == {}
