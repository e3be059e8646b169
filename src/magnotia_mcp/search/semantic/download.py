"""The model `magnotia-mcp index --download-model` fetches: one pinned revision, every file's size and sha256 checked.

The only code in this server that uses the network, and only when the user runs that command. Each file streams
into ``NAME.part`` beside its place, hashed as it comes, and is renamed only when its size and sha256 are the pinned
ones: an interrupted download resumes from the part (HTTP Range), and bytes that do not match are deleted, never used.

Against a neighbour and a hostile mirror: folders are made 0700 and must be private (filemodes' rules); a part is
created anew (O_EXCL, O_NOFOLLOW, 0600) or resumed only when a regular file of this user's, so a link planted at its
name is removed, never written through; a file in place that others may change is fetched again. A run has a deadline
(DEADLINE, or $MAGNOTIA_MCP_DOWNLOAD_DEADLINE s) over each request whole, the name's lookup too; what came is kept.
A redirect is followed only to https, or from http to http (a mirror given as http://): never to ftp:// or others.

Why ``urllib`` and not ``huggingface_hub``: that brings an HTTP client, hf-xet and a cache layout (about 20 MB) for
three GET requests; the pins, not the client, make the files trustworthy.
"""

from __future__ import annotations

import contextlib
import hashlib
import http.client
import os
import shlex
import stat
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any, NamedTuple, cast

from magnotia_mcp import filemodes

HUB = "https://huggingface.co"
CHUNK = 1 << 20
TIMEOUT = 60.0  # seconds without a byte before a download is given up (it can be resumed)
# Seconds one run may take in all: the 530 MB model at 50 KB/s (a poor mobile link) takes its 3 hours. Past it
# the run stops (at most TIMEOUT later, a read being under way) and what came is kept: the next run goes on.
DEADLINE = 3 * 3600.0
DEADLINE_ENV = "MAGNOTIA_MCP_DOWNLOAD_DEADLINE"
_RESUMED = (
    os.O_RDWR | os.O_APPEND | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
)

Progress = Callable[[str, int, int], None]  # (file name, bytes so far, its size)


class File(NamedTuple):
    name: str
    size: int
    sha256: str


class Pinned(NamedTuple):
    """A model on the Hugging Face hub at one commit, and what each of its files must be."""

    repo: str
    revision: str
    files: tuple[File, ...]

    @property
    def name(self) -> str:
        return self.repo.rsplit("/", 1)[-1]

    def url(self, mirror: str, file: File) -> str:
        return f"{mirror.rstrip('/')}/{self.repo}/resolve/{self.revision}/{file.name}"


# minishlab/potion-multilingual-128M (MIT): a static multilingual Model2Vec model, 256 dimensions, 500,353
# tokens; docs/search.md says why this one, and where these pins come from.
POTION_MULTILINGUAL = Pinned(
    "minishlab/potion-multilingual-128M",
    "73908c3438cf03b6a01bcb9611d62b23d0726f08",
    (
        File("config.json", 271, "595e4cab2093732efd5dbe084fd5c1826b5eea693b73b4c1fd971672867d2e54"),
        File("tokenizer.json", 18_616_131, "19f1909063da3cfe3bd83a782381f040dccea475f4816de11116444a73e1b6a1"),
        File("model.safetensors", 512_361_560, "14b5eb39cb4ce5666da8ad1f3dc6be4346e9b2d601c073302fa0a31bf7943397"),
    ),
)


class DownloadError(Exception):
    """A file could not be fetched, or what came is not the pinned file: the message says what to do."""


def folder_for(pinned: Pinned, cache: Path) -> Path:
    """Where the model goes in the cache folder: one folder per revision, so a new pin never mixes with an old one."""
    return cache / "models" / pinned.name / pinned.revision


def fetch(
    pinned: Pinned, into: Path, *, mirror: str = HUB, progress: Progress | None = None, deadline: float | None = None
) -> Path:
    """The pinned model's files in folder into, each checked; downloaded (or resumed) where missing or wrong.

    deadline: seconds the whole run may take (default: $MAGNOTIA_MCP_DOWNLOAD_DEADLINE, else DEADLINE).
    """
    if urllib.parse.urlsplit(mirror).scheme not in ("https", "http"):
        raise DownloadError(f"the mirror {mirror} is not an https:// (or http://) address")
    seconds = deadline if deadline is not None else _deadline()
    until = time.monotonic() + seconds
    where = ("the model's files", "choose a folder of your own for the model")
    # Checked before a folder is made (from the nearest one there, up: none is made in a folder others may write),
    # and after (one another user made meanwhile).
    problem = filemodes.private_files_problem(into, (), *where)
    if problem is None:
        filemodes.make_private_folders(into)
        problem = filemodes.private_files_problem(into, (), *where)
    if problem is not None:
        raise DownloadError(f"the model's folder is not private: {problem}")
    for file in pinned.files:
        target = into / file.name
        if _matches(target, file):
            continue
        _download(pinned.url(mirror, file), into / f"{file.name}.part", file, progress, (until, seconds))
        os.replace(into / f"{file.name}.part", target)
    return into


def redirect_allowed(current: str, new: str) -> bool:
    """Whether a redirect from current to new is followed: to https, or from http to http; nothing else."""
    scheme = urllib.parse.urlsplit(new).scheme.lower()
    return scheme == "https" or (scheme == "http" and urllib.parse.urlsplit(current).scheme.lower() == "http")


class _Redirects(urllib.request.HTTPRedirectHandler):
    def redirect_request(
        self,
        req: urllib.request.Request,
        fp: IO[bytes],
        code: int,
        msg: str,
        headers: http.client.HTTPMessage,
        newurl: str,
    ) -> urllib.request.Request | None:
        if not redirect_allowed(req.full_url, newurl):
            raise urllib.error.URLError(f"refused a redirect to {newurl}: only https:// is followed")
        return super().redirect_request(req, fp, code, msg, headers, newurl)


_OPENER = urllib.request.build_opener(_Redirects)


def _deadline() -> float:
    chosen = os.environ.get(DEADLINE_ENV, "").strip()
    try:
        seconds = float(chosen) if chosen else DEADLINE
    except ValueError:
        seconds = float("nan")  # refused below
    if not 0 < seconds < float("inf"):
        raise DownloadError(f"${DEADLINE_ENV} is {chosen!r}: give the seconds a download may take")
    return seconds


def _read(fd: int) -> tuple[hashlib._Hash, int]:
    """The sha256 of the open file's bytes from where it is (to go on with), and how many there are."""
    digest, have = hashlib.sha256(), 0
    while chunk := os.read(fd, CHUNK):
        digest.update(chunk)
        have += len(chunk)
    return digest, have


def _matches(path: Path, file: File) -> bool:
    """Whether path is a regular file (not a link: it is then fetched and renamed over it) with the pinned bytes, that
    nobody but this user and root may change (else the model's loader would refuse it: it is fetched again too)."""
    try:
        fd = os.open(path, _RESUMED & ~(os.O_RDWR | os.O_APPEND))
    except OSError:
        return False
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size != file.size:
            return False
        if filemodes.trusted_file_problem(path, st, "") is not None:
            return False
        digest, _ = _read(fd)
    except OSError:
        return False
    finally:
        os.close(fd)
    return digest.hexdigest() == file.sha256


def _part(part: Path, size: int) -> tuple[hashlib._Hash, int, int]:
    """An open file (appending) for file's bytes at part, the sha256 of those it holds, and how many: what a run left
    there when that is a regular file of this user's no larger than size; else a new one, 0600, created where any
    other thing at the name (a link, never followed) was removed."""
    try:
        fd = os.open(part, _RESUMED)
    except OSError:
        pass
    else:
        try:
            st = os.fstat(fd)
            if stat.S_ISREG(st.st_mode) and st.st_uid == os.getuid() and st.st_size <= size:
                if filemodes.POSIX:
                    os.fchmod(fd, 0o600)  # the file it becomes keeps its mode: a part left open to others is not
                digest, have = _read(fd)
                return digest, have, fd
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)
    with contextlib.suppress(FileNotFoundError):
        part.unlink()
    fd = os.open(part, filemodes.NEW_FILE, 0o600)
    if filemodes.POSIX:
        os.fchmod(fd, 0o600)  # the umask may have narrowed it
    return hashlib.sha256(), 0, fd


def _download(url: str, part: Path, file: File, progress: Progress | None, deadline: tuple[float, float]) -> None:
    """file's bytes into part, resumed from what part holds; raises DownloadError unless they are the pinned ones.
    deadline: (time.monotonic() it ends at, its seconds): past it the bytes so far are kept and the run stops."""
    until, seconds = deadline
    try:
        digest, have, fd = _part(part, file.size)
    except OSError as exc:  # nothing came: a folder, or what this user may not remove or create, holds the way
        folder = os.path.isdir(part) and not os.path.islink(part)
        fix = f"it is a folder: rm -r {shlex.quote(str(part))}" if folder else "check that folder"
        raise DownloadError(
            f"cannot write the download of {url} to {part} ({exc.strerror or exc}); {fix}, and run the command again"
        ) from None
    try:
        _fill(url, fd, file, progress, until, (digest, have))
    except _Late:
        raise _stopped(
            url, part, f"it took longer than the deadline of {seconds:g} s; ${DEADLINE_ENV} sets it"
        ) from None
    except (urllib.error.URLError, OSError, http.client.HTTPException) as exc:
        raise _stopped(url, part, getattr(exc, "reason", None) or exc) from None
    except _Refused as exc:
        part.unlink(missing_ok=True)
        raise _not_pinned(url, file, str(exc)) from None
    finally:
        os.close(fd)


class _Late(Exception):
    """The run's deadline passed."""


class _Refused(Exception):
    """What came is not the pinned file: the message says what it is."""


def _fill(
    url: str, fd: int, file: File, progress: Progress | None, until: float, start: tuple[hashlib._Hash, int]
) -> None:
    """Append file's bytes from where start leaves off (its sha256 and length) to fd, and check them all."""
    digest, have = start
    request = urllib.request.Request(url, headers={"User-Agent": "magnotia-mcp"})
    if 0 < have < file.size:
        request.add_header("Range", f"bytes={have}-")
    if have < file.size:
        with _opened(request, until) as response:
            if have and response.status != 206:  # the server sent the whole file: start the part again
                os.ftruncate(fd, 0)
                digest, have = hashlib.sha256(), 0
            declared = _declared_size(response, have)
            if declared is not None and declared != file.size:  # refused before a byte is written
                raise _Refused(f"a file of {declared} bytes")
            # read1: what has come, not CHUNK bytes (a trickle would hold read() past the deadline)
            while chunk := response.read1(CHUNK):
                have += len(chunk)
                if have > file.size:
                    break  # more than the file: the checks below refuse it
                digest.update(chunk)
                view = memoryview(chunk)
                while view:
                    view = view[os.write(fd, view) :]
                if progress is not None:
                    progress(file.name, have, file.size)
                if time.monotonic() > until:
                    raise _Late
    if have < file.size:  # the connection ended early
        raise urllib.error.URLError(f"{have} of {file.size} bytes came")
    if have != file.size or digest.hexdigest() != file.sha256:
        raise _Refused(f"{have} bytes" if have != file.size else f"sha256 {digest.hexdigest()}")


def _opened(request: urllib.request.Request, until: float) -> http.client.HTTPResponse:
    """_OPENER.open(request) wholly under the run's deadline, the host name's lookup too (no socket timeout bounds it):
    past it (or on Ctrl-C) _Late, the attempt left to a daemon thread, which closes what it opens after."""
    left = until - time.monotonic()
    if left <= 0:
        raise _Late
    lock, ready, late = threading.Lock(), threading.Event(), False
    outcome: list[Any] = []  # the response, or what open raised (an HTTPError holds a response too)

    def attempt() -> None:
        try:
            got: Any = _OPENER.open(request, timeout=min(TIMEOUT, left))
        except BaseException as exc:  # raised in the caller's thread
            got = exc
        with lock:
            if late:
                getattr(got, "close", lambda: None)()
                return
            outcome.append(got)
        ready.set()

    threading.Thread(target=attempt, name="download-open", daemon=True).start()
    try:
        ready.wait(max(0.0, until - time.monotonic()))
    except BaseException:
        with lock:
            late = True
            for got in outcome:
                getattr(got, "close", lambda: None)()
        raise
    with lock:
        if not outcome:
            late = True
            raise _Late
    if isinstance(outcome[0], BaseException):
        raise outcome[0]
    return cast("http.client.HTTPResponse", outcome[0])


def _declared_size(response: http.client.HTTPResponse, have: int) -> int | None:
    """The whole file's size as the server says it: Content-Range's total, else what precedes plus Content-Length."""
    if response.status == 206:
        return _number((response.headers.get("Content-Range") or "").rpartition("/")[2])
    length = _number(response.headers.get("Content-Length") or "")
    return None if length is None else have + length


def _number(text: str) -> int | None:
    """A size in a header, if it is one: ASCII digits, at most 19 (str.isdigit takes "²", and int() refuses it and
    more than 4,300 digits). None otherwise: the bytes that come are counted and checked all the same."""
    return int(text) if text.isascii() and text.isdigit() and len(text) <= 19 else None


def _not_pinned(url: str, file: File, got: str) -> DownloadError:
    return DownloadError(
        f"{url} is not the pinned file (expected {file.size} bytes with sha256 {file.sha256}, got {got}); "
        "it was deleted and nothing was used. Run the command again; if it happens again, the mirror or a "
        "proxy is changing the file"
    )


def _stopped(url: str, part: Path, reason: object) -> DownloadError:
    return DownloadError(
        f"could not download {url} ({reason}); what came so far is kept in {part}: run the command again to "
        "go on, or download the model's files by hand and pass --model DIR"
    )
