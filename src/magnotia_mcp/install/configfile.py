"""A host's config file, opened and rewritten without ever writing anywhere else.

Read: the path is followed through a symlink only to a regular file (stow, chezmoi and
home-manager link dotfiles; that must keep working). A directory, FIFO, device, socket,
dangling link or link loop is refused before anything is opened; the open itself is
O_NOFOLLOW|O_NONBLOCK and checked with fstat, so a path swapped in between neither hangs
(a FIFO) nor redirects the read. At most a cap of bytes is read.

Write: the file is replaced atomically in its own folder (the link's target's folder for a
link, which stays a link). The backup and the temporary file are created with
O_CREAT|O_EXCL|O_NOFOLLOW, with the original's mode from creation (then fchmod, whatever the
umask) and its owner, so neither is ever readable by more users than the original, and a name
someone planted (a link included) is stepped over, never written through.
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
import time
from dataclasses import dataclass
from pathlib import Path

from magnotia_mcp.filemodes import kind, read_capped
from magnotia_mcp.install.jsonc import NotEditable

MiB = 1024 * 1024
# Config files written by hand or by a host's settings screen are kilobytes; 8 MiB is a thousand
# times that and small enough to hold and parse several times over. Claude Code keeps history in
# ~/.claude.json: users report 15 to 101 MB (anthropics/claude-code#6394, #2593), hence its own cap.
MAX_BYTES = 8 * MiB
MAX_BYTES_CLAUDE_CODE = 256 * MiB
NEW_FILE_MODE = 0o600  # a new config may come to hold tokens (Claude Code's does): its owner only
NEW_FOLDER_MODE = 0o700
_TRIES = 100  # names tried for a backup or temporary file before giving up

_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_O_BINARY = getattr(os, "O_BINARY", 0)
_O_DIRECTORY = getattr(os, "O_DIRECTORY", 0)


class Refused(NotEditable):
    """The path is not a regular file we may edit (or the write could not be done safely)."""


@dataclass
class Config:
    path: Path  # as named: the host's path or --config
    target: Path  # the regular file edited: path itself, or where its link leads
    data: bytes | None  # None: no file yet
    st: os.stat_result | None

    def text(self) -> str | None:
        if self.data is None:
            return None
        try:
            return self.data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise NotEditable(f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def _os_error(exc: OSError) -> Refused:
    where = f" ({exc.filename})" if exc.filename else ""
    return Refused(f"{exc.strerror or exc}{where}; fix that and run this again")


def locate(path: Path) -> tuple[Path, bool]:
    """The file an edit of path changes (path, or its link's final target) and whether it exists."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return path, False
    except OSError as exc:
        raise _os_error(exc) from None
    if not stat.S_ISLNK(st.st_mode):
        return path, True
    try:
        target = Path(os.path.realpath(path, strict=True))
    except FileNotFoundError:
        raise Refused(
            f"it is a symbolic link to {os.readlink(path)}, which does not exist; create that file (or remove "
            "the link) and run this again"
        ) from None
    except OSError as exc:
        raise Refused(
            f"it is a symbolic link that cannot be followed ({exc.strerror}); fix or remove the link"
        ) from None
    return target, True


def _regular(target: Path, named: Path) -> os.stat_result:
    try:
        st = os.stat(target, follow_symlinks=False)
    except OSError as exc:
        raise _os_error(exc) from None
    if not stat.S_ISREG(st.st_mode):
        if target != named:
            raise Refused(
                f"it is a symbolic link to {target}, {kind(st.st_mode)}, not a regular file; point the link at "
                "the host's real config file (or remove it), or pass --config PATH to the file you mean"
            )
        raise Refused(
            f"it is {kind(st.st_mode)}, not a regular file; move it away, or pass --config PATH to the file you mean"
        )
    return st


def _same_file(a: os.stat_result, b: os.stat_result) -> bool:
    return (a.st_dev, a.st_ino, a.st_size, a.st_mtime_ns) == (b.st_dev, b.st_ino, b.st_size, b.st_mtime_ns)


def load(path: Path, limit: int = MAX_BYTES) -> Config:
    """The config at path, read safely; Refused says why it cannot be, and what to do."""
    target, exists = locate(path)
    if not exists:
        return Config(path, path, None, None)
    before = _regular(target, path)

    def check(st: os.stat_result) -> None:
        if not stat.S_ISREG(st.st_mode) or (st.st_dev, st.st_ino) != (before.st_dev, before.st_ino):
            raise Refused("it was replaced while being opened; run this again")
        if st.st_size > limit:
            raise Refused(
                f"it is {st.st_size:,} bytes, more than the {limit // MiB} MiB this command reads from a host's "
                "config; check that this is the host's config file (and trim it if it is)"
            )

    try:
        data, st = read_capped(target, limit, check, follow=False)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise Refused("it became a symbolic link while being opened; run this again") from None
        raise _os_error(exc) from None
    if len(data) > limit:
        raise Refused(f"it grew past the {limit // MiB} MiB this command reads while being read")
    return Config(path, target, data, st)


def _check_folders(folder: Path) -> list[Path]:
    """The missing folders up to folder, outermost first; refused if one on the way is not a folder."""
    missing: list[Path] = []
    for step in (folder, *folder.parents):
        try:
            st = os.lstat(step)
        except FileNotFoundError:
            missing.append(step)
            continue
        except OSError as exc:
            raise _os_error(exc) from None
        if stat.S_ISLNK(st.st_mode):
            try:
                st = os.stat(step)
            except FileNotFoundError:
                raise Refused(
                    f"{step} is a symbolic link to {os.readlink(step)}, which does not exist; create that folder "
                    "(or remove the link) and run this again"
                ) from None
            except OSError as exc:
                raise _os_error(exc) from None
        if not stat.S_ISDIR(st.st_mode):
            raise Refused(f"{step} is {kind(st.st_mode)}, not a folder; move it away and run this again")
        break
    return missing[::-1]


class _Folder:
    """A folder held open, so that every name below is looked up in that very folder (POSIX)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.fd: int | None = None
        # os.replace takes the same dir_fd arguments as os.rename, which is the one listed there.
        if {os.open, os.rename, os.unlink, os.stat} <= os.supports_dir_fd:
            self.fd = os.open(path, os.O_RDONLY | _O_DIRECTORY | _O_CLOEXEC)

    def at(self, name: str) -> str:
        return name if self.fd is not None else str(self.path / name)

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)

    def sync(self) -> None:
        if self.fd is not None:
            os.fsync(self.fd)  # the rename itself is durable once the folder is

    def create(self, names: list[str], data: bytes, mode: int, owner: os.stat_result | None) -> str:
        """A new file at the first free name, with mode (and owner) from its creation, holding data."""
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_NOFOLLOW | _O_CLOEXEC | _O_BINARY
        for name in names:
            try:
                fd = os.open(self.at(name), flags, mode & 0o777, dir_fd=self.fd)
            except FileExistsError:
                continue  # whatever sits there, a planted link included, is never opened
            try:
                try:
                    if owner is not None:
                        _keep_owner(fd, owner)
                    if hasattr(os, "fchmod"):
                        os.fchmod(fd, mode)  # exactly the mode: the umask may have narrowed it
                    view = memoryview(data)
                    while view:
                        view = view[os.write(fd, view) :]
                    os.fsync(fd)
                finally:
                    os.close(fd)
            except BaseException:
                os.unlink(self.at(name), dir_fd=self.fd)
                raise
            return name
        raise Refused(f"no free name for a new file in {self.path} after {len(names)} tries; remove old .bak files")


def _keep_owner(fd: int, owner: os.stat_result) -> None:
    if not hasattr(os, "fchown"):
        return
    st = os.fstat(fd)
    if (st.st_uid, st.st_gid) != (owner.st_uid, owner.st_gid):
        try:
            os.fchown(fd, owner.st_uid, owner.st_gid)
        except PermissionError:
            raise Refused(
                f"it belongs to user {owner.st_uid}, group {owner.st_gid}, and its copy would not; run this as "
                "its owner, or add the entry by hand"
            ) from None


def backup_names(name: str) -> list[str]:
    stamp = time.strftime("%Y%m%d-%H%M%S")
    return [f"{name}.{stamp}.bak"] + [f"{name}.{stamp}-{n}.bak" for n in range(2, _TRIES + 1)]


def _temp_names(name: str) -> list[str]:
    return [f".{name}.{secrets.token_hex(6)}.tmp" for _ in range(_TRIES)]


def write(config: Config, text: str) -> Path | None:
    """Replace the file's bytes with text; return the backup of the old ones (None for a new file)."""
    data = text.encode("utf-8")
    try:
        if config.data is None or config.st is None:
            _create(config.path, data)
            return None
        return _replace(config, data)
    except Refused:
        raise
    except OSError as exc:  # nothing of ours is left behind: see _Folder.create and _replace
        raise Refused(f"writing failed ({exc.strerror or exc}); fix that and run this again") from None


def _replace(config: Config, data: bytes) -> Path:
    assert config.data is not None
    assert config.st is not None
    original = config.st
    if hasattr(os, "geteuid") and os.geteuid() not in (0, original.st_uid):
        raise Refused(
            f"it belongs to user {original.st_uid}, not to you; run this as its owner, or add the entry by hand"
        )
    name = config.target.name
    folder = _Folder(config.target.parent)
    try:
        try:
            now = os.stat(folder.at(name), dir_fd=folder.fd, follow_symlinks=False)
        except FileNotFoundError:
            now = None
        if now is None or not _same_file(now, original):
            raise Refused("it changed since it was read (is the host writing it?); run this again")
        mode = stat.S_IMODE(original.st_mode)
        backup = folder.create(backup_names(name), config.data, mode, original)
        try:
            temp = folder.create(_temp_names(name), data, mode, original)
        except BaseException:
            os.unlink(folder.at(backup), dir_fd=folder.fd)
            raise
        try:
            os.replace(folder.at(temp), folder.at(name), src_dir_fd=folder.fd, dst_dir_fd=folder.fd)
        except BaseException:
            os.unlink(folder.at(temp), dir_fd=folder.fd)
            os.unlink(folder.at(backup), dir_fd=folder.fd)
            raise
        folder.sync()
    finally:
        folder.close()
    return config.target.parent / backup


def check_creatable(path: Path) -> None:
    """Refused if a new file at path could not be made safely (what --dry-run checks before saying it would)."""
    _check_folders(path.parent)


def _create(path: Path, data: bytes) -> None:
    """A new file at path (never through a link), its missing folders made for the owner only."""
    for step in _check_folders(path.parent):
        os.mkdir(step, NEW_FOLDER_MODE)
    folder = _Folder(path.parent)
    try:
        temp = folder.create(_temp_names(path.name), data, NEW_FILE_MODE, None)
        try:
            # Refused if anything appeared at the name since it was found missing; a rename never follows a link.
            os.lstat(folder.at(path.name), dir_fd=folder.fd)
        except FileNotFoundError:
            os.replace(folder.at(temp), folder.at(path.name), src_dir_fd=folder.fd, dst_dir_fd=folder.fd)
        else:
            os.unlink(folder.at(temp), dir_fd=folder.fd)
            raise Refused("it appeared while this command was writing it; run this again")
        folder.sync()
    finally:
        folder.close()
