"""A chain of links through a folder other users may write: the planted hop the folder checks must catch."""

from __future__ import annotations

from pathlib import Path


def chain_through_open_folder(base: Path, target: Path, name: str) -> tuple[Path, Path]:
    """base/mine/name -> base/shared/hop -> target, with base/shared open to everyone (0777).

    Neither the name's own folder nor the target's is open, but anyone may repoint the hop in the middle.
    Returns the name to pass and the open folder (chmod it 0755 to close it).
    """
    shared, mine = base / "shared", base / "mine"
    shared.mkdir()
    mine.mkdir()
    (shared / "hop").symlink_to(target)
    (mine / name).symlink_to(shared / "hop")
    shared.chmod(0o777)
    return mine / name, shared
