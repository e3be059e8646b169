"""The model `magnotia-mcp index --download-model` fetches: one pinned revision, every file's size and sha256 checked.

The only code in this server that uses the network, and only when the user runs that command. Each
file is streamed into ``NAME.part`` beside its final place, hashed as it comes, and renamed only
when its size and sha256 are the pinned ones: an interrupted download is resumed from the part
(an HTTP Range request; a server that ignores it sends the whole file again), and bytes that do not
match are deleted, never used. Files already in place and matching are not fetched again.

Why the standard library's ``urllib`` and not ``huggingface_hub``: that package brings an HTTP
client, hf-xet and a cache layout of its own (about 20 MB) for three GET requests; the pins, not the
client, are what make the files trustworthy.
"""

from __future__ import annotations

import hashlib
import http.client
import os
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

HUB = "https://huggingface.co"
CHUNK = 1 << 20
TIMEOUT = 60.0  # seconds without a byte before a download is given up (it can be resumed)

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


def fetch(pinned: Pinned, into: Path, *, mirror: str = HUB, progress: Progress | None = None) -> Path:
    """The pinned model's files in folder into, each checked; downloaded (or resumed) where missing or wrong."""
    into.mkdir(parents=True, exist_ok=True)
    for file in pinned.files:
        target = into / file.name
        if _matches(target, file):
            continue
        _download(pinned.url(mirror, file), into / f"{file.name}.part", file, progress)
        os.replace(into / f"{file.name}.part", target)
    return into


def _read(path: Path) -> tuple[hashlib._Hash, int]:
    """The sha256 of path's bytes so far (to go on with), and how many there are."""
    digest, have = hashlib.sha256(), 0
    with open(path, "rb") as f:
        while chunk := f.read(CHUNK):
            digest.update(chunk)
            have += len(chunk)
    return digest, have


def _matches(path: Path, file: File) -> bool:
    try:
        if path.stat().st_size != file.size:
            return False
        digest, _ = _read(path)
    except OSError:
        return False
    return digest.hexdigest() == file.sha256


def _download(url: str, part: Path, file: File, progress: Progress | None) -> None:
    """file's bytes into part, resumed from what part holds; raises DownloadError unless they are the pinned ones."""
    digest, have = _read(part) if part.is_file() else (hashlib.sha256(), 0)
    if have > file.size:  # not a part of this file
        part.unlink()
        digest, have = hashlib.sha256(), 0
    request = urllib.request.Request(url, headers={"User-Agent": "magnotia-mcp"})
    if 0 < have < file.size:
        request.add_header("Range", f"bytes={have}-")
    try:
        if have < file.size:
            with urllib.request.urlopen(request, timeout=TIMEOUT) as response:
                if have and response.status != 206:  # the server sent the whole file: start the part again
                    digest, have = hashlib.sha256(), 0
                declared = _declared_size(response, have)
                if declared is not None and declared != file.size:  # refused before a byte is written
                    part.unlink(missing_ok=True)
                    raise _not_pinned(url, file, f"a file of {declared} bytes")
                with open(part, "ab" if have else "wb") as out:
                    while chunk := response.read(CHUNK):
                        have += len(chunk)
                        if have > file.size:
                            break  # more than the file: the checks below refuse it
                        digest.update(chunk)
                        out.write(chunk)
                        if progress is not None:
                            progress(file.name, have, file.size)
    except (urllib.error.URLError, OSError, http.client.HTTPException) as exc:
        raise _stopped(url, part, getattr(exc, "reason", None) or exc) from None
    if have < file.size:  # the connection ended early
        raise _stopped(url, part, f"{have} of {file.size} bytes came")
    if have != file.size or digest.hexdigest() != file.sha256:
        part.unlink(missing_ok=True)
        raise _not_pinned(url, file, f"{have} bytes" if have != file.size else f"sha256 {digest.hexdigest()}")


def _declared_size(response: http.client.HTTPResponse, have: int) -> int | None:
    """The whole file's size as the server says it: Content-Range's total, else what precedes plus Content-Length."""
    if response.status == 206:
        total = (response.headers.get("Content-Range") or "").rpartition("/")[2]
        return int(total) if total.isdigit() else None
    length = response.headers.get("Content-Length") or ""
    return have + int(length) if length.isdigit() else None


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
