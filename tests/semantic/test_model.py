"""The model loader: the vectors of a Model2Vec folder, checked against the encoder shipped with the test model."""

from __future__ import annotations

import gc
import json
import os
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest
from model2vec import StaticModel as Reference

from devkit.wide_model import write as write_wide
from magnotia_mcp.search.semantic import model
from magnotia_mcp.search.semantic.model import ModelError, StaticModel, fingerprint

TEXTS = [
    "We'll put less money into campaigns next quarter.",
    "Vamos colocar menos dinheiro nas campanhas no próximo trimestre.",
    "Jonas übernimmt im Januar die Leitung der Entwicklung.",
    "Le salon de Lyon commence jeudi; réservez l'hôtel.",
    "¿Quién se encarga del presupuesto de marketing?",
    " ".join(["budget"] * 700),  # longer than the 512 tokens a model reads
]


def test_vectors_match_model2vec(model_dir: Path) -> None:
    """Same tokens, table, weights and pooling: our numpy path gives the vectors of Model2Vec, the format's library."""
    ours = StaticModel.load(model_dir).embed(TEXTS)
    reference = np.asarray(Reference.from_pretrained(str(model_dir)).encode(TEXTS), dtype=np.float32)
    assert ours.shape == (len(TEXTS), 64)
    np.testing.assert_allclose(ours, reference, atol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)


def test_a_text_without_tokens_is_a_zero_vector(model_dir: Path) -> None:
    vectors = StaticModel.load(model_dir).embed(["", "   "])
    assert not vectors.any()


def copy_model(model_dir: Path, to: Path) -> Path:
    shutil.copytree(model_dir, to)
    return to


def test_a_folder_missing_a_file_says_which(model_dir: Path, tmp_path: Path) -> None:
    folder = copy_model(model_dir, tmp_path / "m")
    (folder / "tokenizer.json").unlink()
    with pytest.raises(ModelError, match=r"tokenizer\.json missing"):
        StaticModel.load(folder)


def test_a_truncated_download_is_refused(model_dir: Path, tmp_path: Path) -> None:
    folder = copy_model(model_dir, tmp_path / "m")
    data = (folder / "model.safetensors").read_bytes()
    (folder / "model.safetensors").write_bytes(data[: len(data) // 2])
    with pytest.raises(ModelError, match="does not fit the file"):
        StaticModel.load(folder)


def test_a_file_that_is_not_safetensors_is_refused(model_dir: Path, tmp_path: Path) -> None:
    folder = copy_model(model_dir, tmp_path / "m")
    (folder / "model.safetensors").write_bytes(b"\xff" * 64)
    with pytest.raises(ModelError, match="not a safetensors file"):
        StaticModel.load(folder)


def test_a_table_too_short_for_the_tokenizer_is_refused(model_dir: Path, tmp_path: Path) -> None:
    """A mapping pointing past the table (a mismatched tokenizer) would read other rows: refused instead."""
    folder = copy_model(model_dir, tmp_path / "m")
    path = folder / "model.safetensors"
    data = bytearray(path.read_bytes())
    size = int.from_bytes(data[:8], "little")
    header = json.loads(data[8 : 8 + size])
    header["embeddings"]["shape"] = [5000, 64]  # half the rows: the mapping reaches past them
    start, _ = header["embeddings"]["data_offsets"]
    header["embeddings"]["data_offsets"] = [start, start + 5000 * 64]
    raw = json.dumps(header, separators=(",", ":")).encode().ljust(size)
    assert len(raw) == size
    data[8 : 8 + size] = raw
    path.write_bytes(bytes(data))
    with pytest.raises(ModelError, match="mapping does not fit"):
        StaticModel.load(folder)


def test_the_fingerprint_follows_the_files(model_dir: Path, tmp_path: Path) -> None:
    folder = copy_model(model_dir, tmp_path / "m")
    before = fingerprint(folder)
    assert before == fingerprint(model_dir)
    (folder / "config.json").write_text('{"normalize": true}')
    assert fingerprint(folder) != before


def _mapped_kib(name: str) -> int:
    """The resident KiB of every memory mapping of a file of that name, from /proc/self/smaps (0: none)."""
    total, inside = 0, False
    with open("/proc/self/smaps", encoding="utf-8") as f:
        for line in f:
            head = line.split()[0]
            if "-" in head and not head.endswith(":"):
                inside = line.rstrip().endswith("/" + name)
            elif inside and head == "Rss:":
                total += int(line.split()[1])
    return total


@pytest.mark.skipif(not hasattr(os, "preadv"), reason="the server reads rows with pread where the system has it")
@pytest.mark.skipif(
    not Path("/proc/self/smaps").is_file(), reason="reads the mappings' resident size from Linux's /proc"
)
def test_the_servers_model_maps_none_of_its_table(model_dir: Path, tmp_path: Path) -> None:
    """The server's (lean) model reads the rows a text needs with pread: nothing of the file is mapped, however
    much a fault would map, and the vectors are the full model's.

    A float32 table of 1 KiB rows (the real model's width), read once from start to end as a hash is, so the
    page cache holds it in large folios: on Linux 6.18 one row's fault mapped all 2 MiB of its folio.
    """
    folder = write_wide(tmp_path / "wide", dims=256, pieces=0)  # the test tokenizer: 283 MB, not 512
    fingerprint(folder)  # read whole, as the server does before it loads a model
    lean = StaticModel.load(folder, lean=True)
    full = StaticModel.load(folder)
    assert isinstance(lean.table, model.Rows)
    vocab = json.loads((model_dir / "tokenizer.json").read_text(encoding="utf-8"))["model"]["vocab"]
    words = [piece.strip("\u2581") for piece, _ in vocab[1000::53] if piece.strip("\u2581").isalpha()]
    texts = [" ".join(words[i : i + 8]) for i in range(0, len(words), 8)]
    assert len(texts) > 500
    np.testing.assert_array_equal(lean.embed(texts), full.embed(texts))
    assert _mapped_kib("model.safetensors") > 64 << 10  # the full model's mapping: what the lean one would hold
    del full
    gc.collect()
    assert _mapped_kib("model.safetensors") == 0
    lean.embed(texts)
    assert _mapped_kib("model.safetensors") == 0


@pytest.mark.skipif(not hasattr(os, "preadv"), reason="the server reads rows with pread where the system has it")
def test_a_table_cut_short_after_the_load_is_an_error_not_garbage(model_dir: Path, tmp_path: Path) -> None:
    folder = tmp_path / "m"
    shutil.copytree(model_dir, folder)
    lean = StaticModel.load(folder, lean=True)
    assert lean.embed(["budget"]).any()
    with open(folder / "model.safetensors", "r+b") as f:
        f.truncate(1024)
    with pytest.raises(ModelError, match="cut short"):
        lean.embed(["budget review"])


def test_rows_of_a_file_that_cannot_be_opened_raise_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The open's own error (a ModelError naming the file: it is opened as every model file is), and nothing more: no
    second one from the object's cleanup."""
    unraisable: list[object] = []
    monkeypatch.setattr(sys, "unraisablehook", unraisable.append)
    with pytest.raises(model.ModelError, match=r"cannot read .*missing\.safetensors"):
        model.Rows(tmp_path / "missing.safetensors", 0, (1, 4), np.float32)
    gc.collect()
    assert unraisable == []
