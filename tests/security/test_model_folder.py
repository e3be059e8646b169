"""A hostile model folder (issue 45, finding 9): `magnotia-mcp index --model DIR` refuses it with one clear line
naming the file and what is wrong; never a traceback, never a crash in native code.

Each case copies the small model the test dependency tokenlearn-static-model ships and changes one thing in it, as
a planted or broken folder would; the real command runs as a process with a throwaway HOME and cache folder.
"""

from __future__ import annotations

import json
import shutil
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
from tests.security.test_semantic_index import by_meaning, by_words, rewrite, serve  # noqa: F401 (a fixture)
from tests.semantic import stores
from tests.support.server import Launcher

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
