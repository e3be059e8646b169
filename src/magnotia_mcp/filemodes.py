"""Who may read or replace a secret file, or change a trusted one: owner and mode rules after OpenSSH's StrictModes.

A token file is usable when:

* it belongs to this user, and no other user may read or write it: no permission for others, and
  none for its group unless that group is this user's own (below); or
* it belongs to root and nobody but root may write it (group and others may read: that is how
  Docker and Kubernetes mount root's secrets for a container's user).

Every folder from the file's up to ``/`` must belong to this user or root and be writable by no one
else: not by others, nor by a group other than this user's own, unless the folder is sticky (``/tmp``),
where only a file's owner may rename or remove it. Otherwise another user could swap the file.

"This user's own group" is Debian's rule for ssh (user-group-modes): the group's only member, primary
or listed, is this user. It lets a umask of 002 with per-user groups (the Debian and Ubuntu default)
pass. Windows has neither owners nor modes of this kind: these checks are skipped there.

A file that is no secret but is trusted (a model's) is usable when nobody but this user and root may change it
or swap it: it belongs to this user or root, neither others nor a group (but this user's own) may write it, and
the folders on its way pass the folder rule above (``trusted_file_problem``). Others may read it.

``read_capped`` reads such a file (and a host's config) without hanging on a FIFO or reading without end.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shlex
import stat
import sys
from collections.abc import Callable, Iterable
from pathlib import Path

POSIX = sys.platform != "win32"
# Non-blocking: a FIFO put where a file was expected fails the checks instead of waiting for a writer.
_READ_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_NOCTTY", 0)
    | getattr(os, "O_CLOEXEC", 0)
    | getattr(os, "O_BINARY", 0)
)
_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
# Opened for a file created anew: never through a link planted at its name, never one already there.
NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
_CHUNK = 1024 * 1024


def read_capped(
    path: Path, limit: int, check: Callable[[os.stat_result], None], *, follow: bool = True
) -> tuple[bytes, os.stat_result]:
    """path's bytes (at most limit + 1 of them: more means it is over the cap) and its fstat.

    Opened non-blocking (and with O_NOFOLLOW unless follow), then check is given the open file's
    fstat before anything is read: it raises to refuse what is not a regular file, is over limit
    bytes, or is otherwise unfit. OSError from the open is the caller's to explain.
    """
    fd = os.open(path, _READ_FLAGS | (0 if follow else _O_NOFOLLOW))
    try:
        st = os.fstat(fd)
        check(st)
        chunks: list[bytes] = []
        size = 0
        while size <= limit:
            chunk = os.read(fd, min(_CHUNK, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    finally:
        os.close(fd)
    return b"".join(chunks), st


class Refused(Exception):
    """A file not to read: the message says which, why, and the fix (open_trusted)."""


def open_trusted(path: Path, limit: int | None, what: str, instead: str) -> int:
    """path opened for reading (non-blocking; links followed), once its fstat shows a regular file of at most limit
    bytes (what: such a file, in words) that trusted_file_problem finds nothing against; else Refused, in one line
    naming path. instead: what to do when it or a folder on its way is another user's."""
    try:
        fd = os.open(path, _READ_FLAGS)
    except OSError as exc:
        raise Refused(f"cannot read {path}: {exc.strerror}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise Refused(f"{path} is not a regular file ({kind(st.st_mode)})")
        if limit is not None and st.st_size > limit:
            raise Refused(f"{path} is over {limit // (1024 * 1024)} MiB, more than {what} holds")
        problem = trusted_file_problem(path, st, instead)
        if problem is not None:
            raise Refused(f"{path} cannot be trusted: {problem}")
    except OSError as exc:  # a folder on its way that cannot be looked at
        os.close(fd)
        raise Refused(f"{path} cannot be trusted: its folders cannot be checked ({exc})") from None
    except BaseException:
        os.close(fd)
        raise
    return fd


def kind(mode: int) -> str:
    """What a path that is not the regular file asked for is, in words for an error message."""
    for test, words in (
        (stat.S_ISREG, "a file"),
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return words
    return "not a regular file"


def token_file_problem(st: os.stat_result, path: str) -> str | None:
    """What makes this file (its fstat) unsafe to hold a secret, with the command that fixes it; None if safe."""
    return private_file_problem(st, path, "use a token file of your own (or root's), mode 600")


def private_file_problem(st: os.stat_result, path: str, instead: str) -> str | None:
    """What lets other users read or change this file (its stat), with the command that fixes it; None if nothing.

    instead: what to do when it belongs to another user (no chmod of ours fixes that).
    """
    uid = os.getuid()
    mode = stat.S_IMODE(st.st_mode)
    if st.st_uid == uid:
        if mode & 0o007 or (mode & 0o070 and not _own_group(st.st_gid, uid)):
            return f"other users may read or change it (mode {mode:04o}); run: chmod 600 {shlex.quote(path)}"
        return None
    if st.st_uid == 0:
        if mode & 0o022:
            return (
                f"it belongs to root but others may change it (mode {mode:04o}); "
                f"run as root: chmod go-w {shlex.quote(path)}"
            )
        return None
    return f"it belongs to another user (uid {st.st_uid}), who may read and change it; {instead}"


def folder_problem(
    folder: Path, what: str = "the token", instead: str = "keep it in a folder of your own"
) -> str | None:
    """The first folder that someone else could use to swap a file in folder; None if none. Looked at: where folder
    leads and each folder above it, from there up to /, then every other folder whose entries decide where it leads
    (``folders_on_way``: a link in the middle of a chain, kept in an open folder, could be pointed elsewhere).

    what: the file (or files) they could replace, in words; instead: what to do when a folder is another user's.
    """
    real = Path(os.path.realpath(folder))
    return _places_problem(dict.fromkeys((real, *real.parents, *folders_on_way(folder))), what, instead)


def way_problem(path: Path, what: str = "the token", instead: str = "keep it in a folder of your own") -> str | None:
    """folder_problem's rule on every folder whose entries decide where path leads (``folders_on_way``), the file's
    own included: whoever may write one could point path at a file of their choosing."""
    return _places_problem(folders_on_way(path), what, instead)


def _places_problem(places: Iterable[Path], what: str, instead: str) -> str | None:
    """folder_problem's rule on each of places (each as it leads: links followed)."""
    uid = os.getuid()
    for place in places:
        st = os.stat(place)
        mode = stat.S_IMODE(st.st_mode)
        if st.st_uid not in (uid, 0):
            return f"the folder {place} belongs to another user (uid {st.st_uid}), who could replace {what}; {instead}"
        if mode & stat.S_ISVTX:
            continue  # sticky: only a file's owner may rename or remove it
        if _others_write(st, uid):
            return (
                f"other users may write the folder {place} (mode {mode:04o}) and so replace {what}; "
                f"run: chmod go-w {shlex.quote(str(place))}"
            )
    return None


def folders_on_way(path: Path) -> list[Path]:
    """Every folder whose entries decide where path leads, in the order met: each folder from / to path's own, and
    for each link on the way (at any hop of a chain), the folder holding it and those its target passes through.
    Whoever may write one of them may point path elsewhere. OSError (ELOOP) past 40 links, as the kernel gives up."""
    todo = list(reversed(Path(os.path.join(os.getcwd(), path)).parts))  # os.path.join: ".." is left to the walk
    at = Path(todo.pop())  # the real folder reached so far, from the root
    seen: dict[Path, None] = {}
    hops = 0
    while todo:
        part = todo.pop()
        if part in ("", "."):
            continue
        if part == "..":
            at = at.parent  # at is real (its links already followed), so its parent is where ".." leads
            continue
        seen[at] = None
        step = at / part
        if not os.path.islink(step):
            at = step
            continue
        hops += 1
        if hops > 40:
            raise OSError(errno.ELOOP, "too many levels of symbolic links", str(path))
        target = Path(os.readlink(step))
        if target.is_absolute():
            at = Path(target.anchor)
        todo.extend(reversed(target.parts[1:] if target.is_absolute() else target.parts))
    return list(seen)


def _others_write(st: os.stat_result, uid: int) -> bool:
    """Whether users other than this one and root may write what st is of: others, or a group but this user's own."""
    mode = stat.S_IMODE(st.st_mode)
    return bool(mode & 0o002 or (mode & 0o020 and not (st.st_uid == uid and _own_group(st.st_gid, uid))))


def trusted_file_problem(path: Path, st: os.stat_result, instead: str) -> str | None:
    """What lets a user other than this one and root change or replace the file at path (st: the fstat of it, open),
    with the fix; None when nothing does, or on Windows. Others may read it.

    The file must belong to this user or root and be writable by neither others nor a group but this user's own;
    every folder whose entries decide where path leads (``folders_on_way``) must pass folder_problem's rule.
    instead: what to do when the file or a folder is another user's. OSError when a folder cannot be looked at.
    """
    if not POSIX:
        return None
    problem = way_problem(path, "it", instead)
    if problem is not None:
        return problem
    uid = os.getuid()
    if st.st_uid not in (uid, 0):
        return f"it belongs to another user (uid {st.st_uid}), who may change it; {instead}"
    if _others_write(st, uid):
        mode, run = stat.S_IMODE(st.st_mode), "run" if st.st_uid == uid else "run as root"
        return f"other users may change it (mode {mode:04o}); {run}: chmod go-w {shlex.quote(str(path))}"
    return None


def private_files_problem(folder: Path, files: Iterable[Path], what: str, elsewhere: str) -> str | None:
    """What lets another user read or replace files of ours kept in folder (which need not exist yet), with the fix;
    None when nothing does, or on Windows.

    Every folder from folder (before it is made, its nearest existing parent) up to / passes folder_problem; each
    of files that is present is a regular file, not a link, that passes private_file_problem (its fix, for a file
    of another user's: remove it). what: the files, in words; elsewhere: what to do when a folder is another
    user's. OSError when a folder cannot be looked at.
    """
    if not POSIX:
        return None
    while not os.path.lexists(folder) and folder != folder.parent:
        folder = folder.parent
    problem = folder_problem(folder, what, elsewhere)
    if problem is not None:
        return problem
    for name in files:
        try:
            st = os.lstat(name)
        except (FileNotFoundError, NotADirectoryError):  # none there (a file where its folder would be: no folder)
            continue
        shown = shlex.quote(str(name))
        if not stat.S_ISREG(st.st_mode):
            sort = "a link" if stat.S_ISLNK(st.st_mode) else kind(st.st_mode)
            return f"{name} is {sort}, where {what} keeps a file of its own; remove it: rm {shown}"
        problem = private_file_problem(st, str(name), f"remove it: rm {shown}")
        if problem is not None:
            return f"{name}: {problem}"
    return None


def make_private_folders(folder: Path) -> None:
    """Make folder and any missing parent with mode 0700 (the XDG base directory spec's mode for them).

    Each one made is given 0700 after mkdir too: mkdir's mode is narrowed by the umask (0277 would leave 0500).
    """
    missing: list[Path] = []
    for place in (folder, *folder.parents):
        if os.path.isdir(place):
            break
        missing.append(place)
    for place in reversed(missing):
        try:
            os.mkdir(place, 0o700)
        except FileExistsError:
            if not os.path.isdir(place):
                raise
            continue  # made by another process meanwhile: theirs to set (folder_problem then says if it is open)
        os.chmod(place, 0o700)


def _own_group(gid: int, uid: int) -> bool:
    """Is gid this user's own group: every member, primary or listed, is this user (and there is one)."""
    import grp  # noqa: PLC0415  (POSIX only, and only for a file or folder its group may use)
    import pwd  # noqa: PLC0415

    try:
        group = grp.getgrgid(gid)
        name = pwd.getpwuid(uid).pw_name
    except KeyError:
        return False
    primary = [entry.pw_uid for entry in pwd.getpwall() if entry.pw_gid == gid]
    if any(member != uid for member in primary) or any(member != name for member in group.gr_mem):
        return False
    return bool(primary or group.gr_mem)


def replace_privately(path: Path, data: bytes) -> bool:
    """Put data at path: written to a new file (0600) of a name no one can foresee, then renamed over path, so never
    through a link planted at either name (a rename replaces a link, not what it points to). False where it could
    not be written (nothing is left behind)."""
    spare = path.with_name(f"{path.name}.{os.urandom(8).hex()}")
    try:
        fd = os.open(spare, NEW_FILE, 0o600)
    except OSError:
        return False
    try:
        with open(fd, "wb") as out:
            out.write(data)
        os.replace(spare, path)
    except OSError:
        with contextlib.suppress(OSError):
            spare.unlink()
        return False
    return True
