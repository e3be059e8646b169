"""folders_on_way: every folder whose entries decide where a path leads, links followed hop by hop as the kernel."""

from __future__ import annotations

import errno
import os
import sys
from pathlib import Path

import pytest

from magnotia_mcp.filemodes import folders_on_way

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX links")


def tree(root: Path) -> Path:
    """root/a/b/first -> root/open/second (absolute) -> ../real/m (relative); root/real/m/f the file."""
    for folder in ("a/b", "open", "real/m"):
        (root / folder).mkdir(parents=True)
    (root / "real" / "m" / "f").write_bytes(b"")
    (root / "open" / "second").symlink_to("../real/m")
    (root / "a" / "b" / "first").symlink_to(root / "open" / "second")
    return root


def test_each_hop_of_a_chain_and_the_folders_it_passes_are_on_the_way(tmp_path: Path) -> None:
    root = tree(tmp_path.resolve())
    way = folders_on_way(root / "a" / "b" / "first" / "f")
    assert way[-1] == Path(os.path.realpath(root / "a" / "b" / "first" / "f")).parent == root / "real" / "m"
    assert set(way) == {
        *root.parents,
        root,
        root / "a",
        root / "a" / "b",
        root / "open",
        root / "real",
        root / "real" / "m",
    }


def test_dot_dot_after_a_link_leads_from_where_the_link_led(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tree(tmp_path.resolve())
    monkeypatch.chdir(root / "a")
    relative = Path("b/../b/first/../m/f")  # first leads to real/m, so ".." is real, not a/b
    assert os.path.realpath(relative) == str(root / "real" / "m" / "f")
    way = folders_on_way(relative)
    assert way[-1] == root / "real" / "m"
    assert root / "open" in way


def test_a_loop_of_links_is_an_error_not_a_hang(tmp_path: Path) -> None:
    (tmp_path / "x").symlink_to("y")
    (tmp_path / "y").symlink_to("x")
    with pytest.raises(OSError, match="too many levels") as raised:
        folders_on_way(tmp_path / "x" / "f")
    assert raised.value.errno == errno.ELOOP
