"""The bearer token ``serve --http`` requires: from the environment, a file, or generated once and kept.

Order: ``$MAGNOTIA_MCP_TOKEN``, then ``--token-file PATH`` (its first line), else the token
saved in the user's config folder (``platformdirs.user_config_dir("com.magnotia.mcp")/http-token``,
e.g. ``~/.config/com.magnotia.mcp/http-token`` on Linux), created with mode 0600 on first use.

A token is refused, with a message saying what to do and never the token, when:

* it is shorter than ``MIN_LENGTH`` characters or holds anything but visible ASCII;
* its file is not a regular file, or larger than ``MAX_FILE_BYTES`` (opened non-blocking:
  a FIFO is refused, not waited on);
* (POSIX) others could read or replace it: ``filemodes`` says precisely when;
* it is the saved token and a symbolic link: that path is never followed, and a new token is
  created there with ``O_CREAT | O_EXCL | O_NOFOLLOW``, mode 0600 from the first byte.
"""

from __future__ import annotations

import errno
import os
import secrets
import shlex
import stat
from pathlib import Path
from typing import TYPE_CHECKING

import platformdirs

from magnotia_mcp.filemodes import (
    POSIX,
    folder_problem,
    kind,
    make_private_folders,
    read_capped,
    token_file_problem,
    way_problem,
)

if TYPE_CHECKING:
    from collections.abc import Callable

ENV_VAR = "MAGNOTIA_MCP_TOKEN"
FILE_NAME = "http-token"
# Anyone who reaches the port can guess online as fast as loopback answers: every local user, and on a
# non-loopback bind, the network. 32 characters drawn at random from 16 symbols or more (hex, base64) are
# at least 2^128 choices, a random 128-bit key's; a generated token (token_urlsafe(32)) has 43, 256 bits.
# Length is all that can be checked here: the messages say how to make a random one.
MIN_LENGTH = 32
MAX_FILE_BYTES = 4096  # a token file holds one line; more is not a token file
GENERATE = "python3 -c 'import secrets; print(secrets.token_urlsafe(32))'"


class TokenError(Exception):
    """The token cannot be had, or may not be used: the message says why and what to do (never the token)."""


def saved_token_path() -> Path:
    return Path(platformdirs.user_config_dir("com.magnotia.mcp", appauthor=False)) / FILE_NAME


def check_token(value: str, origin: str) -> str:
    """The token if it may be used; else TokenError naming origin, what is wrong and how to make a good one."""
    if len(value) < MIN_LENGTH:
        raise TokenError(
            f"the token in {origin} is too short: at least {MIN_LENGTH} characters are required, because anyone "
            f"who can reach the port (every local user, over loopback) can guess a short one; "
            f"make one with: {GENERATE}"
        )
    if not all("!" <= c <= "~" for c in value):
        raise TokenError(
            f"the token in {origin} holds a space or a character that is not visible ASCII, which an "
            f"Authorization header cannot carry reliably; make one with: {GENERATE}"
        )
    return value


def load_token(token_file: str | None) -> tuple[str, str, bool]:
    """(token, where it came from, whether it was generated and saved now)."""
    value = os.environ.get(ENV_VAR, "").strip()
    if value:
        return check_token(value, f"${ENV_VAR}"), f"${ENV_VAR}", False
    if token_file is not None:
        text = _read_token_file(Path(token_file), saved=False)
        value = text.strip().splitlines()[0].strip() if text.strip() else ""
        if not value:
            raise TokenError(f"--token-file {token_file} is empty; write a token in it, made with: {GENERATE}")
        return check_token(value, f"--token-file {token_file}"), token_file, False
    path = saved_token_path()
    saved = _saved_token(path)
    if saved is not None:
        return saved, str(path), False
    if POSIX:
        _check_folders(_existing(path.parent))  # before making anything there
    return _generate(path), str(path), True


def inspect_token() -> dict[str, str | None]:
    """For doctor: where serve --http would take its token, the saved one if usable, or the problem; creates nothing.

    Keys: ``from`` (env, file, or none: a first serve --http would make one), ``token`` (the saved
    token when usable, else None) and ``problem`` (why serve --http would refuse, else None).
    """
    value = os.environ.get(ENV_VAR, "").strip()
    origin = "env" if value else "file"
    try:
        if value:
            check_token(value, f"${ENV_VAR}")
            return {"from": origin, "token": None, "problem": None}
        path = saved_token_path()
        saved = _saved_token(path, remove_empty=False)
        if saved is None:
            origin = "none"
            if POSIX:
                _check_folders(_existing(path.parent))  # where a first serve --http would make its token
        return {"from": origin, "token": saved, "problem": None}
    except TokenError as exc:
        return {"from": origin, "token": None, "problem": str(exc)}


def _existing(folder: Path) -> Path:
    """folder, or its nearest parent that exists."""
    while not os.path.isdir(folder) and folder.parent != folder:
        folder = folder.parent
    return folder


def _saved_token(path: Path, remove_empty: bool = True) -> str | None:
    """The saved token, checked; None when there is none yet (or an empty file, removed if remove_empty)."""
    try:
        text = _read_token_file(path, saved=True, remove_empty=remove_empty)
    except FileNotFoundError:
        return None
    value = text.strip()
    if value:
        return check_token(value, str(path))
    # A start that stopped between creating the file and writing it: make a new one in its place.
    return None


def _read_token_file(path: Path, *, saved: bool, remove_empty: bool = False) -> str:
    """The file's text, after checking that it is a private regular file of a sane size.

    saved: the token serve --http keeps: a symlink there is refused (O_NOFOLLOW). A --token-file
    is followed, as secrets mounted by Kubernetes or Compose are symlinks; its target is checked.
    FileNotFoundError is raised only for a missing saved token.
    """
    what = "the saved token" if saved else "--token-file"

    def check(st: os.stat_result) -> None:
        if not stat.S_ISREG(st.st_mode):
            raise TokenError(f"{what} {path} is not a regular file ({kind(st.st_mode)}); name a file holding the token")
        if st.st_size > MAX_FILE_BYTES:
            raise TokenError(
                f"{what} {path} is larger than {MAX_FILE_BYTES} bytes; a token file holds one line, the token"
            )
        if POSIX:
            problem = token_file_problem(st, str(path))
            if problem:
                raise TokenError(f"{what} {path}: {problem}")
            if saved:  # never a link (read without following one): its folders are where it is
                _check_folders(Path(os.path.realpath(path)).parent, what=f"{what} {path}")
            else:  # each folder on the way, a chain of links included: whoever can swap one chooses the token
                _check_folders(path.absolute(), what=f"{what} {path}", problem=way_problem)

    try:
        data, _st = read_capped(path, MAX_FILE_BYTES, check, follow=not saved)
    except FileNotFoundError:
        if saved and not os.path.islink(path):
            raise
        if saved:
            raise TokenError(_symlink_message(path)) from None
        raise TokenError(f"cannot read {what} {path}: no such file") from None
    except OSError as exc:
        if saved and os.path.islink(path):
            raise TokenError(_symlink_message(path)) from None
        raise TokenError(f"cannot read {what} {path}: {exc.strerror}") from None
    if remove_empty and not data.strip():
        os.unlink(path)  # empty: see _saved_token; unlink removes the name, never what a link points at
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise TokenError(f"{what} {path} is not UTF-8 text; write the token in it as one line") from None


def _check_folders(
    folder: Path, what: str = "the saved token", problem: Callable[[Path], str | None] = folder_problem
) -> None:
    try:
        found = problem(folder)
    except OSError as exc:
        raise TokenError(f"{what}: cannot look at its folder {folder}: {exc.strerror}") from None
    if found:
        raise TokenError(f"{what}: {found}")


def _generate(path: Path) -> str:
    """A new token written at path, which must not exist: never through a symlink, 0600 from the first byte."""
    value = secrets.token_urlsafe(32)
    try:
        make_private_folders(path.parent)
    except OSError as exc:
        raise TokenError(f"cannot make the folder {path.parent} for a new token: {exc.strerror}") from None
    if POSIX:
        _check_folders(path.parent)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags, 0o600)
    except FileExistsError:
        if os.path.islink(path):
            raise TokenError(_symlink_message(path)) from None
        saved = _saved_token(path, remove_empty=False)  # another serve --http made it meanwhile: use that one
        if saved is None:  # ... and has not written it yet
            raise TokenError(f"another magnotia-mcp is saving a new token at {path} right now; start again") from None
        return saved
    except OSError as exc:
        if exc.errno == errno.ELOOP or os.path.islink(path):
            raise TokenError(_symlink_message(path)) from None
        raise TokenError(f"cannot save a new token at {path}: {exc.strerror}") from None
    try:
        if POSIX:
            os.fchmod(fd, 0o600)  # exactly 0600 whatever the umask
        os.write(fd, (value + "\n").encode("ascii"))
        os.fsync(fd)
    except OSError as exc:
        raise TokenError(f"cannot save a new token at {path}: {exc.strerror}") from None
    finally:
        os.close(fd)
    return value


def _symlink_message(path: Path) -> str:
    return (
        f"the saved token {path} is a symbolic link; magnotia-mcp never follows one there (it could lead "
        f"the token to a file others read): remove it (rm {shlex.quote(str(path))}) and a new token is made "
        "at the next start"
    )
