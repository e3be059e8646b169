"""A hostile model folder (issue 45, finding 9): `magnotia-mcp index --model DIR` refuses it with one clear line
naming the file and what is wrong; never a traceback, never a crash in native code.

Each case copies the small model the test dependency tokenlearn-static-model ships and changes one thing in it, as
a planted or broken folder would; the real command runs as a process with a throwaway HOME and cache folder.

Then who may change the model (round 2): a file of another user's (uid 65534, given to it by these root-only tests),
one others may write, a folder on the way others may write or another user owns, a link that leads through one:
each refused in one line that says the fix. A model root installed is used by another user (run as uid 65534).
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import struct
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import static_model
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from magnotia_mcp.search.semantic import indexfile
from magnotia_mcp.search.semantic.model import fingerprint
from tests.security.test_semantic_index import by_meaning, by_words, rewrite, search, serve  # noqa: F401 (a fixture)
from tests.semantic import stores
from tests.support.links import chain_through_open_folder
from tests.support.server import Launcher, ServerProcess
from tests.support.unprivileged import as_another_user, why_not_as_another_user, world_readable_dir

MODEL = Path(static_model.__file__).parent / "model"
Header = dict[str, Any]


@pytest.fixture(autouse=True)
def _home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv(indexfile.CACHE_ENV, str(tmp_path / "cache"))


def copied(tmp_path: Path) -> Path:
    folder = tmp_path / "model"
    shutil.copytree(MODEL, folder)
    return folder


def split(path: Path) -> tuple[Any, bytes]:
    """A safetensors file's header (parsed) and its data."""
    raw = path.read_bytes()
    (size,) = struct.unpack("<Q", raw[:8])
    return json.loads(raw[8 : 8 + size]), raw[8 + size :]


def joined(path: Path, header: Any, data: bytes) -> None:
    text = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(text)) + text + data)


def with_header(change: Callable[[Header], Any]) -> Callable[[Path], None]:
    """A case: the safetensors header as change makes it (the data kept)."""

    def mutate(folder: Path) -> None:
        path = folder / "model.safetensors"
        header, data = split(path)
        joined(path, change(header), data)

    return mutate


def tensor(name: str, **fields: Any) -> Callable[[Path], None]:
    return with_header(lambda header: {**header, name: {**header[name], **fields}})


def huge_piece(folder: Path) -> None:
    path = folder / "tokenizer.json"
    raw = path.read_bytes()
    path.write_bytes(raw.replace('["▁balfour",'.encode(), b'["' + b"a" * 2_000_000 + b'",', 1))


def header_past_file(folder: Path) -> None:
    path = folder / "model.safetensors"
    raw = path.read_bytes()
    path.write_bytes(struct.pack("<Q", 50 * 1024 * 1024) + raw[8:])


def truncated(folder: Path) -> None:
    path = folder / "model.safetensors"
    raw = path.read_bytes()
    path.write_bytes(raw[:-1000])


CASES: dict[str, tuple[Callable[[Path], None], str]] = {
    "huge piece": (huge_piece, "tokenizer.json"),
    "overflowing shape": (tensor("embeddings", shape=[2**62, 2**62]), "model.safetensors"),
    "negative shape": (tensor("embeddings", shape=[-10000, -64]), "model.safetensors"),
    "negative offsets": (tensor("embeddings", data_offsets=[-8, 639992]), "model.safetensors"),
    "string offsets": (tensor("mapping", data_offsets=["0", "2210608"]), "model.safetensors"),
    "non-object header": (with_header(list), "model.safetensors"),
    "header past the file": (header_past_file, "model.safetensors"),
    "truncated data": (truncated, "model.safetensors"),
}


def index(db: Path, folder: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "magnotia_mcp", "index", "--db", str(db), "--model", str(folder)],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        encoding="utf-8",
        errors="replace",
        timeout=120,
        check=False,
    )


def assert_refused(done: subprocess.CompletedProcess[str], names: str) -> None:
    assert done.returncode >= 0, f"killed by signal {-done.returncode}: {done.stderr[-2000:]}"
    assert "Traceback" not in done.stderr, done.stderr[-2000:]
    assert done.returncode in (1, 2), (done.returncode, done.stderr[-2000:])
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr[-2000:]
    assert names in lines[0], lines[0]


@pytest.mark.parametrize("case", list(CASES))
def test_hostile_model_is_refused_in_one_line(tmp_path: Path, case: str) -> None:
    mutate, names = CASES[case]
    folder = copied(tmp_path)
    mutate(folder)
    db = stores.write(tmp_path / "store" / "magnotia.db")
    assert_refused(index(db, folder), names)


@pytest.mark.parametrize("case", ["huge piece", "negative offsets", "non-object header"])
def test_the_server_refuses_a_hostile_model_and_searches_by_words(
    tmp_path: Path,
    serve: Any,  # noqa: F811 (the fixture imported above)
    launcher: Launcher,
    case: str,
) -> None:
    """The model an index was built with, changed afterwards (and the index stamped with its new fingerprint, as if
    built with it): the server loads nothing of it, and a search goes by words saying why."""
    if launcher.kind not in ("package", "script"):
        pytest.skip("the one-file build and the image have no semantic extra")
    folder = copied(tmp_path)
    db = stores.write(tmp_path / "store" / "magnotia.db")
    built = index(db, folder)
    assert built.returncode == 0, built.stderr
    by_meaning(serve(db))
    mutate, names = CASES[case]
    mutate(folder)
    rewrite(db, f"UPDATE meta SET value = '{fingerprint(folder)}' WHERE key = 'model_sha256'")
    by_words(serve(db), "model cannot be loaded", names)


NUMBERS = st.one_of(st.integers(-(2**70), 2**70), st.integers(-3, 4_000_000), st.text(max_size=3), st.none())
SPECS = st.one_of(
    st.fixed_dictionaries(
        {
            "dtype": st.sampled_from(["F32", "F16", "I8", "I32", "I64", "U8", "BOOL", ""]),
            "shape": st.one_of(st.lists(NUMBERS, max_size=4), NUMBERS),
            "data_offsets": st.one_of(st.lists(NUMBERS, min_size=1, max_size=3), NUMBERS),
        }
    ),
    NUMBERS,
    st.lists(NUMBERS, max_size=2),
)
HEADERS = st.dictionaries(st.sampled_from(["embeddings", "mapping", "weights", "__metadata__"]), SPECS, min_size=1)


@settings(max_examples=6, deadline=None, database=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(header=HEADERS, piece=st.integers(900, 5_000))
def test_generated_hostile_model_is_refused_or_used_never_a_crash(tmp_path: Path, header: Any, piece: int) -> None:
    """Any header of the usual tensors' names with any numbers in it, and a piece of about the limit's length:
    refused in one line naming the file, or indexed; never a traceback or a signal."""
    folder = tmp_path / f"model-{piece}-{abs(hash(json.dumps(header))) % 10**8}"
    shutil.copytree(MODEL, folder)
    path = folder / "model.safetensors"
    _, data = split(path)
    joined(path, header, data)
    tokens = folder / "tokenizer.json"
    tokens.write_bytes(tokens.read_bytes().replace('["▁balfour",'.encode(), b'["' + b"b" * piece + b'",', 1))
    db = tmp_path / "store" / "magnotia.db"
    if not db.exists():
        stores.write(db)
    done = index(db, folder)
    assert done.returncode >= 0, f"killed by signal {-done.returncode}: {done.stderr[-2000:]}"
    assert "Traceback" not in done.stderr, done.stderr[-2000:]
    if done.returncode != 0:
        assert_refused(done, "tokenizer.json" if piece > 1_000 else "model.safetensors")


# -- who may change the model: its files and the folders on their way (issue 45, round 2) ---------------------------

NEIGHBOUR = 65534
ROOT_ONLY = pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0, reason="giving a file to another user needs root"
)
POSIX_ONLY = pytest.mark.skipif(sys.platform == "win32", reason="owners and modes are POSIX")


def refused_with(done: subprocess.CompletedProcess[str], *needles: str) -> str:
    """The command's refusal: exit 1, one line on stderr, no traceback, holding every needle."""
    assert done.returncode == 1, (done.returncode, done.stdout, done.stderr[-2000:])
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr[-2000:]
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    return lines[0]


def indexes(done: subprocess.CompletedProcess[str]) -> None:
    assert done.returncode == 0, done.stderr[-2000:]
    assert "(5 embedded" in done.stdout, done.stdout


@ROOT_ONLY
@pytest.mark.parametrize("name", ["config.json", "tokenizer.json", "model.safetensors"])
def test_a_model_file_of_another_user_is_refused(tmp_path: Path, name: str) -> None:
    """Another user's file in the user's own model folder, readable by all as a shared model's files are: its owner
    may change it at any time (a tokenizer that crashes the parser, a table of other vectors), so it is refused."""
    folder = copied(tmp_path)
    os.chown(folder / name, NEIGHBOUR, NEIGHBOUR)
    (folder / name).chmod(0o644)
    db = stores.write(tmp_path / "store" / "magnotia.db")
    refused_with(
        index(db, folder), f"{folder / name} cannot be trusted", f"another user (uid {NEIGHBOUR})", "folder of your own"
    )
    os.chown(folder / name, 0, 0)  # root's: trusted (it may change anything anyway)
    indexes(index(db, folder))


@POSIX_ONLY
@pytest.mark.parametrize("name", ["config.json", "tokenizer.json", "model.safetensors"])
def test_a_model_file_others_may_change_is_refused(tmp_path: Path, name: str) -> None:
    folder = copied(tmp_path)
    (folder / name).chmod(0o666)
    db = stores.write(tmp_path / "store" / "magnotia.db")
    refused_with(index(db, folder), f"{folder / name} cannot be trusted", "0666", f"chmod go-w {folder / name}")
    (folder / name).chmod(0o644)  # others may read it: a model is no secret
    indexes(index(db, folder))


@POSIX_ONLY
def test_a_model_folder_others_may_write_is_refused(tmp_path: Path) -> None:
    """Whoever may write the folder may replace any file in it."""
    folder = copied(tmp_path)
    folder.chmod(0o777)
    db = stores.write(tmp_path / "store" / "magnotia.db")
    refused_with(index(db, folder), "cannot be trusted", f"the folder {folder} (mode 0777)", f"chmod go-w {folder}")


@ROOT_ONLY
def test_a_model_folder_of_another_user_is_refused(tmp_path: Path) -> None:
    folder = copied(tmp_path)
    os.chown(folder, NEIGHBOUR, NEIGHBOUR)
    folder.chmod(0o755)
    db = stores.write(tmp_path / "store" / "magnotia.db")
    refused_with(index(db, folder), f"the folder {folder} belongs to another user (uid {NEIGHBOUR})")


@POSIX_ONLY
def test_a_file_linked_from_a_folder_others_may_write_is_refused(tmp_path: Path) -> None:
    """A Hugging Face cache's layout: the model's files are links to blobs. The folder they lead to counts too."""
    folder = copied(tmp_path)
    blobs = tmp_path / "blobs"
    blobs.mkdir()
    (folder / "model.safetensors").rename(blobs / "5f1d")
    (folder / "model.safetensors").symlink_to("../blobs/5f1d")
    blobs.chmod(0o777)
    db = stores.write(tmp_path / "store" / "magnotia.db")
    refused_with(index(db, folder), f"{folder}/model.safetensors cannot be trusted", f"chmod go-w {blobs}")
    blobs.chmod(0o755)
    indexes(index(db, folder))


@POSIX_ONLY
def test_a_link_to_the_model_kept_in_a_folder_others_may_write_is_refused(tmp_path: Path) -> None:
    """--model names a link in an open folder: anyone may point it elsewhere, so that folder counts though the
    model's real path does not pass through it. In a sticky one (/tmp) only the link's owner may replace it."""
    folder = copied(tmp_path)
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "model").symlink_to(folder)
    shared.chmod(0o777)
    db = stores.write(tmp_path / "store" / "magnotia.db")
    refused_with(index(db, shared / "model"), f"the folder {shared} (mode 0777)", f"chmod go-w {shared}")
    shared.chmod(0o1777)
    indexes(index(db, shared / "model"))


@POSIX_ONLY
def test_a_link_in_the_middle_of_a_chain_kept_in_a_folder_others_may_write_is_refused(tmp_path: Path) -> None:
    """--model names a link (in the user's own folder) to a link in an open folder, which leads back to the user's
    own model: neither the folder named nor the model's own is open, but anyone may repoint the middle link."""
    folder = copied(tmp_path)
    model, shared = chain_through_open_folder(tmp_path, folder, "model")
    db = stores.write(tmp_path / "store" / "magnotia.db")
    refused_with(index(db, model), f"the folder {shared} (mode 0777)", f"chmod go-w {shared}")
    shared.chmod(0o755)
    indexes(index(db, model))


@POSIX_ONLY
@pytest.mark.parametrize(
    ("name", "what"),
    [
        ("config.json", "a FIFO"),
        ("tokenizer.json", "a FIFO"),
        ("model.safetensors", "a FIFO"),
        ("tokenizer.json", "a directory"),
    ],
)
def test_what_is_at_a_model_files_name_is_said(tmp_path: Path, name: str, what: str) -> None:
    """A FIFO (never waited on) or a folder where a file should be: one line saying what is there. It said
    "config.json missing"."""
    folder = copied(tmp_path)
    (folder / name).unlink()
    if what == "a FIFO":
        os.mkfifo(folder / name)
    else:
        (folder / name).mkdir()
    db = stores.write(tmp_path / "store" / "magnotia.db")
    refused_with(index(db, folder), f"{folder / name} is not a regular file ({what})")


WHY_NOT_AS_ANOTHER_USER = why_not_as_another_user()


@pytest.mark.skipif(WHY_NOT_AS_ANOTHER_USER is not None, reason=WHY_NOT_AS_ANOTHER_USER or "")
def test_a_model_installed_by_root_is_used_by_another_user(tmp_path: Path) -> None:
    """The rule is who may change the files, not whose they are: a model root installed (here the test model in
    site-packages, root's, 0644 in 0755 folders) is used by uid 65534, as a system-wide install under /usr/share is
    by every user."""
    assert os.stat(MODEL / "model.safetensors").st_uid == 0
    shared = world_readable_dir("magnotia-model-user-")
    try:
        theirs = shared / "theirs"
        theirs.mkdir(mode=0o700)
        os.chown(theirs, NEIGHBOUR, NEIGHBOUR)
        db = stores.write(theirs / "store" / "magnotia.db")
        for path in (theirs / "store", db):
            os.chown(path, NEIGHBOUR, NEIGHBOUR)
        argv = [sys.executable, "-m", "magnotia_mcp", "index", "--db", str(db), "--model", str(MODEL)]
        done = subprocess.run(
            as_another_user(argv, NEIGHBOUR, tmp_path / "stage"),
            env={**os.environ, "HOME": str(theirs), indexfile.CACHE_ENV: str(theirs / "cache")},
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            cwd="/",
            timeout=120,
            check=False,
        )
        indexes(done)
        assert os.stat(theirs / "cache").st_uid == NEIGHBOUR  # it did run as that user
    finally:
        shutil.rmtree(shared, ignore_errors=True)


@ROOT_ONLY
def test_the_server_refuses_a_model_file_that_became_another_users(
    tmp_path: Path,
    serve: Any,  # noqa: F811 (the fixture imported above)
    launcher: Launcher,
) -> None:
    if launcher.kind not in ("package", "script"):
        pytest.skip("the one-file build and the image have no semantic extra")
    folder = copied(tmp_path)
    db = stores.write(tmp_path / "store" / "magnotia.db")
    indexes(index(db, folder))
    by_meaning(serve(db))
    os.chown(folder / "tokenizer.json", NEIGHBOUR, NEIGHBOUR)
    by_words(serve(db), "model cannot be loaded", f"{folder}/tokenizer.json cannot be trusted", f"uid {NEIGHBOUR}")


# -- numbers of the model that are no numbers ------------------------------------------------------------------------

WARNINGS_FAIL = {"PYTHONWARNINGS": "error::RuntimeWarning"}  # numpy's word on a NaN or an overflow: an exception


@pytest.mark.parametrize("weight", [float("nan"), float("inf"), 3e38], ids=["NaN", "infinity", "3e38"])
def test_a_model_whose_numbers_are_not_finite_matches_nothing(
    tmp_path: Path, launcher: Launcher, weight: float
) -> None:
    """Every token's weight NaN, infinite, or so large that a product overflows: numpy warned on stderr at each batch
    and search, and the index held NaN cast to int8 (undefined). Now a text they make NaN or infinite is a row of
    zeros: `index` indexes it without a warning (here warnings are errors), and the server searches by meaning, quietly,
    finding nothing by it."""
    if launcher.kind not in ("package", "script"):
        pytest.skip("the one-file build and the image have no semantic extra")
    folder = copied(tmp_path)
    path = folder / "model.safetensors"
    header, data = split(path)
    start, end = header["weights"]["data_offsets"]
    joined(path, header, data[:start] + struct.pack("<f", weight) * ((end - start) // 4) + data[end:])
    db = stores.write(tmp_path / "store" / "magnotia.db")
    done = subprocess.run(
        [sys.executable, "-m", "magnotia_mcp", "index", "--db", str(db), "--model", str(folder)],
        env={**os.environ, **WARNINGS_FAIL},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    indexes(done)
    conn = sqlite3.connect(indexfile.location(db))
    try:
        assert {bytes(set(row)) for (row,) in conn.execute("SELECT vectors FROM docs")} <= {b"\0", b""}
    finally:
        conn.close()
    server = ServerProcess(launcher.argv(db), env=WARNINGS_FAIL)
    try:
        server.initialize()
        result = search(server)
    finally:
        server.kill()
    assert result["semantic"]["used"] is True, result
    assert stores.LEAD_DE not in [hit["transcript_id"] for hit in result["hits"]]
