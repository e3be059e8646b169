"""`magnotia-mcp index --download-model`: the pinned files, each checked, resumed after an interrupt.

These machines reach no model hub, so a real HTTP server on a loopback socket plays the hub (and
a mirror): it serves the model the tokenlearn-static-model package ships, under the hub's paths,
and can cut a response short, ignore Range or change a byte. ``download.fetch`` is the code the
command runs; in-process it gets a pin of the test model's files. Over the command itself, the pin
is the real one (potion-multilingual-128M), which no server here can satisfy: what is tested there
is that wrong bytes are refused and deleted, that nothing is indexed, and what the user is told.
"""

from __future__ import annotations

import hashlib
import threading
import time
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import cast

import pytest

from magnotia_mcp.search.semantic import download, indexfile
from magnotia_mcp.search.semantic.model import FILES, StaticModel
from tests.semantic import stores
from tests.semantic.conftest import Index


class Hub:
    """A loopback HTTP server serving files by path, with Range; it can cut, ignore Range, or alter a file."""

    def __init__(self, files: dict[str, bytes]) -> None:
        self.files = files
        self.requests: list[tuple[str, str | None]] = []  # (path, Range header)
        self.cut: dict[str, int] = {}  # path: bytes sent before the connection drops (once)
        self.ignore_range = False
        hub = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                hub.requests.append((self.path, self.headers.get("Range")))
                body = hub.files.get(self.path)
                if body is None:
                    self.send_error(404)
                    return
                start = 0
                wanted = self.headers.get("Range")
                if wanted and not hub.ignore_range:
                    start = int(wanted.removeprefix("bytes=").removesuffix("-"))
                    self.send_response(206)
                    self.send_header("Content-Range", f"bytes {start}-{len(body) - 1}/{len(body)}")
                else:
                    self.send_response(200)
                self.send_header("Content-Length", str(len(body) - start))
                self.end_headers()
                cut = hub.cut.pop(self.path, None)
                self.wfile.write(body[start:] if cut is None else body[start : start + cut])
                if cut is not None:
                    self.close_connection = True

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def pin_of(folder: Path) -> download.Pinned:
    """A pin of the model in folder, as the real one pins potion-multilingual-128M."""
    files = tuple(
        download.File(name, (folder / name).stat().st_size, hashlib.sha256((folder / name).read_bytes()).hexdigest())
        for name in FILES
    )
    return download.Pinned("tests/static-model", "0123456789abcdef0123456789abcdef01234567", files)


def paths(pinned: download.Pinned, model_dir: Path) -> dict[str, bytes]:
    return {
        f"/{pinned.repo}/resolve/{pinned.revision}/{f.name}": (model_dir / f.name).read_bytes() for f in pinned.files
    }


@pytest.fixture
def pinned(model_dir: Path) -> download.Pinned:
    return pin_of(model_dir)


@pytest.fixture
def hub(pinned: download.Pinned, model_dir: Path) -> Iterator[Hub]:
    served = Hub(paths(pinned, model_dir))
    yield served
    served.close()


def test_the_pinned_files_arrive_checked_and_load_as_the_model(
    pinned: download.Pinned, hub: Hub, model_dir: Path, tmp_path: Path
) -> None:
    folder = download.folder_for(pinned, tmp_path / "cache")
    seen: list[tuple[str, int, int]] = []
    assert download.fetch(pinned, folder, mirror=hub.url, progress=lambda *p: seen.append(p)) == folder
    assert sorted(p.name for p in folder.iterdir()) == sorted(FILES)  # no part left behind
    for name in FILES:
        assert (folder / name).read_bytes() == (model_dir / name).read_bytes()
    last = {name: done for name, done, _ in seen}  # each file's progress ends at its size
    assert last == {f.name: f.size for f in pinned.files}
    assert StaticModel.load(folder).embed(["the budget"]).any()
    # Everything is in place and matches: a second run asks the server nothing.
    asked = len(hub.requests)
    download.fetch(pinned, folder, mirror=hub.url)
    assert len(hub.requests) == asked == len(FILES)


def test_an_interrupted_download_is_resumed_where_it_stopped(
    pinned: download.Pinned, hub: Hub, model_dir: Path, tmp_path: Path
) -> None:
    weights = next(f for f in pinned.files if f.name == "model.safetensors")
    path = pinned.url("", weights)
    sent = weights.size // 3
    hub.cut[path] = sent
    folder = tmp_path / "model"
    with pytest.raises(download.DownloadError, match="run the command again to go on"):
        download.fetch(pinned, folder, mirror=hub.url)
    assert (folder / "model.safetensors.part").stat().st_size == sent
    assert not (folder / "model.safetensors").exists()
    download.fetch(pinned, folder, mirror=hub.url)
    assert [r for r in hub.requests if r[0] == path] == [(path, None), (path, f"bytes={sent}-")]  # then the rest
    assert (folder / "model.safetensors").read_bytes() == (model_dir / "model.safetensors").read_bytes()
    assert not (folder / "model.safetensors.part").exists()


def test_a_server_that_ignores_range_sends_the_whole_file_again(
    pinned: download.Pinned, hub: Hub, model_dir: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "model"
    folder.mkdir()
    part = (model_dir / "tokenizer.json").read_bytes()[:1000]
    (folder / "tokenizer.json.part").write_bytes(part)
    hub.ignore_range = True
    download.fetch(pinned, folder, mirror=hub.url)
    assert (folder / "tokenizer.json").read_bytes() == (model_dir / "tokenizer.json").read_bytes()


def test_bytes_that_are_not_the_pinned_ones_are_deleted_and_never_used(
    pinned: download.Pinned, hub: Hub, tmp_path: Path
) -> None:
    path = next(pinned.url("", f) for f in pinned.files if f.name == "tokenizer.json")
    good = hub.files[path]
    hub.files[path] = good[:-2] + b"?}"  # the same size, one byte changed
    folder = tmp_path / "model"
    with pytest.raises(download.DownloadError, match="is not the pinned file") as raised:
        download.fetch(pinned, folder, mirror=hub.url)
    assert "sha256" in str(raised.value)
    assert not (folder / "tokenizer.json").exists()
    assert not (folder / "tokenizer.json.part").exists()
    hub.files[path] = good + b"\n"  # longer than pinned
    with pytest.raises(download.DownloadError, match="bytes"):
        download.fetch(pinned, folder, mirror=hub.url)
    assert not (folder / "tokenizer.json").exists()
    assert not (folder / "tokenizer.json.part").exists()


def test_the_real_pin_is_a_full_commit_and_sha256s() -> None:
    pinned = download.POTION_MULTILINGUAL
    assert len(pinned.revision) == 40
    assert int(pinned.revision, 16) >= 0
    assert sorted(f.name for f in pinned.files) == sorted(FILES)
    for f in pinned.files:
        assert len(f.sha256) == 64
        assert int(f.sha256, 16) >= 0
        assert f.size > 0
    assert pinned.url(download.HUB, pinned.files[0]) == (
        "https://huggingface.co/minishlab/potion-multilingual-128M/resolve/"
        "73908c3438cf03b6a01bcb9611d62b23d0726f08/config.json"
    )


def test_the_command_refuses_what_is_not_the_pinned_model_and_indexes_nothing(
    index: Index, cache: Path, model_dir: Path, tmp_path: Path
) -> None:
    """Over the command, the real pin: a mirror serving other bytes under its paths is refused, file by file."""
    db = stores.write(tmp_path / "app" / "magnotia.db")
    real = download.POTION_MULTILINGUAL
    wrong = Hub(paths(real, model_dir))  # the test model's bytes under the real model's paths
    try:
        done = index(db, "--download-model", "--model-mirror", wrong.url)
    finally:
        wrong.close()
    assert done.returncode == 1, done.stderr
    assert "config.json is not the pinned file" in done.stderr
    assert "nothing was used" in done.stderr
    assert done.stdout == ""
    folder = download.folder_for(real, cache)
    assert list(folder.iterdir()) == []  # refused bytes are deleted
    assert not indexfile.location(db).exists()


def test_the_command_says_what_to_do_when_the_hub_cannot_be_reached(index: Index, cache: Path, tmp_path: Path) -> None:
    db = stores.write(tmp_path / "app" / "magnotia.db")
    closed = Hub({})
    url = closed.url
    closed.close()  # nothing listens there now
    done = index(db, "--download-model", "--model-mirror", url)
    assert done.returncode == 1
    assert "could not download" in done.stderr
    assert "--model DIR" in done.stderr
    assert not indexfile.location(db).exists()


def test_download_and_a_model_folder_are_not_both_taken(index: Index, model_dir: Path, tmp_path: Path) -> None:
    db = stores.write(tmp_path / "app" / "magnotia.db")
    done = index(db, "--download-model", "--model", str(model_dir))
    assert done.returncode == 1
    assert "not both" in done.stderr
    assert not indexfile.location(db).exists()


# -- the deadline over each request whole (the host name's lookup included): _opened ----------------------------------


class _Opened:
    """What an open returns (a response) or raises (an HTTPError holds a response too): it says when it is closed."""

    def __init__(self) -> None:
        self.closed = threading.Event()

    def close(self) -> None:
        self.closed.set()


class _OpenedError(OSError):
    def __init__(self, *args: object) -> None:
        super().__init__(*args)
        self.closed = threading.Event()

    def close(self) -> None:
        self.closed.set()


def _stalled_open(
    monkeypatch: pytest.MonkeyPatch, got: _Opened | _OpenedError
) -> tuple[threading.Event, threading.Event]:
    """The opener stalls (as a lookup the resolver never answers does) until released, then returns or raises got."""
    entered, release = threading.Event(), threading.Event()

    def stalled(request: urllib.request.Request, timeout: float) -> _Opened:
        entered.set()
        assert release.wait(60)
        if isinstance(got, _OpenedError):
            raise got
        return got

    monkeypatch.setattr(download._OPENER, "open", stalled)
    return entered, release


@pytest.mark.parametrize("got", [_Opened(), _OpenedError()], ids=["response", "http-error"])
def test_an_open_past_the_deadline_is_given_up_and_what_comes_after_is_closed(
    monkeypatch: pytest.MonkeyPatch, got: _Opened | _OpenedError
) -> None:
    entered, release = _stalled_open(monkeypatch, got)
    with pytest.raises(download._Late):
        download._opened(urllib.request.Request("https://mirror.invalid/f"), time.monotonic() + 0.1)
    assert entered.is_set()
    assert not got.closed.is_set()
    release.set()  # the attempt ends after the run gave up on it: what it got is closed, never handed on
    assert got.closed.wait(60)


def test_an_open_within_the_deadline_hands_on_its_response_or_its_error(monkeypatch: pytest.MonkeyPatch) -> None:
    for got in (_Opened(), _OpenedError("refused")):
        entered, release = _stalled_open(monkeypatch, got)
        release.set()
        request = urllib.request.Request("https://mirror.invalid/f")
        if isinstance(got, _OpenedError):
            with pytest.raises(_OpenedError, match="refused"):
                download._opened(request, time.monotonic() + 60)
        else:
            assert cast("object", download._opened(request, time.monotonic() + 60)) is got
        assert entered.is_set()
        assert not got.closed.is_set()
